"""vectors/tombstones.json (spec/RETENTION.md §4): each tombstone checked on its own or against a kept checkpoint."""
import pytest
from conftest import cases, load_vectors

from stepchain.tombstone import check_tombstone

TOMBSTONES = load_vectors("tombstones.json")


@pytest.mark.parametrize("c", cases(TOMBSTONES))
def test_tombstone(c):
    r = check_tombstone(c["tombstone"], c.get("against"))
    assert r.ok == (c["result"] == "valid")
    if r.ok:
        assert r.checkpoint_size == c["checkpoint_size"]
    else:
        assert r.code == c["code"] and len(r.message) > 10


def test_hostile_tombstones_never_raise():
    for t in (None, [], "x", {"tombstone": 1}, {k: None for k in TOMBSTONES["cases"][0]["tombstone"]}):
        assert check_tombstone(t).code == "TOMBSTONE_MALFORMED"
    t = dict(TOMBSTONES["cases"][0]["tombstone"])
    assert check_tombstone(t, against="not a note").code == "TOMBSTONE_MALFORMED"
