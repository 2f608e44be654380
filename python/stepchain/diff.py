"""The diff of two runs (spec/DIFF.md): steps reduced to projections (compared fields without what an ignore
pattern matches), aligned front to front with a bounded look-ahead (a shortest edit script over the keys of
two windows, Myers 1986, then the block before its first match paired by similarity), field differences, the
`stepchain-diff/v1` report and its one-line summary. Pure; a run is a list (or iterable) of step records, or
a {"genesis", "records"} mapping (a run journal when its genesis is stepchain/v2)."""
from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any, Iterable, Iterator, Optional

from .canonical import RESERVED_PREFIX, canonical_json, utf16_key

DIFF_FORMAT = "stepchain-diff/v1"
DEFAULT_FIELDS = ["input", "model", "prompt", "tool_call", "result", "meta"]
RUN_FIELDS = ["kind", "ref", "input", "model", "prompt", "tool_call", "result", "error", "meta"]
ENVELOPE_FIELDS = ["v", "seq", "step_id", "ts", "prev_hash", "step_hash"]
VOLATILE_PATTERNS = ["/ref", "/meta/duration_ms", "/meta/latency_ms", "/meta/time_to_first_token_ms", "/meta/started_at",
                     "/meta/ended_at", "/meta/timestamp", "/result/response/timestamp", "/result/response/id", "/result/responseId"]
PATTERN_FIELDS = set(DEFAULT_FIELDS + ENVELOPE_FIELDS)
RUN_PATTERN_FIELDS = PATTERN_FIELDS | {"kind", "ref", "error"}
MAX_DEPTH = 128


class DiffError(ValueError):
    def __init__(self, code: str, message: str, location: Optional[dict[str, Any]] = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.location = code, location or {}


# ------------------------------------------------------------------------------------------ patterns (§4)


def _unescape(t: str) -> str:
    return t.replace("~1", "/").replace("~2", "*").replace("~0", "~")


def compile_pattern(p: Any, fields: set[str]) -> list[str]:
    def bad(why: str) -> DiffError:
        return DiffError("BAD_IGNORE_PATTERN", f"ignore pattern {json.dumps(p, ensure_ascii=False)}: {why}")
    if not isinstance(p, str) or not p:
        raise bad("a pattern is a non-empty string (an empty one would ignore the whole step)")
    if not p.startswith("/"):
        raise bad('a pattern starts with "/"')
    tokens = p[1:].split("/")
    if len(tokens) > 1000:
        raise bad("a pattern has at most 1000 tokens")
    out: list[str] = []
    for t in tokens:
        if re.search(r"~(?![012])", t):
            raise bad('"~" is followed by 0, 1 or 2')
        if "*" in t and t not in ("*", "**"):
            raise bad("wildcards match whole tokens only (write a literal * as ~2)")
        if t == "**" and out and out[-1] == "**":
            raise bad('"**" twice in a row')
        out.append(t if t in ("*", "**") else "=" + _unescape(t))
    if out[0] not in ("*", "**") and out[0][1:] not in fields:
        raise bad(f"{out[0][1:]!r} is not a step field ({', '.join(sorted(fields))}): a typo would silently match nothing")
    return out


State = frozenset  # of (pattern index, position)


class IgnoreSet:
    def __init__(self, patterns: list[list[str]]) -> None:
        self.pats = patterns

    def _close(self, s: set[tuple[int, int]]) -> State:
        todo, out = list(s), set(s)
        while todo:
            i, pos = todo.pop()
            if pos < len(self.pats[i]) and self.pats[i][pos] == "**" and (i, pos + 1) not in out:
                out.add((i, pos + 1))
                todo.append((i, pos + 1))
        return frozenset(out)

    def root(self) -> State:
        return self._close({(i, 0) for i in range(len(self.pats))})

    def step(self, s: State, token: str) -> State:
        nxt: set[tuple[int, int]] = set()
        for i, pos in s:
            toks = self.pats[i]
            if pos >= len(toks):
                continue
            t = toks[pos]
            if t == "**":
                nxt.add((i, pos))
            elif t == "*" or t == "=" + token:
                nxt.add((i, pos + 1))
        return self._close(nxt)

    def matches(self, s: State) -> bool:
        return any(pos == len(self.pats[i]) for i, pos in s)


# ------------------------------------------------------------------------------------------ values


class PList(list):
    """A projected array: the elements not ignored, with their stored indices (DIFF.md §4.3)."""
    idx: list[int]


def _is_marker(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and next(iter(v)).startswith(RESERVED_PREFIX)


def _json_type(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        return "string"
    return "array" if isinstance(v, list) else "object"


def _check_data(v: Any, seq: Any, path: str, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise DiffError("BAD_STEP", f"a value at {path or '/'} of step {seq} is nested deeper than {MAX_DEPTH}", {"seq": seq, "path": path})
    if v is None or isinstance(v, (bool, str)):
        return
    if isinstance(v, (int, float)):
        if isinstance(v, float) and not math.isfinite(v):
            raise DiffError("BAD_STEP", f"a value at {path or '/'} of step {seq} is not a finite number", {"seq": seq, "path": path})
        return
    if isinstance(v, list):
        for k, x in enumerate(v):
            _check_data(x, seq, f"{path}/{k}", depth + 1)
        return
    if isinstance(v, dict) and all(isinstance(k, str) for k in v):
        for k, x in v.items():
            _check_data(x, seq, f"{path}/{_esc(k)}", depth + 1)
        return
    raise DiffError("BAD_STEP", f"a value at {path or '/'} of step {seq} is not JSON data", {"seq": seq, "path": path})


def _esc(t: Any) -> str:
    return str(t).replace("~", "~0").replace("/", "~1")


def _project(v: Any, s: State, ig: IgnoreSet) -> Any:
    if not s or _is_marker(v):
        return v
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            st = ig.step(s, k)
            if not ig.matches(st):
                out[k] = _project(x, st, ig)
        return out
    if isinstance(v, list):
        pl = PList()
        pl.idx = []
        for k, x in enumerate(v):
            st = ig.step(s, str(k))
            if not ig.matches(st):
                pl.append(_project(x, st, ig))
                pl.idx.append(k)
        return pl
    return v


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


def _equal(a: Any, b: Any) -> bool:
    ta, tb = _json_type(a), _json_type(b)
    if ta != tb:
        return False
    if ta == "object":
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if ta == "array":
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return a == b


def _indices(v: Any) -> list[int]:
    return getattr(v, "idx", None) or list(range(len(v)))


def field_diffs(a: Any, b: Any, path: str, out: list[dict[str, Any]], limit: int) -> int:
    """Appends the differences of two projected values (§3.3); returns how many were left out past limit."""
    omitted = 0

    def add(d: dict[str, Any]) -> None:
        nonlocal omitted
        if len(out) < limit:
            out.append(d)
        else:
            omitted += 1

    def walk(x: Any, y: Any, p: str) -> None:
        if _equal(x, y):
            return
        if _is_marker(x) or _is_marker(y):
            add({"path": p, "kind": "changed", "a": _plain(x), "b": _plain(y)})
            return
        tx, ty = _json_type(x), _json_type(y)
        if tx != ty:
            add({"path": p, "kind": "type-changed", "a": _plain(x), "b": _plain(y)})
        elif tx == "object":
            for k in sorted(set(x) | set(y), key=utf16_key):
                q = f"{p}/{_esc(k)}"
                if k not in y:
                    add({"path": q, "kind": "removed", "a": _plain(x[k])})
                elif k not in x:
                    add({"path": q, "kind": "added", "b": _plain(y[k])})
                else:
                    walk(x[k], y[k], q)
        elif tx == "array":
            ix, iy = _indices(x), _indices(y)
            for k in range(max(len(x), len(y))):
                if k >= len(x):
                    add({"path": f"{p}/{iy[k]}", "kind": "added", "b": _plain(y[k])})
                elif k >= len(y):
                    add({"path": f"{p}/{ix[k]}", "kind": "removed", "a": _plain(x[k])})
                else:
                    walk(x[k], y[k], f"{p}/{ix[k]}")
        else:
            add({"path": p, "kind": "changed", "a": x, "b": y})
    walk(a, b, path)
    return omitted


def _share(a: Any, b: Any) -> float:
    """The share of members or elements that are equal, for a differing field's half point (§5.2 step 5)."""
    if isinstance(a, dict) and isinstance(b, dict) and not _is_marker(a) and not _is_marker(b):
        names = set(a) | set(b)
        return sum(1 for k in names if k in a and k in b and _equal(a[k], b[k])) / len(names) if names else 0.0
    if isinstance(a, list) and isinstance(b, list):
        n = max(len(a), len(b))
        return sum(1 for x, y in zip(a, b) if _equal(x, y)) / n if n else 0.0
    return 0.0


_ABSENT = object()


class _Step:
    def __init__(self, record: Any, fields: list[str], states: dict[str, State], ig: IgnoreSet) -> None:
        if not isinstance(record, dict) or not isinstance(record.get("seq"), int) or isinstance(record.get("seq"), bool) or record["seq"] < 0:
            raise DiffError("BAD_STEP", "a step is an object with a non-negative integer seq", {})
        self.seq = record["seq"]
        self.proj: dict[str, Any] = {}
        for f in fields:
            if f in record:
                _check_data(record[f], self.seq, "/" + f)
                if not ig.matches(states[f]):
                    self.proj[f] = _project(record[f], states[f], ig)
        text = canonical_json(_plain(self.proj))
        self.key = text if len(text) <= 4096 else hashlib.sha256(text.encode()).hexdigest()
        self.fields = fields

    def similarity(self, other: "_Step") -> float:
        s = 0.0
        for f in self.fields:
            x, y = self.proj.get(f, _ABSENT), other.proj.get(f, _ABSENT)
            if x is _ABSENT or y is _ABSENT:
                s += 1.0 if x is y else 0.0
            elif _equal(x, y):
                s += 1.0
            else:
                s += 0.5 * _share(x, y)
        return s


def _first_match(ka: list[str], kb: list[str]) -> tuple[int, int]:
    """The first matched pair of a shortest edit script (Myers 1986, deletions first), or the lengths."""
    n, m = len(ka), len(kb)
    v = {1: 0}
    trace = []
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            if k == -d or (k != d and v[k - 1] < v[k + 1]):
                x = v[k + 1]
            else:
                x = v[k - 1] + 1
            y = x - k
            while x < n and y < m and ka[x] == kb[y]:
                x, y = x + 1, y + 1
            v[k] = x
            if x >= n and y >= m:
                return _walk_back(trace, ka, kb, n, m, d)
    return n, m


def _walk_back(trace: list[dict[int, int]], ka: list[str], kb: list[str], n: int, m: int, d_end: int) -> tuple[int, int]:
    x, y = n, m
    first: Optional[tuple[int, int]] = None
    for d in range(d_end, -1, -1):
        v = trace[d]
        k = x - y
        if d == 0:
            prev_k = k
            px = 0
        elif k == -d or (k != d and v[k - 1] < v[k + 1]):
            prev_k = k + 1
            px = v[prev_k]
        else:
            prev_k = k - 1
            px = v[prev_k]
        py = px - prev_k
        sx = px if d == 0 else (px if prev_k == k + 1 else px + 1)
        sy = sx - k
        while x > sx and y > sy:
            x, y = x - 1, y - 1
            first = (x, y)
        x, y = px, py
    return first if first is not None else (n, m)


def _pairing(a: list[_Step], b: list[_Step]) -> list[tuple[int, int]]:
    """min(i, j) pairs in order, maximizing summed similarity, ties to the earliest pairing (§5.2 step 5)."""
    i, j = len(a), len(b)
    if i == j:
        return [(k, k) for k in range(i)]
    short, long_, flip = (a, b, False) if i < j else (b, a, True)
    s, l = len(short), len(long_)
    sim = [[(short[p].similarity(long_[q]) if not flip else long_[q].similarity(short[p])) for q in range(l)] for p in range(s)]
    best = [[0.0] * (l + 1) for _ in range(s + 1)]
    for p in range(s - 1, -1, -1):
        for q in range(l - (s - p), -1, -1):
            take = sim[p][q] + best[p + 1][q + 1]
            skip = best[p][q + 1] if l - (q + 1) >= s - p else -1.0
            best[p][q] = max(take, skip)
    out, q = [], 0
    for p in range(s):
        while not (abs(sim[p][q] + best[p + 1][q + 1] - best[p][q]) < 1e-9):
            q += 1
        out.append((q, p) if flip else (p, q))
        q += 1
    return out


class _Run:
    def __init__(self, src: Any, fields: list[str], states: dict[str, State], ig: IgnoreSet) -> None:
        records = src.get("records") if isinstance(src, dict) else src
        if isinstance(records, (str, bytes)) or not hasattr(records, "__iter__"):
            raise DiffError("BAD_INPUT", "a run is a list or iterable of step records, or {genesis, records}")
        self.it: Iterator[Any] = iter(records)
        self.buf: list[_Step] = []
        self.done = False
        self.fields, self.states, self.ig = fields, states, ig

    def fill(self, n: int) -> None:
        while len(self.buf) < n and not self.done:
            try:
                self.buf.append(_Step(next(self.it), self.fields, self.states, self.ig))
            except StopIteration:
                self.done = True

    def exhausted(self) -> bool:
        self.fill(1)
        return not self.buf


def is_run_journal(x: Any) -> bool:
    return isinstance(x, dict) and isinstance(x.get("genesis"), dict) and x["genesis"].get("format") == "stepchain/v2"


def diff(a: Any, b: Any, options: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The stepchain-diff/v1 report of two runs (DIFF.md §8); DiffError for bad options or unreadable input."""
    o = {} if options is None else options
    if not isinstance(o, dict):
        raise DiffError("BAD_OPTION", "options must be an object")
    for k in o:
        if k not in ("all", "envelope", "ignore", "window", "maxFields", "volatile") and o[k] is not None:
            raise DiffError("BAD_OPTION", f"unknown option {json.dumps(k)} (options are all, envelope, ignore, window, maxFields and volatile)")

    def flag(k: str, default: bool = False) -> bool:
        v = o.get(k)
        if v is None:
            return default
        if not isinstance(v, bool):
            raise DiffError("BAD_OPTION", f"option {k} must be a boolean, not {json.dumps(v)}")
        return v

    def integer(k: str, lo: int, hi: int, default: int) -> int:
        v = o.get(k)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or not lo <= v <= hi:
            raise DiffError("BAD_OPTION", f"option {k} must be an integer from {lo} to {hi}, not {json.dumps(v)}")
        return int(v)
    all_, envelope = flag("all"), flag("envelope")
    window, max_fields = integer("window", 1, 1000, 64), integer("maxFields", 1, 1_000_000, 1000)
    ignore = o.get("ignore", [])
    if ignore is None:
        ignore = []
    if not isinstance(ignore, list):
        raise DiffError("BAD_OPTION", "option ignore must be an array of JSON Pointer patterns")
    run = is_run_journal(a) or is_run_journal(b)
    sources = (VOLATILE_PATTERNS if run and flag("volatile", True) else []) + list(ignore)
    allowed = RUN_PATTERN_FIELDS if run else PATTERN_FIELDS
    ig = IgnoreSet([compile_pattern(p, allowed) for p in sources])
    fields = (RUN_FIELDS if run else DEFAULT_FIELDS) + (ENVELOPE_FIELDS if envelope else [])
    root = ig.root()
    states = {f: ig.step(root, f) for f in fields}
    ra, rb = _Run(a, fields, states, ig), _Run(b, fields, states, ig)
    out: list[dict[str, Any]] = []
    count = {"a": 0, "b": 0}
    prefix: Optional[str] = None
    stopped = False

    def emit(d: dict[str, Any]) -> None:
        nonlocal stopped
        out.append(d)
        if not all_:
            stopped = True

    def changed(x: _Step, y: _Step) -> Optional[dict[str, Any]]:
        diffs: list[dict[str, Any]] = []
        omitted = 0
        for f in fields:
            px, py = x.proj.get(f, _ABSENT), y.proj.get(f, _ABSENT)
            if px is _ABSENT and py is _ABSENT:
                continue
            if px is _ABSENT:
                if len(diffs) < max_fields:
                    diffs.append({"path": "/" + f, "kind": "added", "b": _plain(py)})
                else:
                    omitted += 1
            elif py is _ABSENT:
                if len(diffs) < max_fields:
                    diffs.append({"path": "/" + f, "kind": "removed", "a": _plain(px)})
                else:
                    omitted += 1
            else:
                omitted += field_diffs(px, py, "/" + f, diffs, max_fields)
        if not diffs:
            return None
        d: dict[str, Any] = {"kind": "changed", "seq_a": x.seq, "seq_b": y.seq, "fields": diffs}
        if omitted:
            d["fields_omitted"] = omitted
        return d

    while not stopped:
        ea, eb = ra.exhausted(), rb.exhausted()
        if ea and eb:
            break
        if ea or eb:
            if not out:
                prefix = "a" if ea else "b"
            rest = rb if ea else ra
            while not stopped and not rest.exhausted():
                s = rest.buf.pop(0)
                count["b" if ea else "a"] += 1
                emit({"kind": "inserted", "seq_b": s.seq, "step": _plain(s.proj)} if ea else {"kind": "deleted", "seq_a": s.seq, "step": _plain(s.proj)})
            break
        if ra.buf[0].key == rb.buf[0].key:
            ra.buf.pop(0)
            rb.buf.pop(0)
            count["a"] += 1
            count["b"] += 1
            continue
        ra.fill(window)
        rb.fill(window)
        i, j = _first_match([s.key for s in ra.buf], [s.key for s in rb.buf])
        block_a, block_b = ra.buf[:i], rb.buf[:j]
        used = {"a": 0, "b": 0}

        def take(side: str, d: Optional[dict[str, Any]]) -> None:
            if stopped:
                return
            count[side] += 1
            used[side] += 1
            if d is not None:
                emit(d)
        na = nb = 0
        for pa, pb in _pairing(block_a, block_b):
            for s in block_a[na:pa]:
                take("a", {"kind": "deleted", "seq_a": s.seq, "step": _plain(s.proj)})
            for s in block_b[nb:pb]:
                take("b", {"kind": "inserted", "seq_b": s.seq, "step": _plain(s.proj)})
            if stopped:
                break
            count["a"] += 1
            count["b"] += 1
            used["a"] += 1
            used["b"] += 1
            d = changed(block_a[pa], block_b[pb])
            if d is not None:
                emit(d)
            na, nb = pa + 1, pb + 1
        for s in block_a[na:]:
            take("a", {"kind": "deleted", "seq_a": s.seq, "step": _plain(s.proj)})
        for s in block_b[nb:]:
            take("b", {"kind": "inserted", "seq_b": s.seq, "step": _plain(s.proj)})
        del ra.buf[:used["a"]]
        del rb.buf[:used["b"]]
    complete = ra.exhausted() and rb.exhausted()
    report: dict[str, Any] = {"format": DIFF_FORMAT, "same": not out}
    if prefix is not None:
        report["prefix"] = prefix
    report.update({"compared": dict(count), "complete": complete, "fields": fields, "ignore": list(ignore), "divergences": out})
    return report


# ------------------------------------------------------------------------------------------ summary (§6.1)


_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


def path_text(pointer: str) -> str:
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]
    out = tokens[0]
    for t in tokens[1:]:
        if re.fullmatch(r"0|[1-9][0-9]*", t):
            out += f"[{t}]"
        elif _IDENT.match(t):
            out += "." + t
        else:
            out += "[" + json.dumps(t, ensure_ascii=False) + "]"
    return out


def value_text(v: Any, max_len: int = 40) -> str:
    if isinstance(v, dict) and len(v) == 1 and isinstance(v.get("$stepchain:blob"), dict):
        d = v["$stepchain:blob"].get("digest")
        text = f"‹blob {d[:15]}…›" if isinstance(d, str) else "‹blob›"
    elif isinstance(v, dict) and len(v) == 1 and "$stepchain:redacted" in v:
        text = "‹redacted›"
    else:
        text = json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    cps = list(text)
    if len(cps) > max_len:
        head, tail = math.ceil((max_len - 1) / 2), (max_len - 1) // 2
        text = "".join(cps[:head]) + "…" + ("".join(cps[-tail:]) if tail else "")
    return text


def _step_text(step: dict[str, Any], max_len: int) -> str:
    tc = step.get("tool_call")
    if isinstance(tc, dict) and isinstance(tc.get("name"), str):
        return f"tool_call {tc['name']}"
    for f in ("prompt", "input", "result", "tool_call", "model"):
        if step.get(f) is not None:
            return f"{f} {value_text(step[f], max_len)}"
    return "no content"


def _field_text(d: dict[str, Any], max_len: int) -> str:
    p = path_text(d["path"])
    if d["kind"] == "changed":
        return f"{p} {value_text(d['a'], max_len)} → {value_text(d['b'], max_len)}"
    if d["kind"] == "type-changed":
        return f"{p} {value_text(d['a'], max_len)} → {value_text(d['b'], max_len)} ({_json_type(d['a'])} → {_json_type(d['b'])})"
    if d["kind"] == "added":
        return f"{p} added: {value_text(d['b'], max_len)}"
    return f"{p} removed (was {value_text(d['a'], max_len)})"


def summarize(report: dict[str, Any], max_value_length: int = 40) -> str:
    ds = report["divergences"]
    n = report["compared"]
    if report["same"]:
        if n["a"] == 0:
            return "same: both runs are empty"
        return f"same: {n['a']} step{'s' if n['a'] != 1 else ''} match{'es' if n['a'] == 1 else ''}"
    if "prefix" in report:
        s = report["prefix"]
        l = "b" if s == "a" else "a"
        shared = n[s]
        first = ds[0]["seq_b"] if l == "b" else ds[0]["seq_a"]
        if report["complete"]:
            last = ds[-1]["seq_b"] if l == "b" else ds[-1]["seq_a"]
            k = len(ds)
            more = f"{l} continues with {k} more step{'s' if k != 1 else ''} (step{'s' if k != 1 else ''} {first}–{last})" if k != 1 else \
                f"{l} continues with 1 more step (step {first})"
        else:
            more = f"{l} continues at step {first}"
        if shared == 0:
            return f"run {s} is empty, a strict prefix of run {l}; {more}"
        return f"run {s} is a strict prefix of run {l} ({shared} step{'s' if shared != 1 else ''}, all equal); {more}"
    d = ds[0]
    if d["kind"] == "changed":
        at = f"{d['seq_a']}" + (f" (step {d['seq_b']} in b)" if d["seq_a"] != d["seq_b"] else "")
        extra = len(d["fields"]) - 1 + d.get("fields_omitted", 0)
        text = f"diverged at step {at}: {_field_text(d['fields'][0], max_value_length)}" + (
            f" (+{extra} more field{'s' if extra != 1 else ''})" if extra else "")
    elif d["kind"] == "inserted":
        text = f"diverged at step {d['seq_b']}: b has an extra step {d['seq_b']} not in a ({_step_text(d['step'], max_value_length)})"
    else:
        text = f"diverged at step {d['seq_a']}: b lacks a's step {d['seq_a']} ({_step_text(d['step'], max_value_length)})"
    if len(ds) > 1:
        text += f"; {len(ds) - 1} more divergent step{'s' if len(ds) != 2 else ''}"
    return text


__all__ = ["DiffError", "DIFF_FORMAT", "diff", "summarize", "path_text", "is_run_journal", "Iterable"]
