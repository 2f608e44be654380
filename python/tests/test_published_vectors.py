"""Published receipts: the `published` cases of vectors/redaction.json (REDACTION.md §7) and of
vectors/commitments.json (§12.5, pinned to the original head, with the unbound places), driven as
test/redact/vectors.test.ts and test/redact/commitment-vectors.test.ts drive the TypeScript verifier."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.receipt import verify_published_receipt

REDACTION = load_vectors("redaction.json")
COMMITMENTS = load_vectors("commitments.json")


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] == "published"))
def test_published(c):
    r = verify_published_receipt(base64.b64decode(c["base64"]), public_key=c.get("publicKey"))
    e = c["expect"]
    assert [p.code for p in r.problems] == e["codes"]
    assert r.ok == e["ok"] == (c["result"] == "valid")
    if e["ok"]:
        assert r.redactions == e["redactions"]
        assert r.anchor == e["anchor"]
        if e.get("original_head"):
            assert r.head == e["original_head"]


@pytest.mark.parametrize("c", cases(COMMITMENTS, lambda c: c["kind"] == "published"))
def test_published_against_the_original_head(c):
    r = verify_published_receipt(base64.b64decode(c["base64"]), expect_head=c["expect_head"])
    assert r.ok == c["expect"]["ok"]
    assert [p.code for p in r.problems] == c["expect"]["codes"]
    if "unbound" in c["expect"]:
        assert r.unbound == c["expect"]["unbound"]


from stepchain.disclose import verify_disclosure, verify_hash_disclosure, verify_opening, verify_step_disclosure  # noqa: E402

_PUBLISHED = {c["id"]: base64.b64decode(c["base64"]) for c in REDACTION["cases"] if c["kind"] == "published"}
_V2_PUBLISHED = {c["id"]: base64.b64decode(c["base64"]) for c in COMMITMENTS["cases"] if c["kind"] == "published"}


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] in ("disclosure", "hash-disclosure", "step-disclosure")))
def test_disclosures(c):
    k = c["kind"]
    if k == "disclosure":
        r = verify_disclosure(_PUBLISHED[c["receipt"]], c["proof"])
        got = {"ok": True, "value": r.value} if r.ok else {"ok": False, "code": r.code}
    elif k == "hash-disclosure":
        r = verify_hash_disclosure(_PUBLISHED[c["receipt"]], c["proof"])
        got = {"ok": True, "step_hash": r.step_hash, "head": r.head} if r.ok else {"ok": False, "code": r.code}
    else:
        r = verify_step_disclosure(_PUBLISHED[c["receipt"]], c["proof"])
        got = {"ok": True, "step_hash": r.step_hash} if r.ok else {"ok": False, "code": r.code}
    assert got == c["expect"]
    assert (c["result"] == "valid") == c["expect"]["ok"]


@pytest.mark.parametrize("c", cases(COMMITMENTS, lambda c: c["kind"] == "opening"))
def test_openings(c):
    r = verify_opening(_V2_PUBLISHED[c["receipt"]], c["proof"])
    got = {"ok": True, "present": r.present, "value": r.value} if r.ok else {"ok": False, "code": r.code}
    assert got == c["expect"]


from stepchain.disclose import step_commitment, value_commitment  # noqa: E402


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] in ("commitment", "step-commitment")))
def test_commitments(c):
    got = value_commitment(c["salt"], c["value"]) if c["kind"] == "commitment" else step_commitment(c["salt"], c["step_hash"])
    assert got == c["commitment"]


from stepchain.policy import PolicyError, compile_policy  # noqa: E402


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] == "policy"))
def test_policies(c):
    if c["result"] == "valid":
        assert compile_policy(c["policy"])["digest"] == c["digest"]
    else:
        with pytest.raises(PolicyError) as e:
            compile_policy(c["policy"])
        assert e.value.code == c["error"]


from stepchain.redact import redact_step  # noqa: E402


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] == "redact"))
def test_redact(c):
    """Salts taken from the vector in order, as another implementation would (REDACTION.md §5.3)."""
    salts = iter([r["salt"] for r in c["redactions"]])
    fields, redactions = redact_step(compile_policy(c["policy"])["document"], c["seq"], c["fields"], lambda: next(salts))
    assert fields == c["expect"]
    assert [{k: r[k] for k in ("path", "rule", "commitment")} for r in redactions] == [{k: r[k] for k in ("path", "rule", "commitment")} for r in c["redactions"]]


from stepchain.publish_v1 import publish_v1, seeded_salts  # noqa: E402


@pytest.mark.parametrize("c", cases(REDACTION, lambda c: c["kind"] == "publish"))
def test_publish_reproduces_the_receipt(c):
    """§5.3: the same journal, policy, seeded salts and exporter give the TypeScript publisher's receipt byte for byte."""
    j = c["journal"]
    blobs = {b["digest"]: base64.b64decode(b["base64"]) for b in j["blobs"]}
    pub = publish_v1(j["genesis"], j["lines"], blobs, c["policy"], seeded_salts(c["seed"]), c["exporter"])
    assert pub.receipt == _PUBLISHED[c["expect"]["receipt"]]
    assert pub.original_head["step_hash"] == c["expect"]["original_head"]
    assert pub.steps == c["expect"]["steps"]
    assert verify_published_receipt(pub.receipt).ok


@pytest.mark.parametrize("c", cases(COMMITMENTS, lambda c: c["kind"] == "public-lines"))
def test_v2_public_lines(c):
    """commitments.json `public-lines` (REDACTION.md §12.2–§12.3): the public records of published-valid chain up with
    their stored step hashes, and every declaration names a marker or withheld slot that stands there."""
    import json as _json
    from stepchain.chain import verify_chain
    from stepchain.formats import journal_format
    first = _json.loads(c["lines"][0])
    r = verify_chain([("0000000000000000.jsonl", "".join(l + "\n" for l in c["lines"]).encode())], None,
                     start={"seq": first["seq"], "prev_hash": first["prev_hash"]}, fmt=journal_format("stepchain/v2"))
    assert r.ok and r.problems == [] and r.head == _json.loads(c["lines"][-1])["step_hash"]
    records = {(_json.loads(l)["seq"]): l for l in c["lines"]}
    for d in c["redactions"]:
        assert '"$stepchain:redacted"' in records[d["seq"]]
