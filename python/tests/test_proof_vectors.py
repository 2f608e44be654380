"""vectors/proofs.json (spec/PROOFS.md §12), driven as test/proofs/vectors.test.ts drives the TypeScript code."""
import base64

import pytest
from conftest import cases, load_vectors, vector_bytes

from stepchain.proofs import (Checkpoint, Policy, ProofError, TreeFrontier, check_witness_update, journal_origin, open_note, parse_verifier_key,
                              step_leaf_hash, verify_checkpoint, verify_consistency, verify_proof_document, verify_range)

PROOFS = load_vectors("proofs.json")
b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
unb64 = lambda s: base64.b64decode(s)  # noqa: E731


def policy_of(p):
    return Policy(parse_verifier_key(p["log"]), [parse_verifier_key(w) for w in p["witnesses"]], p["quorum"])


def head_of(h):
    return None if h is None else Checkpoint(h["origin"], h["size"], unb64(h["root"]))


def verdict(problem):
    return {"ok": True} if problem is None else {"ok": False, "code": problem.code}


def run(x):
    k = x["kind"]
    if k == "roots":
        t = TreeFrontier()
        roots = [b64(t.root())]
        for s in x["steps"]:
            t.append(step_leaf_hash(s))
            roots.append(b64(t.root()))
        assert [b64(step_leaf_hash(s)) for s in x["steps"]] == x["leaf_hashes"]
        assert roots == x["roots"]
        return None
    if k == "inclusion":
        leaves = [step_leaf_hash(s) for s in x["steps"]]
        if any(l is None for l in leaves):
            return {"ok": False, "code": "PROOF_MALFORMED"}
        return verdict(verify_range(x["from"], x["to"], x["size"], leaves, [unb64(h) for h in x["hashes"]], unb64(x["root"])))
    if k == "consistency":
        return verdict(verify_consistency(x["old_size"], unb64(x["old_root"]), x["size"], unb64(x["root"]), [unb64(h) for h in x["hashes"]]))
    if k == "tree-state":
        try:
            t = TreeFrontier.parse(x["state"])
            return {"ok": True, "size": t.size, "root": b64(t.root())}
        except ProofError as e:
            return {"ok": False, "error": e.code}
    if k == "vkey":
        try:
            v = parse_verifier_key(x["vkey"])
            return {"name": v.name, "key_id": "%08x" % v.key_id, "type": v.type, "public_key": b64(v.public_key)}
        except ProofError as e:
            return {"error": e.code}
    if k == "note":
        note, verified, problems = open_note(x["text"], [parse_verifier_key(v) for v in x["vkeys"]])
        return {"ok": True, "codes": [], "verified": verified, "text": note.text} if not problems else {"ok": False, "codes": [p.code for p in problems]}
    if k == "checkpoint":
        r = verify_checkpoint(x["text"], policy_of(x["policy"]))
        return {"ok": r.ok, "codes": [p.code for p in r.problems],
                "checkpoint": r.checkpoint and {"origin": r.checkpoint.origin, "size": r.checkpoint.size, "root": b64(r.checkpoint.root)},
                "cosignatures": [{"name": n, "timestamp": t} for n, t in r.cosignatures]}
    if k == "witness":
        return verdict(check_witness_update(head_of(x["last"]), head_of(x["next"]), [unb64(h) for h in x["hashes"]], x.get("old_size")))
    if k == "proof-file":
        data = x["text"] if "text" in x else vector_bytes(x)
        r = verify_proof_document(data, policy_of(x["policy"]), head_of(x.get("trusted")))
        out = {"ok": r.ok, "codes": [p.code for p in r.problems], "type": r.type}
        if "from" in x["expect"]:
            out.update({"from": r.frm, "to": r.to})
        return out
    if k == "origin":
        try:
            return {"origin": journal_origin(x["parts"]["authority"], x["parts"]["journal_id"], x["parts"]["genesis_hash"])}
        except ProofError as e:
            return {"error": e.code}
    raise AssertionError(k)


@pytest.mark.parametrize("c", cases(PROOFS))
def test_proofs(c):
    expected = c.get("expect")
    assert run(c) == expected
    valid = not (expected and (expected.get("ok") is False or "error" in expected))
    assert c["result"] == ("valid" if valid else "invalid")
