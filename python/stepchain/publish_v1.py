"""Publishing a `stepchain/v1` journal (spec/REDACTION.md §5–§6): the walk of §5.1 with salted value commitments
(§5.2), salts drawn in the order of §5.3, blobs as §5.4 says, the redacted steps re-chained (§6.1), the anchor of
step commitments (§6.2), the declarations (§6.3), and the complete receipt written as RECEIPT.md lays it out. The
same journal, policy, salts and exporter give the TypeScript publisher's bytes (vectors/redaction.json,
`publish-reproduce`). The leak sweep (§5.5) and the envelope check (§5.6) are the TypeScript publisher's; this
one is for reproducing and testing publications, not for publishing secrets."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .canonical import RESERVED_PREFIX, canonical_json, digest_bytes, digest_utf8, utf16_key
from .disclose import step_commitment
from .formats import genesis_hash
from .policy import compile_policy
from .receipt import BLOCK, RECEIPT_FORMAT, ustar_header
from .redact import redact_step

BLOB_MARKER = RESERVED_PREFIX + "blob"
REDACTABLE = ["input", "meta", "model", "prompt", "result", "tool_call"]
ANCHOR_FORMAT = "stepchain-redaction/v2"


def seeded_salts(seed: str) -> Callable[[], str]:
    """Salt i = SHA-256("stepchain-redaction/v1 test salt\\n" + seed + "\\n" + i) (§5.3): for tests and vectors only,
    since anyone who knows the seed recomputes every salt."""
    counter = iter(range(2**62))
    return lambda: hashlib.sha256(f"stepchain-redaction/v1 test salt\n{seed}\n{next(counter)}".encode("utf-8")).hexdigest()


@dataclass
class Publication:
    receipt: bytes
    original_head: dict[str, Any]
    steps: list[dict[str, Any]]          # each step commitment's salt, seq and original step hash
    redactions: list[dict[str, Any]]


def _is_blob(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and isinstance(v.get(BLOB_MARKER), dict)


def _has_marker(v: Any) -> bool:
    if isinstance(v, dict):
        return any(k.startswith(RESERVED_PREFIX) for k in v) or any(_has_marker(x) for x in v.values())
    return isinstance(v, list) and any(_has_marker(x) for x in v)


def publish_v1(genesis: dict[str, Any], lines: list[str], blobs: dict[str, bytes], policy: Any, salt: Callable[[], str],
               exporter: str) -> Publication:
    compiled = compile_policy(policy)
    document = compiled["document"]
    records = [json.loads(line) for line in lines]
    out_lines: list[str] = []
    commitments: list[str] = []
    steps: list[dict[str, Any]] = []
    redactions: list[dict[str, Any]] = []
    published_blobs: dict[str, bytes] = {}
    redacted_from: Optional[int] = None
    prev = genesis_hash(genesis)
    for rec, line in zip(records, lines):
        seq = rec["seq"]
        fields = {}
        for f in REDACTABLE:
            if f in rec:
                v = rec[f]
                fields[f] = json.loads(blobs[v[BLOB_MARKER]["digest"]]) if _is_blob(v) else v
        new_fields, marks = redact_step(document, seq, fields, salt)
        if marks and redacted_from is None:
            redacted_from = seq
        if redacted_from is None:
            out_lines.append(line)
            prev = rec["step_hash"]
            for f in REDACTABLE:
                if f in rec and _is_blob(rec[f]):
                    d = rec[f][BLOB_MARKER]["digest"]
                    published_blobs[d] = blobs[d]
            continue
        redactions.extend({"path": m["path"], "rule": m["rule"], "seq": seq} for m in marks)
        s = salt()
        commitments.append(step_commitment(s, rec["step_hash"]))
        steps.append({"salt": s, "seq": seq, "step_hash": rec["step_hash"]})
        body = {k: v for k, v in rec.items() if k not in ("step_hash", "prev_hash")}
        for f in REDACTABLE:
            if f not in rec:
                continue
            if _is_blob(rec[f]) and not _has_marker(new_fields[f]):
                body[f] = rec[f]  # not redacted: the reference stays, the blob is published (§5.4)
                d = rec[f][BLOB_MARKER]["digest"]
                published_blobs[d] = blobs[d]
            else:
                body[f] = new_fields[f]
        body["prev_hash"] = prev
        step_hash = digest_utf8(canonical_json(body))
        out_lines.append(canonical_json({**body, "step_hash": step_hash}))
        prev = step_hash
    n = len(records)
    k = n if redacted_from is None else redacted_from
    redactions.sort(key=lambda d: (d["seq"], utf16_key(d["path"])))
    chain = "".join(line + "\n" for line in out_lines).encode("utf-8")
    blob_list = sorted(published_blobs)
    manifest = {
        "anchor": {"commitments": commitments, "format": ANCHOR_FORMAT, "genesis_hash": genesis_hash(genesis), "length": n,
                   "policy_digest": compiled["digest"], "redacted_from": k},
        "blobs": [{"digest": d, "size": len(published_blobs[d])} for d in blob_list],
        "chain": [{"digest": digest_bytes(chain), "name": "chain/0000000000000000.jsonl", "size": len(chain), "steps": n}],
        "exporter": exporter, "format": RECEIPT_FORMAT, "genesis": genesis,
        "head": {"seq": n - 1, "step_hash": prev}, "range": {"from": 0, "prev_hash": genesis_hash(genesis), "to": n - 1},
        "redactions": redactions,
    }
    entries = [("manifest.json", canonical_json(manifest).encode("utf-8")), ("chain/0000000000000000.jsonl", chain)]
    entries += [("blobs/" + d[7:], published_blobs[d]) for d in blob_list]
    last = records[-1]
    return Publication(b"".join(_entry(name, data) for name, data in entries) + b"\0" * (2 * BLOCK),
                       {"seq": last["seq"], "step_hash": last["step_hash"]}, steps, redactions)


def _entry(name: str, data: bytes) -> bytes:
    return ustar_header(name, len(data)) + data + b"\0" * (-len(data) % BLOCK)

