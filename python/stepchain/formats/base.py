"""What every record format shares (spec/FORMAT.md §5, §6.1, §10): member rules, record profiles and journal
formats. A journal format (the genesis `format`) names the record profiles its chain may hold; a new format is
one more module registered in formats/__init__.py."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from ..canonical import canonical_value, is_seq

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
TS_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\Z")
DIGEST_RE = re.compile(r'"sha256:[0-9a-f]{64}"')

Violation = Optional[tuple[str, str]]  # (code, message)
Check = Callable[[str, int, int], Violation]


def is_valid_id(v: Any) -> bool:
    return isinstance(v, str) and ID_RE.match(v) is not None


def is_valid_timestamp(v: Any) -> bool:
    """RFC 3339 UTC with exactly three fraction digits, and a real instant (no Feb 30, no leap second)."""
    if not isinstance(v, str) or not TS_RE.match(v):
        return False
    try:
        datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%fZ")
    except ValueError:
        return False
    return True


def format_timestamp(dt: datetime | None = None) -> str:
    dt = (dt or datetime.now(timezone.utc)).astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (dt.microsecond // 1000)


def invalid(message: str) -> Violation:
    return ("FIELD_INVALID", message)


@dataclass(frozen=True)
class MemberRule:
    name: str
    required: bool
    role: str  # content | meta | envelope
    check: Optional[Check] = None


def digest_rule(name: str) -> Check:
    def check(text: str, start: int, end: int) -> Violation:
        if end - start == 73 and DIGEST_RE.match(text, start):
            return None
        return invalid(f'{name} must be "sha256:" followed by 64 lowercase hex digits')
    return check


def envelope(name: str, check: Check) -> MemberRule:
    return MemberRule(name, True, "envelope", check)


SEQ_RULE = envelope("seq", lambda t, s, e: None if is_seq(canonical_value(t, s, e)) and "." not in t[s:e] and "e" not in t[s:e]
                    else invalid("seq must be an integer from 0 to 2^53 - 1"))
STEP_ID_RULE = envelope("step_id", lambda t, s, e: None if is_valid_id(canonical_value(t, s, e))
                        else invalid("step_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit"))
TS_RULE = envelope("ts", lambda t, s, e: None if is_valid_timestamp(canonical_value(t, s, e))
                   else invalid("ts must be an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z"))
META_RULE = MemberRule("meta", False, "meta", lambda t, s, e: None if t[s] == "{" else invalid("meta must be a JSON object"))


@dataclass
class RecordProfile:
    id: str
    version: int
    members: list[MemberRule]
    content_fields: list[str]
    blob_fields: set[str]
    redactable: list[str]
    step_hash_of: Callable[[str, dict[str, tuple[int, int]]], str]
    relation_defect: Optional[Callable[[Callable[[str], Any]], Optional[tuple[str, str]]]] = None
    defaults: dict[str, Any] = field(default_factory=dict)
    # The writer's seal (FORMAT §5.2): (stored line with its newline, step hash) from the record's members
    # without step_hash; None for a profile that is never appended (a publication's public form).
    seal: Optional[Callable[[dict[str, Any]], tuple[str, str]]] = None

    @property
    def member_names(self) -> set[str]:
        return {m.name for m in self.members}


@dataclass
class JournalFormat:
    format: str
    genesis_members: list[str]
    genesis_defect: Callable[[dict[str, Any]], Optional[str]]
    records: list[RecordProfile]
    select: Callable[[Callable[[str], Any]], RecordProfile]

    @property
    def member_names(self) -> set[str]:
        out: set[str] = set()
        for r in self.records:
            out |= r.member_names
        return out


def version_rule(version: int, message: str) -> MemberRule:
    def check(t: str, s: int, e: int) -> Violation:
        v = canonical_value(t, s, e)
        if v == version and not isinstance(v, bool) and t[s:e] == str(version):
            return None
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return ("UNSUPPORTED_VERSION", message.format(v=t[s:e]))
        return invalid(f"v must be the number {version}")
    return MemberRule("v", True, "envelope", check)
