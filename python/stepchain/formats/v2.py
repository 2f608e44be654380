"""Format `stepchain/v2` (spec/FORMAT.md §11, §12): the run journal. The genesis carries the run's identity; the
record of version 2 is the v1 step plus `kind`, `ref` and `error`, and its step hash commits to one salted digest
per slot (the redactable members) instead of to their values. Two profiles share one step hash: the stored
(private) form with the record `salt`, and the public form a publication writes (`salts`, `digests`)."""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

from ..canonical import canonical_value, digest_utf8, sha256_hex
from .base import (META_RULE, SEQ_RULE, STEP_ID_RULE, TS_RULE, JournalFormat, MemberRule, RecordProfile, Violation,
                   digest_rule, envelope, invalid, is_valid_id, is_valid_timestamp, version_rule)

FORMAT_V2 = "stepchain/v2"
RECORD_KINDS = ["step", "run.started", "run.completed", "run.failed", "model.started", "model.completed", "model.failed",
                "tool.started", "tool.updated", "tool.completed", "tool.failed"]
REF_KINDS = {"model.completed", "model.failed", "tool.updated", "tool.completed", "tool.failed"}
FAILED_KINDS = {"run.failed", "model.failed", "tool.failed"}
CONTENT_FIELDS_V2 = ["kind", "ref", "input", "model", "prompt", "tool_call", "result", "error"]
PAYLOAD_FIELDS = ["input", "model", "prompt", "tool_call", "result", "error"]
SLOTS = sorted(PAYLOAD_FIELDS + ["meta"])  # error, input, meta, model, prompt, result, tool_call

SLOT_SALT_TAG = "stepchain/v2 salt\n"
SLOT_DIGEST_TAG = "stepchain/v2 slot\n"
SALT_RE = re.compile(r"[0-9a-f]{32}\Z")
SALT_TEXT = re.compile(r'"[0-9a-f]{32}"')
DIGEST_VALUE_RE = re.compile(r"sha256:[0-9a-f]{64}\Z")
UNDECIDED = "sha256:undecided"
REDACTED_MARKER = "$stepchain:redacted"


def is_salt_hex(v: Any) -> bool:
    return isinstance(v, str) and SALT_RE.match(v) is not None


def slot_salts(record_salt: str, slots: list[str] = SLOTS) -> list[str]:
    """Block j is SHA-256(tag ‖ record salt ‖ "\\n" ‖ j) in hex; slot i takes half of block ⌊i/2⌋ (FORMAT §12.2)."""
    out: list[str] = []
    for j in range((len(slots) + 1) // 2):
        block = sha256_hex(SLOT_SALT_TAG + record_salt + "\n" + str(j))
        out.append(block[:32])
        if 2 * j + 1 < len(slots):
            out.append(block[32:64])
    return out


def slot_digest(salt: str, slot: str, value_text: Optional[str]) -> str:
    return digest_utf8(SLOT_DIGEST_TAG + salt + '\n["' + slot + ('"]' if value_text is None else '",' + value_text + "]"))


def _commitments_text(digests: list[str]) -> str:
    return "{" + ",".join(f'"{s}":"{d}"' for s, d in zip(SLOTS, digests)) + "}"


def _hash_from_spans(text: str, spans: dict[str, tuple[int, int]], skip: set[str], commitments: str) -> str:
    parts: list[str] = []
    placed = False
    for name, (s, e) in spans.items():  # a canonical line's members are already in order
        if name in skip:
            continue
        if not placed and name > "commitments":
            parts.append('"commitments":' + commitments)
            placed = True
        parts.append(json.dumps(name, ensure_ascii=False) + ":" + text[s:e])
    if not placed:
        parts.append('"commitments":' + commitments)
    return digest_utf8("{" + ",".join(parts) + "}")


def private_step_hash(text: str, spans: dict[str, tuple[int, int]]) -> str:
    span = spans.get("salt")
    if span is None or span[1] - span[0] != 34 or not SALT_TEXT.match(text, span[0]):
        return UNDECIDED
    salts = slot_salts(text[span[0] + 1:span[1] - 1])
    digests = []
    for slot, salt in zip(SLOTS, salts):
        sp = spans.get(slot)
        digests.append(slot_digest(salt, slot, None if sp is None else text[sp[0]:sp[1]]))
    return _hash_from_spans(text, spans, {"step_hash", "salt", *SLOTS}, _commitments_text(digests))


def _is_withheld_marker(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and REDACTED_MARKER in v


def slot_states(text: str, spans: dict[str, tuple[int, int]]) -> dict[str, dict[str, Any]]:
    """What each slot of a public-form record holds (REDACTION.md §12.2)."""
    def read(name: str) -> Any:
        s = spans.get(name)
        return canonical_value(text, s[0], s[1]) if s else None
    salts, digests = read("salts"), read("digests")
    out: dict[str, dict[str, Any]] = {}
    for slot in SLOTS:
        span = spans.get(slot)
        salt = salts.get(slot) if isinstance(salts, dict) else None
        digest = digests.get(slot) if isinstance(digests, dict) else None
        value_text = text[span[0]:span[1]] if span else None
        whole = None
        if value_text is not None and value_text.startswith('{"' + REDACTED_MARKER + '":'):
            try:
                m = json.loads(value_text)
                if _is_withheld_marker(m):
                    body = m[REDACTED_MARKER]
                    if isinstance(body, dict) and isinstance(body.get("commitment"), str) and isinstance(body.get("rule"), str):
                        whole = body
            except ValueError:
                pass
        states = (salt is not None) + (digest is not None) + (whole is not None)
        if states != 1:
            out[slot] = {"kind": "invalid"}
        elif whole is not None:
            out[slot] = {"kind": "withheld", "digest": whole["commitment"], "rule": whole["rule"]}
        elif digest is not None:
            out[slot] = {"kind": "invalid"} if value_text is None else {"kind": "view", "digest": digest}
        else:
            out[slot] = {"kind": "disclosed", "salt": salt, "present": value_text is not None}
    return out


def public_step_hash(text: str, spans: dict[str, tuple[int, int]]) -> str:
    states = slot_states(text, spans)
    digests = []
    for slot in SLOTS:
        st = states[slot]
        if st["kind"] == "invalid":
            return UNDECIDED
        if st["kind"] == "disclosed":
            sp = spans.get(slot)
            digests.append(slot_digest(st["salt"], slot, None if sp is None else text[sp[0]:sp[1]]))
        else:
            digests.append(st["digest"])
    return _hash_from_spans(text, spans, {"step_hash", "salts", "digests", *SLOTS}, _commitments_text(digests))


def _content(name: str, check: Any = None) -> MemberRule:
    return MemberRule(name, True, "content", check)


def _kind_check(t: str, s: int, e: int) -> Violation:
    k = canonical_value(t, s, e)
    return None if isinstance(k, str) and k in RECORD_KINDS else invalid(f"kind must be one of {', '.join(RECORD_KINDS)}")


def _ref_check(t: str, s: int, e: int) -> Violation:
    r = canonical_value(t, s, e)
    return None if r is None or is_valid_id(r) else invalid(
        "ref must be null or the step_id of an earlier record (1–128 characters from [A-Za-z0-9._:-])")


_ABSENT = object()


def relation_defect(value: Callable[[str], Any]) -> Optional[tuple[str, str]]:
    """The rules between members (FORMAT §11.3); value() gives _ABSENT for a member absent or broken."""
    kind = value("kind")
    if not isinstance(kind, str) or kind not in RECORD_KINDS:
        return None
    ref = value("ref")
    if kind in REF_KINDS and ref is None:
        return ("ref", f"a {kind} record must name the started record it ends in ref")
    if kind not in REF_KINDS and ref is not None and ref is not _ABSENT:
        return ("ref", f"a {kind} record has no ref (ref must be null)")
    error = value("error")
    if kind in FAILED_KINDS and error is None:
        return ("error", f"a {kind} record must carry its error (error must not be null)")
    if kind not in FAILED_KINDS and error is not None and error is not _ABSENT:
        return ("error", f"only a failed record carries an error; a {kind} record has error null")
    return None


def _salt_check(t: str, s: int, e: int) -> Violation:
    return None if e - s == 34 and SALT_TEXT.match(t, s) else invalid("salt must be 32 lowercase hex digits (128 bits)")


def _slot_map_rule(name: str, required: bool) -> MemberRule:
    def ok(x: Any) -> bool:
        return is_salt_hex(x) if name == "salts" else isinstance(x, str) and DIGEST_VALUE_RE.match(x) is not None

    def check(t: str, s: int, e: int) -> Violation:
        v = canonical_value(t, s, e)
        if not isinstance(v, dict):
            return invalid(f"{name} must be a JSON object")
        for k, x in v.items():
            if k not in SLOTS:
                return invalid(f"{name} may name only the slots {', '.join(SLOTS)} (found {json.dumps(k, ensure_ascii=False)})")
            if not ok(x):
                return invalid(f"{name}.{k} must be {'32 lowercase hex digits' if name == 'salts' else 'a digest'}")
        if name == "digests" and not v:
            return invalid("digests, when present, names at least one slot")
        return None
    return MemberRule(name, required, "envelope", check)


BASE_MEMBERS = [
    _content("error"), _content("input"), _content("kind", _kind_check), META_RULE, _content("model"),
    envelope("prev_hash", digest_rule("prev_hash")), _content("prompt"), _content("ref", _ref_check), _content("result"),
    SEQ_RULE, envelope("step_hash", digest_rule("step_hash")), STEP_ID_RULE, _content("tool_call"), TS_RULE,
    version_rule(2, "record version {v} is not supported in a stepchain/v2 journal; it holds version 2"),
]
_by_name = lambda rules: sorted(rules, key=lambda m: m.name)  # noqa: E731 - ASCII names: code point order is UTF-16 order

def seal_v2(record: dict[str, Any]) -> tuple[str, str]:
    """The stored line and step hash of a v2 record (FORMAT §12.3): a fresh record salt, one salted digest per slot."""
    import secrets
    from ..canonical import canonical_json
    salt = secrets.token_hex(16)
    clear = {k: v for k, v in record.items() if k not in SLOTS}
    clear["commitments"] = {slot: slot_digest(s, slot, canonical_json(record[slot]) if slot in record else None)
                            for slot, s in zip(SLOTS, slot_salts(salt))}
    step_hash = digest_utf8(canonical_json(clear))
    return canonical_json({**record, "salt": salt, "step_hash": step_hash}) + "\n", step_hash


STEP_V2 = RecordProfile(
    id="step/v2", version=2, members=_by_name(BASE_MEMBERS + [MemberRule("salt", True, "envelope", _salt_check)]),
    content_fields=CONTENT_FIELDS_V2, blob_fields=set(PAYLOAD_FIELDS), redactable=SLOTS,
    step_hash_of=private_step_hash, relation_defect=relation_defect, defaults={"kind": "step"}, seal=seal_v2,
)


def _public_relation(value: Callable[[str], Any]) -> Optional[tuple[str, str]]:
    return relation_defect(lambda n: _ABSENT if _is_withheld_marker(value(n)) else value(n))


STEP_V2_PUBLIC = RecordProfile(
    id="step/v2+public", version=2,
    members=_by_name(BASE_MEMBERS + [_slot_map_rule("salts", True), _slot_map_rule("digests", False)]),
    content_fields=CONTENT_FIELDS_V2, blob_fields=set(PAYLOAD_FIELDS), redactable=SLOTS,
    step_hash_of=public_step_hash, relation_defect=_public_relation, defaults={"kind": "step"},
)

GENESIS_MEMBERS = ["created_at", "format", "journal_id", "run"]
RUN_MEMBERS = {"agent", "conversation_id", "labels", "parent_run_id"}
LABEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}\Z")


def _utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def run_identity_defect(run: Any) -> Optional[str]:
    if not isinstance(run, dict):
        return "genesis run must be a JSON object"
    for k in run:
        if k not in RUN_MEMBERS:
            return f"unknown member {json.dumps(k, ensure_ascii=False)} in the genesis run (allowed: agent, conversation_id, labels, parent_run_id)"
    if "conversation_id" in run and not is_valid_id(run["conversation_id"]):
        return "run conversation_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit"
    if "parent_run_id" in run and not is_valid_id(run["parent_run_id"]):
        return "run parent_run_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit"
    if "agent" in run and (not isinstance(run["agent"], str) or not 0 < _utf16_len(run["agent"]) <= 256):
        return "run agent must be a string of 1–256 characters"
    if "labels" in run:
        labels = run["labels"]
        if not isinstance(labels, dict):
            return "run labels must be a JSON object of strings"
        if len(labels) > 64:
            return f"run labels hold at most 64 names (found {len(labels)})"
        for name, v in labels.items():
            if not LABEL_NAME.match(name):
                return f"label name {json.dumps(name, ensure_ascii=False)} must be 1–64 characters from [A-Za-z0-9._:-] starting with a letter or digit"
            if not isinstance(v, str) or _utf16_len(v) > 1024:
                return f"label {json.dumps(name, ensure_ascii=False)} must be a string of at most 1024 characters"
    return None


def genesis_defect(g: dict[str, Any]) -> Optional[str]:
    keys = sorted(g)
    if keys != GENESIS_MEMBERS:
        return f"a stepchain/v2 genesis must have exactly the members created_at, format, journal_id, run (found {', '.join(keys) or 'none'})"
    if not is_valid_id(g["journal_id"]):
        return "genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]"
    if not is_valid_timestamp(g["created_at"]):
        return "genesis created_at must be an RFC 3339 UTC timestamp with milliseconds"
    return run_identity_defect(g["run"])


JOURNAL_V2 = JournalFormat(FORMAT_V2, GENESIS_MEMBERS, genesis_defect, [STEP_V2, STEP_V2_PUBLIC],
                           lambda member: STEP_V2_PUBLIC if member("salts") is not _ABSENT else STEP_V2)
