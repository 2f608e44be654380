"""Pinned replay of a recorded run (spec/REPLAY.md): the matching key of a request (§3), serving recorded outcomes
under the modes strict, lenient and record-missing (§5), and the classification of a diff's divergences (§7).
Framework-free: a recording is its records (a run journal's `read()`), verified by the caller or by replay_from."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Optional

from .canonical import canonical_json
from .diff import RUN_PATTERN_FIELDS, VOLATILE_PATTERNS, IgnoreSet, _plain, _project, compile_pattern, field_diffs

MODES = ("strict", "lenient", "record-missing")
OUTCOMES = {"model.completed": "model", "model.failed": "model", "tool.completed": "tool", "tool.failed": "tool"}


class ReplayError(Exception):
    def __init__(self, code: str, message: str, *, diff: Optional[list[dict[str, Any]]] = None, seq: Optional[int] = None,
                 recorded_error: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.diff = code, diff
        self.location = {} if seq is None else {"seq": seq, **({"path": diff[0]["path"]} if diff else {})}
        self.recorded_error = recorded_error


def ignore_set(ignore: Iterable[str] = (), volatile: bool = True) -> IgnoreSet:
    try:
        return IgnoreSet([compile_pattern(p, RUN_PATTERN_FIELDS) for p in [*(VOLATILE_PATTERNS if volatile else []), *ignore]])
    except ValueError as e:
        raise ReplayError("REPLAY_OPTION_INVALID", str(e)) from None


def _json_value(v: Any) -> Any:
    """The one value rule (RUNS.md §4) as far as Python values go: the JSON the recorder stores."""
    return json.loads(canonical_json(v))


def model_projection(request: dict[str, Any]) -> dict[str, Any]:
    return {k: _json_value(request.get(k)) for k in ("input", "model", "prompt")}


def tool_projection(call: dict[str, Any]) -> dict[str, Any]:
    return {"tool_call": {"arguments": _json_value(call.get("arguments")), "name": call.get("name")}}


def _without(projection: dict[str, Any], patterns: IgnoreSet) -> Any:
    return _project(projection, patterns.root(), patterns)


def match_key(kind: str, projection: dict[str, Any], patterns: IgnoreSet) -> str:
    return kind + " " + canonical_json(_plain(_without(projection, patterns)))


@dataclass
class _Outcome:
    kind: str
    seq: int
    key: str
    ordinal: int
    projection: dict[str, Any]
    record: dict[str, Any]
    served: bool = False


class Replay:
    def __init__(self, records: Iterable[dict[str, Any]], *, mode: str = "strict", ignore: Iterable[str] = (), volatile: bool = True) -> None:
        if mode not in MODES:
            raise ReplayError("REPLAY_OPTION_INVALID", f"mode must be one of {', '.join(MODES)}")
        self.mode = mode
        self.patterns = ignore_set(ignore, volatile)
        self.outcomes: list[_Outcome] = []
        counts: dict[str, int] = {}
        self.run_input: Any = None
        for r in records:
            if r.get("kind") == "run.started":
                self.run_input = r.get("input")
            kind = OUTCOMES.get(r.get("kind", ""))
            if kind is None:
                continue
            tc = r.get("tool_call") if isinstance(r.get("tool_call"), dict) else {}
            proj = model_projection(r) if kind == "model" else tool_projection({"name": tc.get("name"), "arguments": tc.get("arguments")})
            key = match_key(kind, proj, self.patterns)
            self.outcomes.append(_Outcome(kind, r["seq"], key, counts.get(key, 0), proj, r))
            counts[key] = counts.get(key, 0) + 1

    def _serve(self, o: _Outcome) -> dict[str, Any]:
        o.served = True
        r = o.record
        return {"source": "recorded", "seq": o.seq, "ordinal": o.ordinal, "result": r.get("result"),
                "toolCalls": (r.get("result") or {}).get("tool_calls") if isinstance(r.get("result"), dict) else None,
                "meta": r.get("meta"), "error": r.get("error")}

    def _mismatch(self, what: str, recorded: _Outcome, live: dict[str, Any]) -> ReplayError:
        diffs: list[dict[str, Any]] = []
        field_diffs(_without(recorded.projection, self.patterns), _without(live, self.patterns), "", diffs, 1000)
        lines = "".join(f"\n  {d['path']}: {json.dumps(d.get('a'), ensure_ascii=False)} → {json.dumps(d.get('b'), ensure_ascii=False)}" for d in diffs)
        return ReplayError("REPLAY_MISMATCH", f"{what} differs from the recorded one (seq {recorded.seq}), recorded → live:{lines}",
                           diff=diffs, seq=recorded.seq)

    def next_model_result(self, request: dict[str, Any]) -> dict[str, Any]:
        live = model_projection(request)
        key = match_key("model", live, self.patterns)
        unserved = [o for o in self.outcomes if o.kind == "model" and not o.served]
        if self.mode == "lenient":
            same = [o for o in unserved if o.key == key]
            return self._serve(min(same, key=lambda o: o.ordinal)) if same else {"source": "live"}
        if not unserved:
            if self.mode == "record-missing":
                return {"source": "live"}
            raise ReplayError("REPLAY_EXHAUSTED", "a model request past the end of the recording: every recorded model request was served")
        nxt = unserved[0]
        if nxt.key != key:
            raise self._mismatch("a model request", nxt, live)
        return self._serve(nxt)

    def next_tool_result(self, call: dict[str, Any]) -> dict[str, Any]:
        live = tool_projection(call)
        key = match_key("tool", live, self.patterns)
        unserved = [o for o in self.outcomes if o.kind == "tool" and not o.served]
        same = [o for o in unserved if o.key == key]
        if same:
            return self._serve(min(same, key=lambda o: o.ordinal))
        if self.mode == "lenient" or (self.mode == "record-missing" and not unserved):
            return {"source": "live"}
        if not unserved:
            raise ReplayError("REPLAY_EXHAUSTED", f"a call of tool {call.get('name')!r} past the end of the recording: every recorded call was served")
        near = next((o for o in unserved if o.projection["tool_call"]["name"] == call.get("name")), unserved[0])
        raise self._mismatch(f"a call of tool {call.get('name')!r}", near, live)


def replay_from(journal: Any, **options: Any) -> Replay:
    """A replay of a run journal that verifies (§5 step 1); REPLAY_UNVERIFIED otherwise."""
    expect_head = options.pop("expect_head", None)
    report = journal.verify(expect_head)
    if not report.ok:
        p = report.problems[0]
        raise ReplayError("REPLAY_UNVERIFIED", f"the recording does not verify: {p.code}: {p.message}")
    records = list(journal.read())
    if not records:
        raise ReplayError("REPLAY_UNVERIFIED", "the recording is empty")
    if "kind" not in records[0]:
        raise ReplayError("REPLAY_UNVERIFIED", "the recording is not a run journal")
    return Replay(records, **options)


REQUEST_POINTERS = {"tool": ("/tool_call",), "other": ("/input", "/model", "/prompt")}


def _under(p: str, roots: tuple[str, ...]) -> bool:
    return any(p == r or p.startswith(r + "/") for r in roots)


def explain(report: dict[str, Any], a: list[dict[str, Any]], b: list[dict[str, Any]], *, strict_replay: bool = False) -> list[dict[str, Any]]:
    """The class of each divergence of a diff report (§7): request-change, tool-result-change, run-record-change
    or recorded-answer-change, with the pointers that decided it."""
    by_a = {r.get("seq"): r for r in a}
    by_b = {r.get("seq"): r for r in b}
    out = []
    for d in report["divergences"]:
        if d["kind"] in ("inserted", "deleted"):
            rec = by_b.get(d.get("seq_b")) if d["kind"] == "inserted" else by_a.get(d.get("seq_a"))
            out.append({"class": "request-change", "record": (rec or {}).get("kind"), "seq_a": d.get("seq_a"), "seq_b": d.get("seq_b"), "fields": []})
            continue
        kind = str(by_a.get(d["seq_a"], {}).get("kind", ""))
        pointers = [f["path"] for f in d["fields"]]
        roots = REQUEST_POINTERS["tool" if kind.startswith("tool.") else "other"]
        request = [p for p in pointers if _under(p, roots)]
        if request:
            cls, fields = "request-change", request
        elif kind.startswith("tool."):
            cls, fields = "tool-result-change", pointers
        elif kind.startswith("run."):
            cls, fields = "run-record-change", pointers
        else:
            cls, fields = "recorded-answer-change", pointers
        out.append({"class": cls, "record": kind, "seq_a": d["seq_a"], "seq_b": d["seq_b"], "fields": fields})
    return out


__all__ = ["Replay", "ReplayError", "explain", "match_key", "model_projection", "replay_from", "tool_projection"]
