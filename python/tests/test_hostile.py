"""Attacks an outsider would try, kept as tests: the verifiers never raise on hostile bytes (every defect is a
coded problem), and a Python writer SIGKILLed mid-append leaves a journal the next writer repairs and both
languages verify."""
import base64
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import load_vectors

from stepchain import open_journal, verify_journal_dir
from stepchain.chain import verify_chain
from stepchain.receipt import verify_published_receipt, verify_receipt

HELPERS = Path(__file__).resolve().parent / "helpers"


def _mutations(data: bytes, rng: random.Random, n: int):
    for _ in range(n):
        b = bytearray(data)
        kind = rng.randrange(4)
        if kind == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1 and b:
            del b[rng.randrange(len(b)):][: rng.randrange(1, 600)]
        elif kind == 2:
            at = rng.randrange(len(b) + 1)
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        else:
            b = b[: rng.randrange(len(b) + 1)]
        yield bytes(b)


def test_receipt_verifiers_never_raise_on_mutated_archives():
    rng = random.Random(42)
    receipts = [base64.b64decode(c["base64"]) for c in load_vectors("receipts.json")["cases"] if c["result"] == "valid" and len(c["base64"]) < 40000]
    published = [base64.b64decode(c["base64"]) for c in load_vectors("redaction.json")["cases"] if c["kind"] == "published" and c["result"] == "valid"]
    for data in receipts[:3] + published[:2]:
        for m in _mutations(data, rng, 40):
            r = verify_receipt(m)
            assert all(p.code and p.message for p in r.problems)
            assert [p.code for p in verify_receipt(m).problems] == [p.code for p in r.problems]  # same bytes, same report
            verify_published_receipt(m)


def test_chain_verifier_never_raises_on_mutated_lines():
    rng = random.Random(7)
    doc = load_vectors("chains.json")
    valid = next(c for c in doc["cases"] if c["expect"]["ok"] and c["expect"]["steps"] >= 5)
    data = "".join(f["text"] for f in valid["files"]).encode()
    for m in _mutations(data, rng, 150):
        r = verify_chain([("0000000000000000.jsonl", m)], doc["genesis"])
        assert all(p.code and p.message for p in r.problems)
        assert r.ok or r.problems  # (a cut at a line boundary is a valid shorter chain)


def test_sigkilled_python_writer_leaves_a_journal_the_next_writer_repairs(tmp_path):
    path = str(tmp_path / "j")
    open_journal(path, fsync="none").close()
    p = subprocess.Popen([sys.executable, str(HELPERS / "py_appender.py"), path, "100000", "k"])
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # wait until it has written something, then kill it mid-stream
        b = Path(path, "buckets", "0000000000000000.jsonl")
        if b.exists() and b.stat().st_size > 20_000:
            break
        time.sleep(0.01)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    before = verify_journal_dir(path)
    assert not [x for x in before.problems if x.code != "TRUNCATED_LINE"], [x.summary() for x in before.problems]
    j = open_journal(path, create=False, fsync="none")  # takes the dead writer's lock at once, repairs the tail
    at = j.append({"input": "after the crash"})
    j.close()
    after = verify_journal_dir(path)
    assert after.ok and after.warnings == [] and after.head_seq == at.seq


def test_v3_verifiers_never_raise_on_mutated_lines():
    """stepchain/v3 chains (private, sealed and public forms) through both tiers, and published v3 receipts and
    receipts with time-stamp tokens, byte-mutated: every defect a coded problem, never an exception."""
    rng = random.Random(3)
    v3 = next(c for c in load_vectors("v3.json")["cases"] if c["id"] == "chain-valid")
    erased = next(c for c in load_vectors("erasure.json")["cases"] if c["id"] == "erased-member")
    public = next(c for c in load_vectors("v3-publication.json")["cases"] if c["kind"] == "public-lines")
    genesis = {"created_at": "2026-01-01T00:00:00.000Z", "format": "stepchain/v3", "journal_id": "x", "run": {}}
    for lines, g in ((v3["lines"], v3["genesis"]), (erased["lines"], erased["genesis"]), (public["lines"], genesis)):
        data = "".join(l + "\n" for l in lines).encode()
        for m in _mutations(data, rng, 60):
            for deep in (False, True):
                r = verify_chain([("0000000000000000.jsonl", m)], g, deep=deep, allow_public=deep)
                assert all(p.code and p.message for p in r.problems)
    pubs = [base64.b64decode(c["base64"]) for c in load_vectors("v3-publication.json")["cases"] if c["id"] == "published-valid"]
    times = [base64.b64decode(c["base64"]) for c in load_vectors("time.json")["cases"] if c["id"] in ("timestamp-valid", "cosign-2-of-3")]
    from stepchain.attest import Cosigner, load_tsa_certificate
    tc = next(c for c in load_vectors("time.json")["cases"] if c["id"] == "timestamp-valid")
    cert = load_tsa_certificate(tc["tsa_certs"][0])
    for data in pubs + times:
        for m in _mutations(data, rng, 40):
            r = verify_published_receipt(m)
            r2 = verify_receipt(m, tsa_certs=[cert], cosigners=[Cosigner("x", bytes(32))])
            for p in r.problems + r2.problems:
                assert p.code and p.message
                assert "could not be read" not in p.message, p.message  # the catch-all for a bug: never reached
