"""vectors/diff.json (spec/DIFF.md §9): diff(a, b, options) returns `expect` as JSON and summarize() `summary`,
or raises DiffError with the expected code."""
import json

import pytest
from conftest import cases, load_vectors

from stepchain.diff import DiffError, diff, summarize

DIFF = load_vectors("diff.json")


@pytest.mark.parametrize("c", cases(DIFF))
def test_diff(c):
    if "error" in c["expect"]:
        with pytest.raises(DiffError) as e:
            diff(c["a"], c["b"], c["options"])
        assert e.value.code == c["expect"]["error"] and str(e.value).startswith(e.value.code)
        return
    report = diff(c["a"], c["b"], c["options"])
    assert json.loads(json.dumps(report)) == c["expect"]
    assert summarize(report) == c["summary"]
