"""The chain verifier (spec/FORMAT.md §6): walks stored lines from a starting hash and reports every problem
with its code and location, in the order the procedure meets them. Pure, and it never raises on hostile input.
It is incremental (begin_segment / line / finish), so a store or a receipt can feed it one line at a time."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from .canonical import (MAX_LINE_BYTES, MAX_RECORD_DEPTH, RESERVED_PREFIX, MarkerSpan, canonical_value, first_invalid_utf8,
                        is_digest, is_seq, scan_canonical, unescape_token, utf8_column)
from .formats import format_of, genesis_defect, genesis_hash
from .formats.base import JournalFormat, RecordProfile, is_valid_id
from .formats.v2 import _ABSENT
from .formats.v3 import kind_notice
from .v3 import CHUNKS_MARKER, ERASED_MARKER, PART_MARKER, WITHHELD_MARKER, V3Defect, erased_entry_defect, private_root

BLOB_MARKER = RESERVED_PREFIX + "blob"
REDACTED_MARKER = RESERVED_PREFIX + "redacted"
BUCKET_NAME_RE = re.compile(r"(\d{16})\.jsonl\Z")
LOCATION_KEYS = ("file", "line", "column", "seq", "field", "path")

_OUTCOME_KINDS = ("tool.completed", "tool.failed", "tool.updated")


@dataclass
class Problem:
    code: str
    message: str
    location: dict[str, Any] = field(default_factory=dict)

    def summary(self, keys: tuple[str, ...] = ("file", "line", "column", "seq", "field")) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code}
        for k in keys:
            if k in self.location:
                out[k] = self.location[k]
        return out


@dataclass
class ChainReport:
    ok: bool
    start_hash: Optional[str]
    start_seq: int
    head: Optional[str]
    head_seq: Optional[int]
    steps: int
    problems: list[Problem]
    warnings: list[Problem]
    problems_truncated: bool
    notices: list[Problem] = field(default_factory=list)
    # stepchain/v3: every approval request and what became of it (APPROVALS.md §6); None when the chain holds none
    approvals: Optional[list[dict[str, Any]]] = None


@dataclass
class LineFacts:
    problems: list[Problem]
    readable: bool
    seq: Optional[int] = None
    prev_hash: Optional[str] = None
    step_hash: Optional[str] = None
    blobs: list[dict[str, Any]] = field(default_factory=list)
    markers: list[MarkerSpan] = field(default_factory=list)
    text: str = ""
    spans: Optional[dict[str, tuple[int, int]]] = None
    profile: Optional[RecordProfile] = None
    kind: Any = None


def _unreadable(code: str, message: str, location: dict[str, Any]) -> LineFacts:
    return LineFacts([Problem(code, message, location)], False)


def is_blob_body(body: Any) -> bool:
    return (isinstance(body, dict) and len(body) == 2 and is_digest(body.get("digest")) and isinstance(body.get("size"), int)
            and not isinstance(body.get("size"), bool) and 0 <= body["size"] <= 2**53 - 1)


def is_redacted_body(body: Any) -> bool:
    if not isinstance(body, dict) or any(k not in ("commitment", "rule", "text") for k in body):
        return False
    return is_digest(body.get("commitment")) and is_valid_id(body.get("rule")) and ("text" not in body or isinstance(body["text"], str))


def decode_line(data: bytes) -> str | LineFacts:
    if len(data) + 1 > MAX_LINE_BYTES:
        return _unreadable("LINE_TOO_LONG", f"line of {len(data) + 1} bytes exceeds the limit of {MAX_LINE_BYTES}", {})
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        column = first_invalid_utf8(data) + 1
        return _unreadable("MALFORMED_LINE", f"line is not valid UTF-8 (first bad byte at column {column})", {"column": column})


def check_line(text: str, fmt: JournalFormat, allow_public: bool = True) -> LineFacts:
    """One complete line (decoded, without its newline) against the journal format (FORMAT §6.3 steps 3–5).
    allow_public=False: a v3 public-form record is WITHHELD_IN_JOURNAL (FORMAT §14.6)."""
    if not text:
        return _unreadable("MALFORMED_LINE", "empty line", {"column": 1})
    scan = scan_canonical(text, MAX_RECORD_DEPTH)
    if scan.defect:
        d = scan.defect
        tokens = d.path.split("/")
        fld = unescape_token(tokens[1]) if len(tokens) > 1 else None
        loc: dict[str, Any] = {"column": utf8_column(text, d.index)}
        if fld is not None and fld in fmt.member_names:
            loc["field"] = fld
        if d.path:
            loc["path"] = d.path
        return _unreadable(d.code, d.reason, loc)
    members = scan.members
    if members is None:
        return _unreadable("MALFORMED_LINE", "a step line must be a JSON object", {})

    def value(name: str) -> Any:
        span = members.get(name)
        return canonical_value(text, span[0], span[1]) if span else _ABSENT

    profile = fmt.select(value)
    seq_value = value("seq")
    seq = int(seq_value) if is_seq(seq_value) else None
    at: dict[str, Any] = {} if seq is None else {"seq": seq}
    problems: list[Problem] = []

    def report(code: str, message: str, location: dict[str, Any]) -> None:
        problems.append(Problem(code, message, location))

    names = profile.member_names
    for name in members:
        if name not in names:
            report("UNKNOWN_FIELD", f"unknown member {json.dumps(name, ensure_ascii=False)} in a step record", {**at, "field": name})
    prev_valid = step_valid = False
    broke: set[str] = set()
    for rule in profile.members:
        span = members.get(rule.name)
        if span is None:
            if rule.required:
                report("MISSING_FIELD", f'required member "{rule.name}" is missing', {**at, "field": rule.name})
            continue
        broken = rule.check(text, span[0], span[1]) if rule.check else None
        if broken:
            report(broken[0], broken[1], {**at, "field": rule.name})
            broke.add(rule.name)
        elif rule.name == "prev_hash":
            prev_valid = True
        elif rule.name == "step_hash":
            step_valid = True
    if profile.relation_defect:
        rel = profile.relation_defect(lambda n: _ABSENT if n in broke else value(n))
        if rel:
            report("FIELD_INVALID", rel[1], {**at, "field": rel[0]})
    blobs = (_check_markers_v3 if profile.version == 3 else _check_markers)(text, scan.markers, profile, at, report)
    prev_hash = value("prev_hash") if prev_valid else None
    step_hash = value("step_hash") if step_valid else None
    if step_hash is not None:
        computed = profile.step_hash_of(text, members)
        if computed != step_hash:
            report("HASH_MISMATCH", f"stored step_hash {step_hash} does not match the record's content ({computed}): a covered field was "
                   "altered after hashing, or step_hash itself was edited", {**at, "field": "step_hash"})
    if profile.id == "step/v3+public" and not allow_public:
        report("WITHHELD_IN_JOURNAL", "a record in public form (bind and secrets, no seed) stands among stored records: its bind would be "
               "taken as given and nothing would bind its values; a journal holds private records only", {**at, "field": "bind"})
    kind = value("kind") if "kind" not in broke else None
    return LineFacts(problems, True, seq, prev_hash, step_hash, blobs, scan.markers, text, members, profile, kind)


def _check_markers(text: str, markers: list[MarkerSpan], profile: RecordProfile, at: dict[str, Any],
                   report: Callable[[str, str, dict[str, Any]], None]) -> list[dict[str, Any]]:
    blobs: list[dict[str, Any]] = []
    for m in markers:
        tokens = m.path.split("/")
        loc = {**at, "field": unescape_token(tokens[1] if len(tokens) > 1 else ""), "path": m.path}
        if len(m.names) != 1:
            report("MARKER_INVALID", f"a marker object must have exactly one member (found {len(m.names)})", loc)
            continue
        name = m.names[0]
        body = json.loads(text[m.start:m.end])[name]
        if name == BLOB_MARKER:
            fld = m.path[1:]
            if fld not in profile.blob_fields:
                report("MARKER_INVALID", "a blob reference may only stand as a whole content field", loc)
                continue
            if not is_blob_body(body):
                report("MARKER_INVALID", 'a blob reference is {"$stepchain:blob":{"digest":"sha256:<hex>","size":<bytes>}}', loc)
                continue
            blobs.append({"field": fld, "digest": body["digest"], "size": body["size"]})
        elif name == REDACTED_MARKER:
            if loc["field"] not in profile.redactable:
                report("MARKER_INVALID", f"a redaction marker may stand only inside a content field or meta, not in {json.dumps(loc['field'])}", loc)
            elif not is_redacted_body(body):
                report("MARKER_INVALID", 'a redaction marker is {"$stepchain:redacted":{"commitment":"sha256:<hex>","rule":"<id>"}} with an optional "text"', loc)
        else:
            report("MARKER_INVALID", f"unknown marker {json.dumps(name, ensure_ascii=False)}", loc)
    return blobs


def _check_markers_v3(text: str, markers: list[MarkerSpan], profile: RecordProfile, at: dict[str, Any],
                      report: Callable[[str, str, dict[str, Any]], None]) -> list[dict[str, Any]]:
    """The shapes of a v3 record's markers (FORMAT §14.6, §14.7 A.1): part references anywhere in a slot; in the public
    form also withheld markers (a digest, or an ascending list of digests beside an object's members) and chunk lists
    of two or more. Whether they give the root is the walk's question (REDACTION.md §13.6)."""
    public = profile.id == "step/v3+public"
    for m in markers:
        tokens = m.path.split("/")
        loc = {**at, "field": unescape_token(tokens[1] if len(tokens) > 1 else ""), "path": m.path}
        why = _v3_marker_defect(json.loads(text[m.start:m.end]), m, loc["field"], profile, public, profile.id == "step/v3+sealed")
        if why is not None:
            report("MARKER_INVALID", why, loc)
    return []


def _v3_marker_defect(obj: dict[str, Any], m: MarkerSpan, fld: str, profile: RecordProfile, public: bool, sealed: bool) -> Optional[str]:
    if fld not in profile.redactable:
        return f"a marker may stand only inside a slot, not in {json.dumps(fld, ensure_ascii=False)}"
    for name in (n for n in m.names if n.startswith(RESERVED_PREFIX)):
        body = obj.get(name)
        if name == PART_MARKER:
            if len(m.names) != 1 or not isinstance(body, dict) or not is_digest(body.get("digest")):
                return 'a part reference is {"$stepchain:part":{"digest":"sha256:<hex>",…}}, the only member of its object'
        elif name == WITHHELD_MARKER and public:
            if isinstance(body, str):
                if len(m.names) != 1 or not is_digest(body):
                    return 'a withheld value is {"$stepchain:withheld":"sha256:<hex>"}'
            elif isinstance(body, list):
                if not body or not all(is_digest(d) for d in body) or any(body[i] <= body[i - 1] for i in range(1, len(body))):
                    return "withheld members are a non-empty list of digests, sorted ascending without repeats"
            else:
                return "a withheld marker holds a digest, or a list of digests beside an object's members"
        elif name == CHUNKS_MARKER and public:
            if len(m.names) != 1 or not isinstance(body, list) or len(body) < 2:
                return 'a chunk list is {"$stepchain:chunks":[chunks…]} with at least two chunks'
        elif name == ERASED_MARKER and (sealed or public):  # a sealed record, or its public form (REDACTION.md §13.12)
            if isinstance(body, dict):
                if len(m.names) != 1 or erased_entry_defect(body):
                    return 'an erased value is {"$stepchain:erased":{"digest":D,"erasure":S}}, the only member of its object'
            elif not isinstance(body, list) or not body or any(erased_entry_defect(e) for e in body) or any(
                    body[i]["digest"] <= body[i - 1]["digest"] for i in range(1, len(body))):
                return "erased members are a non-empty list of {digest, erasure}, sorted by digest without repeats"
        elif name == ERASED_MARKER:
            return f"{json.dumps(name)} stands only in a record in sealed form (after an erasure: no seed; bind, keys, salts) or its public form"
        elif name in (WITHHELD_MARKER, CHUNKS_MARKER):
            return f"{json.dumps(name)} stands only in a publication's public form, never in a stored record"
        else:
            return f"unknown marker {json.dumps(name, ensure_ascii=False)}"
    return None


class _Links:
    def __init__(self, seq: int, hash_: Optional[str], from_genesis: bool) -> None:
        self.last_seq = seq - 1
        self.slack = 0
        self.last_hash = hash_
        self.last_line_hash: Optional[str] = None
        self.last_line_seq: Optional[int] = None
        self.from_genesis = from_genesis

    def unreadable(self) -> None:
        self.slack += 1
        self.last_hash = None
        self.last_line_hash = None
        self.last_line_seq = None

    def link(self, facts: LineFacts, first: bool, declared: Optional[int]) -> tuple[list[Problem], bool]:
        seq, prev, step = facts.seq, facts.prev_hash, facts.step_hash
        problems: list[Problem] = []

        def report(code: str, message: str, fld: str) -> None:
            problems.append(Problem(code, message, {"field": fld} if seq is None else {"seq": seq, "field": fld}))

        expected = self.last_seq + 1
        latest = expected + self.slack
        if seq is not None and seq < expected and step is not None and step == self.last_line_hash and seq == self.last_line_seq:
            report("DUPLICATE_STEP", f"step {seq} appears again (the same step_hash as the previous line)", "seq")
            return problems, True
        if seq is not None and seq > latest:
            exp = str(expected) if latest == expected else f"{expected}–{latest}"
            report("SEQ_GAP", f"expected seq {exp}, found {seq}: step {seq - 1} is missing" if latest == seq - 1
                   else f"expected seq {exp}, found {seq}: steps {latest}–{seq - 1} are missing", "seq")
        elif seq is not None and seq < expected:
            report("SEQ_OUT_OF_ORDER", f"expected seq {expected}, found {seq}: steps are out of order or repeated", "seq")
        if declared is not None and seq is not None and seq != declared:
            report("BUCKET_MISNAMED", f"bucket is named for seq {declared} but its first step is seq {seq}", "seq")
        if prev is not None and self.last_hash is not None and prev != self.last_hash:
            if first and self.from_genesis:
                report("GENESIS_MISMATCH", f"the first step's prev_hash {prev} is not the genesis hash {self.last_hash}: the chain belongs to "
                       "another journal or its genesis was altered", "prev_hash")
            elif first:
                report("LINK_BROKEN", f"the first step's prev_hash {prev} is not the range's starting hash {self.last_hash}", "prev_hash")
            else:
                report("LINK_BROKEN", f"prev_hash {prev} is not the previous step's step_hash {self.last_hash}: a step before this one was "
                       "removed, inserted, reordered or altered", "prev_hash")
        if seq is None:
            self.slack += 1
        else:
            self.last_seq = seq
            self.slack = 0
        self.last_hash = step
        self.last_line_hash = step
        self.last_line_seq = seq
        return problems, False

    def head(self) -> tuple[Optional[str], Optional[int]]:
        return self.last_line_hash, None if self.last_line_hash is None else self.last_line_seq


@dataclass
class VerifiedLine:
    file: Optional[str]
    line: int
    text: str
    seq: Optional[int]
    step_hash: Optional[str]
    clean: bool
    blobs: list[dict[str, Any]]
    markers: list[MarkerSpan]


class ChainVerifier:
    def __init__(self, genesis: Any = None, *, start: Optional[dict[str, Any]] = None, fmt: Optional[JournalFormat] = None,
                 expect_head: Optional[str] = None, max_problems: int = 1000,
                 on_line: Optional[Callable[[VerifiedLine], None]] = None, deep: bool = False, allow_public: bool = True,
                 approvers: Any = None, forked_at: Optional[int] = None, open_end: bool = False) -> None:
        self.problems: list[Problem] = []
        self.max_problems = max_problems
        self.truncated = False
        self.format = fmt or format_of(genesis)
        self.expect_head = expect_head
        self.on_line = on_line
        self.deep = deep
        self.allow_public = allow_public
        self.kinds: dict[str, tuple[str, dict[str, Any], int]] = {}  # kind -> (notice code, first location, records)
        self.erasures: Any = None  # an ErasureLedger once a v3 record is sealed or of kind erasure (ERASURE.md §5)
        self.approvers = approvers  # pinned approvers (APPROVALS.md §5 step 2.7): raw keys, (key, name) pairs or {key, name}
        self.approvals: Any = None  # an ApprovalLedger once a v3 chain holds an approval record (APPROVALS.md §5)
        self.open_end = open_end  # steps may follow (a receipt's range): "never executed" is not proven (APPROVALS.md §5 step 5)
        self.forked_at = forked_at  # a fork's last step copied from its parent (its lineage's from_step), for the fork rule
        self.from_range = start is not None
        if start is not None:
            seq, prev = start.get("seq"), start.get("prev_hash")
            ok_seq = is_seq(seq) and isinstance(seq, int)
            self.start_seq = seq if ok_seq else 0
            self.start_hash = prev if is_digest(prev) else None
            if not ok_seq or self.start_hash is None:
                self._add("GENESIS_INVALID", "a partial chain starts from a seq (an integer from 0 to 2^53 - 1) and a prev_hash (a digest)")
        else:
            self.start_seq = 0
            defect = genesis_defect(genesis)
            if defect:
                self._add("GENESIS_INVALID", defect)
            self.start_hash = None if defect else genesis_hash(genesis)
        self.links = _Links(self.start_seq, self.start_hash, start is None)
        self.segment: Optional[str] = None
        self.declared: Optional[int] = None
        self.segment_lines = 0
        self.steps = 0
        self.last_location: dict[str, Any] = {}

    def _add(self, code: str, message: str, location: Optional[dict[str, Any]] = None) -> None:
        if len(self.problems) >= self.max_problems:
            self.truncated = True
            return
        self.problems.append(Problem(code, message, location or {}))

    def begin_segment(self, label: str, declared_first_seq: Optional[int] = None) -> None:
        self.segment = label
        self.declared = declared_first_seq
        self.segment_lines = 0

    def _location(self) -> dict[str, Any]:
        return {"line": self.segment_lines} if self.segment is None else {"file": self.segment, "line": self.segment_lines}

    def line(self, data: bytes | str, terminated: bool) -> None:
        self.segment_lines += 1
        loc = self._location()
        if not terminated:
            n = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
            self._add("TRUNCATED_LINE", f"the file ends inside a line ({n} bytes without a newline): a torn write; the step was never committed", loc)
            return
        self.steps += 1
        self.last_location = loc
        text = decode_line(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
        facts = check_line(text, self.format, self.allow_public) if isinstance(text, str) else text
        for p in facts.problems:
            self._add(p.code, p.message, {**loc, **p.location})
        if not facts.readable:
            self.links.unreadable()
            return
        declared = self.declared if self.segment_lines == 1 else None
        link_problems, duplicate = self.links.link(facts, self.steps == 1, declared)
        for p in link_problems:
            self._add(p.code, p.message, {**loc, **p.location})
        if facts.profile is not None and facts.profile.version == 3:
            self._v3(facts, loc, not facts.problems and not link_problems and not duplicate)
        if duplicate or self.on_line is None:
            return
        self.on_line(VerifiedLine(self.segment, self.segment_lines, facts.text, facts.seq, facts.step_hash,
                                  not facts.problems and not link_problems, facts.blobs, facts.markers))

    def _v3(self, facts: LineFacts, loc: dict[str, Any], clean: bool) -> None:
        """FORMAT §14.7: the kind notices (A.4) and, with deep, the root of a private record from its values (B)."""
        at = {**loc, **({} if facts.seq is None else {"seq": facts.seq})}
        # The kind erasure is checked (ERASURE.md §5): its ledger gives KIND_UNCHECKED only to a malformed erasure record
        # that no marker names, so a §3 erasure record has no such notice.
        code = None if facts.kind == "erasure" else kind_notice(facts.kind)
        if code is not None:
            first = self.kinds.get(facts.kind)
            self.kinds[facts.kind] = (code, {**at, "field": "kind"}, 1) if first is None else (first[0], first[1], first[2] + 1)
        if (facts.profile is not None and facts.spans is not None and facts.profile.id == "step/v3+public" and not facts.problems
                and ('"$stepchain:erased"' in facts.text or '"$stepchain:withheld"' in facts.text)):
            if self.erasures is None:
                from .erasure import ErasureLedger
                self.erasures = ErasureLedger(self.start_seq)
            self.erasures.public(facts.text, facts.spans, facts.seq, at)
        if facts.profile is not None and facts.spans is not None and (facts.profile.id == "step/v3+sealed" or facts.kind == "erasure"):
            if self.erasures is None:
                from .erasure import ErasureLedger
                self.erasures = ErasureLedger(self.start_seq)
            if facts.profile.id == "step/v3+sealed":
                if not facts.problems:
                    for p in self.erasures.sealed(facts.text, facts.spans, facts.seq, at):
                        self._add(p.code, p.message, p.location)
            if facts.kind == "erasure":  # an erasure record, sealed too once its own reason or by was erased
                sp = facts.spans.get("input")
                step_id = facts.spans.get("step_id")
                if sp is not None and step_id is not None:
                    self.erasures.record(canonical_value(facts.text, *step_id), facts.seq, canonical_value(facts.text, *sp), at)
        if not facts.problems and facts.profile is not None and facts.profile.version == 3 and facts.spans is not None:
            # Every record of a v3 chain: one carrying a call (an object or an array, any kind) is read by the ledger; one
            # holding none gives it its ts (an effect is no earlier than any record before it, APPROVALS.md §5 step 3).
            call, ts = facts.spans.get("tool_call"), facts.spans.get("ts")
            # An outcome is read too once a request exists: one naming a request as its start ran its call (§5 step 4).
            if (isinstance(facts.kind, str) and (facts.kind.startswith("approval.") or facts.kind == "tool.started"
                                                 or facts.kind in _OUTCOME_KINDS and self.approvals is not None and self.approvals.active)
                    or call is None or facts.text[call[0]:call[1]] != "null"):
                self._approval(facts.text)
            elif ts is not None:
                self._ledger().dated(facts.text[ts[0] + 1:ts[1] - 1])
        elif not facts.problems and isinstance(facts.kind, str) and (
                facts.kind.startswith("approval.") or facts.kind == "tool.started" or '"tool_call":{' in facts.text):
            self._approval(facts.text)
        if not self.deep or not clean or facts.profile is None or facts.profile.id != "step/v3" or facts.spans is None:
            return
        from .formats.v3 import slot_values
        spans = facts.spans
        try:
            root, _ = private_root(facts.text[spans["seed"][0] + 1:spans["seed"][1] - 1], slot_values(facts.text, spans))
        except V3Defect as d:
            self._add(d.code, d.message, {**at, "field": d.path.split("/")[1], "path": d.path})
            return
        stored = facts.text[spans["root"][0] + 1:spans["root"][1] - 1]
        if root != stored:
            self._add("ROOT_MISMATCH", f"the record's values give the root {root}, not the stored {stored}: the writer sealed a root that "
                      "does not commit to the values it stored, so no publication of this record can be proven", {**at, "field": "root"})

    def _approval(self, text: str) -> None:
        """An approval record, or any record with a call (from the chain's start: a call run before the request that presents
        it is found there, APPROVALS.md §5 step 4), through the ledger (a parsed copy)."""
        from .approval import parse_value
        try:
            r = parse_value(text)
        except (ValueError, RecursionError):
            return
        if not isinstance(r, dict):
            return
        self._ledger().record(r)

    def _ledger(self) -> Any:
        from .approval import ApprovalLedger, pins_of
        if self.approvals is None:
            self.approvals = ApprovalLedger(None if self.from_range else self.start_hash, self.start_seq > 0, pins_of(self.approvers),
                                            forked_at=self.forked_at, open_end=self.open_end)
        return self.approvals

    def finish(self) -> ChainReport:
        erasure_notices: list[Problem] = []
        if self.erasures is not None:
            found, erasure_notices = self.erasures.finish()
            for p in found:
                self._add(p.code, p.message, p.location)
        approval_notices: list[Problem] = []
        if self.approvals is not None:
            for f in self.approvals.finish():
                if f.notice:
                    approval_notices.append(Problem(f.code, f.message, {"seq": f.seq, "field": f.field}))
                else:
                    self._add(f.code, f.message, {"seq": f.seq, "field": f.field})
        head, head_seq = self.links.head()
        if self.expect_head is not None and head != self.expect_head:
            msg = (f"expected head {self.expect_head}, but the chain has no readable last step" if head is None
                   else f"expected head {self.expect_head}, found {head}: the chain was truncated, extended or replaced")
            loc = {**self.last_location, **({} if head_seq is None else {"seq": head_seq}), "field": "step_hash"}
            self._add("HEAD_MISMATCH", msg, loc)
        notices = [Problem(code, f"{n} record{'s' if n != 1 else ''} of kind {kind!r}: " + (
            "not in the registry (FORMAT.md §14.8); integrity verified, its own rules unknown" if code == "KIND_UNKNOWN" else
            "registered, but this verifier does not check its own rules; integrity verified"), at)
            for kind, (code, at, n) in self.kinds.items()] + erasure_notices + approval_notices
        return ChainReport(not self.problems and not self.truncated, self.start_hash, self.start_seq, head, head_seq, self.steps,
                           self.problems, [], self.truncated, notices,
                           None if self.approvals is None or not self.approvals.seen else self.approvals.entries())


def declared_first_seq(name: str) -> Optional[int]:
    m = BUCKET_NAME_RE.match(name[name.rfind("/") + 1:])
    return int(m.group(1)) if m else None


def split_lines(data: bytes) -> tuple[list[bytes], Optional[bytes]]:
    """Complete lines (without newlines) and the torn tail, if any."""
    parts = data.split(b"\n")
    tail = parts.pop()
    return parts, (tail if tail else None)


def verify_file(verifier: ChainVerifier, name: str, data: bytes) -> None:
    verifier.begin_segment(name, declared_first_seq(name))
    lines, torn = split_lines(data)
    for ln in lines:
        verifier.line(ln, True)
    if torn is not None:
        verifier.line(torn, False)


def verify_chain(files: Iterable[tuple[str, bytes]], genesis: Any = None, **options: Any) -> ChainReport:
    v = ChainVerifier(genesis, **options)
    for name, data in files:
        verify_file(v, name, data)
    return v.finish()
