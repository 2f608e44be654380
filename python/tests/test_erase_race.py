"""Erases of nested units racing across the two languages (spec/ERASURE.md §4): a Python erase held after its check
(STEPCHAIN_TEST_ERASE_GATE, as the TypeScript writer's) while the TypeScript CLI erases the unit inside or around
it, then let go. Exactly one erase happens; the Python one, whose record would follow a head another erasure of the
same record has since passed, goes back, checks afresh and is refused (ERASURE_TARGET_INVALID), nothing written —
before, it appended its record regardless and the journal named a unit that exists nowhere. And a Python erase while a
TypeScript process appends back to back completes while it appends. Real processes; needs the built CLI."""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stepchain import open_journal, verify_journal_dir

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "dist" / "cli" / "main.js"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None or not CLI.exists(), reason="needs node and the built CLI (npm run build)")

INNER, OUTER = "/result/customer/email", "/result/customer"
ERASE = "import json, sys; from stepchain.erase import erase\n" \
        "try:\n    print(json.dumps(erase(sys.argv[1], 0, sys.argv[2], 'GDPR Art. 17', fsync='none')))\n" \
        "except Exception as e:\n    print(json.dumps({'code': getattr(e, 'code', None), 'message': str(e)}))\n"


def journal(tmp_path: Path) -> str:
    path = str(tmp_path / "j")
    j = open_journal(path, fmt="stepchain/v3", fsync="none")
    j.append({"input": {"q": "who"}, "model": "m", "prompt": "p", "result": {"customer": {"email": "ivan.race@example.org", "plan": "pro"}}})
    j.close()
    return path


def python_erase(path: str, pointer: str, gate: str) -> subprocess.Popen:
    env = {**os.environ, "STEPCHAIN_TEST_ERASE_GATE": gate, "PYTHONPATH": str(ROOT / "python")}
    return subprocess.Popen([sys.executable, "-c", ERASE, path, pointer], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def erasure_records(path: str) -> list[dict]:
    j = open_journal(path, create=False, fsync="none")
    try:
        return [r for r in j.read(0) if r.get("kind") == "erasure"]
    finally:
        j.close()


@pytest.mark.parametrize("held,other", [(OUTER, INNER), (INNER, OUTER)])
def test_a_python_erase_held_after_its_check_is_refused_once_typescript_erased_a_nested_unit(tmp_path, held, other):
    path = journal(tmp_path)
    gate = str(tmp_path / "gate")
    racer = python_erase(path, held, gate)
    deadline = time.monotonic() + 60
    while not os.path.exists(gate + ".ready") and racer.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert os.path.exists(gate + ".ready"), racer.communicate()
    ts = subprocess.run([NODE, str(CLI), "erase", path, "--seq", "0", "--path", other, "--reason", "GDPR Art. 17", "--json"],
                        capture_output=True, text=True, timeout=120)
    assert ts.returncode == 0, ts.stderr
    Path(gate).touch()
    out, err = racer.communicate(timeout=120)
    refused = json.loads(out.strip().splitlines()[-1])
    assert refused.get("code") == "ERASURE_TARGET_INVALID", (out, err)
    assert [r["input"]["path"] for r in erasure_records(path)] == [other]
    assert verify_journal_dir(path).ok
    v = subprocess.run([NODE, str(CLI), "verify", path, "--json"], capture_output=True, text=True, timeout=120)
    assert json.loads(v.stdout)["ok"], v.stdout


APPENDER = """
const { FileStore } = await import(process.argv[1]);
const { existsSync, writeFileSync } = await import('node:fs');
const store = new FileStore(process.argv[2], { fsync: 'none' });
const j = await store.open('j');
for (let n = 0; !existsSync(process.argv[3]); n++) {
  if (n % 2 === 0) await j.append({ input: { n }, result: n });
  else await j.appendMany([0, 1, 2].map((k) => ({ input: { n, k }, result: k })));
  writeFileSync(process.argv[4], String(n + 1));
}
await j.close();
"""


def test_a_python_erase_completes_while_a_typescript_process_appends_back_to_back(tmp_path):
    path = journal(tmp_path)
    stop, count = str(tmp_path / "stop"), str(tmp_path / "count")
    appender = subprocess.Popen([NODE, "--input-type=module", "-e", APPENDER, str(ROOT / "dist" / "store" / "index.js"), str(tmp_path), stop, count],
                                stderr=subprocess.PIPE, text=True)
    seen = [0]

    def appended() -> int:
        try:
            seen[0] = max(seen[0], int(Path(count).read_text()))
        except (OSError, ValueError):  # not written yet, or read while it is rewritten
            pass
        return seen[0]

    try:
        deadline = time.monotonic() + 60
        while appended() < 5 and appender.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert appended() >= 5, appender.stderr.read() if appender.poll() is not None else "the appender did not start"
        racer = python_erase(path, INNER, "")
        out, err = racer.communicate(timeout=90)
        done = json.loads(out.strip().splitlines()[-1])
        assert done.get("path") == INNER, (out, err)
        during = appended()
        deadline = time.monotonic() + 60
        while appended() <= during and appender.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert appended() > during, "the appender had stopped: the erase was not made while it appended"
    finally:
        Path(stop).touch()
        appender.wait(timeout=60)
    assert appender.returncode == 0, appender.stderr.read()
    r = verify_journal_dir(path)
    assert r.ok and [n.code for n in r.notices if n.code == "VALUE_ERASED"] == ["VALUE_ERASED"]
