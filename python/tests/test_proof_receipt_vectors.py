"""vectors/proof-receipts.json (RECEIPT.md §4.5, PROOFS.md §9.8), driven as test/proofs/receipt-vectors.test.ts is."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.proofs import Checkpoint, Policy, parse_verifier_key
from stepchain.receipt import verify_receipt

DOC = load_vectors("proof-receipts.json")


@pytest.mark.parametrize("c", cases(DOC))
def test_proof_receipts(c):
    p = DOC["policies"][c["policy"]] if "policy" in c else None
    policy = Policy(parse_verifier_key(p["log"]), [parse_verifier_key(w) for w in p["witnesses"]], p["quorum"]) if p else None
    t = c.get("trusted")
    trusted = Checkpoint(t["origin"], t["size"], base64.b64decode(t["root"])) if t else None
    r = verify_receipt(base64.b64decode(c["base64"]), policy=policy, trusted=trusted, consistency=c.get("consistency"))
    assert {"ok": r.ok, "codes": [x.code for x in r.problems]} == c["expect"]
    assert (c["result"] == "valid") == c["expect"]["ok"]
