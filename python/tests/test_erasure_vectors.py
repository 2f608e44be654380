"""vectors/erasure.json (spec/ERASURE.md §5): sealed records, erased markers and erasure records through the chain
verifier, the problems and the erasure notices exactly; the erased value and its salt are in no line."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.chain import verify_chain

ERASURE = load_vectors("erasure.json")


def _bucket(c):
    """The bucket's name: the seq of its first line (a partial range starts at its start seq)."""
    return f"{(c.get('start') or {}).get('seq', 0):016d}.jsonl"


@pytest.mark.parametrize("c", cases(ERASURE))
def test_erasure(c):
    data = "".join(line + "\n" for line in c["lines"]).encode()
    # A partial range (ERASURE.md §5 step 4, §6.5) gives its first seq and prev_hash.
    r = verify_chain([(_bucket(c), data)], c["genesis"], allow_public=False, start=c.get("start"))
    assert r.ok == (c["result"] == "valid") == c["expected"]["ok"]
    assert [{"code": p.code, "seq": p.location.get("seq")} for p in r.problems] == c["expected"]["problems"]
    notices = [{"code": n.code, "seq": n.location.get("seq"), "path": n.location.get("path")} for n in r.notices
               if n.code.startswith("ERASURE") or n.code == "VALUE_ERASED"]
    assert notices == c["expected"]["notices"]
    if "original_lines" in c:
        import json
        hashes = [json.loads(x)["step_hash"] for x in c["lines"]]
        assert hashes[:len(c["original_lines"])] == [json.loads(x)["step_hash"] for x in c["original_lines"]]
        salt = bytes.fromhex(c["erased_salt_hex"])
        for needle in (c["erased_value"], c["erased_salt_hex"], base64.urlsafe_b64encode(salt).rstrip(b"=").decode()):
            assert needle not in "\n".join(c["lines"])


def test_erasure_is_a_checked_kind():
    """ERASURE.md §5: an erasure record whose input is §3's gets no KIND_UNCHECKED (3 and 4 hold it to its claim); one
    whose input is not, named by no marker, keeps the KIND_UNCHECKED it had before the kind was checked."""
    seen = set()
    for c in ERASURE["cases"]:
        data = "".join(line + "\n" for line in c["lines"]).encode()
        r = verify_chain([(_bucket(c), data)], c["genesis"], allow_public=False, start=c.get("start"))
        unchecked = [n.location.get("seq") for n in r.notices if n.code == "KIND_UNCHECKED"]
        assert unchecked == ([2] if c["id"] == "erasure-input-malformed" else []), (c["id"], unchecked)
        seen.add(c["id"])
    assert "erasure-input-malformed" in seen and "pending-sealed-target" in seen


def test_range_vectors_are_there():
    """The range cases (ERASURE.md §5 step 4, §6.5): a range holding the erasure record but not its target, one that
    splits an erasure (a writer refuses it), one holding neither end."""
    ids = {c["id"]: c for c in ERASURE["cases"]}
    assert ids["erasure-out-of-range"]["expected"]["notices"][0]["code"] == "ERASURE_OUT_OF_RANGE"
    assert ids["range-splits-erasure"]["writer_refuses"] == "RANGE_SPLITS_ERASURE"
    assert ids["range-holds-neither-end"]["expected"]["ok"] is True
