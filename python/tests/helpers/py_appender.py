"""A Python writer for the cross-language tests: appends `count` steps to the journal at `path`."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from stepchain import open_journal  # noqa: E402

path, count, tag = sys.argv[1], int(sys.argv[2]), sys.argv[3]
j = open_journal(path, create=False, fsync="none")
for i in range(count):
    j.append({"input": {"writer": tag, "i": i}, "model": "py", "prompt": "p", "result": f"py {tag} {i}"})
j.close()
