"""vectors/approvals.json (spec/APPROVALS.md) through the Python chain verifier: the statement bytes (digest, JCS, PAE,
Ed25519 signature) recomputed, and every chain with its pinned approvers giving the same ok, problems (code, seq, field),
notices (code, seq) and approvals as the TypeScript verifier. Then attacks of our own on the valid chain, re-hashed so
that only the approval check can catch them."""
import base64
import json

import pytest
from conftest import cases, load_vectors

from stepchain.approval import PAYLOAD_TYPE, presented_digest, statement_bytes
from stepchain.canonical import canonical_json, digest_bytes
from stepchain.chain import verify_chain
from stepchain.ed25519 import signature_defect
from stepchain.formats.v3 import seal_v3
from stepchain.receipt import pae

DOC = load_vectors("approvals.json")
BUCKET = "0000000000000000.jsonl"


def _pins(c):
    return [(base64.b64decode(a["public_key"]), a["name"]) for a in c["approvers"]]


def _verify(c, lines=None, pins=None, **options):
    data = "".join(line + "\n" for line in (c["lines"] if lines is None else lines)).encode()
    return verify_chain([(BUCKET, data)], c["genesis"], allow_public=False, approvers=_pins(c) if pins is None else pins, **options)


def test_covers_the_spec_cases():
    ids = {c["id"] for c in DOC["cases"]}
    for want in ["statement-bytes", "valid", "valid-unpinned", "wrong-signer", "signature-not-the-named-key", "altered-presentation",
                 "denied-then-executed", "denied-then-executed-unnamed", "expired-then-executed", "granted-after-expiry",
                 "signature-replayed-other-request", "signature-replayed-other-journal", "denial-flipped-to-grant", "two-decisions",
                 "one-grant-two-effects", "undecided-then-executed", "digest-not-of-presented", "v2-statement-bytes", "v2-valid",
                 "v2-valid-unpinned", "v2-altered-presentation", "v2-denied-then-executed", "v2-statement-on-v1-request",
                 "v1-statement-on-v2-request", "v2-signature-relabelled-v1", "v2-statement-without-request-hash",
                 "v2-signature-replayed-other-journal", "call-before-request", "call-again-before-its-request",
                 "effect-naming-a-later-request", "completion-carries-denied-call", "completion-carries-call-before-request",
                 "completion-of-granted-effect-other-call", "completion-of-granted-effect-same-call", "outcomes-of-granted-effect-carry-other-calls",
                 "outcome-dangling-ref-carries-denied-call", "unknown-kind-carries-denied-call", "array-call-carries-denied-call",
                 "named-effect-array-call", "model-completed-proposes-denied-call", "effect-backdated-behind-later-record",
                 "text-arguments-rounded-number", "text-arguments-exact-numbers", "message-wrapper-carries-denied-call",
                 "outcome-of-granted-start-other-tool-no-arguments", "start-without-tool-call"]:
        assert want in ids


@pytest.mark.parametrize("c", cases(DOC, lambda c: c["kind"] == "statement"))
def test_statement_bytes(c):
    if c["statement"]["type"] == "stepchain-approval/v1":
        assert presented_digest(c["presented"]["name"], c["presented"]["arguments"]) == c["digest"] == c["statement"]["digest"]
    else:
        # v2: no unsalted digest anywhere; the statement binds the request record's step hash, recomputed from its line.
        assert "digest" not in c and "digest" not in c["statement"] and c["request_input"] == {"expires_at": None, "presented": c["presented"]}
        rec = json.loads(c["request_line"])
        assert rec["input"] == c["request_input"]
        bind = digest_bytes(c["request_line"].replace(f',"step_hash":"{rec["step_hash"]}"', "").encode())
        nine = {"bind": bind, **{k: rec[k] for k in ("kind", "prev_hash", "ref", "root", "seq", "step_id", "ts", "v")}}
        assert digest_bytes(canonical_json(nine).encode()) == rec["step_hash"] == c["statement"]["request_hash"]
        assert (c["statement"]["request"], c["statement"]["request_seq"]) == (rec["step_id"], rec["seq"])
    assert statement_bytes(c["statement"]).decode() == c["payload"] == canonical_json(c["statement"])
    assert pae(PAYLOAD_TYPE, statement_bytes(c["statement"])).decode() == c["pae"]
    key = base64.b64decode(c["public_key"])
    assert digest_bytes(key) == c["keyid"]
    sig = base64.b64decode(c["signature"])
    assert signature_defect(c["pae"].encode(), sig, key) is None
    flipped = dict(c["statement"], decision="denied")
    assert signature_defect(pae(PAYLOAD_TYPE, statement_bytes(flipped)), sig, key) is not None


def _report(r):
    return {"ok": r.ok, "problems": [p.summary(("seq", "field")) for p in r.problems],
            "notices": [p.summary(("seq",)) for p in r.notices], "approvals": r.approvals or []}


@pytest.mark.parametrize("c", cases(DOC, lambda c: c["kind"] == "chain"))
def test_chain(c):
    r = _verify(c)
    assert _report(r) == c["expect"]
    assert c["result"] == ("valid" if c["expect"]["ok"] else "invalid")
    assert all(len(p.message) > 10 for p in r.problems + r.notices)


# ------------------------------------------------------------------------------------------- our own attacks
# Chains built here with keys of our own (cryptography signs; the verifier checks with stepchain's own Ed25519), each
# sealed and linked correctly, so that whatever is found is the approval check's.

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402

from stepchain.formats import genesis_hash  # noqa: E402

GENESIS = {"format": "stepchain/v3", "journal_id": "py-approval-attacks", "created_at": "2026-11-27T10:00:00.000Z", "run": {"agent": "pytest"}}
G = genesis_hash(GENESIS)
CALL = {"arguments": {"amount": 120, "invoice": "INV-9"}, "name": "pay_invoice"}
DIGEST = presented_digest(CALL["name"], CALL["arguments"])


class Key:
    def __init__(self, name):
        self.name, self.sk = name, Ed25519PrivateKey.generate()
        self.raw = self.sk.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)

    def meta(self, statement, name=None):
        sig = self.sk.sign(pae(PAYLOAD_TYPE, statement_bytes(statement)))
        return {"approver": {"keyid": digest_bytes(self.raw), "name": self.name if name is None else name,
                             "public_key": base64.b64encode(self.raw).decode()}, "signature": base64.b64encode(sig).decode()}


ALICE, MALLORY = Key("alice"), Key("mallory")


def _rec(kind, step_id, ts, **members):
    return {"error": None, "input": None, "kind": kind, "model": None, "prompt": None, "ref": None, "result": None, "step_id": step_id,
            "tool_call": None, "ts": f"2026-11-27T10:00:{ts:02d}.000Z", "v": 3, **members}


class Chain:
    def __init__(self):
        self.lines, self.hashes, self.seqs, self.prev = [], {}, {}, G

    def add(self, rec):
        rec = dict(rec, seq=len(self.lines), prev_hash=self.prev)
        line, self.prev = seal_v3(rec)
        self.lines.append(line.rstrip("\n"))
        self.hashes[rec["step_id"]], self.seqs[rec["step_id"]] = self.prev, rec["seq"]
        return self

    def request(self, rid, ts, call=CALL, expires_at=None):
        return self.add(_rec("approval.requested", rid, ts, input={"digest": presented_digest(call["name"], call["arguments"]),
                                                                     "expires_at": expires_at, "presented": call}))

    def statement(self, rid, ts, decision="granted"):
        return {"decided_at": f"2026-11-27T10:00:{ts:02d}.000Z", "decision": decision, "digest": DIGEST, "genesis_hash": G, "reason": None,
                "request": rid, "request_hash": self.hashes[rid], "request_seq": self.seqs[rid], "type": "stepchain-approval/v1"}

    def decide(self, step_id, rid, ts, key=ALICE, decision="granted", statement=None, meta=None):
        s = statement or self.statement(rid, ts, decision)
        return self.add(_rec(f"approval.{decision}", step_id, ts, ref=rid, input=s, meta=meta or key.meta(s)))

    def effect(self, step_id, rid, ts, call=CALL, request_hash=None):
        approval = None if rid is None else {"request": rid, "request_hash": request_hash or self.hashes[rid]}
        return self.add(_rec("tool.started", step_id, ts, tool_call=call, **({} if approval is None else {"meta": {"approval": approval}})))

    def verify(self, pins=((ALICE.raw, "alice"),)):
        data = "".join(line + "\n" for line in self.lines).encode()
        r = verify_chain([(BUCKET, data)], GENESIS, allow_public=False, approvers=list(pins))
        return r, [(p.code, p.location.get("seq"), p.location.get("field")) for p in r.problems]


def _granted():
    return Chain().add(_rec("run.started", "s0", 0, input={"task": "pay"})).request("req-1", 1).decide("s2", "req-1", 2)


def test_attack_baseline_is_valid():
    r, codes = _granted().effect("s3", "req-1", 3).verify()
    assert codes == [] and r.ok
    assert r.approvals[0]["status"] == "granted" and r.approvals[0]["approver"] == {"keyid": digest_bytes(ALICE.raw), "name": "alice", "pinned": True}


def test_forged_grant_calling_itself_alice_is_an_unknown_approver():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1)
    c.decide("s2", "req-1", 2, meta=MALLORY.meta(c.statement("req-1", 2), name="alice")).effect("s3", "req-1", 3)
    r, codes = c.verify()
    assert codes == [("APPROVER_UNKNOWN", 2, "meta")]
    assert r.approvals[0]["approver"]["pinned"] is False


def test_keyid_of_another_key_is_invalid():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1)
    meta = MALLORY.meta(c.statement("req-1", 2))
    meta["approver"]["keyid"] = digest_bytes(ALICE.raw)  # claims alice's key id, carries mallory's key
    _, codes = c.decide("s2", "req-1", 2, meta=meta).effect("s3", "req-1", 3).verify()
    assert codes == [("APPROVAL_INVALID", 2, "meta"), ("APPROVAL_MISSING", 3, "meta")]


def test_malleable_signature_is_invalid():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1)
    meta = ALICE.meta(c.statement("req-1", 2))
    sig = base64.b64decode(meta["signature"])
    L = 2**252 + 27742317777372353535851937790883648493
    meta["signature"] = base64.b64encode(sig[:32] + (int.from_bytes(sig[32:], "little") + L).to_bytes(32, "little")).decode()
    _, codes = c.decide("s2", "req-1", 2, meta=meta).verify()
    assert codes == [("APPROVAL_INVALID", 2, "meta")]


def test_decided_at_other_than_ts_is_invalid():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1)
    s = c.statement("req-1", 1)  # signed for 10:00:01, stored at 10:00:02
    _, codes = c.decide("s2", "req-1", 2, statement=s).verify()
    assert codes == [("APPROVAL_INVALID", 2, "input")]


def test_effect_before_the_decision_is_missing():
    _, codes = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1).effect("s2", "req-1", 2).decide("s3", "req-1", 3).verify()
    assert codes == [("APPROVAL_MISSING", 2, "meta")]


def test_effect_with_another_request_hash_is_mismatch():
    _, codes = _granted().effect("s3", "req-1", 3, request_hash="sha256:" + "ab" * 32).verify()
    assert codes == [("APPROVAL_MISMATCH", 3, "meta")]


@pytest.mark.parametrize("call", [{"name": "pay_invoice"}, {"args": {"amount": 1200}, "name": "pay_invoice"}, "pay_invoice", None])
def test_effect_whose_call_is_not_a_presented_call_is_mismatch(call):
    # APPROVALS.md §5 step 3: nothing is withheld here, so the call is compared, and it is not the one presented.
    # (src/approval/ledger.ts reports these valid with an APPROVAL_UNCHECKED notice "withheld": a divergence, reported.)
    r, codes = _granted().effect("s3", "req-1", 3, call=call).verify()
    assert codes == [("APPROVAL_MISMATCH", 3, "tool_call")]
    assert [n.code for n in r.notices] == []


def test_repeated_request_id_is_invalid():
    _, codes = _granted().request("req-1", 3).verify()
    assert codes == [("APPROVAL_INVALID", 3, "step_id")]


def test_same_grant_record_copied_again_is_repeated():
    c = _granted()
    copy = json.loads(c.lines[2])
    _, codes = c.add(_rec("approval.granted", "s3", 2, ref="req-1", input=copy["input"], meta=copy["meta"])).verify()
    assert codes == [("APPROVAL_REPEATED", 3, "ref")]


def test_effect_after_expiry_and_unnamed_presented_call():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1, expires_at="2026-11-27T10:00:05.000Z").decide("s2", "req-1", 2)
    _, codes = c.effect("s3", None, 3).effect("s4", "req-1", 6).verify()
    assert codes == [("APPROVAL_MISSING", 3, "meta"), ("APPROVAL_EXPIRED", 4, "ts")]


def test_unpinned_keys_are_each_noticed_once():
    c = _granted().request("req-2", 3).decide("s4", "req-2", 4, key=MALLORY)
    r, codes = c.verify(pins=())
    assert r.ok and codes == []
    assert [(n.code, n.location["seq"]) for n in r.notices] == [("APPROVER_UNPINNED", 2), ("APPROVER_UNPINNED", 4)]


def test_hostile_approval_records_never_raise():
    hostile = [None, [], "x", 7, {"digest": 1}, {"presented": {"name": "", "arguments": 1}, "digest": DIGEST, "expires_at": None},
               {"presented": {"name": "a", "arguments": [1e300, -0.0, 2**60, "\u2028"]}, "digest": DIGEST, "expires_at": "2026-02-30T00:00:00Z"},
               {"presented": CALL, "digest": DIGEST, "expires_at": "tomorrow"}]
    for value in hostile:
        c = Chain().add(_rec("run.started", "s0", 0)).add(_rec("approval.requested", "req-1", 1, input=value))
        c.add(_rec("approval.granted", "s2", 2, ref="req-1", input=value, meta={"approver": value, "signature": 5}))
        c.add(_rec("approval.denied", "s3", 3, ref="req-1", input=value, meta=value if isinstance(value, dict) else {"approver": value}))
        c.add(_rec("tool.started", "s4", 4, tool_call=value, meta={"approval": {"request": value, "request_hash": value}}))
        c.add(_rec("tool.started", "s5", 5, tool_call=value, meta={"approval": value}))
        r, codes = c.verify()
        assert not r.ok
        assert codes[:3] == [("APPROVAL_INVALID", 1, "input"), ("APPROVAL_INVALID", 2, "input"), ("APPROVAL_INVALID", 3, "input")]


def test_decision_naming_no_request_and_kind_rules():
    _, codes = Chain().add(_rec("run.started", "s0", 0)).decide("s1", "req-9", 1, statement={"x": 1}, meta={}).verify()
    assert codes == [("APPROVAL_INVALID", 1, "ref")]
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1)
    s = c.statement("req-1", 2)
    _, codes = c.add(_rec("approval.granted", "s2", 2, input=s, meta=ALICE.meta(s))).verify()
    assert ("FIELD_INVALID", 2, "ref") in codes


def test_partial_range_reports_outside_requests_unchecked():
    from stepchain.chain import ChainVerifier, verify_file
    from stepchain.formats import format_of
    c = _granted().effect("s3", "req-1", 3)
    v = ChainVerifier(None, start={"seq": 2, "prev_hash": c.hashes["req-1"]}, fmt=format_of(GENESIS), allow_public=False,
                      approvers=[(ALICE.raw, "alice")])
    verify_file(v, "range.jsonl", "".join(line + "\n" for line in c.lines[2:]).encode())
    r = v.finish()
    assert r.ok, [p.code for p in r.problems]
    # The grant and the effect both name a request before the range: neither is checked, both are said (the effect since
    # the verifier reads every call from the range's start, APPROVALS.md §5 step 4).
    assert [(n.code, n.location["seq"]) for n in r.notices] == [("APPROVAL_UNCHECKED", 2), ("APPROVAL_UNCHECKED", 3)]


# ------------------------------------------------------------------------------------------- the CLI

def _journal_of(tmp_path, c):
    """A journal directory holding a vector chain: journal.json with the case's genesis, one bucket with its lines."""
    import subprocess  # noqa: F401
    from stepchain import open_journal
    path = tmp_path / c["id"]
    open_journal(str(path), fmt="stepchain/v3", fsync="none").close()
    meta = json.loads((path / "journal.json").read_text("utf-8"))
    (path / "journal.json").write_text(canonical_json({**meta, "genesis": c["genesis"]}) + "\n", "utf-8")
    (path / "buckets" / BUCKET).write_text("".join(line + "\n" for line in c["lines"]), "utf-8")
    for extra in (path / "head.json",):
        if extra.exists():
            extra.unlink()
    return str(path)


def test_cli_verify_with_approver(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    pkg = str(Path(__file__).resolve().parents[1])

    def run(*args):
        return subprocess.run([sys.executable, "-m", "stepchain", "verify", *args], capture_output=True, text=True, cwd=pkg, timeout=120)

    by_id = {c["id"]: c for c in DOC["cases"]}
    (tmp_path / "alice.pub").write_text(by_id["valid"]["approvers"][0]["public_key"], "ascii")
    (tmp_path / "mallory.pub").write_text(by_id["wrong-signer"]["approvers"][0]["public_key"], "ascii")
    valid = _journal_of(tmp_path, by_id["valid"])
    before = {p: p.read_bytes() for p in Path(valid).rglob("*") if p.is_file()}
    ok = run(valid, "--approver", str(tmp_path / "alice.pub"), "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["report"]["approvals"] == by_id["valid"]["expect"]["approvals"]
    assert "approved pay_invoice (request req-1, seq 1) by alice (pinned) at seq 2, executed at seq 3" in ok.stderr
    unpinned = run(valid, "--json")
    assert unpinned.returncode == 0 and [n["code"] for n in json.loads(unpinned.stdout)["report"]["notices"]] == ["APPROVER_UNPINNED"]
    assert "(not pinned)" in unpinned.stderr
    wrong = run(valid, "--approver", str(tmp_path / "mallory.pub"), "--json")
    assert wrong.returncode == 1 and [p["code"] for p in json.loads(wrong.stdout)["report"]["problems"]] == ["APPROVER_UNKNOWN"]
    denied = run(_journal_of(tmp_path, by_id["denied-then-executed"]), "--approver", str(tmp_path / "alice.pub"))
    assert denied.returncode == 1 and "APPROVAL_DENIED" in denied.stderr and "denied   pay_invoice" in denied.stderr
    (tmp_path / "bad.pub").write_text("not a key", "ascii")
    assert run(valid, "--approver", str(tmp_path / "bad.pub")).returncode == 2
    assert run(valid, "--approver", str(tmp_path / "alice.pub"), "--approver", str(tmp_path / "alice.pub")).returncode == 2
    assert {p: p.read_bytes() for p in Path(valid).rglob("*") if p.is_file()} == before  # read-only


def test_typescript_and_python_cli_agree(tmp_path):
    """The same journal directories and a partial receipt the TypeScript CLI exported, through both CLIs: the same
    problems, notices and approvals."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    cli = root / "dist" / "cli" / "main.js"
    node = shutil.which("node")
    if node is None or not cli.exists():
        pytest.skip("needs node and the built CLI (npm run build)")

    def both(*args):
        t = subprocess.run([node, str(cli), "verify", *args, "--json"], capture_output=True, text=True, timeout=300)
        p = subprocess.run([sys.executable, "-m", "stepchain", "verify", *args, "--json"], capture_output=True, text=True,
                           cwd=str(root / "python"), timeout=300)
        assert (t.returncode, p.returncode) in ((0, 0), (1, 1)), (t.stderr, p.stderr)
        t, p = json.loads(t.stdout)["report"], json.loads(p.stdout)["report"]
        pick = lambda ps: [(x["code"], x["location"]) for x in ps]  # noqa: E731
        assert pick(t["problems"]) == pick(p["problems"])
        assert pick(t["warnings"]) == pick(p["warnings"] + p["notices"])
        assert t.get("approvals") == p.get("approvals")
        return p

    by_id = {c["id"]: c for c in DOC["cases"]}
    (tmp_path / "alice.pub").write_text(by_id["valid"]["approvers"][0]["public_key"], "ascii")
    pin = ["--approver", str(tmp_path / "alice.pub")]
    valid = _journal_of(tmp_path, by_id["valid"])
    assert both(valid, *pin)["approvals"][0]["status"] == "granted"
    assert [x["code"] for x in both(_journal_of(tmp_path, by_id["signature-not-the-named-key"]))["problems"]] == ["APPROVAL_INVALID", "APPROVAL_MISSING"]
    receipt = str(tmp_path / "part.tar")
    subprocess.run([node, str(cli), "export", valid, "-o", receipt, "--from", "2"], check=True, capture_output=True, timeout=300)
    assert [x["code"] for x in both(receipt, *pin)["notices"]] == ["APPROVAL_UNCHECKED", "APPROVAL_UNCHECKED"]


# APPROVALS.md §4, §5.3, §5.4 as w-afix changed them (outsider findings): the whole tool_call is compared, an effect is
# dated no earlier than its grant nor than the chain before it, and a presented call recorded as another kind is found.

def test_effect_adding_a_member_the_approver_never_saw_is_mismatch():
    _, codes = _granted().effect("s3", "req-1", 3, call={**CALL, "summary": "pay 12 EUR"}).verify()
    assert codes == [("APPROVAL_MISMATCH", 3, "tool_call")]
    r, codes = _granted().effect("s3", "req-1", 3, call={**CALL, "call_id": "c-1", "idempotency_key": "k-1"}).verify()
    assert codes == [] and r.ok


def test_effect_dated_before_its_grant_is_missing():
    # Recorded after the grant in chain order, but its ts says it began before the approver decided.
    _, codes = _granted().effect("s3", "req-1", 1).verify()
    assert codes == [("APPROVAL_MISSING", 3, "ts")]


def test_backdated_effect_is_expired_by_chain_order():
    c = Chain().add(_rec("run.started", "s0", 0)).request("req-1", 1, expires_at="2026-11-27T10:00:05.000Z").decide("s2", "req-1", 2)
    c.add(_rec("step", "s3", 9, tool_call={"arguments": {}, "name": "lookup"}))  # a call at 10:00:09, past the expiry
    _, codes = c.effect("s4", "req-1", 4).verify()  # dated 10:00:04: before the expiry, but after a record of 10:00:09
    assert codes == [("APPROVAL_EXPIRED", 4, "ts")]


def test_presented_call_recorded_as_a_plain_step_is_missing():
    r, codes = _granted().add(_rec("step", "s3", 3, tool_call=CALL)).verify()
    assert codes == [("APPROVAL_MISSING", 3, "meta")]
    assert (r.approvals[0]["effect"], r.approvals[0]["effect_seq"]) == ("s3", 3)


def _part_ref(n):
    return {"$stepchain:part": {"digest": "sha256:" + f"{n:02x}" * 32, "file": "sha256:" + "ee" * 32, "size": 2048}}


def test_calls_with_part_references_compare_by_address():
    """APPROVALS.md §5.3 "Comparing calls": a part reference is in hand (never skipped as withheld); the call granted
    with a reference is run with the same reference, and a reference to another address is another call."""
    call = {"arguments": {"invoice": _part_ref(1)}, "name": "pay_invoice"}

    def chain():
        c = Chain().add(_rec("run.started", "s0", 0))
        c.add(_rec("approval.requested", "req-1", 1, input={"digest": DIGEST, "expires_at": None, "presented": call}))
        return c.decide("s2", "req-1", 2)
    r, codes = chain().effect("s3", "req-1", 3, call=call).verify()
    assert codes == [] and r.ok and [n.code for n in r.notices if n.code.startswith("APPROVAL")] == []
    _, codes = chain().effect("s3", "req-1", 3, call={"arguments": {"invoice": _part_ref(2)}, "name": "pay_invoice"}).verify()
    assert codes == [("APPROVAL_MISMATCH", 3, "tool_call")]
    _, codes = chain().add(_rec("step", "s3", 3, tool_call=call)).verify()
    assert codes == [("APPROVAL_MISSING", 3, "meta")]


def test_withheld_decision_and_meta_mark_requests_unchecked():
    """APPROVALS.md §5.5 and §6, on the ledger itself (a publication's records, parsed): a decision with withheld values
    leaves its request unchecked, so an effect for it is a notice, not missing; an effect whose meta is withheld could
    be any request's, so every request with no effect found is `unchecked`, never proven "never executed"."""
    from stepchain.approval import ApprovalLedger
    withheld = {"$stepchain:withheld": "sha256:" + "77" * 32}
    c = _granted().request("req-2", 3).effect("s4", "req-1", 4)
    records = [json.loads(line) for line in c.lines]
    records[2]["input"] = withheld  # the grant of req-1
    ledger = ApprovalLedger(G)
    for r in records:
        ledger.record(r)
    findings = [(f.code, f.seq, f.notice) for f in ledger.finish()]
    assert ("APPROVAL_UNCHECKED", 4, True) in findings and not any(not notice for _, _, notice in findings), findings
    assert [e.get("unchecked") for e in ledger.entries()] == [True, None]

    records = [json.loads(line) for line in _granted().request("req-2", 3).effect("s4", "req-1", 4).effect("s5", "req-2", 5).lines]
    records[5]["meta"] = withheld  # which request s5 was begun for is not in hand
    ledger = ApprovalLedger(G)
    for r in records:
        ledger.record(r)
    assert [(f.code, f.seq) for f in ledger.finish() if f.code != "APPROVER_UNPINNED"] == [("APPROVAL_UNCHECKED", 5)]
    assert [(e["effect"], e.get("unchecked")) for e in ledger.entries()] == [("s4", None), (None, True)]


def test_fork_copied_request_authorises_no_effect_in_the_fork():
    """APPROVALS.md §5.3, the fork rule: a fork whose steps 0..2 were copied from its parent (lineage from_step 2) holds
    the parent's request and grant; an effect in the fork's own records naming it would run the grant twice."""
    c = _granted().effect("s3", "req-1", 3)
    data = "".join(line + "\n" for line in c.lines).encode()
    pins = [(ALICE.raw, "alice")]
    r = verify_chain([(BUCKET, data)], GENESIS, allow_public=False, approvers=pins, forked_at=2)
    assert [(p.code, p.location.get("seq"), p.location.get("field")) for p in r.problems] == [("APPROVAL_MISSING", 3, "meta")]
    # The same chain not known as a fork, or forked after the effect, is valid.
    assert verify_chain([(BUCKET, data)], GENESIS, allow_public=False, approvers=pins).ok
    assert verify_chain([(BUCKET, data)], GENESIS, allow_public=False, approvers=pins, forked_at=3).ok


@pytest.mark.parametrize("tool_call", [
    {"$stepchain:erased": {"digest": "sha256:" + "1" * 64, "erasure": "erasure:3:x"}},
    {"arguments": {"amount": 120, "invoice": "INV-9"}, "$stepchain:erased": [{"digest": "sha256:" + "2" * 64, "erasure": "erasure:3:x"}]},
    {"name": "pay_invoice", "$stepchain:erased": [{"digest": "sha256:" + "3" * 64, "erasure": "erasure:3:x"}]},
])
def test_an_unnamed_call_erased_whole_or_by_member_is_unchecked(tool_call):
    """APPROVALS.md §5 step 5: an effect naming no request whose whole call, name or arguments were erased (a marker standing
    for the call, or for one of its members) could be the denied call: the request is unchecked, never "never executed"."""
    from stepchain.approval import ApprovalLedger
    ledger = ApprovalLedger(None)
    ledger.record({"kind": "approval.requested", "seq": 1, "step_id": "req-1", "step_hash": "sha256:" + "0" * 64,
                   "ts": "2026-11-27T10:00:01.000Z",
                   "input": {"expires_at": None, "presented": {"arguments": {"amount": 120, "invoice": "INV-9"}, "name": "pay_invoice"}}})
    ledger.record({"kind": "tool.started", "seq": 3, "step_id": "s3", "ts": "2026-11-27T10:00:03.000Z", "tool_call": tool_call})
    assert [f.code for f in ledger.finish()] == ["APPROVAL_UNCHECKED"]
    assert ledger.entries()[0].get("unchecked") is True and ledger.entries()[0]["effect"] is None


def test_a_completion_repeating_the_call_of_a_named_start_whose_call_was_erased_ran_nothing_more():
    """An effect's arguments erased from its start (§5 step 5: a notice) while its completion still carries the
    call: the completion repeats the call the start was begun for, it is not another execution (§5 step 4)."""
    from stepchain.approval import ApprovalLedger
    pay = {"arguments": {"amount": 120, "invoice": "INV-9"}, "name": "pay_invoice"}
    ledger = ApprovalLedger(None)
    ledger.record({"kind": "approval.requested", "seq": 1, "step_id": "req-1", "step_hash": "sha256:" + "0" * 64,
                   "ts": "2026-11-27T10:00:01.000Z", "input": {"expires_at": None, "presented": pay}})
    ledger.record({"kind": "tool.started", "seq": 2, "step_id": "s2", "ts": "2026-11-27T10:00:02.000Z",
                   "tool_call": {"name": "pay_invoice", "$stepchain:erased": [{"digest": "sha256:" + "2" * 64, "erasure": "e"}]},
                   "meta": {"approval": {"request": "req-1", "request_hash": "sha256:" + "0" * 64}}})
    ledger.record({"kind": "tool.completed", "seq": 3, "step_id": "s3", "ref": "s2", "ts": "2026-11-27T10:00:03.000Z", "tool_call": pay})
    # (The start itself has no grant here: that finding is the start's, at seq 2; none is the completion's.)
    assert [f.seq for f in ledger.finish()] == [2]
