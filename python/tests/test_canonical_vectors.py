"""vectors/canonical.json, refused.json and step-hashes.json (spec/FORMAT.md §3–§5) against the Python code."""
import json
import math
import struct

import pytest
from conftest import cases, load_vectors, vector_bytes

from stepchain.canonical import (CanonicalError, canonical_json, digest_utf8, es_number, first_invalid_utf8, scan_canonical,
                                 utf8_column)

CANONICAL = load_vectors("canonical.json")
REFUSED = load_vectors("refused.json")
STEP_HASHES = load_vectors("step-hashes.json")


@pytest.mark.parametrize("c", cases(CANONICAL))
def test_canonical(c):
    if c["group"] == "numbers":
        x = struct.unpack(">d", bytes.fromhex(c["ieee754_hex"]))[0]
        assert es_number(x) == c["expected"]
    else:
        got = canonical_json(json.loads(c["input_json"]))
        assert got == c["expected"]
        assert digest_utf8(got) == c["expected_sha256"]
        assert scan_canonical(got).defect is None


class _Thing:
    pass


def _construct(tag: str):
    """Python's nearest equivalent of each value JSON cannot carry."""
    if tag == "cycle":
        loop: dict = {}
        loop["self"] = loop
        return loop
    if tag == "depth-101":
        v: list = []
        for _ in range(100):
            v = [v]
        return v
    return {
        "nan": math.nan, "infinity": math.inf, "minus-infinity": [-math.inf], "bigint": 2**64 + 1, "undefined": ...,
        "function": lambda: 0, "symbol": object.__new__(_Thing), "date": __import__("datetime").date(2026, 1, 1), "map": {1: 2},
        "set": {1, 2}, "class-instance": _Thing(), "typed-array": b"ab", "boxed-number": __import__("decimal").Decimal(1),
        "to-json": _Thing(),
    }[tag]


@pytest.mark.parametrize("c", cases(REFUSED, lambda c: c["group"] == "values"))
def test_refused_values(c):
    if "input_json" in c:
        value = json.loads(c["input_json"])
    else:
        if c["construct"] == "array-hole":
            pytest.skip("Python lists have no holes")
        value = {c["at"][1:]: _construct(c["construct"])}
        if c["construct"] == "symbol":
            value = {c["at"][1:]: lambda: 0}
    with pytest.raises(CanonicalError) as e:
        canonical_json(value, max_depth=100, reserved=True)
    assert (e.value.code, e.value.path) == (c["expected_code"], c["expected_path"])


@pytest.mark.parametrize("c", cases(REFUSED, lambda c: c["group"] in ("lines", "locations")))
def test_refused_lines(c):
    data = vector_bytes(c)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        assert c["expected_code"] == "MALFORMED_LINE"
        if c["group"] == "locations":
            assert first_invalid_utf8(data) + 1 == c["expected_column"]
            assert c["expected_path"] is None
        return
    s = scan_canonical(text)
    if c["group"] == "lines":
        assert (s.defect.code if s.defect else None) == c["expected_code"]
    else:
        assert s.defect is not None
        assert (s.defect.code, utf8_column(text, s.defect.index), s.defect.path) == (c["expected_code"], c["expected_column"], c["expected_path"])


def test_step_hashes_genesis():
    assert canonical_json(STEP_HASHES["genesis"]) == STEP_HASHES["genesis_jcs"]
    assert digest_utf8(STEP_HASHES["genesis_jcs"]) == STEP_HASHES["genesis_hash"]


@pytest.mark.parametrize("c", cases(STEP_HASHES))
def test_step_hashes(c):
    assert canonical_json(c["record"]) == c["preimage"]
    assert digest_utf8(c["preimage"]) == c["step_hash"]
    assert canonical_json({**c["record"], "step_hash": c["step_hash"]}) + "\n" == c["line"]
