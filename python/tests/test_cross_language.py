"""Held to the TypeScript writer byte for byte (issue 42): what Python writes, the TypeScript CLI verifies, exports
and reads; what TypeScript writes, Python verifies and extends; and both languages append to one journal at once
from real processes, leaving one unbroken chain with every step. Needs the built CLI (npm run build)."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepchain import open_journal, start_run, verify_journal_dir

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "dist" / "cli" / "main.js"
HELPERS = Path(__file__).resolve().parent / "helpers"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None or not CLI.exists(), reason="needs node and the built CLI (npm run build)")


def ts(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([NODE, str(CLI), *args], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"stepchain {' '.join(args)} exited {p.returncode}: {p.stderr}")
    return p


def ts_verify(path: str) -> dict:
    p = ts("verify", path, "--json", check=False)
    doc = json.loads(p.stdout)
    assert p.returncode == (0 if doc["ok"] else 1)
    return doc


def test_python_writes_typescript_verifies_exports_and_reads(tmp_path):
    j = open_journal(str(tmp_path / "plain"), blob_threshold=1024, fsync="none")
    for i in range(3):
        j.append({"input": {"i": i, "text": "é☃𝄞\u2028"}, "model": "m", "prompt": "p", "tool_call": {"name": "t", "arguments": {"x": 0.1 * i}},
                  "result": "r" * (3000 if i == 1 else 3), "meta": {"n": 1e21, "f": -0.0}})
    j.close()
    doc = ts_verify(str(tmp_path / "plain"))
    assert doc["ok"] and doc["report"]["steps"] == 3 and doc["report"]["problems"] == [] and doc["report"]["warnings"] == []
    assert os.listdir(tmp_path / "plain" / "blobs" / "sha256"), "the long result went to a blob"
    ts("export", str(tmp_path / "plain"), "-o", str(tmp_path / "r.tar.gz"))
    assert ts_verify(str(tmp_path / "r.tar.gz"))["ok"]
    shown = json.loads(ts("show", str(tmp_path / "plain"), "1", "--json").stdout)
    assert json.dumps(shown).count("r" * 3000) == 1, "the blob is restored by the TypeScript reader"
    assert ts("head", str(tmp_path / "plain")).stdout.split()[0] in (doc["report"]["head"], str(doc["report"]["head_seq"]))

    run = start_run(str(tmp_path / "runs"), agent="py-agent", conversation_id="c1", input={"task": "t"}, fsync="none")
    m = run.begin_model(model="test", prompt="hi")
    m.complete("ok", tool_calls=[{"id": "call-1", "name": "search"}])
    e = run.begin_tool("search", {"q": "x"}, call_id="call-1")
    e.complete({"hits": 1})
    run.begin_tool("send", {"to": "bob"}, idempotency_key="k1")  # killed here: no outcome
    run.close()
    path = str(tmp_path / "runs" / run.run_id)
    assert ts_verify(path)["ok"]
    listed = ts("effect", "list", path, "--json").stdout
    assert '"send"' in listed and "started" in listed
    assert ts("continuation", path).stdout.strip() == "4"
    runs = ts("runs", str(tmp_path / "runs"), "--json").stdout
    assert run.run_id in runs and "c1" in runs
    index = (tmp_path / "runs" / ".runs.jsonl").read_text()  # FILE-STORE.md §14, as the TypeScript store writes it
    assert json.loads(index.splitlines()[0]) == {"id": run.run_id, "run_id": run.run_id, "created_at": run.journal.genesis["created_at"],
                                                  "run": {"agent": "py-agent", "conversation_id": "c1"}, "fork_of": None}


def test_typescript_writes_python_verifies_and_extends(tmp_path):
    j = str(tmp_path / "tsj")
    ts("init", j, "--blob-threshold", "1024")
    steps = "".join(json.dumps({"input": {"i": i}, "model": "m", "prompt": "p", "tool_call": None, "result": "x" * (2000 if i == 2 else 1)}) + "\n" for i in range(5))
    subprocess.run([NODE, str(CLI), "append", j, "--jsonl"], input=steps, text=True, check=True, capture_output=True)
    r = verify_journal_dir(j)
    assert r.ok and r.steps == 5 and r.warnings == []
    assert r.head == ts_verify(j)["report"]["head"]
    pj = open_journal(j, create=False, fsync="none")
    assert pj.head() == {"seq": 4, "step_hash": r.head}
    pj.append({"input": {"i": 5}, "model": "m", "prompt": "p", "result": "from python"})
    pj.close()
    assert verify_journal_dir(j).ok
    doc = ts_verify(j)
    assert doc["ok"] and doc["report"]["steps"] == 6

    rj = str(tmp_path / "tsrun")
    ts("init", rj, "--run", "--agent", "ts-agent")
    eid = ts("effect", "begin", rj, "--tool", "pay", "--args", '{"amount":5}').stdout.strip()
    ts("effect", "end", rj, eid, "--result", '{"ok":true}')
    ts("effect", "begin", rj, "--tool", "ship", "--args", "{}")
    r = verify_journal_dir(rj)
    assert r.ok and r.steps == 4
    from stepchain import resume_run
    run = resume_run(str(tmp_path), "tsrun", fsync="none")
    assert [e.tool for e in run.pending_effects()] == ["ship"]
    assert run.continuation_point()["seq"] == 2
    run.close()


def test_both_languages_append_to_one_journal_at_once(tmp_path):
    path = str(tmp_path / "shared")
    open_journal(path, fsync="none").close()
    per = 40
    procs = [subprocess.Popen([NODE, str(HELPERS / "ts_appender.mjs"), str(tmp_path), "shared", str(per), f"t{k}"]) for k in range(2)]
    procs += [subprocess.Popen([sys.executable, str(HELPERS / "py_appender.py"), path, str(per), f"p{k}"]) for k in range(2)]
    for p in procs:
        assert p.wait(timeout=600) == 0
    r = verify_journal_dir(path)
    assert r.ok, [p.summary() for p in r.problems]
    assert r.steps == 4 * per and r.warnings == []
    doc = ts_verify(path)
    assert doc["ok"] and doc["report"]["steps"] == 4 * per and doc["report"]["head"] == r.head
    j = open_journal(path, create=False)
    writers = {}
    for rec in j.read():
        w = rec["input"]["writer"]
        assert rec["input"]["i"] == writers.get(w, -1) + 1, "each writer's steps in its own order"
        writers[w] = rec["input"]["i"]
    assert writers == {"t0": per - 1, "t1": per - 1, "p0": per - 1, "p1": per - 1}


def test_typescript_publishes_what_python_wrote(tmp_path):
    """A stepchain/v2 journal Python wrote, published by the TypeScript CLI (REDACTION.md §12): the publication
    verifies against the original head in both languages."""
    from stepchain.receipt import verify_published_receipt
    j = open_journal(str(tmp_path / "j"), fmt="stepchain/v2", fsync="none")
    j.append({"input": {"q": "hi"}, "prompt": "secret prompt", "result": "mail bob@example.com"})
    j.append({"input": {"q": "x"}, "tool_call": {"name": "http", "arguments": {"api_key": "sk-abcdefghijklmnopqrstuvwxyz"}}})
    head = j.head()["step_hash"]
    j.close()
    (tmp_path / "p.json").write_text('{"rules":[{"id":"prompts","paths":["/prompt"]},{"id":"secrets","detectors":["api-key","email"]}]}')
    ts("publish", str(tmp_path / "j"), "--policy", str(tmp_path / "p.json"), "--opt-in", "-o", str(tmp_path / "pub.tar"))
    data = (tmp_path / "pub.tar").read_bytes()
    assert b"sk-abcdefghijklmnopqrstuvwxyz" not in data and b"secret prompt" not in data
    r = verify_published_receipt(data, expect_head=head)
    assert r.ok and r.redactions == 4, [p.code for p in r.problems]
    assert ts("verify", str(tmp_path / "pub.tar"), "--head", head).returncode == 0


def test_checkpoints_signed_by_typescript_over_what_python_appended(tmp_path):
    """The TypeScript log catches its Merkle tree up over steps Python appended (FILE-STORE.md §16), and Python's
    verify --checkpoint checks a journal against a checkpoint the TypeScript CLI signed (PROOFS.md §9.8 step 3)."""
    import re
    j = str(tmp_path / "j")
    ts("keygen", "-o", str(tmp_path / "k"))
    ts("init", j)
    subprocess.run([NODE, str(CLI), "append", j], input='{"input":0}', text=True, check=True, capture_output=True)
    out = ts("checkpoint", j, "--sign", str(tmp_path / "k"), "-o", str(tmp_path / "c1"), "--authority", "example.com").stderr
    vkey = re.search(r"--log-key\): (\S+)", out).group(1)
    pj = open_journal(j, create=False, fsync="none")
    for i in range(1, 6):
        pj.append({"input": i})
    pj.close()
    assert "at size 6" in ts("checkpoint", j, "--sign", str(tmp_path / "k"), "-o", str(tmp_path / "c2")).stderr
    py = lambda *a: subprocess.run([sys.executable, "-m", "stepchain", "verify", j, *a], capture_output=True, cwd=str(ROOT / "python"), timeout=120).returncode  # noqa: E731
    assert py("--checkpoint", str(tmp_path / "c1"), "--log-key", vkey) == 0
    assert py("--checkpoint", str(tmp_path / "c2"), "--log-key", vkey) == 0
    # A journal truncated below the checkpoint no longer extends it (SIZE_DECREASED): exit 1.
    bucket = tmp_path / "j" / "buckets" / "0000000000000000.jsonl"
    lines = bucket.read_bytes().split(b"\n")
    bucket.write_bytes(lines[0] + b"\n")
    assert py("--checkpoint", str(tmp_path / "c2"), "--log-key", vkey) == 1


def _bucket_lines(path) -> list[str]:
    return (Path(path) / "buckets" / "0000000000000000.jsonl").read_text("utf-8").splitlines()


def test_typescript_writes_v3_python_verifies_and_publishes_the_same(tmp_path):
    """stepchain/v3 (FORMAT.md §14, PARTS.md, REDACTION.md §13): the TypeScript writer's journal — a long prompt
    stored as a part — verifies in Python in both tiers with TypeScript's head, its receipt (with the part entry)
    verifies, its publication verifies against the original head, and Python's public form of each record is the
    line TypeScript published, byte for byte. Then a part file is altered and a value rewritten: both are found."""
    import tarfile
    from stepchain.policy import compile_policy
    from stepchain.publish_v3 import public_record
    from stepchain.receipt import verify_published_receipt, verify_receipt
    j = str(tmp_path / "j")
    ts("init", j, "--format", "v3")
    steps = [{"input": {"note": "Please contact alice.liddell+test@example.org about the overdue invoice INV-9 before Friday."},
              "model": "m", "prompt": "Call the API.", "result": {"status": 200},
              "tool_call": {"name": "http", "arguments": {"api_key": "k-live-0123456789abcdef", "url": "https://api.example.com/v1"}}},
             {"input": None, "model": "m", "prompt": [{"role": "user", "content": "summarize this page " * 80}], "tool_call": None,
              "result": ["é☃𝄞\u2028", 1e21, -0.0, {"": None}]}]
    for s in steps:
        (tmp_path / "s.json").write_text(json.dumps(s), "utf-8")
        ts("append", j, "-f", str(tmp_path / "s.json"))
    assert any((tmp_path / "j" / "parts").rglob("*")), "the long prompt went to a part"
    doc = ts_verify(j)
    for deep in (False, True):
        r = verify_journal_dir(j, deep=deep)
        assert r.ok and r.problems == [] and r.head == doc["report"]["head"] and r.steps == 2, r.problems

    ts("export", j, "-o", str(tmp_path / "r.tar"))
    r = verify_receipt((tmp_path / "r.tar").read_bytes())
    assert r.ok and r.head == doc["report"]["head"], r.problems

    policy = {"rules": [{"id": "tool-secrets", "paths": ["/tool_call/arguments/api_key"], "tools": ["http"]},
                        {"id": "secrets", "detectors": ["email"]}]}
    (tmp_path / "p.json").write_text(json.dumps(policy), "utf-8")
    (tmp_path / "one").mkdir()
    ts("init", str(tmp_path / "one" / "j"), "--format", "v3")
    (tmp_path / "s.json").write_text(json.dumps(steps[0]), "utf-8")
    ts("append", str(tmp_path / "one" / "j"), "-f", str(tmp_path / "s.json"))
    ts("publish", str(tmp_path / "one" / "j"), "--policy", str(tmp_path / "p.json"), "--opt-in", "-o", str(tmp_path / "pub.tar"))
    private = _bucket_lines(tmp_path / "one" / "j")
    pub = verify_published_receipt((tmp_path / "pub.tar").read_bytes(), expect_head=json.loads(private[-1])["step_hash"])
    assert pub.ok and pub.redactions == 2, pub.problems
    with tarfile.open(tmp_path / "pub.tar") as t:
        published = t.extractfile("chain/0000000000000000.jsonl").read().decode("utf-8").splitlines()
    assert [public_record(line, compile_policy(policy)["document"])[0] for line in private] == published
    # the whole publication is determined by the journal (the seeds decide every salt): Python's is TypeScript's, byte for byte
    from stepchain.publish_v3 import publish_v3
    exporter = json.loads(tarfile.open(tmp_path / "pub.tar").extractfile("manifest.json").read())["exporter"]
    genesis = json.loads((tmp_path / "one" / "j" / "journal.json").read_text("utf-8"))["genesis"]
    assert publish_v3(genesis, [("0000000000000000.jsonl", private)], policy, exporter)[0] == (tmp_path / "pub.tar").read_bytes()

    part = next(p for p in (tmp_path / "j" / "parts").rglob("*") if p.is_file() and "index" not in p.parts and p.name != "key")
    part.write_bytes(part.read_bytes().replace(b"summarize", b"Summarize", 1))
    assert [p.code for p in verify_journal_dir(j).problems] == ["PART_CORRUPT"]
    assert ts_verify(j)["ok"] is False
    lines = _bucket_lines(j)
    lines[0] = lines[0].replace('"status":200', '"status":201')
    (tmp_path / "j" / "buckets" / "0000000000000000.jsonl").write_text("".join(l + "\n" for l in lines), "utf-8")
    assert "HASH_MISMATCH" in [p.code for p in verify_journal_dir(j).problems]


def test_python_writes_v3_typescript_verifies_deep(tmp_path):
    """A stepchain/v3 journal the Python writer sealed, its large values stored once as parts (PARTS.md §3: a value
    part, a list part on the previous list, a media part, a repeat found through the index by a second process):
    TypeScript verifies it in the deep tier (roots and part addresses), reads every step back as appended, and
    Python verifies TypeScript's receipt of it (with its part entries)."""
    import base64 as b64
    from stepchain.receipt import verify_receipt
    png = b64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 6).decode("ascii")
    chat = [{"role": "user", "content": "Summarize the page. " * 5}, {"role": "assistant", "content": "Reading it. é☃𝄞 " * 7}]
    steps = [{"input": {"i": 0, "\"q/~": [True, None, 1e21, -0.0]}, "model": "m", "prompt": chat, "tool_call": None, "result": {"text": "long " * 80}},
             {"input": None, "model": "m", "prompt": chat + [{"role": "user", "content": [{"type": "file", "mediaType": "image/png", "data": png}]}],
              "tool_call": {"name": "t", "arguments": {"x": 0.1}}, "result": {"text": "long " * 80}, "step_id": "s1"}]
    j = open_journal(str(tmp_path / "j"), fmt="stepchain/v3", fsync="none", part_threshold=256)
    for s in steps:
        j.append(s)
    j.close()
    again = open_journal(str(tmp_path / "j"), fsync="none", part_threshold=256)
    assert again.append(steps[1]).seq == 1  # a retry from another process: the parts are found again, not copied
    head = again.head()
    fields = ("input", "model", "prompt", "tool_call", "result")
    assert [{k: r[k] for k in fields} for r in again.read(blobs=True)] == [{k: s[k] for k in fields} for s in steps]
    again.close()
    kinds = sorted(("list" if b'"tail":' in f.read_bytes() else "media" if b"\n" in f.read_bytes() else "value")
                   for f in (tmp_path / "j" / "parts").glob("[0-9a-f][0-9a-f]/*"))
    assert kinds == ["list", "media", "value", "value", "value"]  # the first list, the image message, the long text
    p = ts("verify", str(tmp_path / "j"), "--deep", "--json", check=False)
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["ok"] and doc["report"]["head"] == head["step_hash"], p.stderr
    for seq, s in enumerate(steps):
        shown = json.loads(ts("show", str(tmp_path / "j"), str(seq), "--json").stdout)["step"]
        assert {k: shown[k] for k in ("input", "model", "prompt", "tool_call", "result")} == {k: s[k] for k in ("input", "model", "prompt", "tool_call", "result")}
    ts("export", str(tmp_path / "j"), "-o", str(tmp_path / "r.tar"))
    r = verify_receipt((tmp_path / "r.tar").read_bytes())
    assert r.ok and r.head == head["step_hash"], r.problems


def test_typescript_erases_python_verifies(tmp_path):
    """ERASURE.md: values erased by the TypeScript CLI (a member and an element) leave a journal Python verifies in both
    tiers, with one VALUE_ERASED notice per erased value, naming its erasure record; the erased value is gone."""
    j = str(tmp_path / "j")
    ts("init", j, "--format", "v3")
    (tmp_path / "s.json").write_text(json.dumps({"input": {"customer": "c-17"}, "model": None, "prompt": None, "tool_call": None,
                                                 "result": {"email": "alice@example.org", "plan": "pro", "tags": ["vip", "x-secret-tag"]}}), "utf-8")
    ts("append", j, "-f", str(tmp_path / "s.json"))
    ts("erase", j, "--seq", "0", "--path", "/result/email", "--reason", "GDPR Art. 17", "--by", "dpo@example.org")
    ts("erase", j, "--seq", "0", "--path", "/result/tags/1", "--reason", "request", "--by", "dpo")
    for deep in (False, True):
        r = verify_journal_dir(j, deep=deep)
        assert r.ok, r.problems
        assert [(n.code, n.location["seq"], n.location["path"]) for n in r.notices if n.code == "VALUE_ERASED"] == [
            ("VALUE_ERASED", 0, "/result/email"), ("VALUE_ERASED", 0, "/result/tags/1")]
    text = (tmp_path / "j" / "buckets" / "0000000000000000.jsonl").read_text("utf-8")
    assert "alice@example.org" not in text and "x-secret-tag" not in text
    # Someone with write access drops the erasure records: the markers are unrecorded.
    lines = text.splitlines()
    (tmp_path / "j" / "buckets" / "0000000000000000.jsonl").write_text(lines[0] + "\n", "utf-8")
    (tmp_path / "j" / "head.json").unlink()
    assert [p.code for p in verify_journal_dir(j).problems] == ["ERASURE_UNRECORDED", "ERASURE_UNRECORDED"]


def test_v3_run_journals_across_languages(tmp_path):
    """A stepchain/v3 run journal (FORMAT.md §14, RUNS.md): an effect TypeScript began and never ended is pending for
    a Python run resumed on the same journal (continuation before it, the same call refused), and the records Python
    adds — with a tool argument large enough to be a part — verify in TypeScript's deep tier."""
    from stepchain import resume_run
    from stepchain.runtime import RuntimeError_
    ts("init", str(tmp_path / "runs" / "r1"), "--format", "v3", "--run")
    started = ts("effect", "begin", str(tmp_path / "runs" / "r1"), "--tool", "send", "--args", '{"to":"bob"}').stdout.strip()
    (tmp_path / "runs" / "r1" / ".run-state.json").unlink(missing_ok=True)  # what another machine or a crash leaves: the records alone
    run = resume_run(str(tmp_path / "runs"), "r1", fsync="none")
    assert [e.id for e in run.pending_effects()] == [started]
    with pytest.raises(RuntimeError_) as refused:
        run.begin_tool("send", {"to": "bob"})
    assert refused.value.code == "EFFECT_PENDING"
    run.resolve_effect(started, "done", reason="the provider shows it delivered")
    effect = run.begin_tool("search", {"q": "x" * 3000})
    effect.complete({"hits": 1})
    run.close()
    p = ts("verify", str(tmp_path / "runs" / "r1"), "--deep", "--json", check=False)
    assert p.returncode == 0 and json.loads(p.stdout)["ok"], p.stderr
    again = resume_run(str(tmp_path / "runs"), "r1", fsync="none")
    assert again.pending_effects() == [] and [e.args for e in again.effects() if e.tool == "search"] == [{"q": "x" * 3000}]
    again.close()


def test_a_python_writer_keeps_writing_after_a_typescript_erasure(tmp_path):
    """ERASURE.md §4: an erasure replaces the bucket file (rename) with lines of other lengths. A Python writer and a
    Python reader that kept their view of the tail across it read the bucket afresh, append after it and read on;
    both languages verify the result."""
    j = str(tmp_path / "j")
    ts("init", j, "--format", "v3")
    writer = open_journal(j, fsync="none")
    writer.append({"input": {"who": "alice@example.org"}, "model": None, "prompt": None, "tool_call": None, "result": {"ok": True}})
    writer.append({"input": {"q": 1}, "model": None, "prompt": None, "tool_call": None, "result": None})
    reader = open_journal(j, read_only=True)
    assert [r["seq"] for r in reader.read(0)] == [0, 1]
    ts("erase", j, "--seq", "0", "--path", "/input/who", "--reason", "request")
    at = writer.append({"input": {"q": 2}, "model": None, "prompt": None, "tool_call": None, "result": None})
    assert at.seq == 3  # after the erasure record, seq 2
    assert [r["seq"] for r in reader.read(2)] == [2, 3]
    writer.close()
    reader.close()
    assert verify_journal_dir(j).ok and ts_verify(j)["ok"]


def test_python_erases_typescript_verifies(tmp_path):
    """ERASURE.md §4: Python erases a member, an element and then a second member of a record (the second from its
    sealed form) in a journal TypeScript wrote; TypeScript and Python verify it with one VALUE_ERASED per value; the
    values and their salts are gone; a retried erasure appends nothing; an interrupted one (the record appended, the
    bucket not yet rewritten) is pending until resume completes it."""
    from stepchain.erase import erase, resume
    j = str(tmp_path / "j")
    ts("init", j, "--format", "v3")
    (tmp_path / "s.json").write_text(json.dumps({"input": {"customer": {"id": "c-17", "email": "alice@example.org"}}, "model": None,
                                                 "prompt": None, "tool_call": None, "result": {"email": "alice@example.org", "plan": "pro",
                                                 "tags": ["vip", "secret-tag-1"]}}), "utf-8")
    ts("append", j, "-f", str(tmp_path / "s.json"))
    head_before = ts_verify(j)["report"]["head"]
    first = erase(j, 0, "/result/email", "GDPR Art. 17 request #118", "dpo@example.org", fsync="none")
    assert first["erasure"] == 1 and first["erasure_id"].startswith("erasure:0:")
    erase(j, 0, "/result/tags/1", "request", None, fsync="none")
    erase(j, 0, "/input/customer/email", "request", "dpo", fsync="none")
    doc = ts_verify(j)
    assert doc["ok"] and doc["report"]["steps"] == 4
    erased = [w for w in doc["report"]["warnings"] if w["code"] == "VALUE_ERASED"]
    assert len(erased) == 3, doc["report"]["warnings"]
    r = verify_journal_dir(j, deep=True)
    assert r.ok and sorted(n.location["path"] for n in r.notices if n.code == "VALUE_ERASED") == ["/input/customer/email", "/result/email", "/result/tags/1"]
    text = (tmp_path / "j" / "buckets" / "0000000000000000.jsonl").read_text("utf-8")
    assert "alice@example.org" not in text and "secret-tag-1" not in text
    assert json.loads(text.splitlines()[0])["step_hash"] == head_before  # the erased record keeps its step hash
    with pytest.raises(Exception) as again:
        erase(j, 0, "/result/email", "again", fsync="none")
    assert getattr(again.value, "code", None) == "ERASURE_TARGET_INVALID"
    # interrupted: the erasure record is there, the value too (what a kill between §4 steps 4 and 6 leaves)
    ts("init", str(tmp_path / "j3"), "--format", "v3")
    ts("append", str(tmp_path / "j3"), "-f", str(tmp_path / "s.json"))
    stored = _bucket_lines(tmp_path / "j3")
    from stepchain import open_journal as _open
    w = _open(str(tmp_path / "j3"), fsync="none")
    from stepchain.erase import units_of
    d = "sha256:" + next(u for u in units_of(json.loads(stored[0]))["result"] if u.path == "/result/plan").digest.hex()
    w.append({"kind": "erasure", "ref": None, "error": None, "input": {"by": None, "digest": d, "path": "/result/plan", "reason": "r", "target": 0},
              "model": None, "prompt": None, "tool_call": None, "result": None, "step_id": f"erasure:0:{d[7:39]}"}, _erasure_writer=True)
    w.close()
    assert [n.code for n in verify_journal_dir(str(tmp_path / "j3")).notices if n.code == "ERASURE_PENDING"] == ["ERASURE_PENDING"]
    assert resume(str(tmp_path / "j3"), fsync="none") == [f"erasure:0:{d[7:39]}"]
    r3 = verify_journal_dir(str(tmp_path / "j3"))
    assert r3.ok and [n.code for n in r3.notices if n.code.startswith(("ERASURE", "VALUE"))] == ["VALUE_ERASED"]
    assert ts_verify(str(tmp_path / "j3"))["ok"]


REFUSED_V3 = [
    ("a step of kind erasure", {"kind": "erasure", "ref": None, "input": {"target": 0}, "result": None}, "ERASURE_RESERVED"),
    ("a step_id reserved to erasing", {"step_id": "erasure:0:abc", "input": {"q": 1}}, "ERASURE_RESERVED"),
    ("a request expiring on a day that does not exist", {"kind": "approval.requested", "ref": None, "input": {
        "presented": {"name": "pay", "arguments": {}}, "expires_at": "2026-02-30T10:00:00.000Z"}}, "APPROVAL_INVALID"),
    ("a request presenting a tool name of 256 bytes", {"kind": "approval.requested", "ref": None, "input": {
        "presented": {"name": "é" * 127, "arguments": {}}, "expires_at": None}}, "APPROVAL_INVALID"),
    ("a request with the unsalted digest of statement v1", {"kind": "approval.requested", "ref": None, "input": {
        "presented": {"name": "pay", "arguments": {}}, "expires_at": None, "digest": "sha256:" + "0" * 64}}, "APPROVAL_LEGACY"),
]


@pytest.mark.parametrize("what,step,code", REFUSED_V3, ids=[c[0] for c in REFUSED_V3])
def test_python_refuses_what_typescript_refuses_in_a_v3_run(tmp_path, what, step, code):
    path = str(tmp_path / "j")
    ts("init", path, "--run", "--format", "v3")
    before = _bucket_lines(tmp_path / "j")
    (tmp_path / "s.json").write_text(json.dumps(step), "utf-8")
    p = ts("append", path, "-f", str(tmp_path / "s.json"), check=False)
    assert p.returncode != 0 and code in p.stderr, p.stderr
    j = open_journal(path, create=False, fsync="none")
    with pytest.raises(Exception) as refused:
        j.append(step)
    j.close()
    assert getattr(refused.value, "code", None) == code, str(refused.value)
    assert _bucket_lines(tmp_path / "j") == before


def test_many_requests_of_one_tool_list_the_same_notices_in_both_languages(tmp_path):
    """n requests of a tool and n calls of it with other arguments: n² pairs, each a notice (APPROVALS.md §5 step 4);
    both verifiers list the first 1 000 and count the rest, the same way (outsider I: n = 4 000 ran out of memory)."""
    path = str(tmp_path / "j")
    ts("init", path, "--run", "--format", "v3")
    n = 60
    steps = [{"kind": "approval.requested", "step_id": f"req-{i}", "ref": None,
              "input": {"presented": {"name": "t", "arguments": {"i": i}}, "expires_at": None}} for i in range(n)]
    steps += [{"kind": "step", "step_id": f"st-{i}", "tool_call": {"name": "t", "arguments": {"x": i}}} for i in range(n)]
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in steps), "utf-8")
    ts("append", path, "-f", str(tmp_path / "s.jsonl"), "--jsonl")
    r = verify_journal_dir(path)
    py = [(w.code, w.message) for w in r.notices if w.code == "APPROVAL_UNCHECKED"]
    assert r.ok and len(py) == 1001 and py[-1][1] == f"{n * n - 1000} more approval notices like those above are not listed (the first 1000 are)"
    doc = ts_verify(path)
    ts_notices = [(w["code"], w["message"]) for w in doc["report"]["warnings"] if w["code"] == "APPROVAL_UNCHECKED"]
    assert ts_notices == py
