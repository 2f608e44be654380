"""Disclosures of a published receipt (spec/REDACTION.md §8, §12.6): one redacted value (§8.3), a whole step
re-derived against the anchor (§8.4), one original step hash (§8.5), and an opening of one slot of a v2
publication (§12.6). Each verifies the receipt as a published receipt first, then stops at its first failure."""
from __future__ import annotations

import copy
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .canonical import MAX_RECORD_DEPTH, RESERVED_PREFIX, CanonicalError, canonical_json, digest_utf8, is_digest, is_seq
from .chain import REDACTED_MARKER
from .formats.base import is_valid_id
from .formats.v2 import SLOTS, is_salt_hex, slot_digest
from .publication import REDACTABLE, _parse_pointer
from .receipt import ReceiptReport, verify_published_receipt

SALT64 = re.compile(r"[0-9a-f]{64}\Z")
BLOB_FIELDS = {"input", "model", "prompt", "tool_call", "result"}


@dataclass
class DisclosureReport:
    ok: bool = False
    code: Optional[str] = None
    message: str = ""
    value: Any = None
    present: Optional[bool] = None
    step_hash: Optional[str] = None
    head: Optional[bool] = None
    record: Optional[dict[str, Any]] = None
    receipt: Optional[ReceiptReport] = None
    problems: list[tuple[str, str]] = field(default_factory=list)


class _Fail(Exception):
    def __init__(self, code: str, message: str) -> None:
        self.code, self.message = code, message


def _exact(o: Any, keys: list[str]) -> bool:
    return isinstance(o, dict) and sorted(o) == sorted(keys)


def value_commitment(salt_hex: str, value: Any) -> str:
    return "sha256:" + hashlib.sha256(b"stepchain-redaction/v1\n" + bytes.fromhex(salt_hex) + canonical_json(value).encode("utf-8")).hexdigest()


def step_commitment(salt_hex: str, step_hash: str) -> str:
    return "sha256:" + hashlib.sha256(b"stepchain-redaction/v2 step\n" + bytes.fromhex(salt_hex) + step_hash.encode("utf-8")).hexdigest()


def text_fits(text: str, value: str) -> bool:
    parts = re.split(r"\[REDACTED:[a-z][a-z-]*\]", text)
    if len(parts) == 1:
        return False
    first, last = parts[0], parts[-1]
    if not value.startswith(first):
        return False
    at = len(first)
    for piece in parts[1:-1]:
        found = value.find(piece, at + 1)
        if found < 0:
            return False
        at = found + len(piece)
    return len(value) - len(last) >= at + 1 and value.endswith(last)


def _i_json(v: Any, reserved: bool = True) -> bool:
    try:
        canonical_json(v, max_depth=MAX_RECORD_DEPTH, reserved=reserved)
        return True
    except CanonicalError:
        return False


def _proof_defect(p: Any) -> Optional[str]:
    if not _exact(p, ["commitment", "format", "manifest_digest", "path", "rule", "salt", "seq", "value"]):
        return "a disclosure proof has exactly the members commitment, format, manifest_digest, path, rule, salt, seq and value"
    if p["format"] != "stepchain-disclosure/v1":
        return f"format is {json.dumps(p['format'])}, not \"stepchain-disclosure/v1\""
    if not is_digest(p["manifest_digest"]) or not is_digest(p["commitment"]):
        return "manifest_digest and commitment must be digests"
    if not is_seq(p["seq"]):
        return "seq must be a non-negative integer"
    if not isinstance(p["path"], str) or not p["path"] or _parse_pointer(p["path"]) is None:
        return "path must be a non-empty JSON Pointer"
    if not is_valid_id(p["rule"]):
        return "rule must be a rule id"
    if not isinstance(p["salt"], str) or not SALT64.match(p["salt"]):
        return "salt must be 64 lowercase hex digits (32 bytes)"
    if not _i_json(p["value"]):
        return "value must be I-JSON without reserved member names"
    return None


def _published(receipt: bytes, manifest_digest: str, **options: Any) -> ReceiptReport:
    r = verify_published_receipt(receipt, **options)
    if not r.ok:
        first = r.problems[0] if r.problems else None
        raise _Fail("RECEIPT_INVALID", "the receipt does not verify as a published receipt" + (f": {first.code}: {first.message}" if first else ""))
    if r.manifest_digest != manifest_digest:
        raise _Fail("MANIFEST_MISMATCH", f"the proof is for the receipt with manifest {manifest_digest}; this receipt's manifest is {r.manifest_digest}")
    return r


def _at(record: Any, path: str) -> Any:
    node = record
    for t in _parse_pointer(path) or []:
        if isinstance(node, dict):
            node = node.get(t, None)
        elif isinstance(node, list) and t.isdigit() and int(t) < len(node):
            node = node[int(t)]
        else:
            return None
    return node


def _check_value(v: dict[str, Any], marker: Any) -> None:
    inner = marker.get(REDACTED_MARKER) if isinstance(marker, dict) and len(marker) == 1 else None
    if not isinstance(inner, dict) or inner.get("rule") != v["rule"] or inner.get("commitment") != v["commitment"]:
        raise _Fail("MARKER_MISMATCH", f"the marker at {v['path']} does not name the proof's rule and commitment")
    if value_commitment(v["salt"], v["value"]) != v["commitment"]:
        raise _Fail("COMMITMENT_MISMATCH", f"the salt and value disclosed for {v['path']} do not give the marker's commitment")
    if isinstance(inner.get("text"), str) and (not isinstance(v["value"], str) or not text_fits(inner["text"], v["value"])):
        raise _Fail("TEXT_MISMATCH", f"the marker's text at {v['path']} cannot have come from the disclosed value")


def _run(work: Any) -> DisclosureReport:
    out = DisclosureReport()
    try:
        work(out)
        out.ok = True
    except _Fail as f:
        out.code, out.message = f.code, f.message
        out.problems.append((f.code, f.message))
    return out


def verify_disclosure(receipt: bytes, proof: Any, **options: Any) -> DisclosureReport:
    """§8.3: one redacted value."""
    def work(out: DisclosureReport) -> None:
        why = _proof_defect(proof)
        if why:
            raise _Fail("PROOF_INVALID", why)
        r = _published(receipt, proof["manifest_digest"], **options)
        out.receipt = r
        line = r.lines.get(proof["seq"])
        marker = _at(json.loads(line), proof["path"]) if line is not None else None
        inner = marker.get(REDACTED_MARKER) if isinstance(marker, dict) and len(marker) == 1 else None
        if not isinstance(inner, dict) or proof["path"].split("/")[1] not in REDACTABLE:
            raise _Fail("NOT_REDACTED", f"no redaction marker stands at seq {proof['seq']}, {proof['path']}")
        _check_value(proof, marker)
        out.value = proof["value"]
    return _run(work)


def verify_hash_disclosure(receipt: bytes, proof: Any, **options: Any) -> DisclosureReport:
    """§8.5: one original step hash."""
    def work(out: DisclosureReport) -> None:
        p = proof
        if not _exact(p, ["format", "manifest_digest", "salt", "seq", "step_hash"]) or p["format"] != "stepchain-hash-disclosure/v1" \
                or not is_digest(p["manifest_digest"]) or not is_seq(p["seq"]) or not isinstance(p["salt"], str) or not SALT64.match(p["salt"]) \
                or not is_digest(p["step_hash"]):
            raise _Fail("PROOF_INVALID", "not a hash disclosure of REDACTION.md §8.5")
        r = verify_published_receipt(receipt, **options)
        if not r.ok or r.anchor is None:
            raise _Fail("RECEIPT_INVALID", "the receipt does not verify as a published receipt with an anchor")
        if r.manifest_digest != p["manifest_digest"]:
            raise _Fail("MANIFEST_MISMATCH", "the proof is for another receipt")
        a = r.anchor
        if p["seq"] >= a["length"] or p["seq"] < a["redacted_from"]:
            raise _Fail("NOT_REDACTED", f"the anchor commits to no hash of step {p['seq']}")
        if step_commitment(p["salt"], p["step_hash"]) != a["commitments"][p["seq"] - a["redacted_from"]]:
            raise _Fail("ANCHOR_MISMATCH", f"SHA-256 over the salt and {p['step_hash']} is not the anchor's commitment for step {p['seq']}")
        out.receipt, out.step_hash, out.head = r, p["step_hash"], p["seq"] == a["length"] - 1
    return _run(work)


def _step_proof_defect(p: Any) -> Optional[str]:
    if isinstance(p, dict) and p.get("format") == "stepchain-step-disclosure/v1":
        return "stepchain-step-disclosure/v1 proofs belong to withdrawn publications"
    if not _exact(p, ["blob_fields", "format", "manifest_digest", "prev", "salt", "seq", "values"]):
        return "a whole-step proof has exactly the members blob_fields, format, manifest_digest, prev, salt, seq and values"
    if p["format"] != "stepchain-step-disclosure/v2":
        return "format is not stepchain-step-disclosure/v2"
    if not is_digest(p["manifest_digest"]) or not is_seq(p["seq"]):
        return "manifest_digest must be a digest and seq a non-negative integer"
    bf = p["blob_fields"]
    if not isinstance(bf, list) or not all(isinstance(f, str) and f in BLOB_FIELDS and (i == 0 or f > bf[i - 1]) for i, f in enumerate(bf)):
        return "blob_fields must be content field names, sorted, without repeats"
    prev = p["prev"]
    if prev is not None and not (_exact(prev, ["salt", "step_hash"]) and isinstance(prev["salt"], str) and SALT64.match(prev["salt"]) and is_digest(prev["step_hash"])):
        return 'prev must be null or {"salt", "step_hash"}'
    if p["salt"] is not None and not (isinstance(p["salt"], str) and SALT64.match(p["salt"])):
        return "salt must be null or 64 lowercase hex digits"
    if not isinstance(p["values"], list):
        return "values must be an array"
    paths = set()
    for i, v in enumerate(p["values"]):
        why = _proof_defect({**v, "format": "stepchain-disclosure/v1", "manifest_digest": p["manifest_digest"], "seq": p["seq"]}) \
            if _exact(v, ["commitment", "path", "rule", "salt", "value"]) else "an entry has exactly commitment, path, rule, salt and value"
        if why:
            return f"values[{i}]: {why}"
        if v["path"] in paths:
            return f"values[{i}] repeats the path {v['path']}"
        paths.add(v["path"])
    return None


def _set_at(root: Any, tokens: list[str], value: Any) -> bool:
    node = root
    for t in tokens[:-1]:
        if isinstance(node, dict) and t in node:
            node = node[t]
        elif isinstance(node, list) and t.isdigit() and int(t) < len(node):
            node = node[int(t)]
        else:
            return False
    last = tokens[-1]
    if isinstance(node, dict) and last in node:
        node[last] = value
        return True
    if isinstance(node, list) and last.isdigit() and int(last) < len(node):
        node[int(last)] = value
        return True
    return False


def verify_step_disclosure(receipt: bytes, proof: Any, **options: Any) -> DisclosureReport:
    """§8.4: a whole step re-derived and checked against the anchor."""
    def work(out: DisclosureReport) -> None:
        p = proof
        why = _step_proof_defect(p)
        if why:
            raise _Fail("PROOF_INVALID", why)
        r = verify_published_receipt(receipt, **options)
        if not r.ok or r.anchor is None or r.manifest is None:
            raise _Fail("RECEIPT_INVALID", "the receipt does not verify as a published receipt with an anchor")
        if r.manifest_digest != p["manifest_digest"]:
            raise _Fail("MANIFEST_MISMATCH", "the proof is for another receipt")
        line = r.lines.get(p["seq"])
        if line is None:
            raise _Fail("NOT_REDACTED", f"the receipt has no step {p['seq']}")
        a = r.anchor
        record = json.loads(line)
        published_hash = record["step_hash"]
        declared = [d for d in r.manifest["redactions"] if d["seq"] == p["seq"]]
        given = {v["path"]: v for v in p["values"]}
        for d in declared:
            if d["path"] not in given:
                raise _Fail("INCOMPLETE_DISCLOSURE", f"the redaction at {d['path']} is not disclosed")
        for v in p["values"]:
            if not any(d["path"] == v["path"] for d in declared):
                raise _Fail("NOT_REDACTED", f"no redaction of step {p['seq']} stands at {v['path']}")
            _check_value(v, _at(record, v["path"]))
        k = a["redacted_from"]
        q = p["seq"]
        if q >= a["length"]:
            raise _Fail("ANCHOR_MISMATCH", f"the anchor counts {a['length']} original steps; there is no step {q}")
        if q > k and p["prev"] is None:
            raise _Fail("INCOMPLETE_DISCLOSURE", "the proof must open the previous step's commitment (prev)")
        if q <= k and p["prev"] is not None:
            raise _Fail("PROOF_INVALID", "prev must be null before or at the first redaction")
        if q >= k and p["salt"] is None:
            raise _Fail("INCOMPLETE_DISCLOSURE", "the proof must give the salt of the step's commitment")
        if q < k and p["salt"] is not None:
            raise _Fail("PROOF_INVALID", "salt must be null before the first redaction")
        if p["prev"] is not None and step_commitment(p["prev"]["salt"], p["prev"]["step_hash"]) != a["commitments"][q - 1 - k]:
            raise _Fail("ANCHOR_MISMATCH", "prev does not open the anchor's commitment to the previous step")
        for v in p["values"]:
            if not _set_at(record, _parse_pointer(v["path"]) or [], copy.deepcopy(v["value"])):
                raise _Fail("NOT_REDACTED", f"no value stands at {v['path']}")
        for f in p["blob_fields"]:
            if f not in record:
                raise _Fail("PROOF_INVALID", f"blob_fields names {f}, which the step does not have")
        if p["prev"] is not None:
            record["prev_hash"] = p["prev"]["step_hash"]
        del record["step_hash"]
        try:
            for f in p["blob_fields"]:
                text = canonical_json(record[f], max_depth=MAX_RECORD_DEPTH)
                record[f] = {RESERVED_PREFIX + "blob": {"digest": digest_utf8(text), "size": len(text.encode("utf-8"))}}
            h = digest_utf8(canonical_json(record, max_depth=MAX_RECORD_DEPTH))
        except CanonicalError:
            raise _Fail("PROOF_INVALID", "the re-assembled step is not I-JSON") from None
        if p["salt"] is not None:
            if step_commitment(p["salt"], h) != a["commitments"][q - k]:
                raise _Fail("ANCHOR_MISMATCH", f"the re-assembled step hashes to {h}, which does not open the anchor's commitment for seq {q}")
        elif h != published_hash:
            raise _Fail("ANCHOR_MISMATCH", f"the re-assembled step hashes to {h}, not its published step hash {published_hash}")
        record["step_hash"] = h
        out.record, out.step_hash, out.receipt = record, h, r
    return _run(work)


def verify_opening(receipt: bytes, proof: Any, **options: Any) -> DisclosureReport:
    """§12.6: one slot of a stepchain/v2 publication opened."""
    def work(out: DisclosureReport) -> None:
        p = proof
        keys = sorted(p) if isinstance(p, dict) else []
        base = ["format", "manifest_digest", "salt", "seq", "slot"]
        if not isinstance(p, dict) or not set(base) <= set(keys) or not set(keys) <= set(base + ["value", "blob"]) or ("blob" in p and "value" not in p) \
                or p["format"] != "stepchain-opening/v1" or not is_digest(p["manifest_digest"]) or not is_seq(p["seq"]) \
                or not isinstance(p["slot"], str) or not p["slot"] or not is_salt_hex(p["salt"]) \
                or ("value" in p and not _i_json(p["value"], reserved=False)) or ("blob" in p and not _i_json(p["blob"])):
            raise _Fail("PROOF_INVALID", "not an opening of REDACTION.md §12.6")
        r = verify_published_receipt(receipt, **options)
        if not r.ok or r.manifest is None or "publication" not in r.manifest:
            raise _Fail("RECEIPT_INVALID", "the receipt does not verify as a published stepchain/v2 receipt")
        if r.manifest_digest != p["manifest_digest"]:
            raise _Fail("MANIFEST_MISMATCH", "the opening is for another receipt")
        line = r.lines.get(p["seq"])
        if line is None or p["slot"] not in SLOTS:
            raise _Fail("NOT_REDACTED", f"step {p['seq']} has no slot {p['slot']!r}")
        record = json.loads(line)
        v = record.get(p["slot"])
        digests = record.get("digests") or {}
        if p["slot"] in digests:
            standing = digests[p["slot"]]
        elif isinstance(v, dict) and len(v) == 1 and REDACTED_MARKER in v and isinstance(v[REDACTED_MARKER], dict):
            standing = v[REDACTED_MARKER].get("commitment")
        else:
            raise _Fail("NOT_REDACTED", f"slot {p['slot']} of step {p['seq']} is disclosed, not withheld or viewed")
        text = canonical_json(p["value"], max_depth=MAX_RECORD_DEPTH) if "value" in p else None
        if slot_digest(p["salt"], p["slot"], text) != standing:
            raise _Fail("COMMITMENT_MISMATCH", f"the salt and value do not give the digest standing for slot {p['slot']}")
        ref = p.get("value")
        is_ref = isinstance(ref, dict) and len(ref) == 1 and RESERVED_PREFIX + "blob" in ref
        if is_ref:
            if "blob" not in p:
                raise _Fail("PROOF_INVALID", "the value is a blob reference: the opening must carry the blob's value")
            bt = canonical_json(p["blob"], max_depth=MAX_RECORD_DEPTH)
            body = ref[RESERVED_PREFIX + "blob"]
            if not isinstance(body, dict) or digest_utf8(bt) != body.get("digest") or len(bt.encode("utf-8")) != body.get("size"):
                raise _Fail("COMMITMENT_MISMATCH", "the blob's canonical JSON does not have the reference's digest and size")
        elif "blob" in p:
            raise _Fail("PROOF_INVALID", "blob is given, but the value is not a blob reference")
        out.receipt = r
        out.present = "value" in p
        out.value = p["blob"] if is_ref else p.get("value")
    return _run(work)
