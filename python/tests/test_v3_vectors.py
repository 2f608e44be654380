"""vectors/v3.json (spec/FORMAT.md §14): every unit of the fixed-seed records (index, kind, path, salt, digest),
the derivation of slot keys and salts, and the chains through the fast and the deep tier, problem for problem."""
import pytest
from conftest import cases, load_vectors

from stepchain.chain import verify_chain
from stepchain.v3 import SLOTS, private_root, salt_of, slot_keys

V3 = load_vectors("v3.json")


def _unit(u):
    out = {"index": u.index, "kind": u.kind, "path": u.path, "salt": u.salt.hex(), "digest": u.digest.hex()}
    if u.text is not None:
        out["text"] = u.text
    return out


@pytest.mark.parametrize("c", cases(V3, lambda c: c["kind"] == "units"))
def test_units(c):
    units = {}
    root, digests = private_root(c["seed"], c["values"], units)
    keys = slot_keys(bytes.fromhex(c["seed"]))
    got = [{"slot": s, "key": keys[j].hex(), "digest": digests[j].hex(), "units": [_unit(u) for u in units[s]]}
           for j, s in enumerate(SLOTS)]
    assert {"root": root, "slots": got} == c["expect"]


@pytest.mark.parametrize("c", cases(V3, lambda c: c["kind"] == "derive"))
def test_derive(c):
    keys = slot_keys(bytes.fromhex(c["seed"]))
    assert {"keys": [k.hex() for k in keys], "salts_of_key_1": [salt_of(keys[1], i).hex() for i in range(5)]} == c["expect"]


def _report(r):
    return {"ok": r.ok, "head": r.head, "problems": [p.summary(("seq", "field")) for p in r.problems],
            "notices": [p.summary(("seq",)) for p in r.notices]}


@pytest.mark.parametrize("tier", ["fast", "deep"])
@pytest.mark.parametrize("c", cases(V3, lambda c: c["kind"] == "chain"))
def test_chain(c, tier):
    data = "".join(line + "\n" for line in c["lines"]).encode()
    r = verify_chain([("0000000000000000.jsonl", data)], c["genesis"], deep=tier == "deep", allow_public=False)
    assert _report(r) == c["expect"][tier]
    assert all(len(p.message) > 10 for p in r.problems + r.notices)
