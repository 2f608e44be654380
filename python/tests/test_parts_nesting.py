"""PARTS.md §9–§10 against hand-made part files (outsiders K and L): every reference is held to the file digest and
size its address was first checked with, and references nest at most 128 deep, however often a part is met and in
whichever order (a part resolved shallow, then met deep, was taken from the cache unchecked)."""
import base64
import hashlib
import os

import pytest

from stepchain.canonical import canonical_json
from stepchain.parts import MAX_NESTING, PartError, PartReader, from_base64_map

SEED = "ab" * 32


class Parts:
    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def value(self, v):
        data = canonical_json({"seed": SEED, "value": v}).encode()
        address = "sha256:" + os.urandom(32).hex()
        self.files[address] = base64.b64encode(data).decode()
        return {"$stepchain:part": {"digest": address, "file": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}}

    def reader(self) -> PartReader:
        return PartReader(from_base64_map(self.files))


def _chain(parts: Parts, bottom, n: int):
    ref = bottom
    for _ in range(n):
        ref = parts.value(ref)
    return ref


@pytest.mark.parametrize("order", ["shallow-first", "deep-first"])
def test_a_part_met_shallow_and_deep_is_refused_where_it_passes_the_limit(order):
    parts = Parts()
    x = _chain(parts, "leaf", 3)  # x reaches 3 references deep, itself the first
    deep = _chain(parts, x, MAX_NESTING - 3 + 1)  # x met at depth 126: 126 + 3 > 128
    records = [{"input": x}, {"input": deep}]
    if order == "deep-first":
        records.reverse()
    reader = parts.reader()
    outcomes = []
    for seq, r in enumerate(records):
        try:
            reader.resolve(r, seq)
            outcomes.append("ok")
        except PartError as e:
            outcomes.append(e.code)
    assert sorted(outcomes) == ["PART_CORRUPT", "ok"]


def test_128_nested_references_read_and_the_129th_is_refused():
    parts = Parts()
    assert parts.reader().resolve({"input": _chain(parts, "leaf", 128)}, 0) == {"input": "leaf"}
    with pytest.raises(PartError) as e:
        parts.reader().resolve({"input": _chain(parts, "leaf", 129)}, 0)
    assert e.value.code == "PART_CORRUPT"


def test_a_later_reference_with_another_size_is_refused_where_it_stands():
    parts = Parts()
    ref = parts.value("PAYLOAD")
    larger = {"$stepchain:part": {**ref["$stepchain:part"], "size": ref["$stepchain:part"]["size"] + 1}}
    reader = parts.reader()
    assert reader.resolve({"input": ref}, 0) == {"input": "PAYLOAD"}
    with pytest.raises(PartError) as e:
        reader.resolve({"input": {"a": larger}}, 1, "")
    assert e.value.code == "PART_CORRUPT"


def test_a_missing_part_inside_another_part_or_a_list_is_located_where_it_stands_in_the_value():
    # Outsider K, F8: as the TypeScript readers locate it (verify, export, show, log), not at the record's reference.
    parts = Parts()
    nested = parts.value("MISSING-ONE")
    holder = parts.value({"a": {"b": [0, nested]}})
    in_tail = parts.value("MISSING-TWO")
    base = parts.value([1])
    data = canonical_json({"base": base, "seed": SEED, "tail": [2, 3, {"q": in_tail}]}).encode()
    address = "sha256:" + os.urandom(32).hex()
    parts.files[address] = base64.b64encode(data).decode()
    listed = {"$stepchain:part": {"digest": address, "file": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}}
    for ref in (nested, in_tail):
        del parts.files[ref["$stepchain:part"]["digest"]]
    for record, path in (({"z": holder}, "/input/z/a/b/1"), ({"k": [listed]}, "/input/k/0/3/q")):
        with pytest.raises(PartError) as e:
            parts.reader().resolve(record, 4, "/input")
        assert (e.value.code, e.value.location) == ("PART_MISSING", {"seq": 4, "path": path})
