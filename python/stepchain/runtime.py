"""The agent runtime (spec/RUNS.md): a run journal (stepchain/v3 by default, or v2) with model requests and tool effects recorded
at their boundaries — the intent durably before the tool runs, its outcome once after — so a run killed mid-tool
leaves a started effect with no outcome and no false continuation point. The same records, in the same shapes,
as the TypeScript `Run`; synchronous, on top of `Journal`."""
from __future__ import annotations

import os
import random
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .formats import FORMAT_V2
from .formats.base import is_valid_id
from .journal import AppendResult, Journal, StoreError, create_journal_dir, make_genesis
from .runs import Effect, ModelCall, RunState, fold_record, intent_key

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_RESOLUTIONS = ("retry", "done", "abandon", "compensated")


class RuntimeError_(Exception):
    """A coded refusal of the runtime (EFFECT_PENDING, RUN_ENDED, EFFECT_UNKNOWN, …)."""

    def __init__(self, code: str, message: str, *, seq: Optional[int] = None, pending_effect: Optional[str] = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.seq = seq
        self.pending_effect = pending_effect


def error_value(error: Any) -> Any:
    """An exception (or anything raised) as the `error` member of a failed record: an object with name and message."""
    if isinstance(error, BaseException):
        return {"message": str(error), "name": type(error).__name__}
    if isinstance(error, dict):
        return error
    return {"message": error if isinstance(error, str) else repr(error), "name": "Error"}


@dataclass
class ModelCallHandle:
    id: str
    seq: int
    run: "Run"

    def complete(self, result: Any = None, *, tool_calls: Optional[list[Any]] = None, usage: Any = None,
                 finish_reason: Optional[str] = None, meta: Optional[dict[str, Any]] = None) -> AppendResult:
        return self.run.end_model(self.id, result=result, tool_calls=tool_calls, usage=usage, finish_reason=finish_reason, meta=meta)

    def fail(self, error: Any) -> AppendResult:
        return self.run.end_model(self.id, error=error)


@dataclass
class EffectHandle:
    id: str
    seq: int
    run: "Run"
    status: str = "started"
    result: Any = None

    def complete(self, result: Any = None) -> AppendResult:
        return self.run.end_tool(self.id, result=result)

    def fail(self, error: Any) -> AppendResult:
        return self.run.end_tool(self.id, error=error)

    def annotate(self, *, idempotency_key: Optional[str] = None, summary: Optional[str] = None) -> AppendResult:
        return self.run.annotate(self.id, idempotency_key=idempotency_key, summary=summary)


class Run:
    """One run journal open for recording. Records reach the journal in call order; another process's records
    (TypeScript or Python) are read in before each decision that depends on them."""

    def __init__(self, journal: Journal) -> None:
        if journal.genesis.get("format") not in (FORMAT_V2, "stepchain/v3"):
            raise RuntimeError_("NOT_A_RUN", f"journal {journal.id!r} is a {journal.genesis.get('format')} journal, not a run (stepchain/v2 or /v3)")
        self.journal = journal
        self.state = RunState()
        self.begun: dict[str, dict[str, Any]] = {}
        self.mine: set[str] = set()

    @property
    def run_id(self) -> str:
        return self.journal.genesis["journal_id"]

    @property
    def identity(self) -> dict[str, Any]:
        return self.journal.genesis["run"]

    # -------------------------------------------------------------------------------- reading and appending

    def _fold(self, r: dict[str, Any]) -> None:
        fold_record(self.state, r)
        if r.get("kind") in ("model.started", "tool.started"):
            self.begun[r["step_id"]] = {k: r.get(k) for k in ("input", "model", "prompt", "tool_call")}

    def refresh(self) -> RunState:
        """Reads the records appended since the last read (by any process) into the state."""
        # stepchain/v3: part references read as the values they stand for, so effects compare by their real arguments
        for r in self.journal.read(self.state.last_seq + 1, blobs=self.journal.profile.version == 3):
            if r["seq"] == self.state.last_seq + 1:
                self._fold(r)
        return self.state

    def _checked(self, decide: Callable[[], Any]) -> Any:
        """Appends what `decide` builds from the state, after the last seq read; on HEAD_MOVED (another writer
        appended) reads what it lacks and decides again."""
        current = False
        tries = 0
        while True:
            tries += 1
            try:
                step = decide()
            except RuntimeError_:
                if current:
                    raise
                self.refresh()
                current = True
                continue
            if isinstance(step, Effect):
                return step
            try:
                at = self.journal.append(step, after=self.state.last_seq)
            except StoreError as e:
                if e.code != "HEAD_MOVED":
                    raise
                if tries >= 4:
                    time.sleep(min(0.064, 0.001 * 2 ** (tries - 4)) * (0.5 + random.random()))
                self.refresh()
                current = True
                continue
            if at.seq == self.state.last_seq + 1:
                self._fold({**step, "seq": at.seq, "step_id": at.step_id, "ts": at.ts, "v": 2, "kind": step.get("kind", "step"),
                            "ref": step.get("ref"), "error": step.get("error")})
            else:
                self.refresh()
            return at

    def _refuse_ended(self, what: str) -> None:
        if self.state.status != "running":
            raise RuntimeError_("RUN_ENDED", f"run {self.run_id} has {self.state.status} (its run.{self.state.status} record); nothing more is appended to it (asked: {what})")

    def record(self, step: dict[str, Any]) -> AppendResult:
        def decide() -> dict[str, Any]:
            self._refuse_ended(step.get("kind", "step"))
            return step
        return self._checked(decide)

    # -------------------------------------------------------------------------------- model requests

    def begin_model(self, *, model: Any = None, prompt: Any = None, input: Any = None, id: Optional[str] = None,
                    meta: Optional[dict[str, Any]] = None) -> ModelCallHandle:
        step: dict[str, Any] = {"kind": "model.started", "input": input, "model": model, "prompt": prompt}
        if id is not None:
            step["step_id"] = id
        if meta is not None:
            step["meta"] = meta
        at = self.record(step)
        return ModelCallHandle(at.step_id, at.seq, self)

    def end_model(self, id: str, *, result: Any = None, tool_calls: Optional[list[Any]] = None, usage: Any = None,
                  finish_reason: Optional[str] = None, meta: Optional[dict[str, Any]] = None, error: Any = None) -> AppendResult:
        m = dict(meta or {})
        if usage is not None:
            m["usage"] = usage
        if finish_reason is not None:
            m["finish_reason"] = finish_reason

        def build(begun: dict[str, Any]) -> dict[str, Any]:
            step = {"kind": "model.completed" if error is None else "model.failed", "ref": id, **begun, "tool_call": tool_calls, "result": result}
            if error is not None:
                step["error"] = error_value(error)
            if m:
                step["meta"] = m
            return step
        return self._end(id, "model", build)

    # -------------------------------------------------------------------------------- tool effects

    def begin_tool(self, name: str, args: Any = None, *, call_id: Optional[str] = None, idempotency_key: Optional[str] = None,
                   summary: Optional[str] = None, id: Optional[str] = None, retry_of: Optional[str] = None,
                   meta: Optional[dict[str, Any]] = None) -> EffectHandle:
        """Records a tool's intent before it runs (tool.started) — unless that would repeat an effect of unknown
        outcome (EFFECT_PENDING), or one that completed under the same idempotency key (returned instead)."""
        if not isinstance(name, str) or not name:
            raise RuntimeError_("OPTION_INVALID", "begin_tool needs the tool's name")
        call: dict[str, Any] = {"name": name, "arguments": args}
        if call_id is not None:
            call["call_id"] = call_id
        if idempotency_key is not None:
            call["idempotency_key"] = idempotency_key
        if summary is not None:
            call["summary"] = summary
        intent = intent_key(name, args)

        def decide() -> Any:
            self._refuse_ended("tool.started")
            st = self.state
            same_id = st.effects.get(id) if id is not None else None
            by_key = st.effects.get(st.by_key.get(idempotency_key, "")) if idempotency_key is not None else None
            by_call = st.effects.get(st.by_call_id.get(call_id, "")) if call_id is not None else None
            by_intent = st.effects.get(st.by_intent.get(intent, ""))
            if by_key is not None and by_key.status == "completed":
                return by_key
            pending = (by_key if by_key is not None and by_key.status == "started" else
                       by_call if by_call is not None and by_call.status == "started" else
                       by_intent if by_intent is not None and by_intent.status == "started" and by_intent.id not in self.mine else None)
            if pending is not None:
                raise RuntimeError_("EFFECT_PENDING", f"run {self.run_id}: {name!r} would repeat effect {pending.id} ({pending.tool!r} at seq {pending.seq}), whose outcome is unknown",
                                    seq=pending.seq, pending_effect=pending.id)
            if same_id is not None:
                if same_id.status == "started":
                    raise RuntimeError_("EFFECT_PENDING", f"run {self.run_id}: effect {same_id.id} is pending", seq=same_id.seq, pending_effect=same_id.id)
                if same_id.status == "completed" and same_id.tool == name and intent_key(name, same_id.args) == intent:
                    return same_id
                raise StoreError("STEP_ID_CONFLICT", f"run {self.run_id}: id {same_id.id!r} is effect {same_id.tool!r} at seq {same_id.seq}: a new effect needs a new id")
            step: dict[str, Any] = {"kind": "tool.started", "tool_call": call}
            if id is not None:
                step["step_id"] = id
            retried = retry_of
            if retried is None:
                for e in (by_key, by_call, by_intent):
                    if e is not None and e.resolution is not None and e.resolution["decision"] == "retry" and not any(x.retry_of == e.id for x in st.effects.values()):
                        retried = e.id
                        break
            m = dict(meta or {})
            if retried is not None:
                m["retry_of"] = retried
            if m:
                step["meta"] = m
            return step

        at = self._checked(decide)
        if isinstance(at, Effect):
            return EffectHandle(at.id, at.seq, self, "completed", at.result)
        self.mine.add(at.step_id)
        return EffectHandle(at.step_id, at.seq, self)

    def effect(self, id: str) -> EffectHandle:
        e = self.state.effects.get(id)
        return EffectHandle(id, e.seq if e else -1, self)

    def end_tool(self, id: str, *, result: Any = None, error: Any = None) -> AppendResult:
        failed = error is not None

        def build(begun: dict[str, Any]) -> dict[str, Any]:
            step = {"kind": "tool.failed" if failed else "tool.completed", "ref": id, "tool_call": begun.get("tool_call"), "result": None if failed else result}
            if failed:
                step["error"] = error_value(error)
            return step
        try:
            return self._end(id, "tool", build)
        finally:
            self.mine.discard(id)

    def annotate(self, id: str, *, idempotency_key: Optional[str] = None, summary: Optional[str] = None) -> AppendResult:
        def decide() -> dict[str, Any]:
            e = self._pending(id, "tool")
            call: dict[str, Any] = {"name": e.tool or ""}
            if idempotency_key is not None:
                call["idempotency_key"] = idempotency_key
            if summary is not None:
                call["summary"] = summary
            return {"kind": "tool.updated", "ref": id, "tool_call": call}
        return self._checked(decide)

    def resolve_effect(self, id: str, decision: str, *, reason: str, by: str = "caller", result: Any = None,
                       compensation: Optional[str] = None) -> AppendResult:
        """Records the decision that resolves a pending effect (RUNS.md §5): retry, done (with result), abandon or compensated."""
        if decision not in _RESOLUTIONS:
            raise RuntimeError_("OPTION_INVALID", "resolve_effect needs one decision: retry, done, abandon or compensated")
        if not isinstance(reason, str) or not reason.strip():
            raise RuntimeError_("OPTION_INVALID", "resolve_effect needs a reason: why this decision (what was checked)")
        resolution: dict[str, Any] = {"by": by, "decision": decision, "reason": reason}
        if decision == "compensated" and compensation is not None:
            resolution["compensation"] = compensation

        def decide() -> dict[str, Any]:
            e = self.state.effects.get(id)
            if e is not None and e.status != "started":
                raise RuntimeError_("EFFECT_NOT_PENDING", f"effect {id!r} of run {self.run_id} is not pending: it {e.status} at seq {e.end_seq}", seq=e.end_seq)
            self._pending(id, "tool")
            call = self.begun.get(id, {}).get("tool_call")
            if decision == "done":
                return {"kind": "tool.completed", "ref": id, "tool_call": call, "result": result, "meta": {"resolution": resolution}}
            return {"kind": "tool.failed", "ref": id, "tool_call": call, "meta": {"resolution": resolution},
                    "error": {"message": f"outcome unknown; resolved: {decision} (by {by}): {reason}", "name": "EffectResolved"}}
        return self._checked(decide)

    def _pending(self, id: str, what: str) -> Any:
        found = (self.state.effects if what == "tool" else self.state.models).get(id)
        noun = "tool effect" if what == "tool" else "model request"
        if found is None:
            raise RuntimeError_("EFFECT_UNKNOWN", f"run {self.run_id} has no {noun} {id!r}")
        if found.status != "started":
            raise RuntimeError_("EFFECT_ALREADY_ENDED", f"{noun} {id!r} of run {self.run_id} already has its outcome ({found.status} at seq {found.end_seq})", seq=found.end_seq)
        return found

    def _end(self, id: str, what: str, build: Callable[[dict[str, Any]], dict[str, Any]]) -> AppendResult:
        def decide() -> dict[str, Any]:
            self._refuse_ended(f"the outcome of {id}")
            self._pending(id, what)
            return build(self.begun.get(id, {"input": None, "model": None, "prompt": None, "tool_call": None}))
        return self._checked(decide)

    # -------------------------------------------------------------------------------- the run

    def pending_effects(self) -> list[Effect]:
        """Every tool effect with no outcome, in seq order: the "outcome unknown after a crash" list."""
        return self.refresh().pending()

    def effects(self) -> list[Effect]:
        return list(self.refresh().effects.values())

    def model_calls(self) -> list[ModelCall]:
        return list(self.refresh().models.values())

    def continuation_point(self) -> dict[str, Any]:
        """The last seq where every started model call and tool effect has its outcome, and its records 0..seq."""
        st = self.refresh()
        seq = st.continuation
        return {"seq": seq, "steps": [] if seq is None else list(self.journal.read(0, seq))}

    def status(self) -> str:
        return self.refresh().status

    def complete(self, result: Any = None, *, leave_pending: bool = False) -> AppendResult:
        def decide() -> dict[str, Any]:
            self._refuse_ended("run.completed")
            pending = self.state.pending()
            step: dict[str, Any] = {"kind": "run.completed", "result": result}
            if pending:
                if not leave_pending:
                    raise RuntimeError_("EFFECT_PENDING", f"run {self.run_id} has {len(pending)} effect(s) of unknown outcome: "
                                        + ", ".join(f"{e.id} ({e.tool!r}, seq {e.seq})" for e in pending), seq=pending[0].seq)
                step["meta"] = {"unresolved": [e.id for e in pending]}
            return step
        return self._checked(decide)

    def fail(self, error: Any) -> AppendResult:
        failure = error_value(error)

        def decide() -> dict[str, Any]:
            self._refuse_ended("run.failed")
            return {"kind": "run.failed", "error": failure}
        return self._checked(decide)

    def close(self) -> None:
        self.journal.close()


def start_run(root: str, *, run_id: Optional[str] = None, conversation_id: Optional[str] = None, parent_run_id: Optional[str] = None,
              agent: Optional[str] = None, labels: Optional[dict[str, str]] = None, input: Any = None, **options: Any) -> Run:
    """Creates a run journal `<root>/<run id>` with its identity in the genesis, and records run.started."""
    run_id = run_id or str(uuid.uuid4())
    if not isinstance(run_id, str) or not RUN_ID.match(run_id) or ".." in run_id:
        raise RuntimeError_("OPTION_INVALID", f"run id {run_id!r} must be 1–128 characters from [A-Za-z0-9._-] starting with a letter or digit, without '..'")
    for n, v in (("conversation_id", conversation_id), ("parent_run_id", parent_run_id)):
        if v is not None and not is_valid_id(v):
            raise RuntimeError_("OPTION_INVALID", f"{n} {v!r} must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit")
    ident: dict[str, Any] = {}
    if agent is not None:
        ident["agent"] = agent
    if conversation_id is not None:
        ident["conversation_id"] = conversation_id
    if labels is not None:
        ident["labels"] = dict(labels)
    if parent_run_id is not None:
        ident["parent_run_id"] = parent_run_id
    path = os.path.join(root, run_id)
    try:
        genesis = make_genesis(journal_id=run_id, run=ident, fmt=options.pop("format", None))  # "stepchain/v3": FORMAT.md §14
    except StoreError as e:
        raise RuntimeError_("OPTION_INVALID", str(e)) from None
    try:
        create_journal_dir(path, genesis, fsync=options.get("fsync", "always") != "none")
    except StoreError as e:
        if e.code == "JOURNAL_EXISTS":
            raise RuntimeError_("RUN_EXISTS", f"run {run_id!r} already exists in this store") from None
        raise
    run = Run(Journal(path, **options))
    run.record({"kind": "run.started", "input": input})
    return run


def resume_run(root: str, run_id: str, *, verify: bool = True, **options: Any) -> Run:
    """Opens an existing run to continue it, once it verifies (a tampered run is never resumed: RUN_INVALID)."""
    path = os.path.join(root, run_id)
    try:
        journal = Journal(path, **options)
    except StoreError as e:
        if e.code == "JOURNAL_NOT_FOUND":
            raise RuntimeError_("RUN_NOT_FOUND", f"no run {run_id!r} in this store") from None
        raise
    if verify:
        report = journal.verify()
        if not report.ok:
            journal.close()
            first = report.problems[0] if report.problems else None
            raise RuntimeError_("RUN_INVALID", f"run {run_id!r} does not verify ({len(report.problems)} problems, first: {first.code if first else '?'}): not resumed")
    run = Run(journal)
    run.refresh()
    return run
