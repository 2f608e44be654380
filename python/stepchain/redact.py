"""The redaction walk of one step (spec/REDACTION.md §4, §5.1–§5.2): which rules apply, the detectors, and the
markers with their value commitments, in walk order. Salts come from the caller, in the order §5.3 fixes."""
from __future__ import annotations

import re
from typing import Any, Callable, Optional

from .chain import REDACTED_MARKER
from .disclose import value_commitment

DETECTOR_PATTERNS = {
    "api-key": re.compile(r"(?<![A-Za-z0-9])sk-[A-Za-z0-9_-]{20,}|(?<![A-Za-z0-9])gh[pousr]_[A-Za-z0-9]{30,}|(?<![A-Za-z0-9])github_pat_[A-Za-z0-9_]{20,}"
                          r"|(?<![A-Za-z0-9])xox[abposr]-[A-Za-z0-9-]{10,}|(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}"),
    "aws-access-key": re.compile(r"(?<![A-Z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
    "bearer-token": re.compile(r"(?<![A-Za-z0-9])[Bb][Ee][Aa][Rr][Ee][Rr][ \t]+[A-Za-z0-9._~+/-]{8,}=*"),
    "jwt": re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*"),
    # ECMAScript's `$` without the m flag is the end of the string: Python's \Z.
    "private-key": re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"),
}
_LOCAL = re.compile(r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]")
_DOMAIN = re.compile(r"[A-Za-z0-9.-]")


def _emails(s: str) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    frm = floor = 0
    while True:
        at = s.find("@", frm)
        if at < 0:
            return out
        frm = at + 1
        start = at
        while start > floor and _LOCAL.match(s[start - 1]):
            start -= 1
        while start < at and s[start] == ".":
            start += 1
        if start == at:
            continue
        end = at + 1
        while end < len(s) and _DOMAIN.match(s[end]):
            end += 1
        while end > at + 1 and s[end - 1] in ".-":
            end -= 1
        labels = s[at + 1:end].split(".")
        if len(labels) < 2 or any(not lab for lab in labels) or not re.fullmatch(r"[A-Za-z]{2,}", labels[-1]):
            continue
        out.append((start, end))
        floor = end
        frm = end


def _find(detector: str, s: str) -> list[tuple[int, int]]:
    if detector == "email":
        return _emails(s)
    return [(m.start(), m.end()) for m in DETECTOR_PATTERNS[detector].finditer(s)]


def find_secrets(s: str, ids: list[str]) -> list[dict[str, Any]]:
    """Every span the detectors find, merged when they overlap or touch, named by the one that starts first."""
    found = [{"start": a, "end": b, "detector": d} for d in ids for a, b in _find(d, s) if b > a]
    if len(found) <= 1:
        return found
    found.sort(key=lambda m: (m["start"], ids.index(m["detector"])))
    out: list[dict[str, Any]] = []
    for m in found:
        if out and m["start"] <= out[-1]["end"]:
            out[-1]["end"] = max(out[-1]["end"], m["end"])
        else:
            out.append(dict(m))
    return out


class _Patterns:
    """Pointer patterns (DIFF.md §4) as a set of positions: `*` one token, `**` any number."""

    def __init__(self, sources: list[str]) -> None:
        self.pats = []
        for src in sources:
            toks = []
            for t in src[1:].split("/"):
                toks.append(t if t in ("*", "**") else ("lit", t.replace("~1", "/").replace("~2", "*").replace("~0", "~")))
            self.pats.append(toks)

    def _close(self, state: set[tuple[int, int]]) -> frozenset[tuple[int, int]]:
        todo = list(state)
        out = set(state)
        while todo:
            pi, pos = todo.pop()
            if pos < len(self.pats[pi]) and self.pats[pi][pos] == "**" and (pi, pos + 1) not in out:
                out.add((pi, pos + 1))
                todo.append((pi, pos + 1))
        return frozenset(out)

    def root(self) -> frozenset[tuple[int, int]]:
        return self._close({(i, 0) for i in range(len(self.pats))})

    def step(self, state: frozenset[tuple[int, int]], token: str) -> frozenset[tuple[int, int]]:
        nxt: set[tuple[int, int]] = set()
        for pi, pos in state:
            toks = self.pats[pi]
            if pos >= len(toks):
                continue
            t = toks[pos]
            if t == "**":
                nxt.add((pi, pos))
            elif t == "*" or t == ("lit", token):
                nxt.add((pi, pos + 1))
        return self._close(nxt)

    def matches(self, state: frozenset[tuple[int, int]]) -> bool:
        return any(pos == len(self.pats[pi]) for pi, pos in state)


def _pointer(tokens: list[Any]) -> str:
    return "".join("/" + str(t).replace("~", "~0").replace("/", "~1") for t in tokens)


def redact_step(document: dict[str, Any], seq: int, fields: dict[str, Any], salt: Callable[[], str],
                redactable: Optional[list[str]] = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The walk of §5.1 over one step's redactable members: (the redacted members, the redactions in walk order)."""
    redactable = redactable or ["input", "meta", "model", "prompt", "result", "tool_call"]
    tc = fields.get("tool_call")
    tool = tc.get("name") if isinstance(tc, dict) and isinstance(tc.get("name"), str) else None
    rules = []
    for r in document["rules"]:
        lo, hi = r.get("seq", {}).get("from", 0), r.get("seq", {}).get("to", 2**53 - 1)
        if lo <= seq <= hi and ("tools" not in r or (tool is not None and tool in r["tools"])):
            rules.append({**r, "detectors": r.get("detectors", []), "pm": _Patterns(r["paths"]) if "paths" in r else None,
                          "mode": r.get("mode", "substring" if r.get("detectors") else "value")})
    out: list[dict[str, Any]] = []

    def marker(tokens: list[Any], rule: dict[str, Any], value: Any, text: Optional[str] = None) -> dict[str, Any]:
        s = salt()
        c = value_commitment(s, value)
        out.append({"seq": seq, "path": _pointer(tokens), "rule": rule["id"], "commitment": c, "salt": s, "value": value})
        body = {"commitment": c, "rule": rule["id"]}
        if text is not None:
            body["text"] = text
        return {REDACTED_MARKER: body}

    def walk(value: Any, tokens: list[Any], states: list[Any], scoped: list[bool]) -> Any:
        scope = list(scoped)
        for i, r in enumerate(rules):
            st = states[i]
            if st is None or not r["pm"].matches(st):
                continue
            if not r["detectors"]:
                return marker(tokens, r, value)
            scope[i] = True
        any_scoped = any(x and rules[i]["detectors"] for i, x in enumerate(scope))
        if isinstance(value, str):
            return _redact_string(value, tokens, scope) if any_scoped else value
        if not isinstance(value, (dict, list)):
            return value
        if not any_scoped and all(s is None or not s for s in states):
            return value

        def step(token: str) -> list[Any]:
            return [None if s is None else rules[i]["pm"].step(s, token) for i, s in enumerate(states)]
        if isinstance(value, list):
            return [walk(v, tokens + [k], step(str(k)), scope) for k, v in enumerate(value)]
        if any_scoped:
            for i, r in enumerate(rules):
                if scope[i] and r["detectors"] and any(find_secrets(k, r["detectors"]) for k in value):
                    return marker(tokens, r, value)
        return {k: walk(value[k], tokens + [k], step(k), scope) for k in sorted(value, key=lambda k: k.encode("utf-16-be", "surrogatepass"))}

    def _redact_string(s: str, tokens: list[Any], scope: list[bool]) -> Any:
        first = None
        ids: list[str] = []
        for i, r in enumerate(rules):
            if not scope[i] or not r["detectors"]:
                continue
            if not find_secrets(s, r["detectors"]):
                continue
            if r["mode"] == "value":
                return marker(tokens, r, s)
            first = first or r
            ids.extend(d for d in r["detectors"] if d not in ids)
        if first is None:
            return s
        text, at = "", 0
        for m in find_secrets(s, ids):
            text += s[at:m["start"]] + f"[REDACTED:{m['detector']}]"
            at = m["end"]
        m = marker(tokens, first, s, text + s[at:])
        out[-1]["spans"] = [(x["start"], x["end"]) for x in find_secrets(s, ids)]  # where a v3 publisher cuts (REDACTION.md §13.3)
        return m

    result: dict[str, Any] = {}
    for f in redactable:
        if f not in fields:
            continue
        if not rules:
            result[f] = fields[f]
            continue
        states = [r["pm"].step(r["pm"].root(), f) if r["pm"] is not None else None for r in rules]
        result[f] = walk(fields[f], [f], states, [r["pm"] is None for r in rules])
    return result, out
