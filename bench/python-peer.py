"""The peer bernstein's (Python, PyPI `bernstein`) per-step journal measured as bench/python.py measures stepchain's:
appends/s, one append at a time with the same step content, and verify steps/s. bernstein's append opens the
bucket, writes one line and closes it, with no fsync and no cross-process lock (its single-writer convention), so
its figure sits beside stepchain's fsync 'none' row. Run by bench/python.mjs --bernstein=<a Python ≥ 3.12 with
bernstein installed>. Prints one JSON line."""
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

from bernstein.core.persistence.journal import Journal, JournalReader

n = int(sys.argv[1])
root = Path(tempfile.mkdtemp(prefix="bernstein-bench-")) / "agent"
j = Journal.open(root)
t = time.perf_counter()
for i in range(n):
    inp = json.dumps({"i": i, "q": "what is the weather in Oslo"}).encode()
    j.append(input_hash=hashlib.sha256(inp).hexdigest(), model="gpt-4o", prompt="You are a helpful agent.",
             tool_call={"name": "weather", "arguments": {"city": "Oslo"}}, tool_result={"temp": 4, "unit": "C"})
append_s = time.perf_counter() - t
j.close()
t = time.perf_counter()
result = JournalReader(root).verify()
verify_s = time.perf_counter() - t
assert result.ok and result.steps == n, result
print(json.dumps({"appends_per_s": n / append_s, "steps_per_s": n / verify_s, "n": n}))
