"""vectors/lineage.json (spec/APPROVALS.md §4.1, §8) through the Python receipt verifier: receipts of stepchain/v3 forks
whose manifest carries `lineage`, with the pinned approvers, giving the same ok, problems (code, seq, field or path) and
approvals as the TypeScript verifier. Then the lineage member attacked: its fork point moved, or dropped (re-tarred,
unsigned), changes what the copied grant may do."""
import base64
import json

import pytest
from conftest import cases, load_vectors

from stepchain.canonical import canonical_json
from stepchain.receipt import ustar_header, verify_receipt

DOC = load_vectors("lineage.json")


def _pins(c):
    return [(base64.b64decode(a["public_key"]), a["name"]) for a in c["approvers"]]


def _verify(data, c):
    return verify_receipt(data, approvers=_pins(c))


def _summary(r):
    problems = [p.summary(("seq", "field", "path")) for p in r.problems]
    approvals = [{"request": a["request"], "request_seq": a["request_seq"], "status": a["status"], "effect_seq": a["effect_seq"],
                  **({"unchecked": True} if a.get("unchecked") else {})} for a in (r.approvals or [])]
    return {"ok": r.ok, "problems": problems, "approvals": approvals}


def test_covers_the_spec_cases():
    assert [c["id"] for c in DOC["cases"]] == ["fork-asks-again", "fork-uses-copied-grant", "fork-lineage-hash-mismatch",
                                               "fork-holding-parent-steps-past-from-step"]


@pytest.mark.parametrize("c", cases(DOC))
def test_lineage_vector(c):
    r = _verify(base64.b64decode(c["receipt"]), c)
    assert r.manifest is not None and r.manifest["lineage"] == c["lineage"]
    assert _summary(r) == c["expect"]
    assert ("valid" if r.ok else "invalid") == c["result"]


def _entries(data: bytes):
    """(name, body) of each entry of a bare ustar archive, in order (the vectors' receipts are such)."""
    at = 0
    while data[at:at + 512].strip(b"\0"):
        h = data[at:at + 512]
        name, size = h[:100].rstrip(b"\0").decode(), int(h[124:135].decode(), 8)
        yield name, data[at + 512:at + 512 + size]
        at += 512 + (size + 511) // 512 * 512


def _with_manifest(data: bytes, edit) -> bytes:
    """The receipt re-tarred with its manifest edited (edit(manifest) -> manifest), its other entries as they were."""
    out = b""
    for name, body in _entries(data):
        if name == "manifest.json":
            body = canonical_json(edit(json.loads(body))).encode()
        out += ustar_header(name, len(body)) + body + b"\0" * ((512 - len(body) % 512) % 512)
    return out + b"\0" * 1024


def test_the_fork_rule_comes_from_the_lineage_member():
    """fork-uses-copied-grant without its lineage is a plain chain whose grant ran once: valid. The member is what
    makes the copied grant authorise nothing; a receipt that leaves it out is §8's hand-made second chain."""
    c = next(x for x in DOC["cases"] if x["id"] == "fork-uses-copied-grant")
    data = base64.b64decode(c["receipt"])
    dropped = _with_manifest(data, lambda m: {k: v for k, v in m.items() if k != "lineage"})
    r = _verify(dropped, c)
    assert r.ok, [p.summary() for p in r.problems]
    assert [a["effect_seq"] for a in r.approvals] == [3]


def test_a_lineage_moved_past_the_grant_is_refused():
    """Moving from_step forward (to 3, the effect's seq) so the grant at seq 2 looks like the fork's own: the step
    hash at the new from_step is not parent_step_hash, MANIFEST_INVALID."""
    c = next(x for x in DOC["cases"] if x["id"] == "fork-uses-copied-grant")
    data = base64.b64decode(c["receipt"])
    moved = _with_manifest(data, lambda m: {**m, "lineage": {**m["lineage"], "from_step": 3}})
    r = _verify(moved, c)
    assert not r.ok
    assert any(p.code == "MANIFEST_INVALID" and p.location.get("path") == "/lineage/parent_step_hash" for p in r.problems)


def test_a_lineage_of_another_shape_is_refused():
    c = DOC["cases"][0]
    data = base64.b64decode(c["receipt"])
    for bad in [{"from_step": -1, "parent_step_hash": c["lineage"]["parent_step_hash"]}, {"from_step": 2},
                {**c["lineage"], "parent_journal": "r"}, "2", None]:
        r = _verify(_with_manifest(data, lambda m, bad=bad: {**m, "lineage": bad}), c)
        assert not r.ok and r.problems[0].code == "MANIFEST_INVALID", bad
