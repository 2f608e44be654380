"""The run reader (spec/RUNS.md §2, §3): a run's state from its records — the tool effects and model calls with
their outcome or none, the run's status, and the continuation point (the last seq where every started model call
and tool effect, and every tool call a model asked for, has its outcome). A fold over records in seq order."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, Optional

from .canonical import CanonicalError, canonical_json

RESOLUTION_DECISIONS = ("retry", "done", "abandon", "compensated")


def _obj(v: Any) -> Optional[dict[str, Any]]:
    return v if isinstance(v, dict) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


def _ms(ts: str) -> int:
    return int(datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000 + 0.5) if ts else 0


def _span(a: str, b: str) -> Optional[int]:
    try:
        return round((datetime.strptime(b, "%Y-%m-%dT%H:%M:%S.%fZ") - datetime.strptime(a, "%Y-%m-%dT%H:%M:%S.%fZ")).total_seconds() * 1000)
    except (TypeError, ValueError):
        return None


@dataclass
class Effect:
    id: str
    seq: int
    tool: Optional[str]
    args: Any
    call_id: Optional[str]
    idempotency_key: Optional[str]
    summary: Optional[str]
    status: str
    started_at: str
    ended_at: Optional[str] = None
    end_seq: Optional[int] = None
    duration_ms: Optional[int] = None
    result: Any = None
    error: Any = None
    resolution: Optional[dict[str, str]] = None
    retry_of: Optional[str] = None


@dataclass
class ModelCall:
    id: str
    seq: int
    model: Any
    status: str
    started_at: str
    ended_at: Optional[str] = None
    end_seq: Optional[int] = None
    duration_ms: Optional[int] = None
    error: Any = None


@dataclass
class RunState:
    effects: dict[str, Effect] = field(default_factory=dict)
    models: dict[str, ModelCall] = field(default_factory=dict)
    status: str = "running"
    continuation: Optional[int] = None
    requested: set[str] = field(default_factory=set)
    in_flight: int = 0
    last_seq: int = -1
    anomalies: list[dict[str, Any]] = field(default_factory=list)
    by_key: dict[str, str] = field(default_factory=dict)
    by_call_id: dict[str, str] = field(default_factory=dict)
    by_intent: dict[str, str] = field(default_factory=dict)
    ended_at: Optional[str] = None

    def pending(self) -> list[Effect]:
        return sorted((e for e in self.effects.values() if e.status == "started"), key=lambda e: e.seq)


def intent_key(tool: str, args: Any) -> str:
    try:
        text = canonical_json(args, max_depth=128)
    except CanonicalError:
        text = json.dumps(args)
    return f"{tool}\u0000{text}"


def resolution_of(meta: Any) -> Optional[dict[str, str]]:
    r = _obj((_obj(meta) or {}).get("resolution"))
    if r is None or r.get("decision") not in RESOLUTION_DECISIONS:
        return None
    return {"decision": r["decision"], "by": _str(r.get("by")) or "", "reason": _str(r.get("reason")) or ""}


def _requested_ids(tool_call: Any) -> list[str]:
    items = tool_call if isinstance(tool_call, list) else [] if tool_call is None else [tool_call]
    out = []
    for c in items:
        o = _obj(c) or {}
        i = _str(o.get("id")) or _str(o.get("call_id"))
        if i is not None:
            out.append(i)
    return out


def fold_record(state: RunState, r: dict[str, Any]) -> None:
    seq = r["seq"]
    state.last_seq = seq
    if r.get("v") in (2, 3):  # a run journal of stepchain/v2 or /v3 (FORMAT.md §14: startRun(…, {format: "stepchain/v3"}))
        call = _obj(r.get("tool_call"))
        kind = r.get("kind")
        ref = r.get("ref")

        def anomaly(code: str, message: str) -> None:
            state.anomalies.append({"seq": seq, "code": code, "message": message})

        def repeats_start() -> bool:
            # RUNS.md §2: a start under an id the run already has is an anomaly; the first one stands.
            first = state.effects.get(r["step_id"]) or state.models.get(r["step_id"])
            if first is None:
                return False
            what = "tool effect" if r["step_id"] in state.effects else "model request"
            anomaly("STEP_ID_REPEATED", f"{kind} at seq {seq} repeats step_id {json.dumps(r['step_id'])} of the {what} "
                    f"started at seq {first.seq}: the first stands, this one is not read")
            return True

        if kind in ("tool.started", "model.started") and repeats_start():
            pass
        elif kind == "tool.started":
            c = call or {}
            state.effects[r["step_id"]] = Effect(
                r["step_id"], seq, _str(c.get("name")), c.get("arguments"), _str(c.get("call_id")), _str(c.get("idempotency_key")),
                _str(c.get("summary")), "started", r["ts"], retry_of=_str((_obj(r.get("meta")) or {}).get("retry_of")))
            state.in_flight += 1
            if _str(c.get("idempotency_key")) is not None:
                state.by_key[c["idempotency_key"]] = r["step_id"]
            if _str(c.get("call_id")) is not None:
                state.by_call_id[c["call_id"]] = r["step_id"]
            if _str(c.get("name")) is not None:
                state.by_intent[intent_key(c["name"], c.get("arguments"))] = r["step_id"]
        elif kind in ("tool.updated", "tool.completed", "tool.failed"):
            e = state.effects.get(ref or "")
            if e is None:
                anomaly("KIND_MISMATCH" if (ref or "") in state.models else "OUTCOME_WITHOUT_START",
                        f"{kind} at seq {seq} names {json.dumps(ref)}, which is no tool effect started before it")
            elif e.status != "started":
                anomaly("OUTCOME_REPEATED", f"{kind} at seq {seq} for effect {e.id}, which already ended at seq {e.end_seq}")
            elif kind == "tool.updated":
                key = _str((call or {}).get("idempotency_key"))
                if key is not None:
                    state.by_key[key] = e.id
                    e.idempotency_key = key
                e.summary = _str((call or {}).get("summary")) or e.summary
            else:
                e.status = "completed" if kind == "tool.completed" else "failed"
                state.in_flight -= 1
                e.ended_at, e.end_seq = r["ts"], seq
                e.duration_ms = _span(e.started_at, r["ts"])
                e.result, e.error = r.get("result"), r.get("error")
                e.resolution = resolution_of(r.get("meta"))
                if e.call_id is not None:
                    state.requested.discard(e.call_id)
        elif kind == "model.started":
            state.models[r["step_id"]] = ModelCall(r["step_id"], seq, r.get("model"), "started", r["ts"])
            state.in_flight += 1
        elif kind in ("model.completed", "model.failed"):
            m = state.models.get(ref or "")
            if m is None:
                anomaly("KIND_MISMATCH" if (ref or "") in state.effects else "OUTCOME_WITHOUT_START",
                        f"{kind} at seq {seq} names {json.dumps(ref)}, which is no model request started before it")
            elif m.status != "started":
                anomaly("OUTCOME_REPEATED", f"{kind} at seq {seq} for model request {m.id}, which already ended at seq {m.end_seq}")
            else:
                m.status = "completed" if kind == "model.completed" else "failed"
                state.in_flight -= 1
                m.ended_at, m.end_seq = r["ts"], seq
                m.duration_ms = _span(m.started_at, r["ts"])
                m.error = r.get("error")
                if kind == "model.completed":
                    state.requested.update(_requested_ids(r.get("tool_call")))
        elif kind in ("run.completed", "run.failed"):
            if state.status == "running":
                state.ended_at = r["ts"]
            state.status = "completed" if kind == "run.completed" else "failed"
    if not state.requested and state.in_flight == 0:
        state.continuation = seq


def run_state(records: Iterable[dict[str, Any]]) -> RunState:
    state = RunState()
    for r in records:
        fold_record(state, r)
    return state
