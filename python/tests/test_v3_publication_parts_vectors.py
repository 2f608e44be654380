"""vectors/v3-publication-parts.json (spec/REDACTION.md §13.10–§13.12): publications of stepchain/v3 journals with
parts and erased values, verified against the original head, problem codes in order, with the mutation-derived
negatives of their public part files and references."""
import base64

import pytest
from conftest import cases, load_vectors

from stepchain.receipt import verify_published_receipt

PUB = load_vectors("v3-publication-parts.json")


@pytest.mark.parametrize("c", cases(PUB, lambda c: c["kind"] == "publication"))
def test_publication(c):
    r = verify_published_receipt(base64.b64decode(c["base64"]), expect_head=c["expect_head"])
    assert {"ok": r.ok, "codes": [p.code for p in r.problems]} == c["expect"], [p.message for p in r.problems]
    assert r.ok == (c["result"] == "valid")
    assert all(len(p.message) > 10 for p in r.problems)


def _retar(data, change):
    """The valid publication with one public part file replaced by `change(address, bytes)` (None: kept), the manifest's
    listing updated to match: a consistent receipt whose only lie is in that file."""
    import hashlib
    import io
    import json
    import tarfile
    src = tarfile.open(fileobj=io.BytesIO(data))
    entries = [(m.name, src.extractfile(m).read()) for m in src.getmembers()]
    files = dict(entries)
    manifest = json.loads(files["manifest.json"])
    for e in manifest["parts"]:
        name = "parts/" + e["address"][7:]
        new = change(e["address"], files[name])
        if new is not None:
            files[name] = new
            e["digest"], e["size"] = "sha256:" + hashlib.sha256(new).hexdigest(), len(new)
    files["manifest.json"] = json.dumps(manifest, separators=(",", ":"), ensure_ascii=False, sort_keys=True).encode()
    from stepchain.receipt import BLOCK, ustar_header
    out = b"".join(ustar_header(name, len(files[name])) + files[name] + b"\0" * (-len(files[name]) % BLOCK) for name, _ in entries)
    return out + b"\0" * (2 * BLOCK)


def _codes(data, head):
    r = verify_published_receipt(data, expect_head=head)
    return [p.code for p in r.problems]


def test_hostile_public_part_files_are_reported_never_raised():
    """An outsider's forgeries of a public part file, each in an otherwise consistent receipt: a private file's shape, a
    list whose base is itself, garbage, a key disclosed beside a withheld chunk, a value rewritten with the salts kept.
    Each is a coded problem at the part (REDACTION.md §13.10 steps 2–3), never an exception or a valid verdict."""
    import json
    c = next(c for c in PUB["cases"] if c["id"] == "published-parts-valid")
    data, head = base64.b64decode(c["base64"]), c["expect_head"]
    assert _codes(_retar(data, lambda a, b: None), head) == []  # the rebuild itself is faithful

    def first_value(fn):
        done = []

        def change(a, b):
            if done or not b.startswith(b'{"secrets":'):
                return None
            done.append(a)
            return fn(a, b)
        return change

    def as_private(a, b):
        v = json.loads(b)
        return json.dumps({"seed": "00" * 32, "value": v["value"]}, separators=(",", ":"), sort_keys=True).encode()

    def self_base(a, b):
        return json.dumps({"base": {"$stepchain:part": {"digest": a}}, "secrets": json.loads(b)["secrets"], "tail": [1]},
                          separators=(",", ":"), sort_keys=True).encode()

    def rewritten(a, b):
        v = json.loads(b)
        v["value"] = "forged" if isinstance(v["value"], str) else {"forged": True}
        return json.dumps(v, separators=(",", ":"), sort_keys=True).encode()

    for fn, expect in [(as_private, "PART_CORRUPT"), (self_base, "PART_CORRUPT"), (lambda a, b: b"{\"secrets\":{garbage", "PART_CORRUPT"),
                       (rewritten, None)]:
        codes = _codes(_retar(data, first_value(fn)), head)
        assert codes and (expect is None or expect in codes), (fn.__name__ if hasattr(fn, "__name__") else fn, codes)
        assert set(codes) <= {"PART_CORRUPT", "PART_ADDRESS_MISMATCH", "PART_MISSING", "REDACTION_MISSING", "REDACTION_UNDECLARED"}, codes

    def key_beside_withheld(a, b):
        if b"$stepchain:withheld" not in b:
            return None
        v = json.loads(b)
        v["secrets"] = {"key": "AAAAAAAAAAAAAAAAAAAAAA"}
        return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    codes = _codes(_retar(data, key_beside_withheld), head)
    assert "PART_CORRUPT" in codes and "REDACTION_MISSING" in codes, codes


def test_publication_with_erased_values_written_by_typescript(tmp_path):
    """REDACTION.md §13.12: a publication of a journal some of whose values were erased shows them as erased; the Python
    verifier proves the rest against the original head, reports each erased value (VALUE_ERASED, matched with its
    erasure record), and refuses text invented where a value was erased."""
    import json
    import shutil
    import subprocess
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    node = shutil.which("node")
    if node is None or not (root / "dist" / "receipt" / "writer.js").exists():
        pytest.skip("needs node and the built library (npm run build)")
    subprocess.run([node, str(Path(__file__).parent / "helpers" / "ts_erased_publication.mjs"), str(tmp_path)], check=True, timeout=300)
    data, head = (tmp_path / "pub.tar").read_bytes(), (tmp_path / "head").read_text()
    r = verify_published_receipt(data, expect_head=head)
    assert r.ok, [p.message for p in r.problems]
    assert [(n.location["seq"], n.location["path"]) for n in r.notices if n.code == "VALUE_ERASED"] == [(0, "/result/email"), (0, "/result/notes/1")]
    assert b"alice@example.org" not in data
    # Text invented where /result/notes/1 was erased, the archive kept consistent.
    import io
    import tarfile
    from stepchain.receipt import BLOCK, ustar_header
    import hashlib
    entries = [(m.name, tarfile.open(fileobj=io.BytesIO(data)).extractfile(m.name).read()) for m in tarfile.open(fileobj=io.BytesIO(data)).getmembers()]
    files = dict(entries)
    name = next(n for n, _ in entries if n.startswith("chain/"))
    lines = files[name].decode().splitlines()
    rec = json.loads(lines[0])
    rec["result"]["notes"][1] = "mallory@example.org"
    lines[0] = json.dumps(rec, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    files[name] = "".join(line + "\n" for line in lines).encode()
    manifest = json.loads(files["manifest.json"])
    entry = next(e for e in manifest["chain"] if e["name"] == name)
    entry["digest"], entry["size"] = "sha256:" + hashlib.sha256(files[name]).hexdigest(), len(files[name])
    files["manifest.json"] = json.dumps(manifest, separators=(",", ":"), sort_keys=True, ensure_ascii=False).encode()
    forged = b"".join(ustar_header(n, len(files[n])) + files[n] + b"\0" * (-len(files[n]) % BLOCK) for n, _ in entries) + b"\0" * (2 * BLOCK)
    r = verify_published_receipt(forged, expect_head=head)
    assert not r.ok and {p.code for p in r.problems} & {"SECRETS_INVALID", "ROOT_MISMATCH", "HASH_MISMATCH"}, [p.code for p in r.problems]
