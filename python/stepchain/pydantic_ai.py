"""`StepchainStepStore`: pydantic-ai-harness's `StepStore` protocol (StepPersistence's backend) on stepchain run
journals, so `StepPersistence(store=StepchainStepStore("runs/"))` gives a pydantic-ai agent a tamper-evident record
that `stepchain verify`, `log`, `effect list`, `export` and `publish` read like any other run.

Each pydantic-ai run is a stepchain/v3 run journal `<root>/<run id>`: its lineage (conversation, parent run, agent)
in the genesis, covered by every step hash; model requests as model.started/completed/failed records; the
tool-effect ledger as tool.started (the intent, durable before the tool runs), tool.updated (annotate_tool_effect)
and tool.completed/failed; events and snapshots as records whose `meta.pydantic_ai` holds the exact object the
protocol hands back. A run killed mid-tool leaves its tool.started with no outcome, so the effect is unresolved,
stepchain's continuation point stops before it, and `latest_snapshot` returns the last provider-valid snapshot.

Needs `pydantic-ai-harness` (and so pydantic-ai); the rest of the package does not.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Optional

from pydantic_ai.messages import ModelMessagesTypeAdapter
from pydantic_ai_harness.step_persistence import ContinuableSnapshot, RunRecord, StepEvent, ToolEffectRecord

from .formats.base import is_valid_id
from .journal import Journal, StoreError, create_journal_dir, make_genesis
from .journal_dir import META_FILE, is_store_id

__all__ = ["StepchainStepStore"]

_EVENT_KINDS = {"run_completed": "run.completed", "run_failed": "run.failed", "model_request_started": "model.started",
                "model_request_completed": "model.completed", "model_request_failed": "model.failed"}


def _short(tag: str, *parts: str) -> str:
    return tag + "-" + hashlib.sha256("\u0000".join(parts).encode("utf-8")).hexdigest()[:40]


def _iso(dt: Optional[datetime]) -> Optional[str]:
    return None if dt is None else dt.isoformat()


def _dt(s: Optional[str]) -> Optional[datetime]:
    return None if s is None else datetime.fromisoformat(s)


def _snapshot_key_sequence(key: str) -> Optional[int]:
    """The monotonic prefix of StepPersistence's snapshot keys (`<n>:<step>:<state>`), as the protocol's stores read it."""
    prefix, sep, _ = key.partition(":")
    if not sep:
        return None
    try:
        value = int(prefix)
    except ValueError:
        return None
    return value if value >= 0 else None


@dataclass
class _RunView:
    """What has been read of one run journal: its records folded into the protocol's views."""
    journal: Journal
    last_seq: int = -1
    run: Optional[dict[str, Any]] = None
    events: list[dict[str, Any]] = field(default_factory=list)
    event_keys: set[str] = field(default_factory=set)
    snapshots: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (seq, meta) in write order
    snapshot_keys: set[str] = field(default_factory=set)
    high_water: Optional[tuple[int, set[str]]] = None
    ledger: dict[str, dict[str, Any]] = field(default_factory=dict)
    effect_ids: dict[str, str] = field(default_factory=dict)  # tool_call_id -> step_id of its tool.started
    open_effects: set[str] = field(default_factory=set)
    open_models: list[str] = field(default_factory=list)


class StepchainStepStore:
    """A `StepStore` whose runs are stepchain run journals under `root` (created when absent)."""

    def __init__(self, root: str | os.PathLike[str], *, fsync: str = "always") -> None:
        self.root = os.fspath(root)
        self.fsync = fsync
        os.makedirs(self.root, exist_ok=True)
        self._views: dict[str, _RunView] = {}
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------------------------------ plumbing

    @staticmethod
    def journal_name(run_id: str) -> str:
        """The journal directory of a run: its id when that is a store id (FILE-STORE.md §3), else a digest of it."""
        return run_id if is_store_id(run_id) else _short("sp", run_id)

    def journal_path(self, run_id: str) -> str:
        return os.path.join(self.root, self.journal_name(run_id))

    async def _call(self, fn: Any, *args: Any) -> Any:
        async with self._lock:
            return await asyncio.to_thread(fn, *args)

    def _view(self, run_id: str, create: Optional[RunRecord] = None) -> Optional[_RunView]:
        view = self._views.get(run_id)
        if view is None:
            path = self.journal_path(run_id)
            if not os.path.exists(os.path.join(path, META_FILE)):
                if create is None:
                    return None
                self._create(create)
            view = _RunView(Journal(path, fsync=self.fsync))
            self._views[run_id] = view
        self._refresh(view)
        return view

    def _create(self, record: RunRecord) -> None:
        ident: dict[str, Any] = {}
        if record.agent_name:
            ident["agent"] = record.agent_name[:256]
        if record.conversation_id is not None and is_valid_id(record.conversation_id):
            ident["conversation_id"] = record.conversation_id
        if record.parent_run_id is not None and is_valid_id(record.parent_run_id):
            ident["parent_run_id"] = record.parent_run_id
        jid = record.run_id if is_valid_id(record.run_id) else _short("sp", record.run_id)
        path = self.journal_path(record.run_id)
        try:
            create_journal_dir(path, make_genesis(journal_id=jid, run=ident), fsync=self.fsync != "none")
        except StoreError as e:
            if e.code != "JOURNAL_EXISTS":
                raise
            return
        j = Journal(path, fsync=self.fsync)
        run_meta = {"run": {**asdict(record), "started_at": _iso(record.started_at)}}
        j.append({"kind": "run.started", "step_id": "run-started", "input": None, "meta": {"pydantic_ai": run_meta}})
        j.close()

    def _refresh(self, view: _RunView) -> None:
        for rec in view.journal.read(view.last_seq + 1, blobs=False):
            self._fold(view, rec)
            view.last_seq = rec["seq"]

    def _fold(self, view: _RunView, rec: dict[str, Any]) -> None:
        pa = (rec.get("meta") or {}).get("pydantic_ai") or {}
        kind = rec.get("kind")
        if "run" in pa and view.run is None:
            view.run = pa["run"]
        if "event" in pa:
            view.events.append(pa["event"])
            if pa["event"].get("idempotency_key") is not None:
                view.event_keys.add(pa["event"]["idempotency_key"])
        if "snapshot" in pa:
            snap = pa["snapshot"]
            view.snapshots.append((rec["seq"], snap))
            key = snap.get("idempotency_key")
            if key is not None:
                view.snapshot_keys.add(key)
                n = _snapshot_key_sequence(key)
                if n is not None:
                    if view.high_water is None or n > view.high_water[0]:
                        view.high_water = (n, {key})
                    elif n == view.high_water[0]:
                        view.high_water[1].add(key)
        if "effect" in pa:
            eff = pa["effect"]
            view.ledger[eff["tool_call_id"]] = eff
        if kind == "tool.started" and "effect" in pa:
            view.effect_ids[pa["effect"]["tool_call_id"]] = rec["step_id"]
            view.open_effects.add(rec["step_id"])
        elif kind in ("tool.completed", "tool.failed"):
            view.open_effects.discard(rec.get("ref"))
        elif kind == "model.started":
            view.open_models.append(rec["step_id"])
        elif kind in ("model.completed", "model.failed") and rec.get("ref") in view.open_models:
            view.open_models.remove(rec["ref"])

    def _append(self, view: _RunView, step: dict[str, Any]) -> None:
        try:
            view.journal.append(step)
        except StoreError as e:
            if e.code != "STEP_ID_CONFLICT":  # a retried boundary under the same key: the first stands
                raise
        self._refresh(view)

    # ------------------------------------------------------------------------------------------ runs

    async def register_run(self, record: RunRecord) -> None:
        await self._call(self._view, record.run_id, record)

    def _run_record(self, meta: dict[str, Any]) -> RunRecord:
        return RunRecord(**{**meta, "started_at": _dt(meta["started_at"])})

    async def get_run(self, *, run_id: str) -> Optional[RunRecord]:
        def get() -> Optional[RunRecord]:
            view = self._view(run_id)
            return None if view is None or view.run is None else self._run_record(view.run)
        return await self._call(get)

    async def list_runs(self, *, parent_run_id: Optional[str] = None, conversation_id: Optional[str] = None) -> list[RunRecord]:
        def scan() -> list[RunRecord]:
            out = []
            for name in sorted(os.listdir(self.root)):
                if name.startswith(".") or not os.path.exists(os.path.join(self.root, name, META_FILE)):
                    continue
                j = Journal(os.path.join(self.root, name), read_only=True)
                first = next(iter(j.read(0, 0)), None)
                meta = ((first or {}).get("meta") or {}).get("pydantic_ai", {}).get("run")
                if meta is None:
                    continue
                rec = self._run_record(meta)
                if (parent_run_id is None or rec.parent_run_id == parent_run_id) and (conversation_id is None or rec.conversation_id == conversation_id):
                    out.append(rec)
            return sorted(out, key=lambda r: r.started_at)
        return await self._call(scan)

    # ------------------------------------------------------------------------------------------ events

    async def append_event(self, event: StepEvent) -> None:
        def append() -> None:
            view = self._view(event.run_id, RunRecord(run_id=event.run_id, conversation_id=event.conversation_id,
                                                       parent_run_id=event.parent_run_id, agent_name=event.agent_name))
            assert view is not None
            if event.idempotency_key is not None and event.idempotency_key in view.event_keys:
                return
            ev = {**asdict(event), "timestamp": _iso(event.timestamp)}
            kind = _EVENT_KINDS.get(event.kind, "step")
            step: dict[str, Any] = {"kind": kind, "meta": {"pydantic_ai": {"event": ev}}}
            if event.idempotency_key is not None:
                step["step_id"] = _short("ev", event.run_id, event.idempotency_key)
            if kind in ("model.completed", "model.failed"):
                if not view.open_models:
                    kind = step["kind"] = "step"  # an outcome with no start stays on the trail as a plain step
                else:
                    step["ref"] = view.open_models[-1]
            if kind.endswith(".failed"):
                step["error"] = {"message": event.error or "", "name": "Error"}
            if event.tool_name is not None or event.tool_call_id is not None:
                step["tool_call"] = {"arguments": None, "call_id": event.tool_call_id, "name": event.tool_name}
            self._append(view, step)
        await self._call(append)

    async def list_events(self, *, run_id: str) -> list[StepEvent]:
        def events() -> list[StepEvent]:
            view = self._view(run_id)
            return [] if view is None else [StepEvent(**{**e, "timestamp": _dt(e["timestamp"])}) for e in view.events]
        return await self._call(events)

    # ------------------------------------------------------------------------------------------ snapshots

    async def save_snapshot(self, snapshot: ContinuableSnapshot) -> None:
        def save() -> None:
            view = self._view(snapshot.run_id, RunRecord(run_id=snapshot.run_id, conversation_id=snapshot.conversation_id,
                                                          parent_run_id=snapshot.parent_run_id, agent_name=snapshot.agent_name))
            assert view is not None
            key = snapshot.idempotency_key
            if key is not None:
                n = _snapshot_key_sequence(key)
                hw = view.high_water
                if n is not None and hw is not None and (n < hw[0] or (n == hw[0] and key in hw[1])):
                    return
                if key in view.snapshot_keys:
                    return
            meta = {"agent_name": snapshot.agent_name, "conversation_id": snapshot.conversation_id, "idempotency_key": key,
                    "parent_run_id": snapshot.parent_run_id, "run_id": snapshot.run_id, "state": snapshot.state,
                    "step_index": snapshot.step_index, "timestamp": _iso(snapshot.timestamp)}
            messages = ModelMessagesTypeAdapter.dump_python(snapshot.messages, mode="json")
            step: dict[str, Any] = {"kind": "step", "result": messages, "meta": {"pydantic_ai": {"snapshot": meta}}}
            if key is not None:
                step["step_id"] = _short("snap", snapshot.run_id, key)
            self._append(view, step)
        await self._call(save)

    async def latest_snapshot(self, *, run_id: str, include_interrupted: bool = False) -> Optional[ContinuableSnapshot]:
        def latest() -> Optional[ContinuableSnapshot]:
            view = self._view(run_id)
            if view is None:
                return None
            for seq, meta in reversed(view.snapshots):
                if include_interrupted or meta["state"] == "complete":
                    rec = next(iter(view.journal.read(seq, seq, blobs=True)))
                    messages = ModelMessagesTypeAdapter.validate_python(rec["result"])
                    return ContinuableSnapshot(**{k: v for k, v in meta.items() if k != "timestamp"}, messages=messages,
                                               timestamp=_dt(meta["timestamp"]))
            return None
        return await self._call(latest)

    # ------------------------------------------------------------------------------------------ the tool-effect ledger

    async def record_tool_effect(self, record: ToolEffectRecord) -> None:
        def put() -> None:
            view = self._view(record.run_id, RunRecord(run_id=record.run_id))
            assert view is not None
            eff = {**asdict(record), "started_at": _iso(record.started_at), "ended_at": _iso(record.ended_at)}
            call: dict[str, Any] = {"arguments": None, "call_id": record.tool_call_id, "name": record.tool_name}
            if record.idempotency_key is not None:
                call["idempotency_key"] = record.idempotency_key
            if record.effect_summary is not None:
                call["summary"] = record.effect_summary
            started = view.effect_ids.get(record.tool_call_id)
            meta = {"pydantic_ai": {"effect": eff}}
            if record.status == "started":
                if started is None:
                    sid = record.tool_call_id if is_valid_id(record.tool_call_id) and not record.tool_call_id.startswith(("ev-", "snap-")) else _short("tool", record.tool_call_id)
                    step = {"kind": "tool.started", "step_id": sid, "tool_call": call, "meta": meta}
                elif started in view.open_effects:
                    step = {"kind": "tool.updated", "ref": started, "tool_call": call, "meta": meta}  # annotate_tool_effect
                else:
                    step = {"kind": "step", "tool_call": call, "meta": meta}
            elif started is not None and started in view.open_effects:
                step = {"kind": f"tool.{record.status}", "ref": started, "tool_call": call, "meta": meta}
                if record.status == "failed":
                    step["error"] = {"message": record.effect_summary or "", "name": "ToolFailed"}
            else:
                step = {"kind": "step", "tool_call": call, "meta": meta}
            self._append(view, step)
        await self._call(put)

    async def get_tool_effect(self, *, run_id: str, tool_call_id: str) -> Optional[ToolEffectRecord]:
        def get() -> Optional[ToolEffectRecord]:
            view = self._view(run_id)
            eff = None if view is None else view.ledger.get(tool_call_id)
            return None if eff is None else ToolEffectRecord(**{**eff, "started_at": _dt(eff["started_at"]), "ended_at": _dt(eff["ended_at"])})
        return await self._call(get)

    async def list_unresolved_tool_effects(self, *, run_id: str) -> list[ToolEffectRecord]:
        def unresolved() -> list[ToolEffectRecord]:
            view = self._view(run_id)
            if view is None:
                return []
            return [ToolEffectRecord(**{**e, "started_at": _dt(e["started_at"]), "ended_at": _dt(e["ended_at"])})
                    for e in view.ledger.values() if e["status"] == "started"]
        return await self._call(unresolved)

    def close(self) -> None:
        for v in self._views.values():
            v.journal.close()
        self._views.clear()
