"""Format `stepchain/v3` (spec/FORMAT.md §14): the v2 run record with `root` and `seed` in place of `salt`, every
object member, array element and chunk of a long string committed as a salted unit. Its step hash is that of
§14.5: B (the line without step_hash; a public form's `bind`) with the envelope and `root`. Two profiles: the
stored (private) form, and the public form of a publication (REDACTION.md §13.3), whose step hash exists only
when its shown values, withheld digests and `secrets` give its root."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from ..canonical import canonical_value, digest_utf8
from ..v3 import SLOTS, V3Defect, public_root
from .base import (META_RULE, SEQ_RULE, STEP_ID_RULE, TS_RULE, JournalFormat, MemberRule, RecordProfile, Violation,
                   digest_rule, envelope, invalid, version_rule)
from .v1 import step_hash_without
from .v2 import GENESIS_MEMBERS, PAYLOAD_FIELDS, RECORD_KINDS, UNDECIDED, _ABSENT, _ref_check, relation_defect, run_identity_defect
from .base import is_valid_id, is_valid_timestamp

FORMAT_V3 = "stepchain/v3"
KIND_RE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*\Z")
MAX_KIND_LENGTH = 128
# FORMAT.md §14.8: the kinds of §11.3 are checked here; these are registered, their own rules are other issues'.
UNCHECKED_KINDS = {"decision", "erasure"}
# Registered by v3 and checked here: the approval records, by the chain's approval ledger (APPROVALS.md §5).
CHECKED_V3_KINDS = {"approval.requested", "approval.granted", "approval.denied"}
# The kinds v3 adds to v2's (FORMAT.md §14.8) and their rules between members: ref required, forbidden or either.
V3_KIND_REF = {"decision": "required", "approval.requested": "any", "approval.granted": "required", "approval.denied": "required",
               "erasure": "none"}
SEED_TEXT = re.compile(r'"[0-9a-f]{64}"')
ENVELOPE = ["kind", "prev_hash", "ref", "root", "seq", "step_id", "ts", "v"]
CONTENT_FIELDS_V3 = ["kind", "ref", "input", "model", "prompt", "tool_call", "result", "error"]


def kind_notice(kind: Any) -> Optional[str]:
    """KIND_UNKNOWN or KIND_UNCHECKED for a well-formed kind (§14.7 A.4), None for a kind checked here."""
    if not isinstance(kind, str) or kind in RECORD_KINDS or kind in CHECKED_V3_KINDS:
        return None
    return "KIND_UNCHECKED" if kind in UNCHECKED_KINDS else "KIND_UNKNOWN"


def v3_relation_defect(value: Callable[[str], Any]) -> Optional[tuple[str, str]]:
    """The rules between members (FORMAT §11.3, §14.8) for v2's kinds and the kinds v3 registers; an unregistered kind
    is only notified."""
    kind = value("kind")
    rule = V3_KIND_REF.get(kind) if isinstance(kind, str) else None
    if rule is None:
        return relation_defect(value)
    ref, error = value("ref"), value("error")
    if rule == "required" and ref is None:
        return ("ref", f"a {kind} record must name the record it continues in ref")
    if rule == "none" and ref is not None and ref is not _ABSENT:
        return ("ref", f"a {kind} record has no ref (ref must be null)")
    if error is not None and error is not _ABSENT:
        return ("error", f"only a failed record carries an error; a {kind} record has error null")
    return None


def _kind_check(t: str, s: int, e: int) -> Violation:
    k = canonical_value(t, s, e)
    if isinstance(k, str) and len(k) <= MAX_KIND_LENGTH and KIND_RE.match(k):
        return None
    return invalid(f'kind must be a dotted lowercase name ({KIND_RE.pattern[:-2]}, at most {MAX_KIND_LENGTH} characters), '
                   'such as "tool.started" or "x.com.example.audit"')


def _seed_check(t: str, s: int, e: int) -> Violation:
    return None if e - s == 66 and SEED_TEXT.match(t, s) else invalid("seed must be 64 lowercase hex digits (256 bits)")


def _secrets_check(t: str, s: int, e: int) -> Violation:
    return None if t[s] == "{" else invalid("secrets must be a JSON object")


def _step_hash(text: str, spans: dict[str, tuple[int, int]], bind: str) -> str:
    parts = ['"bind":' + '"' + bind + '"']
    for name in ENVELOPE:
        span = spans.get(name)
        if span is None:
            return UNDECIDED
        parts.append(f'"{name}":' + text[span[0]:span[1]])
    return digest_utf8("{" + ",".join(parts) + "}")


def private_step_hash(text: str, spans: dict[str, tuple[int, int]]) -> str:
    if "seed" not in spans or "step_hash" not in spans:
        return UNDECIDED
    return _step_hash(text, spans, step_hash_without(text, spans))


def slot_values(text: str, spans: dict[str, tuple[int, int]]) -> dict[str, Any]:
    return {name: canonical_value(text, spans[name][0], spans[name][1]) for name in SLOTS if name in spans}


def public_defect(text: str, spans: dict[str, tuple[int, int]]) -> Optional[V3Defect]:
    """REDACTION.md §13.6 step 2.1–2.5 for one public-form line: the first failure, or None."""
    if "seed" in spans or "keys" in spans:
        name = "seed" if "seed" in spans else "keys"
        return V3Defect("SECRET_PUBLISHED", "/" + name, f"a public record publishes its {name}")
    for name in ("root", "bind"):
        span = spans.get(name)
        if span is None or not digest_rule(name)(text, span[0], span[1]) is None:
            return V3Defect("MARKER_INVALID", "/" + name, f"{name} must be a digest")
    span = spans.get("secrets")
    if span is None:
        return V3Defect("SECRETS_INVALID", "/secrets", "a public record carries secrets")
    try:
        r = public_root(slot_values(text, spans), canonical_value(text, span[0], span[1]))
    except V3Defect as d:
        return d
    root_span = spans["root"]
    if r != text[root_span[0] + 1:root_span[1] - 1]:
        return V3Defect("ROOT_MISMATCH", "/root", f"the shown values, withheld digests and secrets give the root {r}, not the stored root: "
                        "a shown value, name, chunk or withheld digest was changed, moved or dropped")
    return None


def public_step_hash(text: str, spans: dict[str, tuple[int, int]]) -> str:
    if "step_hash" not in spans or public_defect(text, spans) is not None:
        return UNDECIDED
    b = spans["bind"]
    return _step_hash(text, spans, text[b[0] + 1:b[1] - 1])


def seal_v3(record: dict[str, Any]) -> tuple[str, str]:
    """The stored line and step hash of a v3 record (§14.4–§14.5): a fresh seed from the CSPRNG (or the one a
    copy carries, `seed` in the record), the root of its slot values, B over the line, the step hash over B."""
    import secrets as _secrets
    from ..canonical import canonical_json
    from ..v3 import private_root
    seed = record.get("seed") or _secrets.token_hex(32)
    body = {k: v for k, v in record.items() if k not in ("seed", "step_hash")}
    root, _ = private_root(seed, {k: body[k] for k in SLOTS if k in body})
    line = {**body, "root": root, "seed": seed}
    b = digest_utf8(canonical_json(line))
    step_hash = digest_utf8(canonical_json({"bind": b, **{k: line[k] for k in ENVELOPE}}))
    return canonical_json({**line, "step_hash": step_hash}) + "\n", step_hash


def _content(name: str, check: Any = None) -> MemberRule:
    return MemberRule(name, True, "content", check)


BASE_MEMBERS = [
    _content("error"), _content("input"), _content("kind", _kind_check), META_RULE, _content("model"),
    envelope("prev_hash", digest_rule("prev_hash")), _content("prompt"), _content("ref", _ref_check), _content("result"),
    envelope("root", digest_rule("root")), SEQ_RULE, envelope("step_hash", digest_rule("step_hash")), STEP_ID_RULE,
    _content("tool_call"), TS_RULE,
    version_rule(3, "record version {v} is not supported in a stepchain/v3 journal; it holds version 3"),
]
_by_name: Callable[[list[MemberRule]], list[MemberRule]] = lambda rules: sorted(rules, key=lambda m: m.name)  # noqa: E731

STEP_V3 = RecordProfile(
    id="step/v3", version=3, members=_by_name(BASE_MEMBERS + [MemberRule("seed", True, "envelope", _seed_check)]),
    content_fields=CONTENT_FIELDS_V3, blob_fields=set(), redactable=SLOTS,
    step_hash_of=private_step_hash, relation_defect=v3_relation_defect, defaults={"kind": "step"}, seal=seal_v3,
)


def _public_relation(value: Callable[[str], Any]) -> Optional[tuple[str, str]]:
    def shown(n: str) -> Any:
        v = value(n)
        return _ABSENT if isinstance(v, dict) and any(k.startswith("$stepchain:") for k in v) else v
    return v3_relation_defect(shown)


STEP_V3_PUBLIC = RecordProfile(
    id="step/v3+public", version=3,
    members=_by_name(BASE_MEMBERS + [envelope("bind", digest_rule("bind")), MemberRule("secrets", True, "envelope", _secrets_check)]),
    content_fields=CONTENT_FIELDS_V3, blob_fields=set(), redactable=SLOTS,
    step_hash_of=public_step_hash, relation_defect=_public_relation, defaults={"kind": "step"},
)


def sealed_step_hash(text: str, spans: dict[str, tuple[int, int]]) -> str:
    """ERASURE.md §5 step 1: a sealed record's B is its stored bind; its values are bound by its deep check."""
    b = spans.get("bind")
    if b is None or "step_hash" not in spans or not digest_rule("bind")(text, b[0], b[1]) is None:
        return UNDECIDED
    return _step_hash(text, spans, text[b[0] + 1:b[1] - 1])


def _object_check(name: str) -> Any:
    return lambda t, s, e: None if t[s] == "{" else invalid(f"{name} must be a JSON object")


STEP_V3_SEALED = RecordProfile(
    id="step/v3+sealed", version=3,
    members=_by_name(BASE_MEMBERS + [envelope("bind", digest_rule("bind")), MemberRule("keys", True, "envelope", _object_check("keys")),
                                     MemberRule("salts", True, "envelope", _object_check("salts"))]),
    content_fields=CONTENT_FIELDS_V3, blob_fields=set(), redactable=SLOTS,
    step_hash_of=sealed_step_hash, relation_defect=_public_relation, defaults={"kind": "step"},
)


def _select(member: Callable[[str], Any]) -> RecordProfile:
    if member("seed") is not _ABSENT or member("bind") is _ABSENT:
        return STEP_V3
    return STEP_V3_SEALED if member("keys") is not _ABSENT and member("secrets") is _ABSENT else STEP_V3_PUBLIC


def genesis_defect(g: dict[str, Any]) -> Optional[str]:
    keys = sorted(g)
    if keys != GENESIS_MEMBERS:
        return f"a stepchain/v3 genesis must have exactly the members created_at, format, journal_id, run (found {', '.join(keys) or 'none'})"
    if not is_valid_id(g["journal_id"]):
        return "genesis journal_id must be 1–128 characters from [A-Za-z0-9._:-]"
    if not is_valid_timestamp(g["created_at"]):
        return "genesis created_at must be an RFC 3339 UTC timestamp with milliseconds"
    return run_identity_defect(g["run"])


JOURNAL_V3 = JournalFormat(FORMAT_V3, GENESIS_MEMBERS, genesis_defect, [STEP_V3, STEP_V3_PUBLIC, STEP_V3_SEALED], _select)
__all__ = ["FORMAT_V3", "JOURNAL_V3", "STEP_V3", "STEP_V3_PUBLIC", "STEP_V3_SEALED", "PAYLOAD_FIELDS", "kind_notice", "public_defect", "slot_values"]
