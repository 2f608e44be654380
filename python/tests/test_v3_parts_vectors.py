"""vectors/v3-parts.json (spec/PARTS.md §9): every case read, fast and deep, gives the expected values or the
expected code, address and location."""
import pytest
from conftest import cases, load_vectors

from stepchain.canonical import canonical_json
from stepchain.parts import PartError, PartReader, from_base64_map

PARTS = load_vectors("v3-parts.json")


def _read(c, deep):
    reader = PartReader(from_base64_map(c["parts"]), deep=deep)
    try:
        return {"result": "valid", "values": [reader.resolve(s, seq) for seq, s in enumerate(c["stored"])]}
    except PartError as e:
        return {"result": "invalid", "code": e.code, "address": e.address, "location": e.location}


@pytest.mark.parametrize("tier", ["fast", "deep"])
@pytest.mark.parametrize("c", cases(PARTS))
def test_parts(c, tier):
    got, want = _read(c, tier == "deep"), c["expected"][tier]
    if want["result"] == "valid":
        assert got["result"] == "valid", got
        assert canonical_json(got["values"]) == canonical_json(want["values"])
        if "steps" in c:
            assert canonical_json(got["values"]) == canonical_json(c["steps"])
    else:
        assert got == want
