"""vectors/journals.json (spec/FILE-STORE.md §13): each directory built on disk and verified read-only; the report
is exactly the expected one, as test/store/journal-vectors.test.ts holds the TypeScript store to it."""
import os

import pytest
from conftest import cases, load_vectors

from stepchain.journal_dir import verify_journal_dir

JOURNALS = load_vectors("journals.json")


def materialize(root, c):
    d = os.path.join(root, c["id"])
    for sub in c["dirs"]:
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    for f in c["files"]:
        p = os.path.join(d, f["path"])
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8", newline="") as fh:
            fh.write(f["text"])
    return d


@pytest.mark.parametrize("c", cases(JOURNALS))
def test_journals(tmp_path, c):
    r = verify_journal_dir(materialize(str(tmp_path), c))
    got = {"ok": r.ok, "head": r.head, "head_seq": r.head_seq, "steps": r.steps,
           "problems": [p.summary(("file", "line", "seq", "field")) for p in r.problems], "warnings": [{"code": w.code} for w in r.warnings]}
    assert got == c["expect"], c["comment"]
    assert r.ok == (c["result"] == "valid")
