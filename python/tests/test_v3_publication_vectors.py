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


def _sealed(records):
    from stepchain.canonical import canonical_json, digest_utf8
    from stepchain.formats.v3 import seal_v3
    genesis = {"created_at": "2026-01-01T00:00:00.000Z", "format": "stepchain/v3", "journal_id": "leaks", "run": {}}
    prev, lines = digest_utf8(canonical_json(genesis)), []
    for seq, r in enumerate(records):
        line, prev = seal_v3({"error": None, "input": None, "kind": "step", "model": None, "prompt": None, "ref": None, "result": None,
                              "tool_call": None, **r, "seq": seq, "step_id": f"s{seq}", "ts": "2026-01-01T00:00:00.000Z",
                              "prev_hash": prev, "v": 3})
        lines.append(line.rstrip("\n"))
    return genesis, lines


def test_publish_v3_refuses_leaks_and_envelope_secrets():
    """REDACTION.md §5.5, §5.6, §13.5: a value a path rule withholds in one place but that stands elsewhere, escaped
    or not, stops the publication (LEAK_DETECTED); a secret in an envelope member stops it (ENVELOPE_SECRET); a
    clean publication verifies against the original head."""
    import json as _json
    from stepchain.publish_v3 import PublishError, publish_v3
    policy = {"rules": [{"id": "pins", "paths": ["/input/pin"]}, {"id": "secrets", "detectors": ["email"]}]}
    genesis, lines = _sealed([{"input": {"pin": "12345678"}, "result": {"echo": _json.dumps({"said": "pin 12345678"})}}])
    with pytest.raises(PublishError) as e:
        publish_v3(genesis, [("0000000000000000.jsonl", lines)], policy, "t")
    assert e.value.code == "LEAK_DETECTED" and "12345678" not in str(e.value)
    genesis, lines = _sealed([{"input": {"pin": "12345678"}, "result": {"ok": True}}])
    data, redactions = publish_v3(genesis, [("0000000000000000.jsonl", lines)], policy, "t")
    assert b"12345678" not in data and redactions == [{"path": "/input/pin", "rule": "pins", "seq": 0}]
    r = verify_published_receipt(data, expect_head=_json.loads(lines[-1])["step_hash"])
    assert r.ok and r.redactions == 1, r.problems
    bad = dict(genesis, journal_id="x")
    bad["run"] = {"agent": "bob@example.org"}
    with pytest.raises(PublishError) as e:
        publish_v3(bad, [("0000000000000000.jsonl", lines)], policy, "t")
    assert e.value.code == "ENVELOPE_SECRET"
