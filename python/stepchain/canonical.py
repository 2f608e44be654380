"""RFC 8785 canonical JSON (spec/FORMAT.md §3, §4): the writer's serializer and the verifier's strict scanner.

The scanner decides, in one pass and without building the value, whether a text is exactly JCS output for an
I-JSON value, and when it is not, which defect FORMAT §4.3 says to report: the first hard defect met (a grammar
defect at the first character that cannot continue), else the first non-canonical form by position. Indexes are
Python string indexes (code points); callers turn them into UTF-8 columns. It never raises on hostile input.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Optional

MAX_VALUE_DEPTH = 100
MAX_RECORD_DEPTH = 128
MAX_LINE_BYTES = 16 * 1024 * 1024
RESERVED_PREFIX = "$stepchain:"
MAX_SAFE_INTEGER = 2**53 - 1


def utf16_key(s: str) -> bytes:
    """The sort key of a member name: its UTF-16 code units (RFC 8785 §3.2.3)."""
    return s.encode("utf-16-be", "surrogatepass")


def escape_token(token: str | int) -> str:
    s = str(token)
    return s.replace("~", "~0").replace("/", "~1")


def to_pointer(tokens: list[str | int]) -> str:
    return "".join("/" + escape_token(t) for t in tokens)


def unescape_token(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


# --------------------------------------------------------------------------------------------- numbers


def es_number(x: float) -> str:
    """ECMAScript Number::toString of a finite double (RFC 8785 §3.2.2.3)."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es_number(-x)
    sign, digits_t, exp = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0") or "0"
    # value = 0.digits × 10^n
    n = len(digits_t) + int(exp)
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    es = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return digits + "e" + es
    return digits[0] + "." + digits[1:] + "e" + es


# --------------------------------------------------------------------------------------------- writer


class CanonicalError(ValueError):
    """A value JSON or I-JSON cannot carry (FORMAT §3.2): its code and the JSON Pointer where it stands."""

    def __init__(self, code: str, path: str, message: str) -> None:
        super().__init__(f"{code}: {message} at {path or '(root)'}")
        self.code = code
        self.path = path


def _quote(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(c) or "\\u%04x" % c)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical_json(value: Any, *, max_depth: int | None = None, reserved: bool = False) -> str:
    """JCS text of a JSON value (dict, list, str, int, float, bool, None). Raises CanonicalError for what JSON
    cannot carry: NaN/Infinity, an integer no double holds exactly, lone surrogates, a cycle, a foreign type,
    a value nested deeper than max_depth, and (reserved=True) a member name with the reserved prefix."""
    parts: list[str] = []
    stack: list[str | int] = []
    active: set[int] = set()

    def where() -> str:
        return to_pointer(stack)

    def check_text(s: str) -> None:
        for ch in s:
            if 0xD800 <= ord(ch) <= 0xDFFF:
                raise CanonicalError("LONE_SURROGATE", where(), "a string holds a lone surrogate")

    def walk(v: Any, depth: int) -> None:
        if v is None:
            parts.append("null")
        elif v is True:
            parts.append("true")
        elif v is False:
            parts.append("false")
        elif isinstance(v, int):
            if abs(v) > MAX_SAFE_INTEGER and (abs(v) > 2**1023 or float(v) != v):
                raise CanonicalError("UNSUPPORTED_TYPE", where(), f"integer {v} is not exact in an IEEE 754 double")
            parts.append(str(v) if abs(v) <= MAX_SAFE_INTEGER else es_number(float(v)))
        elif isinstance(v, float):
            if not math.isfinite(v):
                raise CanonicalError("NOT_FINITE_NUMBER", where(), f"{v} has no JSON form")
            parts.append(es_number(v))
        elif isinstance(v, str):
            check_text(v)
            parts.append(_quote(v))
        elif isinstance(v, (list, tuple, dict)):
            if max_depth is not None and depth + 1 > max_depth:
                raise CanonicalError("DEPTH_LIMIT", where(), f"nested deeper than {max_depth} levels")
            if id(v) in active:
                raise CanonicalError("CYCLE", where(), "the value contains itself (a cycle)")
            active.add(id(v))
            if isinstance(v, dict):
                for k in v:
                    if not isinstance(k, str):
                        raise CanonicalError("NOT_PLAIN_OBJECT", where(), f"member name {k!r} is not a string")
                keys = sorted(v, key=utf16_key)
                parts.append("{")
                for i, k in enumerate(keys):
                    stack.append(k)
                    check_text(k)
                    if reserved and k.startswith(RESERVED_PREFIX):
                        raise CanonicalError("RESERVED_KEY", where(), f"member names starting with {RESERVED_PREFIX!r} are reserved")
                    if i:
                        parts.append(",")
                    parts.append(_quote(k) + ":")
                    walk(v[k], depth + 1)
                    stack.pop()
                parts.append("}")
            else:
                parts.append("[")
                for i, item in enumerate(v):
                    stack.append(i)
                    if i:
                        parts.append(",")
                    walk(item, depth + 1)
                    stack.pop()
                parts.append("]")
            active.discard(id(v))
        else:
            code = "UNSUPPORTED_TYPE" if callable(v) or v is ... else "NOT_PLAIN_OBJECT"
            raise CanonicalError(code, where(), f"a {type(v).__name__} has no JSON form")

    walk(value, 0)
    return "".join(parts)


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def digest_utf8(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
    return "sha256:" + h.hexdigest()


def digest_bytes(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def is_digest(v: Any) -> bool:
    return isinstance(v, str) and len(v) == 71 and v.startswith("sha256:") and all(c in "0123456789abcdef" for c in v[7:])


def is_seq(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE_INTEGER or (
        isinstance(v, float) and v.is_integer() and 0 <= v <= MAX_SAFE_INTEGER)


def parse_json(text: str) -> Any:
    """JSON.parse's reading: a later duplicate member wins; numbers as Python int/float."""
    return json.loads(text)


def canonical_value(text: str, start: int, end: int) -> Any:
    """The value of a span the scanner proved canonical."""
    return json.loads(text[start:end])


# --------------------------------------------------------------------------------------------- scanner


@dataclass
class ScanDefect:
    code: str
    index: int
    path: str
    reason: str


@dataclass
class MarkerSpan:
    path: str
    names: list[str]
    start: int
    end: int


@dataclass
class ScanResult:
    defect: ScanDefect | None
    members: dict[str, tuple[int, int]] | None
    markers: list[MarkerSpan] = field(default_factory=list)


class _Abort(Exception):
    def __init__(self, defect: ScanDefect) -> None:
        self.defect = defect


_SHORT = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r"}
_CANON_SHORT = {8, 9, 10, 12, 13}
_HEX = set("0123456789abcdefABCDEF")
_WS = " \t\n\r"
_PLAIN_RUN = re.compile(r'[^"\\\x00-\x1f\ud800-\udfff]+')


class _Scanner:
    def __init__(self, s: str, max_depth: int, want_members: bool) -> None:
        self.s = s
        self.n = len(s)
        self.i = 0
        self.path: list[str | int] = []
        self.noncanonical: ScanDefect | None = None
        self.markers: list[MarkerSpan] = []
        self.members: dict[str, tuple[int, int]] | None = None
        self.max_depth = max_depth
        self.want_members = want_members

    def ch(self, i: int) -> str:
        return self.s[i] if i < self.n else ""

    def run(self) -> ScanDefect | None:
        try:
            self.skip_ws()
            self.value(0)
            self.skip_ws()
            if self.i != self.n:
                self.hard("MALFORMED_LINE", "unexpected text after the JSON value")
        except _Abort as e:
            return e.defect
        except RecursionError:  # pragma: no cover - depth is bounded well below the interpreter's limit
            return ScanDefect("DEPTH_LIMIT", self.i, to_pointer(self.path), "nesting too deep")
        return self.noncanonical

    def hard(self, code: str, reason: str, index: int | None = None) -> None:
        raise _Abort(ScanDefect(code, self.i if index is None else index, to_pointer(self.path), reason))

    def soft(self, reason: str, index: int | None = None) -> None:
        index = self.i if index is None else index
        if self.noncanonical is None or index < self.noncanonical.index:
            self.noncanonical = ScanDefect("NONCANONICAL_LINE", index, to_pointer(self.path), reason)

    def skip_ws(self) -> None:
        if self.ch(self.i) in _WS and self.i < self.n:
            self.soft("insignificant whitespace")
            while self.i < self.n and self.s[self.i] in _WS:
                self.i += 1

    def value(self, depth: int) -> None:
        c = self.ch(self.i)
        if c == '"':
            self.string(False)
        elif c == "{":
            self.obj(depth + 1)
        elif c == "[":
            self.arr(depth + 1)
        elif c == "-" or ("0" <= c <= "9" and c != ""):
            self.number()
        elif c == "t":
            self.literal("true")
        elif c == "f":
            self.literal("false")
        elif c == "n":
            self.literal("null")
        elif c == "":
            self.hard("MALFORMED_LINE", "unexpected end of text")
        else:
            self.hard("MALFORMED_LINE", f"unexpected character {json.dumps(c)}")

    def literal(self, word: str) -> None:
        for k in range(1, len(word)):
            if self.ch(self.i + k) != word[k]:
                self.hard("MALFORMED_LINE", f"expected {word}", self.i + k)
        self.i += len(word)

    def number(self) -> None:
        s = self.s
        start = i = self.i
        if self.ch(i) == "-":
            i += 1
        c = self.ch(i)
        if c == "0":
            i += 1
        elif c and "1" <= c <= "9":
            i += 1
            while self.ch(i) and "0" <= self.ch(i) <= "9":
                i += 1
        else:
            self.i = i
            self.hard("MALFORMED_LINE", "a number needs a digit")
        if self.ch(i) == ".":
            i += 1
            if not (self.ch(i) and "0" <= self.ch(i) <= "9"):
                self.i = i
                self.hard("MALFORMED_LINE", "a fraction needs a digit")
            while self.ch(i) and "0" <= self.ch(i) <= "9":
                i += 1
        if self.ch(i) in ("e", "E") and self.ch(i):
            i += 1
            if self.ch(i) in ("+", "-") and self.ch(i):
                i += 1
            if not (self.ch(i) and "0" <= self.ch(i) <= "9"):
                self.i = i
                self.hard("MALFORMED_LINE", "an exponent needs a digit")
            while self.ch(i) and "0" <= self.ch(i) <= "9":
                i += 1
        token = s[start:i]
        try:
            x = float(token)
        except (ValueError, OverflowError):  # pragma: no cover - the grammar above admits only numbers
            x = math.inf
        if not math.isfinite(x):
            self.hard("NOT_FINITE_NUMBER", f"{token} is outside the range of an IEEE 754 double", start)
        canonical = es_number(x)
        if canonical != token:
            self.soft(f"number {token} is written {canonical} in canonical form", start)
        self.i = i

    def hex4(self, at: int) -> int:
        for k in range(4):
            if self.ch(at + k) not in _HEX or self.ch(at + k) == "":
                self.hard("MALFORMED_LINE", "a \\u escape needs four hex digits", at + k)
        return int(self.s[at:at + 4], 16)

    def _hex_value(self, at: int) -> int:
        t = self.s[at:at + 4]
        return int(t, 16) if len(t) == 4 and all(c in _HEX for c in t) else -1

    def string(self, decode: bool) -> str:
        s = self.s
        i = self.i + 1
        out: list[str] = []
        while True:
            if i >= self.n:
                self.hard("MALFORMED_LINE", "unterminated string", i)
            c = s[i]
            if c == '"':
                break
            if c == "\\":
                esc = self.ch(i + 1)
                if esc in ('"', "\\") and esc:
                    out.append(esc)
                    i += 2
                elif esc == "/":
                    self.soft('"/" is not escaped in canonical form', i)
                    out.append("/")
                    i += 2
                elif esc in _SHORT:
                    out.append(_SHORT[esc])
                    i += 2
                elif esc == "u":
                    code = self.hex4(i + 2)
                    if 0xD800 <= code <= 0xDBFF:
                        low = self._hex_value(i + 8) if self.ch(i + 6) == "\\" and self.ch(i + 7) == "u" else -1
                        if not (0xDC00 <= low <= 0xDFFF):
                            self.hard("LONE_SURROGATE", "escaped high surrogate without its low half", i)
                        self.soft("a surrogate pair is written literally in canonical form", i)
                        out.append(chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)))
                        i += 12
                        continue
                    if 0xDC00 <= code <= 0xDFFF:
                        self.hard("LONE_SURROGATE", "escaped low surrogate without a high half", i)
                    hexs = s[i + 2:i + 6]
                    if code >= 0x20:
                        self.soft(f"\\u{hexs} is written literally in canonical form", i)
                    elif code in _CANON_SHORT:
                        self.soft(f"\\u{hexs} has a short escape in canonical form", i)
                    elif hexs != "%04x" % code:
                        self.soft("\\u escapes use lowercase hex in canonical form", i)
                    out.append(chr(code))
                    i += 6
                else:
                    self.hard("MALFORMED_LINE", "invalid escape sequence", i + 1)
                continue
            o = ord(c)
            if o < 0x20:
                self.hard("MALFORMED_LINE", "control character inside a string must be escaped", i)
            if 0xD800 <= o <= 0xDFFF:
                self.hard("LONE_SURROGATE", "lone surrogate in a string", i)
            # A run of characters that need no escape, skipped in one compiled step (most of a value's text).
            end = _PLAIN_RUN.match(s, i).end()  # type: ignore[union-attr]
            if decode:
                out.append(s[i:end])
            i = end
        self.i = i + 1
        return "".join(out) if decode else ""

    def obj(self, depth: int) -> None:
        start = self.i
        if depth > self.max_depth:
            self.hard("DEPTH_LIMIT", f"nesting deeper than {self.max_depth} levels")
        record = depth == 1 and self.want_members
        if record:
            self.members = {}
        self.i += 1
        self.skip_ws()
        if self.ch(self.i) == "}":
            self.i += 1
            return
        keys: list[str] = []
        seen: set[str] | None = None
        reserved = False
        while True:
            if self.ch(self.i) != '"':
                self.hard("MALFORMED_LINE", "expected a member name")
            key_index = self.i
            key = self.string(True)
            prev = keys[-1] if keys else None
            out_of_order = prev is not None and not (utf16_key(prev) < utf16_key(key))
            if seen is not None or out_of_order:
                if seen is None:
                    seen = set(keys)
                if key in seen:
                    self.path.append(key)
                    self.hard("DUPLICATE_KEY", f"member {json.dumps(key)} appears twice", key_index)
                seen.add(key)
                if out_of_order:
                    self.path.append(key)
                    self.soft(f"member {json.dumps(key)} must come before {json.dumps(prev)} (UTF-16 order)", key_index)
                    self.path.pop()
            keys.append(key)
            if key.startswith(RESERVED_PREFIX):
                reserved = True
            self.path.append(key)
            self.skip_ws()
            if self.ch(self.i) != ":":
                self.hard("MALFORMED_LINE", 'expected ":" after a member name')
            self.i += 1
            self.skip_ws()
            value_start = self.i
            self.value(depth)
            if record:
                assert self.members is not None
                self.members[key] = (value_start, self.i)
            self.path.pop()
            self.skip_ws()
            c = self.ch(self.i)
            if c == ",":
                self.i += 1
                self.skip_ws()
            elif c == "}":
                self.i += 1
                break
            else:
                self.hard("MALFORMED_LINE", 'expected "," or "}" in an object')
        if reserved:
            self.markers.append(MarkerSpan(to_pointer(self.path), keys, start, self.i))

    def arr(self, depth: int) -> None:
        if depth > self.max_depth:
            self.hard("DEPTH_LIMIT", f"nesting deeper than {self.max_depth} levels")
        self.i += 1
        self.skip_ws()
        if self.ch(self.i) == "]":
            self.i += 1
            return
        index = 0
        while True:
            self.path.append(index)
            self.value(depth)
            self.path.pop()
            self.skip_ws()
            c = self.ch(self.i)
            if c == ",":
                self.i += 1
                self.skip_ws()
            elif c == "]":
                self.i += 1
                return
            else:
                self.hard("MALFORMED_LINE", 'expected "," or "]" in an array')
            index += 1


class _NotPlain(Exception):
    pass


def _no_float(token: str) -> Any:
    raise _NotPlain


def _small_int(token: str) -> int:
    if len(token) > 15:
        raise _NotPlain
    return int(token)


_DUMPS = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, check_circular=False, allow_nan=False).encode
_DECODE = json.JSONDecoder(parse_float=_no_float, parse_int=_small_int, parse_constant=_no_float)
_NEEDS_GENERAL = re.compile(r'[\ud7ff-\U0010ffff]|"\$stepchain:')


def _scan_plain(text: str, max_depth: int, members: bool) -> Optional[ScanResult]:
    """The fast path for the form writers produce: no float, no integer beyond 15 digits, no reserved name, no
    character above U+D7FF (where code point order and UTF-16 order part). Python's own C codec parses the text,
    and re-encoding it must give the same text back: then it is canonical (a duplicate member, an out-of-order
    member, whitespace, a needless escape all re-encode differently). None: the general scanner decides."""
    if _NEEDS_GENERAL.search(text):
        return None
    try:
        value = _DECODE.decode(text)
    except (_NotPlain, ValueError, RecursionError):
        return None
    if text.count("{") + text.count("[") > max_depth and _depth(value) > max_depth:
        return None
    try:
        if _DUMPS(value) != text:
            return None
    except (ValueError, RecursionError):
        return None
    spans: Optional[dict[str, tuple[int, int]]] = None
    if members and isinstance(value, dict):
        spans = {}
        pos = 1
        for k in sorted(value):
            start = pos + len(_DUMPS(k)) + 1
            pos = start + len(_DUMPS(value[k]))
            spans[k] = (start, pos)
            pos += 1
    return ScanResult(None, spans, [])


def _depth(v: Any) -> int:
    if isinstance(v, dict):
        return 1 + max((_depth(x) for x in v.values()), default=0)
    if isinstance(v, list):
        return 1 + max((_depth(x) for x in v), default=0)
    return 0


def scan_canonical(text: str, max_depth: int = MAX_RECORD_DEPTH, members: bool = True) -> ScanResult:
    fast = _scan_plain(text, max_depth, members)
    if fast is not None:
        return fast
    return scan_general(text, max_depth, members)


def scan_general(text: str, max_depth: int = MAX_RECORD_DEPTH, members: bool = True) -> ScanResult:
    """The general scanner alone (what scan_canonical falls back on, and what the tests hold the fast path to)."""
    sc = _Scanner(text, max_depth, members)
    defect = sc.run()
    return ScanResult(defect, sc.members, sc.markers)


def utf8_column(text: str, index: int) -> int:
    """1 + the UTF-8 byte offset of a string index (FORMAT §4.3's column)."""
    return len(text[:index].encode("utf-8", "surrogatepass")) + 1


def first_invalid_utf8(data: bytes) -> int:
    """The length of the longest prefix a streaming WHATWG UTF-8 decoder accepts (as the reference verifier
    measures it): the column of a line that is not UTF-8 is this plus one. A truncated sequence at the end is
    accepted in streaming; a bad continuation byte is where the error is met."""
    try:
        data.decode("utf-8")
        return len(data)
    except UnicodeDecodeError as e:
        if e.reason == "unexpected end of data":
            return len(data)
        if e.reason == "invalid continuation byte":
            return e.end
        return e.start
