"""vectors/receipts.json (spec/RECEIPT.md), driven as test/receipt/vectors.test.ts drives the TypeScript verifier:
the verdict, every problem code in order, and the receipt facts each case gives."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.receipt import decode_public_key, verify_receipt

RECEIPTS = load_vectors("receipts.json")


@pytest.mark.parametrize("c", cases(RECEIPTS))
def test_receipts(c):
    o = c.get("options", {})
    r = verify_receipt(base64.b64decode(c["base64"]), public_key=o.get("publicKey"), expect_head=o.get("expectHead"))
    e = dict(c["expect"])
    assert r.ok == e.pop("ok") == (c["result"] == "valid")
    assert [p.code for p in r.problems] == e.pop("codes")
    rng = e.pop("range", None)
    if rng is not None:
        assert {k: r.range.get(k) for k in rng} == rng
    for k, v in e.items():
        assert getattr(r, k) == v, k


def test_pinned_key_forms():
    """RECEIPT.md §5.2: raw 32 bytes, base64, SPKI PEM; anything else is unusable, never "no pin"."""
    key = next(c["options"]["publicKey"] for c in RECEIPTS["cases"] if c["result"] == "valid" and c.get("options", {}).get("publicKey"))
    raw = base64.b64decode(key)
    pem = "-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(bytes.fromhex("302a300506032b6570032100") + raw).decode() + "\n-----END PUBLIC KEY-----\n"
    for form in (raw, key, f"  {key}\n", pem, pem.encode()):
        assert decode_public_key(form)[0] == raw
    for bad in (b"", "", " \n", raw[:31], key.rstrip("=") , raw.hex(), "-----BEGIN PRIVATE KEY-----\nAA==\n-----END PRIVATE KEY-----", bytes(32)):
        assert decode_public_key(bad)[0] is None, bad
