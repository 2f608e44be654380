"""vectors/chains.json, the chains of runs.json and commitments.json (spec/FORMAT.md §6, §11, §12), driven as the
TypeScript vector tests drive them: the same report, problem for problem, code and location."""
import pytest
from conftest import cases, load_vectors, vector_bytes

from stepchain.canonical import canonical_json, digest_utf8
from stepchain.chain import ChainVerifier, declared_first_seq, split_lines, verify_chain
from stepchain.formats import genesis_defect
from stepchain.formats.v2 import slot_digest, slot_salts, SLOTS

CHAINS = load_vectors("chains.json")
RUNS = load_vectors("runs.json")
COMMITMENTS = load_vectors("commitments.json")


def _report(r, keys):
    return {"ok": r.ok, "head": r.head, "head_seq": r.head_seq, "steps": r.steps, "problems": [p.summary(keys) for p in r.problems]}


@pytest.mark.parametrize("c", cases(CHAINS))
def test_chains(c):
    opts = {k: c[v] for k, v in (("start", "start"), ("expect_head", "expect_head")) if v in c}
    r = verify_chain([(f["name"], vector_bytes(f)) for f in c["files"]], c.get("genesis", CHAINS["genesis"]), **opts)
    assert _report(r, ("file", "line", "column", "seq", "field")) == c["expect"]
    assert all(len(p.message) > 10 for p in r.problems)


@pytest.mark.parametrize("c", cases(CHAINS))
def test_chains_line_by_line(c):
    """Feeding lines one at a time (as a store streams them) gives the same report as whole files."""
    opts = {k: c[k] for k in ("start", "expect_head") if k in c}
    v = ChainVerifier(c.get("genesis", CHAINS["genesis"]), **opts)
    for f in c["files"]:
        v.begin_segment(f["name"], declared_first_seq(f["name"]))
        lines, torn = split_lines(vector_bytes(f))
        for ln in lines:
            v.line(ln, True)
        if torn is not None:
            v.line(torn, False)
    assert _report(v.finish(), ("file", "line", "column", "seq", "field")) == c["expect"]


@pytest.mark.parametrize("c", cases(RUNS, lambda c: c["group"] == "chains"))
def test_runs_chains(c):
    r = verify_chain([(f["name"], vector_bytes(f)) for f in c["files"]], c.get("genesis", RUNS["genesis"]))
    assert _report(r, ("line", "seq", "field")) == c["expect"]


@pytest.mark.parametrize("c", cases(RUNS, lambda c: c["group"] == "genesis"))
def test_runs_genesis(c):
    if c["result"] == "valid":
        assert genesis_defect(c["genesis"]) is None
        assert canonical_json(c["genesis"]) == c["genesis_jcs"]
        assert digest_utf8(c["genesis_jcs"]) == c["genesis_hash"]
    else:
        assert genesis_defect(c["genesis"]) is not None
        assert c["expected_code"] == "GENESIS_INVALID"


@pytest.mark.parametrize("c", cases(RUNS, lambda c: c["group"] == "records"))
def test_runs_records(c):
    r = verify_chain([("records.jsonl", c["line"].encode())], RUNS["genesis"],
                     start={"seq": c["record"]["seq"], "prev_hash": c["record"]["prev_hash"]})
    assert [p.code for p in r.problems] == []
    assert r.head == c["step_hash"] == digest_utf8(c["preimage"])


@pytest.mark.parametrize("c", cases(COMMITMENTS, lambda c: c["kind"] in ("chain", "slot-salt", "slot-digest")))
def test_commitments(c):
    if c["kind"] == "chain":
        r = verify_chain([("0000000000000000.jsonl", "".join(l + "\n" for l in c["lines"]).encode())], c["genesis"])
        assert {"ok": r.ok, "head": r.head, "codes": [p.code for p in r.problems]} == c["expect"]
    elif c["kind"] == "slot-salt":
        assert slot_salts(c["record_salt"])[SLOTS.index(c["slot"])] == c["salt"]
    else:
        text = None if c.get("absent") else canonical_json(c["value"])
        assert slot_digest(c["salt"], c["slot"], text) == c["digest"]


@pytest.mark.parametrize("c", cases(RUNS, lambda c: c["group"] == "chains" and "run" in c))
def test_runs_reader(c):
    """What a run reader derives from a valid run journal (RUNS.md §2–§3, §5)."""
    import json as _json

    from stepchain.runs import run_state
    data = vector_bytes(c["files"][0])
    records = [] if not data else [_json.loads(l) for l in data.decode().rstrip("\n").split("\n")]
    st = run_state(records)
    run = c["run"]
    assert [{"id": e.id, "seq": e.seq, "tool": e.tool, "args": e.args, "call_id": e.call_id, "idempotency_key": e.idempotency_key,
             "summary": e.summary, "status": e.status, "end_seq": e.end_seq} for e in st.effects.values()] == run["effects"]
    assert [e.id for e in st.pending()] == run["pending"]
    assert [{"id": m.id, "seq": m.seq, "status": m.status, "end_seq": m.end_seq} for m in st.models.values()] == run["models"]
    assert st.continuation == run["continuation"]
    assert st.status == run["status"]
    assert [{"seq": a["seq"], "code": a["code"]} for a in st.anomalies] == run["anomalies"]
    if "resolutions" in run:
        assert {e.id: e.resolution for e in st.effects.values() if e.resolution is not None} == run["resolutions"]
        assert {e.id: e.retry_of for e in st.effects.values() if e.retry_of is not None} == run["retry_of"]
