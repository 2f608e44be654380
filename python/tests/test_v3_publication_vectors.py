"""vectors/v3-publication.json (spec/REDACTION.md §13): published v3 receipts verified against the original head,
problem codes in order, with the mutation-derived negatives; and each public record line checked on its own."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.canonical import scan_canonical
from stepchain.chain import verify_chain
from stepchain.formats.v3 import public_defect
from stepchain.receipt import verify_published_receipt

PUB = load_vectors("v3-publication.json")


@pytest.mark.parametrize("c", cases(PUB, lambda c: c["kind"] == "publication"))
def test_publication(c):
    r = verify_published_receipt(base64.b64decode(c["base64"]), expect_head=c["expect_head"])
    assert {"ok": r.ok, "codes": [p.code for p in r.problems]} == c["expect"]
    assert r.ok == (c["result"] == "valid")
    assert all(len(p.message) > 10 for p in r.problems)


@pytest.mark.parametrize("c", cases(PUB, lambda c: c["kind"] == "public-lines"))
def test_public_lines(c):
    for line in c["lines"]:
        assert public_defect(line, scan_canonical(line).members) is None
    # The public records hash to the same chain as the private ones: one head, whichever form is read.
    genesis = {"created_at": "2026-01-01T00:00:00.000Z", "format": "stepchain/v3", "journal_id": "x", "run": {}}
    public = verify_chain([("0000000000000000.jsonl", "".join(l + "\n" for l in c["lines"]).encode())], genesis,
                          start={"seq": 0, "prev_hash": _prev(c["lines"][0])})
    private = verify_chain([("0000000000000000.jsonl", "".join(l + "\n" for l in c["private_lines"]).encode())], genesis,
                           start={"seq": 0, "prev_hash": _prev(c["lines"][0])}, deep=True)
    assert public.ok and private.ok and public.head == private.head
    journal = verify_chain([("0000000000000000.jsonl", "".join(l + "\n" for l in c["lines"]).encode())], genesis,
                           start={"seq": 0, "prev_hash": _prev(c["lines"][0])}, allow_public=False)
    assert [p.code for p in journal.problems] == ["WITHHELD_IN_JOURNAL"] * len(c["lines"])


def _prev(line):
    import json
    return json.loads(line)["prev_hash"]


from stepchain.policy import compile_policy  # noqa: E402
from stepchain.publish_v3 import public_record  # noqa: E402


@pytest.mark.parametrize("c", cases(PUB, lambda c: c["kind"] == "public-record"))
def test_public_record(c):
    line, declarations = public_record(c["private_line"], compile_policy(c["policy"])["document"])
    assert {"public_line": line, "declarations": declarations} == c["expect"]
    assert '"bind":"' + c["bind"] + '"' in line
