"""The chain-level check of approval records (spec/APPROVALS.md §5), fed in chain order every approval record and,
once the chain holds a request, every tool.started record: requests, the signed decisions on them and the effects
begun for them. Holds the requests seen (a handful), never the lines. Pure; never raises on hostile input.

What depends on the shape of the signed statement (APPROVALS.md §3) is kept in one place below: STATEMENT_RULES
(its members and the type of each) and _binding_defect (which members bind the record and its request)."""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from .canonical import CanonicalError, canonical_json, digest_utf8, is_digest

APPROVAL_REQUESTED = "approval.requested"
APPROVAL_GRANTED = "approval.granted"
APPROVAL_DENIED = "approval.denied"
APPROVAL_KINDS = (APPROVAL_REQUESTED, APPROVAL_GRANTED, APPROVAL_DENIED)
STATEMENT_TYPE = "stepchain-approval/v2"  # what a writer signs: the request bound by its step hash alone (§3)
# Notices, and problems, of the approval check listed at most; the rest are counted (§5; src/approval/findings.ts).
MOST_KEPT = 1000
STATEMENT_TYPE_V1 = "stepchain-approval/v1"  # written before statement v2: also names the request's unsalted digest (§3.1)
PAYLOAD_TYPE = "application/vnd.stepchain.approval+json"
RESERVED = "$stepchain:"
PART = "$stepchain:part"
MAX_SAFE = 2**53 - 1


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


def _is_seq(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE


# The statement an approver signs (APPROVALS.md §3): its members and the rule each member's value keeps; a v1 statement
# (§3.1) has `digest` besides. The shape of the statement is here and in _binding_defect, nowhere else.
STATEMENT_RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "type": (lambda v: v in (STATEMENT_TYPE, STATEMENT_TYPE_V1), f"input.type must be {json.dumps(STATEMENT_TYPE)} (or {json.dumps(STATEMENT_TYPE_V1)}, as written before)"),
    "decision": (lambda v: v in ("granted", "denied"), 'input.decision must be "granted" or "denied"'),
    "genesis_hash": (is_digest, "input.genesis_hash must be a digest"),
    "request_hash": (is_digest, "input.request_hash must be a digest"),
    "request": (lambda v: _is_str(v) and v != "", "input.request must be the request's step_id"),
    "request_seq": (_is_seq, "input.request_seq must be a seq"),
    "decided_at": (lambda v: instant(v) is not None, "input.decided_at must be a UTC timestamp"),
    "reason": (lambda v: v is None or _is_str(v), "input.reason must be a string or null"),
}
STATEMENT_MEMBERS = sorted(STATEMENT_RULES)
STATEMENT_MEMBERS_V1 = sorted([*STATEMENT_RULES, "digest"])

_INSTANT = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?Z\Z")


def _tool_key(name: Any) -> Optional[tuple[str, Any]]:
    """A presented tool name as the TypeScript verifier compares it (`===`): a string, number, boolean or null by
    value (true is not 1, 1.0 is 1), and None for an object or array, which equals no other record's."""
    if name is None:
        return ("null", None)
    if isinstance(name, bool):
        return ("bool", name)
    if isinstance(name, (int, float)):
        return ("number", float(name))
    return ("string", name) if isinstance(name, str) else None


def instant(v: Any) -> Optional[int]:
    """A UTC timestamp read as milliseconds since the epoch, or None (times compare as instants, §5)."""
    m = _INSTANT.match(v) if isinstance(v, str) else None
    if m is None:
        return None
    try:
        t = datetime(*(int(g) for g in m.groups()[:6]), tzinfo=timezone.utc)
    except ValueError:
        return None
    frac = (m.group(7) or "0").ljust(3, "0")[:3]
    return (int(t.timestamp()) * 1000) + int(frac)


def _js_int(token: str) -> Any:
    # JSON numbers are doubles to the writer (TypeScript): an integer past 2^53 is read as the double it denotes,
    # so that JCS writes it back as the writer did.
    i = int(token)
    return i if -MAX_SAFE <= i <= MAX_SAFE else float(token)


def parse_value(text: str) -> Any:
    return json.loads(text, parse_int=_js_int)


def _holds_erased(v: Any) -> bool:
    """Whether a decision's statement or meta holds an erased marker (sealed form, ERASURE.md §2)."""
    return v is not None and '"$stepchain:erased"' in json.dumps(v, ensure_ascii=False)


def has_marker(v: Any, depth: int = 0) -> bool:
    """Whether a value holds a reserved marker (withheld, chunks, part, erased): its true value is not in hand."""
    if depth > 64:
        return True
    if isinstance(v, list):
        return any(has_marker(x, depth + 1) for x in v)
    if not isinstance(v, dict):
        return False
    return any(k.startswith(RESERVED) or has_marker(x, depth + 1) for k, x in v.items())


# The tool_call members an effect may hold (§4): the presented call, and identifiers the approver could not know.
EFFECT_CALL_MEMBERS = ("name", "arguments", "call_id", "idempotency_key")


def presented_digest(name: Any, arguments: Any) -> Optional[str]:
    """SHA-256 of the UTF-8 of JCS({"arguments": A, "name": N}): the `digest` of a request written before statement v2
    (§2.1), or None when it does not canonicalize. Never written: it is not salted."""
    try:
        return digest_utf8(canonical_json({"arguments": arguments, "name": name}))
    except (CanonicalError, RecursionError, ValueError, TypeError):
        return None


def has_hidden(v: Any, depth: int = 0) -> bool:
    """Whether a value holds a marker other than a part reference (withheld, chunks, erased): its true value is not in
    hand. A part reference is in hand: within a journal equal content has one address (PARTS.md §5)."""
    if depth > 64:
        return True
    if isinstance(v, list):
        return any(has_hidden(x, depth + 1) for x in v)
    if not isinstance(v, dict):
        return False
    if len(v) == 1 and PART in v:
        return not (isinstance(v[PART], dict) and isinstance(v[PART].get("digest"), str))
    return any(k.startswith(RESERVED) or has_hidden(x, depth + 1) for k, x in v.items())


def _addressed(v: Any, depth: int = 0) -> Any:
    if depth > 64:
        raise ValueError("too deep")
    if isinstance(v, list):
        return [_addressed(x, depth + 1) for x in v]
    if not isinstance(v, dict):
        return v
    if len(v) == 1 and PART in v and isinstance(v[PART], dict):
        return {PART: v[PART].get("digest")}
    return {k: _addressed(x, depth + 1) for k, x in v.items()}


def _refuse_constant(token: str) -> Any:
    raise ValueError(token)


def _js_float(token: str) -> float:
    f = float(token)
    if math.isinf(f):
        raise ValueError(token)
    return f


_NUMBER = re.compile(r"-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?")


def _decimal_of(whole: str, frac: str, exp: str) -> str:
    digits = (whole + frac).lstrip("0")
    if not digits:
        return "0"
    power = int(exp or "0") - len(frac)
    trimmed = digits.rstrip("0")
    return f"{trimmed}e{power + len(digits) - len(trimmed)}"


def _shortest(d: float) -> str:
    # The shortest text of a double, as ECMAScript writes it (digits aside from notation: compared by value below).
    return repr(abs(d)).replace("inf", "x")


def exact_number(token: str) -> bool:
    """Whether a JSON number token denotes exactly the double JSON.parse reads it as (§5 step 3 "Arguments given as text"):
    its value is that of the double's shortest text, and the double is not an integer past ±(2^53−1)."""
    m = _NUMBER.fullmatch(token)
    if m is None:
        return False
    d = float(token)
    if math.isinf(d) or (d.is_integer() and abs(d) > MAX_SAFE):
        return False
    s = _NUMBER.fullmatch(_shortest(d).replace("e+", "e"))
    if s is None:
        return False
    return _decimal_of(m.group(1), m.group(2) or "", m.group(3) or "") == _decimal_of(s.group(1), s.group(2) or "", s.group(3) or "")


def numbers_exact(text: str) -> bool:
    """Whether every number in JSON text `text` (outside strings) is exact (exact_number)."""
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "-" or "0" <= c <= "9":
            m = _NUMBER.match(text, i)
            if m is None or not exact_number(m.group(0)):
                return False
            i = m.end() - 1
        i += 1
    return True


def compared_arguments(arguments: Any) -> Any:
    """Arguments as compared (§5 step 3 "Arguments given as text"): a string that is the JSON text of an object (as
    JSON.parse reads it: a later duplicate member wins) compares as that object; anything else, or text whose object
    a record could not hold (NaN, a number past the doubles, a lone surrogate, a reserved name, too deep), as itself."""
    if not isinstance(arguments, str) or not arguments.lstrip(" \t\n\r").startswith("{"):
        return arguments
    try:
        parsed = json.loads(arguments, parse_int=_js_int, parse_float=_js_float, parse_constant=_refuse_constant)
        # A number JSON.parse rounds (…993 read as …992), or an integer past ±(2^53−1): the text is what a tool reads.
        if not isinstance(parsed, dict) or not numbers_exact(arguments):
            return arguments
        canonical_json(parsed, max_depth=100, reserved=True)
        return parsed
    except (CanonicalError, RecursionError, ValueError, TypeError):
        return arguments


def call_form(name: Any, arguments: Any) -> Optional[str]:
    """The canonical text of {arguments, name} with every part reference (private or public) reduced to its address
    (§5 step 3 "Comparing calls"), or None when it does not canonicalize. Without references, equal forms are equal digests."""
    try:
        return canonical_json(_addressed({"arguments": compared_arguments(arguments), "name": name}))
    except (CanonicalError, RecursionError, ValueError, TypeError):
        return None


def call_hidden(call: dict[str, Any]) -> bool:
    """Whether a recorded call's name or arguments are not in hand (§5 step 5): a marker stands for the whole call or as
    one of its own members (an erased `name` or `arguments` leaves only the marker, not which member it was), or inside
    its name or arguments. A part reference is in hand."""
    return (any(k.startswith(RESERVED) and k != PART for k in call) or has_hidden(call.get("name"))
            or has_hidden(call.get("arguments")))


def form_of(call: dict[str, Any]) -> Optional[str]:
    """call_form of a recorded call, or None when it lacks name or arguments (it compares as no call)."""
    return call_form(call["name"], call["arguments"]) if "name" in call and "arguments" in call else None


# Kinds whose tool_call runs nothing (§5 step 4): the approval kinds, and a model's records (what it asked for).
_NOT_RUN = re.compile(r"^(approval\.(requested|granted|denied)|model\.(started|completed|failed))$")
_OUTCOMES = ("tool.completed", "tool.failed", "tool.updated")


# The most calls one record is read for; past it, one call not in hand stands for the rest (§5 step 5).
MAX_CALLS = 10_000
_UNREAD = {RESERVED + "unread": True}
# A part reference where calls are read (the whole value, an element, a wrapper's member): the calls its content holds
# are not in the line (PARTS.md §3), so they are not in hand (§5 step 5).
_IN_A_PART = {RESERVED + "in-a-part": True}


def wire_call(o: dict[str, Any]) -> dict[str, Any]:
    """A call object as {name, arguments} (§5 step 4 "Calls in wire shapes"): itself where it has that shape or holds a
    marker as a member; OpenAI Chat's {type, function: {name, arguments}}; a name under toolName, arguments under input
    or args. `arguments` is left out where the call holds none of its members."""
    if any(k.startswith(RESERVED) and k != PART for k in o):
        return o
    if "name" not in o and isinstance(o.get("function"), dict):
        return o["function"]
    if "name" in o and "arguments" in o:
        return o
    at = next((k for k in ("arguments", "input", "args") if k in o), None)
    if at is None and ("name" in o or "toolName" not in o):
        return o
    name = o["name"] if "name" in o else o.get("toolName")
    return {"name": name} if at is None else {"name": name, "arguments": o[at]}


def _call_like(o: dict[str, Any]) -> bool:
    """Whether an object inside a tool_call is read as a call: it names a tool, is OpenAI Chat's function wrapper, or
    holds a marker as a member. Any other object (a chat message, {"call": ...}) is a wrapper read in turn."""
    if "name" in o or "toolName" in o or isinstance(o.get("function"), dict):
        return True
    return any(k.startswith(RESERVED) and k != PART for k in o)


def calls_in(tc: Any) -> list[dict[str, Any]]:
    """Every call in a tool_call value, each as wire_call reads it (§5 step 4): the value when an object, each object at
    any depth of nested arrays, and every call-like object at any depth of its objects — a call's own arguments aside.
    Depth-first in document order, without recursion, at most MAX_CALLS values read."""
    out: list[dict[str, Any]] = []
    stack: list[tuple[Any, bool]] = [(tc, True)]
    visited = -1  # the value itself is not counted
    while stack:
        v, top = stack.pop()
        visited += 1
        if visited > MAX_CALLS:
            out.append(_UNREAD)
            break
        if isinstance(v, list):
            stack.extend((x, top) for x in reversed(v))
            continue
        if not isinstance(v, dict):
            continue
        if len(v) == 1 and PART in v:
            out.append(_IN_A_PART)
            continue
        skip: list[Any] = []
        if top or _call_like(v):
            call = wire_call(v)
            out.append(call)
            skip = [v.get("arguments"), v.get("input"), v.get("args")] if call is v else [call, call.get("arguments")]
        for x in reversed(list(v.values())):
            if isinstance(x, (dict, list)) and not any(x is y for y in skip):
                stack.append((x, False))
    return out


def carried_calls(r: dict[str, Any]) -> Optional[tuple[list[dict[str, Any]], Optional[str]]]:
    """The calls a record carries as run (an object tool_call, or each object at any depth of arrays, in its wire
    shape), and the start an outcome names; None when it carries none (§5 step 4)."""
    kind = r.get("kind") if isinstance(r.get("kind"), str) else ""
    if _NOT_RUN.match(kind):
        return None
    calls = calls_in(r.get("tool_call"))
    # A start whose tool_call names no tool began a call all the same: found in its input, or not in hand (§5 step 4).
    if kind == "tool.started" and not any(_named(c) for c in calls):
        in_input = [c for c in calls_in(r.get("input")) if _named(c)]
        calls = in_input if in_input else [_NO_CALL]
    if not calls:
        return None
    return calls, (r["ref"] if kind in _OUTCOMES and _is_str(r.get("ref")) else None)


_NO_CALL = {RESERVED + "no-call": True}


def _named(c: dict[str, Any]) -> bool:
    return isinstance(c.get("name"), str) or any(k.startswith(RESERVED) for k in c)


def _other_tool(call: dict[str, Any], began: Optional[str]) -> bool:
    """Whether a call an outcome carries, with no comparable arguments, is of another tool than its start's compared
    call: then it gets the look-alike notice, never swallowed as its start's call repeated (§5 step 4)."""
    if form_of(call) is not None:
        return False
    if began is None or not isinstance(call.get("name"), str):
        return True
    return not began.endswith(',"name":' + json.dumps(call["name"], ensure_ascii=False) + "}")


_ABSENT = object()
_NOT_IN_HAND = object()


def _expiry_in_hand(inp: Any) -> Any:
    """The expires_at of a request whose input holds withheld or erased values, where it is in hand (None or a timestamp
    standing as its own member); _NOT_IN_HAND where the whole input, or the member, is not in hand."""
    if not isinstance(inp, dict) or "expires_at" not in inp:
        return _NOT_IN_HAND
    v = inp["expires_at"]
    return None if v is None else v if isinstance(v, str) and instant(v) is not None else _NOT_IN_HAND


def request_input_defect(v: Any, parted: bool = False) -> Optional[str]:
    """Why an approval.requested record's input is not a request (§2), or None. `parted`: its presentation holds part
    references, so its digest (of the values the references stand for) is not checked here; calls compare by form."""
    if not isinstance(v, dict) or sorted(v) not in (["expires_at", "presented"], ["digest", "expires_at", "presented"]):
        return "input must have exactly the members expires_at and presented (and digest, in a request written before statement v2)"
    p = v["presented"]
    if not isinstance(p, dict) or sorted(p) != ["arguments", "name"]:
        return "input.presented must have exactly the members name and arguments"
    if not _is_str(p["name"]) or p["name"] == "":
        return "input.presented.name must be a non-empty string"
    if "digest" in v and not is_digest(v["digest"]):
        return 'input.digest must be "sha256:" and 64 lowercase hex digits'
    if v["expires_at"] is not None and instant(v["expires_at"]) is None:
        return "input.expires_at must be null or a UTC timestamp (2026-11-27T10:00:00.000Z)"
    if parted or "digest" not in v:
        return None
    d = presented_digest(p["name"], p["arguments"])
    if d is None:
        return "input.presented is not JSON that canonicalizes"
    if d != v["digest"]:
        return f"input.digest {v['digest']} is not the digest of input.presented ({d}): what was presented is not what was digested"
    return None


def statement_defect(v: Any) -> Optional[str]:
    """Why a decision's input is not an approval statement (§3), or None."""
    if not isinstance(v, dict):
        return f"input must be the signed statement, with exactly the members {', '.join(STATEMENT_MEMBERS)}"
    if not STATEMENT_RULES["type"][0](v.get("type")):
        return STATEMENT_RULES["type"][1]
    members = STATEMENT_MEMBERS_V1 if v["type"] == STATEMENT_TYPE_V1 else STATEMENT_MEMBERS
    if sorted(v) != members:
        return f"input, a {v['type']} statement, must have exactly the members {', '.join(members)}"
    for name, (ok, why) in STATEMENT_RULES.items():
        if not ok(v[name]):
            return why
    if "digest" in v and not is_digest(v["digest"]):
        return "input.digest must be a digest"
    return None


def decision_meta_defect(v: Any) -> Optional[str]:
    """Why a decision's meta does not carry an approver and a signature (§3), or None."""
    if not isinstance(v, dict) or not isinstance(v.get("approver"), dict) or not _is_str(v.get("signature")):
        return "meta must carry approver {keyid, name, public_key} and signature"
    a = v["approver"]
    if sorted(a) != ["keyid", "name", "public_key"]:
        return "meta.approver must have exactly the members keyid, name and public_key"
    if not is_digest(a["keyid"]) or not _is_str(a["public_key"]) or not (a["name"] is None or _is_str(a["name"])):
        return "meta.approver: keyid is a digest, public_key base64, name a string or null"
    return None


def statement_bytes(statement: dict[str, Any]) -> bytes:
    """The bytes an approver signs, before PAE: the UTF-8 of the statement's JCS."""
    return canonical_json(statement).encode("utf-8")


def signature_defect(statement: dict[str, Any], meta: dict[str, Any]) -> Optional[str]:
    """Why meta's signature is not its approver's over the statement (§3, RECEIPT.md §5.1), or None."""
    from .ed25519 import signature_defect as ed_defect
    from .receipt import b64decode, key_id_of, pae
    public_key = b64decode(meta["approver"]["public_key"])
    sig = b64decode(meta["signature"])
    if public_key is None or len(public_key) != 32:
        return "meta.approver.public_key is not the base64 of 32 bytes"
    if key_id_of(public_key) != meta["approver"]["keyid"]:
        return "meta.approver.keyid is not the digest of its public_key"
    if sig is None:
        return "meta.signature is not canonical base64"
    try:
        return ed_defect(pae(PAYLOAD_TYPE, statement_bytes(statement)), sig, public_key)
    except (CanonicalError, ValueError, TypeError) as e:
        return f"the signature cannot be checked: {e}"


@dataclass
class Finding:
    code: str
    message: str
    seq: int
    field: str
    notice: bool = False


@dataclass
class _Decision:
    kind: str
    seq: int
    ts: str
    approver: dict[str, Any]
    reason: Optional[str]


@dataclass
class _Request:
    seq: int
    step_hash: str
    input: Optional[dict[str, Any]]
    hidden: bool
    decision: Optional[_Decision] = None
    effect: Optional[tuple[str, int]] = None
    form: Optional[str] = None  # the presented call's call_form, None for a malformed or withheld request
    unchecked: bool = False  # §5 step 5 applies to it: the report marks it `unchecked` (§6)
    ran_before: Optional[tuple[str, int]] = None  # a record that ran its call, naming no request, before it (§5 step 4)
    claimed: Optional[tuple[str, int]] = None  # the first effect begun for it that did not count (§6: the verdict names it)
    expires_at: Any = None  # its expires_at as checked: None for none, _NOT_IN_HAND when withheld or erased (§5 step 5)
    hidden_use: Optional[int] = None  # the first start after the grant whose meta is withheld or erased (§5 step 5)


@dataclass
class ApprovalLedger:
    """genesis_hash: the journal's, which every statement must name (None when the range does not start at the
    genesis); partial: the range starts after seq 0, so a request before it is outside, not missing; pins: key id ->
    pinned name (None for a key pinned without a name)."""
    genesis_hash: Optional[str]
    partial: bool = False
    pins: dict[str, Optional[str]] = field(default_factory=dict)
    requests: dict[str, _Request] = field(default_factory=dict)
    # The requests by presented form (the first), and by presented tool name (each, in chain order; a name that is an
    # object or array equals no other record's, as the TypeScript verifier compares them): a scan of every request per
    # call made n requests and n calls n² steps (outsider I).
    by_form: dict[str, tuple[str, "_Request"]] = field(default_factory=dict)
    by_tool: dict[tuple[str, Any], list[tuple[str, "_Request"]]] = field(default_factory=dict)
    # Per tool, its requests not yet marked by a same-tool call: each is marked once (its call never stops having run).
    to_mark: dict[tuple[str, Any], list["_Request"]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # Findings counted and not listed past MOST_KEPT notices or problems (§5; src/approval/findings.ts).
    kept_notices: int = 0
    kept_problems: int = 0
    dropped_notices: int = 0
    dropped_problems: int = 0
    dropped_code: str = "APPROVAL_MISSING"
    unpinned: dict[str, tuple[int, Optional[str]]] = field(default_factory=dict)
    # The latest ts read so far, in chain order: an effect is no earlier than a record before it (§5 step 3).
    latest: Optional[int] = None
    # A call could not be checked against the requests (withheld or erased): "never executed" is not proven (§5 step 5).
    unchecked_calls: bool = False
    # The chain is a fork whose steps 0..forked_at were copied from its parent (FILE-STORE.md lineage): a request
    # there authorises no effect after it, since the parent holds the same request and decision (§5 step 3, the fork rule).
    forked_at: Optional[int] = None
    open_end: bool = False  # steps may follow the range (a receipt): no effect found is not proven none ran (§5 step 5)
    # Every call run so far naming no request and presented by none, by the digest of its form -> (step_id, seq, kind): a
    # request presenting one later comes after it ran without a grant (§5 step 4). Digests, not the calls.
    ran: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    # The first call of each tool (its name as JSON) run naming no request: one in another form may be the call (§5 step 4).
    ran_tools: dict[str, tuple[str, int, str]] = field(default_factory=dict)
    # The first start naming a request not (yet) in the chain, by the digest of its call's form -> (step_id, seq): a
    # request presenting that call later names it as its effect (§6); the start is reported where it stands.
    named_ahead: dict[str, tuple[str, int]] = field(default_factory=dict)
    # The first call naming no request whose name or arguments are withheld or erased: it could be any call (§5 step 5).
    hidden_call: Optional[tuple[str, int]] = None
    # Whether the chain holds an approval record: the report lists the requests only then.
    seen: bool = False
    # The call form of each start an outcome may name without running anything more: one that named a request, or
    # that was found running a presented call (§5 step 4).
    begun: dict[str, Optional[str]] = field(default_factory=dict)
    # Starts whose meta is withheld or erased: what their outcomes repeat is not in hand (§5 step 5).
    hidden_starts: set[str] = field(default_factory=set)

    @property
    def active(self) -> bool:
        return bool(self.requests)

    def _add(self, code: str, message: str, seq: int, fld: str, notice: bool = False) -> None:
        if notice:
            if self.kept_notices >= MOST_KEPT:
                self.dropped_notices += 1
                return
            self.kept_notices += 1
        elif self.kept_problems >= MOST_KEPT:
            if self.dropped_problems == 0:
                self.dropped_code = code
            self.dropped_problems += 1
            return
        else:
            self.kept_problems += 1
        self.findings.append(Finding(code, message, seq, fld, notice))

    def record(self, r: dict[str, Any]) -> None:
        """One parsed record, in chain order; other kinds are ignored."""
        seq = r.get("seq") if _is_seq(r.get("seq")) else -1
        kind = r.get("kind")
        if isinstance(kind, str) and kind.startswith("approval."):
            self.seen = True
        if kind == APPROVAL_REQUESTED:
            self._request(r, seq)
        elif kind in (APPROVAL_GRANTED, APPROVAL_DENIED):
            self._decision(r, seq, kind)
        elif kind == "tool.started":
            self._effect(r, seq)
        else:
            self._outcome_of_request(r, seq)
            self._carried(r, seq)
        self.dated(r.get("ts"))

    def _outcome_of_request(self, r: dict[str, Any], seq: int) -> None:
        """An outcome whose ref names an approval request rather than a start: the request's call ran, naming no grant
        (§5 step 4): APPROVAL_MISSING, and the request's effect is this record."""
        ref = r.get("ref")
        if r.get("kind") not in _OUTCOMES or not _is_str(ref) or ref not in self.requests:
            return
        req = self.requests[ref]
        eid = str(r.get("step_id"))
        if req.effect is None:
            req.effect = (eid, seq)
        self._add("APPROVAL_MISSING", f"seq {seq}: {r.get('kind')} {json.dumps(eid)} is an outcome of approval request {json.dumps(ref)} "
                  f"(seq {req.seq}) itself (ref): it says the presented call ran, begun by no effect naming the request (meta.approval)",
                  seq, "ref")

    def dated(self, ts: Any) -> None:
        """A record's ts, of any kind, in chain order: an effect is no earlier than any record before it (§5 step 3)."""
        t = instant(ts)
        if t is not None and (self.latest is None or t > self.latest):
            self.latest = t

    def _carried(self, r: dict[str, Any], seq: int) -> None:
        """A record carrying calls run without naming a request (§5 step 4). An outcome naming a start that named a request,
        or that ran a presented call, repeats that call; any other call it carries ran too."""
        carried = carried_calls(r)
        if carried is None:
            return
        calls, start = carried
        began = _ABSENT if start is None else self.begun.get(start, _ABSENT)
        for call in calls:
            if began is _ABSENT and start is not None and self.requests and start in self.hidden_starts:
                self._add("APPROVAL_UNCHECKED", f"seq {seq}: {r.get('kind')} {json.dumps(str(r.get('step_id')))} names start {json.dumps(start)}, "
                          "whose meta is withheld or erased: whether the call it carries was begun for an approval request is not checked",
                          seq, "tool_call", True)
                continue
            if began is _ABSENT or call_hidden(call):
                self._unnamed(r, seq, call)
                continue
            if form_of(call) == began or self._unnamed(r, seq, call, _other_tool(call, began)) or "arguments" not in call:
                continue
            self._add("APPROVAL_MISMATCH", f"seq {seq}: {r.get('kind')} {json.dumps(str(r.get('step_id')))} names start {json.dumps(start)}, "
                      "whose call was compared with an approval request's, but carries another call: an outcome carries the call "
                      "its start began", seq, "tool_call")

    def _expiry_unchecked(self, rid: str, request_seq: int, seq: int, what: str) -> None:
        """A decision or effect for a request whose expiry is withheld or erased: the expiry check is skipped (§5 step 5)."""
        self._add("APPROVAL_UNCHECKED", f"seq {seq}: the expiry (expires_at) of approval request {json.dumps(rid)} (seq {request_seq}) is "
                  "withheld or erased: whether this record came before it expired is not checked", seq, "ts" if what == "effect" else "input", True)

    def _unnamed(self, r: dict[str, Any], seq: int, call: dict[str, Any], same_tool: bool = True) -> bool:
        """A call run naming no request: a presented one is APPROVAL_MISSING (§5 step 4), and True."""
        eid = str(r.get("step_id"))
        if call_hidden(call):
            # Erased or withheld: it could be any presented call, one presented later included (§5 step 5).
            if self.hidden_call is None:
                self.hidden_call = (eid, seq)
            if not self.requests:
                return False
            self.unchecked_calls = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: {r.get('kind')} {json.dumps(eid)} has a withheld, erased or absent call and names no "
                      "approval request: whether it runs a call put to an approver is not checked", seq, "tool_call", True)
            return False
        form = form_of(call)
        if form is None:
            # Arguments that cannot be compared (none, or under a member no shape names): not proven another call.
            if same_tool:
                self._same_tool(r, seq, eid, call.get("name"))
            if isinstance(call.get("name"), str):
                self.ran_tools.setdefault(json.dumps(call["name"]), (eid, seq, str(r.get("kind"))))
            return False
        presented = self.by_form.get(form)
        if presented is not None:
            rid, req = presented
            self._add("APPROVAL_MISSING", f"seq {seq}: {r.get('kind')} {json.dumps(eid)} runs the call presented by approval request "
                      f"{json.dumps(rid)} (seq {req.seq}) without naming it (meta.approval): a call that was put to an approver is "
                      "begun only for its granted request", seq, "meta")
            # Unless it ran before the request too: the verdict names that first record (§6).
            if req.effect is None and req.ran_before is None:
                req.effect = (eid, seq)
            if r.get("kind") == "tool.started":
                self.begun[eid] = form
            return True
        # The same tool as a request's, with other arguments: not proven another call (§5 step 4); an outcome of a start
        # whose call was compared is reported as carrying another call instead.
        if same_tool:
            self._same_tool(r, seq, eid, call.get("name"))
        self._remember(eid, seq, str(r.get("kind")), call)
        return False

    def _same_tool(self, r: dict[str, Any], seq: int, eid: str, name: Any) -> None:
        """A call of a presented tool, naming no request, that is not the presented call (§5 step 4): a notice per request
        presenting that tool; one with no effect found is marked unchecked, one whose call ran keeps its effect (one grant,
        one effect: the call may have run again)."""
        key = _tool_key(name)
        same = self.by_tool.get(key, []) if key is not None else []
        for req in self.to_mark.pop(key, []) if key is not None else []:
            if (req.effect or req.ran_before or req.claimed) is None:
                req.unchecked = True
        if self.kept_notices >= MOST_KEPT:
            self.dropped_notices += len(same)
            return
        for rid, req in same:
            head = (f"seq {seq}: {r.get('kind')} {json.dumps(eid)} runs tool {json.dumps(name)}, naming no request, with arguments other "
                    "than (or not comparable with) those")
            ran = req.effect or req.ran_before or req.claimed
            state = "undecided" if req.decision is None else req.decision.kind
            if ran is not None:
                msg = (f"{head} approval request {json.dumps(rid)} (seq {req.seq}) presented, whose call already ran at seq {ran[1]}: one "
                       "grant authorises one effect, and whether this runs that call again in another form is not checked")
            else:
                msg = (f"{head} {state} approval request {json.dumps(rid)} (seq {req.seq}) presented: whether it is that call in another "
                       f"form is not checked, so \"{'not executed' if state == 'granted' else 'never executed'}\" is not proven")
            self._add("APPROVAL_UNCHECKED", msg, seq, "tool_call", True)

    def _remember(self, eid: str, seq: int, kind: str, call: dict[str, Any]) -> None:
        """A call a record holds, presented by no request so far: a request presenting it later comes after it (§5 step 4)."""
        if call_hidden(call):
            return
        form = form_of(call)
        if form is not None:
            self.ran.setdefault(digest_utf8(form), (eid, seq, kind))
        if isinstance(call.get("name"), str):
            self.ran_tools.setdefault(json.dumps(call["name"]), (eid, seq, kind))

    def _request(self, r: dict[str, Any], seq: int) -> None:
        rid = str(r.get("step_id"))
        if rid in self.requests:
            self._add("APPROVAL_INVALID", f"seq {seq}: approval request {json.dumps(rid)} repeats the step_id of the request at seq "
                      f"{self.requests[rid].seq}: a request is named by its step_id, so each is unique", seq, "step_id")
            return
        hidden = has_hidden(r.get("input"))
        why = None if hidden else request_input_defect(r.get("input"), parted=has_marker(r.get("input")))
        if why is not None:
            self._add("APPROVAL_INVALID", f"seq {seq}: approval request {json.dumps(rid)}: {why}", seq, "input")
        if hidden:
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: approval request {json.dumps(rid)} has withheld or stored-apart values: what was "
                      "presented is not compared", seq, "input", True)
        given = r["input"] if why is None and not hidden else None
        form = None if given is None else call_form(given["presented"]["name"], given["presented"]["arguments"])
        req = _Request(seq, str(r.get("step_hash")), given, hidden, form=form, unchecked=hidden,
                       expires_at=_expiry_in_hand(r.get("input")) if hidden else None if given is None else given["expires_at"])
        self.requests[rid] = req
        if form is not None:
            self.by_form.setdefault(form, (rid, req))
        key = _tool_key(given["presented"]["name"]) if given is not None else None
        if key is not None:
            self.by_tool.setdefault(key, []).append((rid, req))
            self.to_mark.setdefault(key, []).append(req)
        if form is not None:
            req.claimed = self.named_ahead.get(digest_utf8(form))
        early = None if form is None else self.ran.get(digest_utf8(form))
        if early is not None:
            # The call ran before anyone was asked: no later decision covers it (§5 step 4), and the verdict says it ran.
            req.ran_before = (early[0], early[1])
            self.begun[early[0]] = form
            self._add("APPROVAL_MISSING", f"seq {early[1]}: {early[2]} {json.dumps(early[0])} ran the call that approval request {json.dumps(rid)} "
                      f"presents (seq {seq}) before it was requested, naming no request: a call put to an approver runs only for its granted "
                      "request, after the grant", early[1], "meta")
        elif form is not None and json.dumps(given["presented"]["name"]) in self.ran_tools:  # type: ignore[index]
            # Its tool ran before it with other arguments, naming no request: not proven another call (§5 step 4).
            e = self.ran_tools[json.dumps(given["presented"]["name"])]  # type: ignore[index]
            req.unchecked = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: {e[2]} {json.dumps(e[0])} (seq {e[1]}) ran tool {json.dumps(given['presented']['name'])} "  # type: ignore[index]
                      f"before approval request {json.dumps(rid)} presented it, naming no request, with other arguments: whether it ran this "
                      "call in another form before it was requested is not checked", seq, "input", True)
        elif self.hidden_call is not None and (form is not None or hidden):
            req.unchecked = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: a call before approval request {json.dumps(rid)} (seq {self.hidden_call[1]}, "
                      f"{json.dumps(self.hidden_call[0])}) is withheld or erased: whether it ran this call before it was requested is not "
                      "checked", seq, "input", True)

    def _decision(self, r: dict[str, Any], seq: int, kind: str) -> None:
        decision = "granted" if kind == APPROVAL_GRANTED else "denied"
        ref = r.get("ref") if _is_str(r.get("ref")) else None
        req = None if ref is None else self.requests.get(ref)

        def bad(why: str, fld: str = "input") -> None:
            self._add("APPROVAL_INVALID", f"seq {seq}: {kind} of request {json.dumps(ref)}: {why}", seq, fld)

        if req is None:
            if self.partial:
                self._add("APPROVAL_UNCHECKED", f"seq {seq}: {kind} names request {json.dumps(ref)}, which is not in this range", seq, "ref", True)
            else:
                bad("ref names no approval request earlier in this chain", "ref")
            return
        if _holds_erased(r.get("input")) or _holds_erased(r.get("meta")):
            # An erased unit of a signed decision (ERASURE.md §6.3): its signature cannot be checked; no decision.
            return bad("a value of this signed decision was erased, so its signature cannot be checked (unverifiable after "
                       "erasure): it counts as no decision, neither grant nor denial (the erase writer erases only a decision "
                       "that was already a problem, ERASURE.md §6.3)", "meta" if _holds_erased(r.get("meta")) else "input")
        if has_marker(r.get("input")) or has_marker(r.get("meta")):
            req.unchecked = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: the decision on {json.dumps(ref)} has withheld values: its signature is not checked",
                      seq, "input", True)
            return
        why = statement_defect(r.get("input")) or decision_meta_defect(r.get("meta"))
        if why is not None:
            return bad(why, "meta" if why.startswith("meta") else "input")
        s, meta = r["input"], r["meta"]
        why = _binding_defect(s, decision, ref, r.get("ts"), req, self.genesis_hash)
        if why is not None:
            return bad(why)
        why = signature_defect(s, meta)
        if why is not None:
            return bad(f"the approver's signature does not hold: {why}", "meta")
        approver = self._approver(meta, seq)
        if req.decision is not None:
            self._add("APPROVAL_REPEATED", f"seq {seq}: request {json.dumps(ref)} was already {req.decision.kind} at seq {req.decision.seq}: "
                      "one decision per request, this one does not count", seq, "ref")
            return
        expires = None if req.expires_at is _NOT_IN_HAND else instant(req.expires_at)
        if req.expires_at is _NOT_IN_HAND:
            self._expiry_unchecked(ref, req.seq, seq, "decision")
        decided = instant(s["decided_at"])
        if expires is not None and decided is not None and decided > expires:
            self._add("APPROVAL_EXPIRED", f"seq {seq}: request {json.dumps(ref)} expired at {req.expires_at}, before this decision "
                      f"({s['decided_at']}): it does not count", seq, "input")
            return
        if not approver["pinned"] and self.pins:
            named = meta["approver"]["name"]
            self._add("APPROVER_UNKNOWN", f"seq {seq}: request {json.dumps(ref)} was {decision} by key {meta['approver']['keyid']}"
                      f"{'' if named is None else f' (calling itself {json.dumps(named)})'}, which is none of the pinned approvers", seq, "meta")
        req.decision = _Decision(decision, seq, s["decided_at"], approver, s["reason"])

    def _approver(self, meta: dict[str, Any], seq: int) -> dict[str, Any]:
        keyid, name = meta["approver"]["keyid"], meta["approver"]["name"]
        if keyid in self.pins:
            pinned = self.pins[keyid]
            return {"keyid": keyid, "name": name if pinned is None else pinned, "pinned": True}
        if not self.pins and keyid not in self.unpinned:
            self.unpinned[keyid] = (seq, name)
        return {"keyid": keyid, "name": name, "pinned": False}

    def _effect(self, r: dict[str, Any], seq: int) -> None:
        eid = str(r.get("step_id"))
        meta = r.get("meta")
        named = meta.get("approval") if isinstance(meta, dict) and isinstance(meta.get("approval"), dict) and not has_hidden(meta["approval"]) else None
        call = r.get("tool_call") if isinstance(r.get("tool_call"), dict) else None
        # Withheld (a publication), stored apart or erased: the call itself is a marker, a member of it is withheld, or its
        # name or arguments hold one. Then, and only then, it is not compared (§5 step 5).
        hidden = call is not None and call_hidden(call)
        form = None
        if call is not None and not hidden and "name" in call and "arguments" in call:
            form = call_form(call["name"], call["arguments"])
        digest = None if form is None else presented_digest(call["name"], call["arguments"])  # type: ignore[index]
        if named is None:
            if has_hidden(meta) or (isinstance(meta, dict) and "approval" in meta and has_hidden(meta["approval"])):
                # Withheld or erased meta: whether it named a request, and which, is not in hand (§5 step 5).
                self.hidden_starts.add(eid)
                for q in self.requests.values():
                    if q.decision is not None and q.decision.kind == "granted" and q.effect is None and q.hidden_use is None:
                        q.hidden_use = seq
                if self.hidden_call is None:
                    self.hidden_call = (eid, seq)
                if not self.requests:
                    return
                self.unchecked_calls = True
                self._add("APPROVAL_UNCHECKED", f"seq {seq}: effect {json.dumps(eid)} has a withheld or erased meta: whether it was begun "
                          "for an approval request is not checked", seq, "meta", True)
                return
            self._carried(r, seq)
            return
        rid = named.get("request") if _is_str(named.get("request")) else None
        req = None if rid is None else self.requests.get(rid)
        # What its outcomes may repeat: its call, or where that is not in hand, the call it was begun for.
        self.begun[eid] = (None if req is None else req.form) if hidden else form
        # Begun for it, whether it counts or not: the verdict names the effect, never "never executed" (§6).
        for q in ([req] if req is not None else [q for q in self.requests.values() if form is not None and q.form == form]):
            if q.claimed is None:
                q.claimed = (eid, seq)
        if req is None:
            if form is not None:
                self.named_ahead.setdefault(digest_utf8(form), (eid, seq))
            if self.partial:
                self.unchecked_calls = True
                self._add("APPROVAL_UNCHECKED", f"seq {seq}: effect {json.dumps(eid)} names approval request {json.dumps(rid)}, which is not in "
                          "this range", seq, "meta", True)
            else:
                self._add("APPROVAL_MISSING", f"seq {seq}: effect {json.dumps(eid)} names approval request {json.dumps(rid)}, which is no request "
                          "earlier in this chain", seq, "meta")
            return
        if named.get("request_hash") != req.step_hash:
            self._add("APPROVAL_MISMATCH", f"seq {seq}: effect {json.dumps(eid)} names request {json.dumps(rid)} with step hash "
                      f"{named.get('request_hash')}, but that request is {req.step_hash}", seq, "meta")
            return
        if self.forked_at is not None and req.seq <= self.forked_at < seq:
            self._add("APPROVAL_MISSING", f"seq {seq}: effect {json.dumps(eid)} names request {json.dumps(rid)} (seq {req.seq}), which this fork "
                      f"copied from its parent (steps 0–{self.forked_at}): a decision on it is the parent's too, so it authorises no effect "
                      "in the fork; request approval again in the fork", seq, "meta")
            return
        d = req.decision
        expires = None if req.expires_at is _NOT_IN_HAND else instant(req.expires_at)
        if d is not None and d.kind == "denied":
            by = "" if d.approver["name"] is None else f" by {d.approver['name']}"
            self._add("APPROVAL_DENIED", f"seq {seq}: effect {json.dumps(eid)} was begun for request {json.dumps(rid)}, which was denied at seq "
                      f"{d.seq}{by}", seq, "meta")
            return
        if req.expires_at is _NOT_IN_HAND:
            self._expiry_unchecked(rid, req.seq, seq, "effect")
        began = instant(r.get("ts"))
        # The effect's time by chain order: no earlier than any record before it (a backdated ts does not move it, §5 step 3).
        at = None if began is None else max(began, self.latest if self.latest is not None else began)
        if expires is not None and (at is None or at > expires):
            earlier = began is not None and at is not None and began < at
            self._add("APPROVAL_EXPIRED", f"seq {seq}: effect {json.dumps(eid)} was begun "
                      f"{'after a record dated later than its own ts ' + str(r.get('ts')) if earlier else 'at ' + str(r.get('ts'))}, after request "
                      f"{json.dumps(rid)} expired ({req.expires_at})", seq, "ts")
            return
        if d is None:
            if req.unchecked:
                self._add("APPROVAL_UNCHECKED", f"seq {seq}: effect {json.dumps(eid)} was begun for request {json.dumps(rid)}, whose decision or "
                          "presentation is withheld or erased: its grant is not checked", seq, "meta", True)
                return
            self._add("APPROVAL_MISSING", f"seq {seq}: effect {json.dumps(eid)} was begun for request {json.dumps(rid)}, which no valid decision "
                      "granted before it", seq, "meta")
            return
        granted = instant(d.ts)
        if began is not None and granted is not None and began < granted:
            self._add("APPROVAL_MISSING", f"seq {seq}: effect {json.dumps(eid)} is dated {r.get('ts')}, before its grant was decided ({d.ts}, "
                      f"seq {d.seq}): an effect is begun after its grant", seq, "ts")
            return
        if req.effect is not None:
            self._add("APPROVAL_REPEATED", f"seq {seq}: effect {json.dumps(eid)} uses the grant of request {json.dumps(rid)} a second time "
                      f"(effect {json.dumps(req.effect[0])} at seq {req.effect[1]} used it): one grant, one effect", seq, "meta")
            return
        req.effect = (eid, seq)
        if req.hidden_use is not None:
            req.unchecked = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: effect {json.dumps(eid)} uses the grant of request {json.dumps(rid)}, which the start at "
                      f"seq {req.hidden_use} may have used already (its meta is withheld or erased): whether this is the grant's one "
                      "effect is not checked", seq, "meta", True)
            return
        # A call that holds no marker is in hand: one with no digest (not exactly {name, arguments}, or not JSON that
        # canonicalizes) is not the presented call (§5 step 3), never "withheld" (step 5 is for markers only).
        if req.input is not None and not hidden and (form is None or form != req.form):
            what = (f"a call (digest {digest})" if digest is not None else
                    "a tool_call that is not a call as presented (an object with name and arguments that canonicalizes)")
            self._add("APPROVAL_MISMATCH", f"seq {seq}: effect {json.dumps(eid)} executes {what} other than the one presented "
                      f"by request {json.dumps(rid)} and granted: the tool name or arguments were changed after "
                      "approval", seq, "tool_call")
        elif call is not None and not hidden and req.input is not None and [k for k in call if k not in EFFECT_CALL_MEMBERS]:
            extra = ", ".join(json.dumps(k) for k in call if k not in EFFECT_CALL_MEMBERS)
            self._add("APPROVAL_MISMATCH", f"seq {seq}: effect {json.dumps(eid)}'s tool_call adds {extra} to the call request {json.dumps(rid)} "
                      "presented: only call_id and idempotency_key may be added (§4)", seq, "tool_call")
        elif req.input is None or digest is None:
            if not req.hidden and not hidden and req.input is None:
                return
            req.unchecked = True
            self._add("APPROVAL_UNCHECKED", f"seq {seq}: effect {json.dumps(eid)}'s call or its request's presentation is withheld: they are "
                      "not compared", seq, "tool_call", True)

    def entries(self, now_ms: Optional[int] = None) -> list[dict[str, Any]]:
        """Every request in chain order and what became of it (§6); with now_ms, an undecided request past its expiry is expired."""
        out = []
        for rid, req in self.requests.items():
            d, inp = req.decision, req.input
            # The effect that counted, else the record that ran its call before it, else the first effect begun for it.
            ran = req.effect or req.ran_before or req.claimed
            expires = None if inp is None else instant(inp["expires_at"])
            status = ("invalid" if inp is None and not req.hidden else d.kind if d is not None else
                      "expired" if expires is not None and now_ms is not None and now_ms > expires else "pending")
            out.append({
                "request": rid, "request_seq": req.seq, "request_hash": req.step_hash,
                "tool": None if inp is None else inp["presented"]["name"], "digest": None if inp is None else inp.get("digest"),
                "expires_at": None if inp is None else inp["expires_at"], "status": status,
                "decision_seq": None if d is None else d.seq, "decided_at": None if d is None else d.ts,
                "approver": None if d is None else d.approver, "reason": None if d is None else d.reason,
                "effect": None if ran is None else ran[0], "effect_seq": None if ran is None else ran[1],
                **({"unchecked": True} if req.unchecked or (ran is None and (self.unchecked_calls or self.partial or self.open_end)) else {}),
            })
        return out

    def finish(self) -> list[Finding]:
        """The findings once the chain is read: problems (and notices) in chain order, then a notice per unpinned approver."""
        out = list(self.findings)
        last = out[-1].seq if out else 0
        if self.dropped_problems:
            out.append(Finding(self.dropped_code, f"{self.dropped_problems} more approval problems like those above are not listed (the first "
                               f"{MOST_KEPT} are)", last, "meta", False))
        if self.dropped_notices:
            out.append(Finding("APPROVAL_UNCHECKED", f"{self.dropped_notices} more approval notices like those above are not listed (the "
                               f"first {MOST_KEPT} are)", last, "meta", True))
        for keyid, (seq, name) in self.unpinned.items():
            calling = "" if name is None else f" (calling itself {json.dumps(name)})"
            out.append(Finding("APPROVER_UNPINNED", f"decisions signed by key {keyid}{calling} are intact but not authenticated: pin the "
                               "approver's public key (--approver KEY) to tie them to a person", seq, "meta", True))
        return out


def _binding_defect(s: dict[str, Any], decision: str, ref: str, ts: Any, req: _Request, genesis_hash: Optional[str]) -> Optional[str]:
    """§5 step 2.3: the statement binds this record and its request (a signature moved elsewhere does not hold)."""
    if s["decision"] != decision:
        return f"the signed decision is {json.dumps(s['decision'])} but the record is approval.{decision}"
    if s["request"] != ref:
        return f"the signed statement is about request {json.dumps(s['request'])}, not the request this record names"
    if s["request_seq"] != req.seq or s["request_hash"] != req.step_hash:
        return f"the signed statement names request seq {s['request_seq']} {s['request_hash']}, but the request is seq {req.seq} {req.step_hash}"
    # A v2 statement binds the request by its step hash alone; a v1 statement also names the request's unsalted digest, so
    # it decides only a request that carries one (§3.1).
    if s["type"] == STATEMENT_TYPE_V1 and req.input is not None:
        if "digest" not in req.input:
            return (f"a {STATEMENT_TYPE_V1} statement names the presented call's unsalted digest, which this request does not carry: a "
                    "request without a digest is decided by a stepchain-approval/v2 statement")
        if s["digest"] != req.input["digest"]:
            return f"the signed digest {s['digest']} is not the digest of what the request presented ({req.input['digest']})"
    if genesis_hash is not None and s["genesis_hash"] != genesis_hash:
        return f"the signed statement is for the journal with genesis {s['genesis_hash']}, not this one ({genesis_hash})"
    if s["decided_at"] != ts:
        return f"the signed decided_at {s['decided_at']} is not the record's ts {ts}"
    return None


def pins_of(approvers: Any) -> dict[str, Optional[str]]:
    """Pinned approvers (raw 32-byte keys, or (key, name) pairs, or {key, name} dicts) as key id -> name."""
    from .receipt import key_id_of
    out: dict[str, Optional[str]] = {}
    for a in approvers or []:
        if isinstance(a, (bytes, bytearray)):
            key, name = bytes(a), None
        elif isinstance(a, dict):
            key, name = a["key"], a.get("name")
        else:
            key, name = a
        out[key_id_of(bytes(key))] = name
    return out
