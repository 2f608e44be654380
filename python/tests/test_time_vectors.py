"""vectors/time.json (spec/TIME.md §7): receipts with RFC 3161 tokens and co-signatures, verified with the pins
the case gives (TSA certificates, co-signer keys, threshold): ok and the problem codes in order."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.attest import AttestError, Cosigner, load_tsa_certificate
from stepchain.receipt import verify_receipt

TIME = load_vectors("time.json")


@pytest.mark.parametrize("c", cases(TIME))
def test_time(c):
    certs = [load_tsa_certificate(p) for p in c.get("tsa_certs", [])]
    cosigners = [Cosigner(x["name"], base64.b64decode(x["public_key"])) for x in c.get("cosigners", [])]
    r = verify_receipt(base64.b64decode(c["base64"]), tsa_certs=certs, cosigners=cosigners, threshold=c.get("threshold"))
    assert {"ok": r.ok, "codes": [p.code for p in r.problems]} == c["expect"]
    assert r.ok == (c["result"] == "valid")
    assert all(p.message.startswith(p.code) for p in r.problems)
    if c["id"] == "timestamp-valid":
        assert r.attest["timestamps"] == [{"seq": 5, "step_hash": r.head, "checked": True, "gen_time": "2026-11-27T13:24:55.000Z",
                                           "tsa": "stepchain vectors TSA", "serial": 2}]


def test_an_unusable_tsa_certificate_is_the_callers_error():
    with pytest.raises(AttestError):
        load_tsa_certificate("not a certificate")


def test_hostile_tokens_are_problems():
    """Every prefix of a real token and single-byte flips give a coded problem, never an exception."""
    from stepchain.attest import _TokenProblem, check_token
    c = next(c for c in TIME["cases"] if c["id"] == "timestamp-valid")
    import json, tarfile, io
    with tarfile.open(fileobj=io.BytesIO(base64.b64decode(c["base64"]))) as t:
        m = json.loads(t.extractfile("manifest.json").read())
    import hashlib
    from stepchain.attest import timestamp_subject
    from stepchain.formats import genesis_hash
    e = m["timestamps"][0]
    token = base64.b64decode(e["token"])
    imprint = hashlib.sha256(timestamp_subject(genesis_hash(m["genesis"]), e["seq"], e["step_hash"])).digest()
    cert = load_tsa_certificate(c["tsa_certs"][0])
    assert check_token(token, imprint, cert).serial == 2
    for cut in range(0, len(token), 97):
        with pytest.raises(_TokenProblem):
            check_token(token[:cut], imprint, cert)
    from stepchain.der import whole
    carried = next(x for x in whole(token).children()[1].children()[0].children() if x.tag == 0xA0)  # SignedData's certificates
    for at in range(0, len(token), 61):
        bad = bytearray(token)
        bad[at] ^= 0x40
        try:
            check_token(bytes(bad), imprint, cert)
            assert carried.body <= at < carried.end  # the certificates a token carries are not read (TIME.md §11)
        except _TokenProblem:
            pass
