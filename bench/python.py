"""The Python side of bench/python.mjs (issue 42): the Python writer's appends/s (one awaited append at a time, as
an agent appends) and the Python verifier's steps/s over a journal directory. Prints one JSON line."""
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from stepchain import open_journal, verify_journal_dir  # noqa: E402

mode, arg = sys.argv[1], sys.argv[2]
if mode == "append":
    n, fsync = int(arg), sys.argv[3]
    fmt = sys.argv[4] if len(sys.argv) > 4 else "stepchain/v1"
    root = tempfile.mkdtemp(prefix="stepchain-bench-py-")
    j = open_journal(root + "/j", fsync=fsync, fmt=fmt)
    t = time.perf_counter()
    for i in range(n):
        j.append({"input": {"i": i, "q": "what is the weather in Oslo"}, "model": "gpt-4o", "prompt": "You are a helpful agent.",
                  "tool_call": {"name": "weather", "arguments": {"city": "Oslo"}}, "result": {"temp": 4, "unit": "C"}})
    s = time.perf_counter() - t
    j.close()
    print(json.dumps({"appends_per_s": n / s, "n": n}))
elif mode == "verify":
    t = time.perf_counter()
    r = verify_journal_dir(arg, deep=len(sys.argv) > 3 and sys.argv[3] == "deep")
    s = time.perf_counter() - t
    assert r.ok, [p.summary() for p in r.problems[:3]]
    print(json.dumps({"steps_per_s": r.steps / s, "steps": r.steps, "ms": s * 1000}))
