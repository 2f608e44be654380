"""Format `stepchain/v1` (spec/FORMAT.md §5, §6.1): its genesis and its one record profile, the step record of
version 1 — the five content fields, optional meta and the envelope — hashed over the line without step_hash."""
from __future__ import annotations

from typing import Any, Optional

from ..canonical import digest_utf8
from .base import (META_RULE, SEQ_RULE, STEP_ID_RULE, TS_RULE, JournalFormat, MemberRule, RecordProfile, digest_rule,
                   envelope, is_valid_id, is_valid_timestamp, version_rule)

FORMAT_V1 = "stepchain/v1"
CONTENT_FIELDS = ["input", "model", "prompt", "tool_call", "result"]


def _content(name: str) -> MemberRule:
    return MemberRule(name, True, "content", None)


MEMBERS = [
    _content("input"), META_RULE, _content("model"), envelope("prev_hash", digest_rule("prev_hash")), _content("prompt"),
    _content("result"), SEQ_RULE, envelope("step_hash", digest_rule("step_hash")), STEP_ID_RULE, _content("tool_call"), TS_RULE,
    version_rule(1, "record version {v} is not supported; this verifier reads version 1"),
]


def step_hash_without(text: str, spans: dict[str, tuple[int, int]]) -> str:
    """SHA-256 of the line without its step_hash member (FORMAT §5.2)."""
    start, end = spans["step_hash"]
    key_start = start - len('"step_hash":')
    if text[key_start - 1] == ",":
        return digest_utf8(text[:key_start - 1], text[end:])
    return digest_utf8(text[:key_start], text[end + (1 if text[end:end + 1] == "," else 0):])


def seal_v1(record: dict[str, Any]) -> tuple[str, str]:
    """The stored line and step hash of a v1 record: SHA-256 of its JCS without step_hash (FORMAT §5.2)."""
    from ..canonical import canonical_json
    step_hash = digest_utf8(canonical_json(record))
    return canonical_json({**record, "step_hash": step_hash}) + "\n", step_hash


STEP_V1 = RecordProfile(
    id="step/v1", version=1, members=MEMBERS, content_fields=CONTENT_FIELDS, blob_fields=set(CONTENT_FIELDS),
    redactable=sorted(CONTENT_FIELDS + ["meta"]), step_hash_of=step_hash_without, seal=seal_v1,
)

GENESIS_MEMBERS = ["created_at", "format", "journal_id"]


def genesis_defect(g: dict[str, Any]) -> Optional[str]:
    keys = sorted(g)
    if keys != GENESIS_MEMBERS:
        return f"the genesis must have exactly the members created_at, format, journal_id (found {', '.join(keys) or 'none'})"
    if not is_valid_id(g["journal_id"]):
        return "genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]"
    if not is_valid_timestamp(g["created_at"]):
        return "genesis created_at must be an RFC 3339 UTC timestamp with milliseconds"
    return None


JOURNAL_V1 = JournalFormat(FORMAT_V1, GENESIS_MEMBERS, genesis_defect, [STEP_V1], lambda member: STEP_V1)
