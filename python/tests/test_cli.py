"""`python -m stepchain verify`: the TypeScript CLI's exit codes (0 valid, 1 invalid, 2 usage or I/O), --json on
stdout, people's text on stderr without raw control characters; the journal left byte-identical."""
import json
import os
import subprocess
import sys
from pathlib import Path

from stepchain import open_journal

PKG = str(Path(__file__).resolve().parents[1])


def run(*args):
    return subprocess.run([sys.executable, "-m", "stepchain", *args], capture_output=True, text=True, cwd=PKG, timeout=120)


def snapshot(path):
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            out[p] = open(p, "rb").read()
    return out


def test_exit_codes_and_json(tmp_path):
    path = str(tmp_path / "j")
    j = open_journal(path, fsync="none")
    for i in range(3):
        j.append({"input": i, "model": "m", "prompt": "p\u001b[31m", "result": "ok"})
    head = j.head()
    j.close()
    before = snapshot(path)
    ok = run("verify", path, "--json")
    assert ok.returncode == 0
    doc = json.loads(ok.stdout)
    assert doc["ok"] and doc["report"]["head"] == head["step_hash"] and doc["report"]["steps"] == 3
    assert run("verify", path, "--head", head["step_hash"]).returncode == 0
    assert run("verify", path, "--head", "sha256:" + "0" * 64).returncode == 1
    assert snapshot(path) == before, "verify is read-only"

    bucket = os.path.join(path, "buckets", "0000000000000000.jsonl")
    data = open(bucket, "rb").read().replace(b'"result":"ok"', b'"result":"\\u001b]0;pwned\\u0007"', 1)
    open(bucket, "wb").write(data)
    bad = run("verify", path, "--json")
    assert bad.returncode == 1
    doc = json.loads(bad.stdout)
    assert not doc["ok"] and doc["report"]["problems"][0]["code"] == "HASH_MISMATCH"
    assert "\x1b" not in bad.stderr and "\x07" not in bad.stderr


def test_usage_and_io_errors(tmp_path):
    assert run("verify").returncode == 2
    assert run("verify", str(tmp_path / "absent")).returncode == 2
    assert run("verify", str(tmp_path)).returncode == 2  # a directory that is no journal
    assert run("verify", str(tmp_path), "--head", "nope").returncode == 2
    assert run("frobnicate").returncode == 2


def test_receipts_plain_and_published(tmp_path):
    """A receipt file: plain, signed with its key pinned, and a published one held to REDACTION.md §7."""
    import base64
    from conftest import load_vectors
    receipts = {c["id"]: c for c in load_vectors("receipts.json")["cases"]}
    published = [c for c in load_vectors("redaction.json")["cases"] if c["kind"] == "published" and not c.get("publicKey")]
    plain = [c for c in receipts.values() if not c.get("options")]
    chosen = [next(c for c in plain if c["expect"]["ok"]), next(c for c in plain if not c["expect"]["ok"]),
              next(c for c in published if c["expect"]["ok"]), next(c for c in published if not c["expect"]["ok"])]
    for c in chosen:
        p = tmp_path / (c["id"] + ".tar")
        p.write_bytes(base64.b64decode(c["base64"]))
        assert run("verify", str(p)).returncode == (0 if c["expect"]["ok"] else 1), c["id"]
    signed = next(c for c in receipts.values() if c["result"] == "valid" and c.get("options", {}).get("publicKey"))
    (tmp_path / "s.tar").write_bytes(base64.b64decode(signed["base64"]))
    (tmp_path / "k.pub").write_text(signed["options"]["publicKey"] + "\n")
    (tmp_path / "bad.pub").write_text("not a key")
    assert run("verify", str(tmp_path / "s.tar"), "--pubkey", str(tmp_path / "k.pub")).returncode == 0
    assert run("verify", str(tmp_path / "s.tar"), "--pubkey", str(tmp_path / "bad.pub")).returncode == 2


def test_proof_files(tmp_path):
    """--proof FILE with the policy (PROOFS.md §9.6); a refused vkey or quorum is a usage error (exit 2)."""
    from conftest import load_vectors
    files = [c for c in load_vectors("proofs.json")["cases"] if c["kind"] == "proof-file" and "text" in c and not c.get("trusted")]
    for c in [next(c for c in files if c["expect"]["ok"]), next(c for c in files if not c["expect"]["ok"])]:
        p = tmp_path / c["id"]
        p.write_text(c["text"])
        args = ["verify", "--proof", str(p), "--log-key", c["policy"]["log"], *sum((["--witness", w] for w in c["policy"]["witnesses"]), []),
                "--quorum", str(c["policy"]["quorum"])]
        assert run(*args).returncode == (0 if c["expect"]["ok"] else 1), c["id"]
    assert run("verify", "--proof", str(p), "--log-key", "not+a+vkey").returncode == 2
    assert run("verify", "--proof", str(p), "--log-key", c["policy"]["log"], "--quorum", "01").returncode == 2


def test_v3_journals_and_time_pins(tmp_path):
    """stepchain/v3: fast and --deep tiers, a rewritten value found; receipts with RFC 3161 tokens and co-signatures
    against --tsa-cert, --cosigner and --threshold (TIME.md §7), an unusable certificate a usage error (exit 2)."""
    import base64
    from conftest import load_vectors
    j = open_journal(str(tmp_path / "v3"), fmt="stepchain/v3", fsync="none")
    j.append({"input": {"q": "x" * 100}, "model": "m", "prompt": None, "tool_call": None, "result": [1, 2]})
    j.close()
    assert run("verify", str(tmp_path / "v3"), "--deep").returncode == 0
    bucket = tmp_path / "v3" / "buckets" / "0000000000000000.jsonl"
    bucket.write_text(bucket.read_text("utf-8").replace("[1,2]", "[1,3]"), "utf-8")
    bad = run("verify", str(tmp_path / "v3"), "--json")
    assert bad.returncode == 1 and json.loads(bad.stdout)["report"]["problems"][0]["code"] == "HASH_MISMATCH"

    time = {c["id"]: c for c in load_vectors("time.json")["cases"]}
    for cid in ("timestamp-valid", "timestamp-wrong-tsa", "cosign-2-of-3", "cosign-quorum-not-met"):
        (tmp_path / f"{cid}.tar").write_bytes(base64.b64decode(time[cid]["base64"]))
    (tmp_path / "tsa.pem").write_text(time["timestamp-valid"]["tsa_certs"][0], "ascii")
    assert run("verify", str(tmp_path / "timestamp-valid.tar"), "--tsa-cert", str(tmp_path / "tsa.pem")).returncode == 0
    wrong = run("verify", str(tmp_path / "timestamp-wrong-tsa.tar"), "--tsa-cert", str(tmp_path / "tsa.pem"), "--json")
    assert wrong.returncode == 1 and json.loads(wrong.stdout)["report"]["problems"][0]["code"] == "TIMESTAMP_SIGNER"
    (tmp_path / "bad.pem").write_text("not a certificate", "ascii")
    assert run("verify", str(tmp_path / "timestamp-valid.tar"), "--tsa-cert", str(tmp_path / "bad.pem")).returncode == 2
    keys = []
    for c in time["cosign-2-of-3"]["cosigners"]:
        (tmp_path / f"{c['name']}.pub").write_text(c["public_key"], "ascii")
        keys += ["--cosigner", str(tmp_path / f"{c['name']}.pub")]
    assert run("verify", str(tmp_path / "cosign-2-of-3.tar"), *keys, "--threshold", "2").returncode == 0
    assert run("verify", str(tmp_path / "cosign-quorum-not-met.tar"), *keys, "--threshold", "2").returncode == 1


def test_an_unchecked_request_is_never_shown_as_proven():
    """APPROVALS.md §5 step 5, §6: a request the report marks `unchecked` is shown as not proven, never as "never
    executed" or "executed" (the TypeScript CLI's and the page's words)."""
    from stepchain.cli import approval_lines
    base = {"tool": "pay", "approver": None, "request": "req-1", "request_seq": 1, "decision_seq": 2, "status": "denied"}
    none_found = approval_lines([{**base, "effect_seq": None, "unchecked": True}])[0]
    assert "never executed" not in none_found and "no effect found, not proven (APPROVAL_UNCHECKED" in none_found
    begun = approval_lines([{**base, "status": "granted", "effect_seq": 4, "unchecked": True}])[0]
    assert "executed at seq" not in begun and "an effect begun at seq 4, not checked against the call" in begun
    assert approval_lines([{**base, "effect_seq": None}])[0].endswith(", never executed")
