"""StepchainStepStore against pydantic-ai-harness's StepStore protocol (issue 42).

pydantic-ai-harness 0.62.0 (PyPI) publishes the protocol and its stores but ships no tests in its wheel (they live
in its repository's tests/, outside the distribution), so there is no published suite to run. These tests hold the
store to the protocol's published reference, InMemoryStepStore: the same calls, the same answers. The acceptance
test runs a real pydantic-ai agent (FunctionModel, no model calls) in a process killed mid-tool."""
import asyncio
import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

pytest.importorskip("pydantic_ai_harness")

from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart  # noqa: E402
from pydantic_ai_harness.step_persistence import (ContinuableSnapshot, InMemoryStepStore, RunRecord, StepEvent, ToolEffectRecord,  # noqa: E402
                                                  annotate_tool_effect, continue_run, fork_run, is_provider_valid)

from stepchain import verify_journal_dir  # noqa: E402
from stepchain.pydantic_ai import StepchainStepStore  # noqa: E402

HELPERS = Path(__file__).resolve().parent / "helpers"
ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "dist" / "cli" / "main.js"
T0 = datetime(2026, 11, 27, 12, 0, 0, 123456, tzinfo=UTC)


def history(text: str) -> list:
    return [ModelRequest(parts=[UserPromptPart(content=text, timestamp=T0)]), ModelResponse(parts=[TextPart(content="ok " + text)], timestamp=T0)]


async def script(store) -> list:
    """One sequence of protocol calls; every answer, in order."""
    out = []
    await store.register_run(RunRecord(run_id="orch", conversation_id="conv-1", agent_name="orchestrator", started_at=T0, metadata={"k": "v"}, registration_id="r1"))
    await store.register_run(RunRecord(run_id="sub-a", conversation_id="conv-2", parent_run_id="orch", agent_name="librarian", started_at=T0 + timedelta(seconds=1)))
    await store.register_run(RunRecord(run_id="sub_b=", parent_run_id="orch", started_at=T0 + timedelta(seconds=2)))
    out.append(await store.get_run(run_id="orch"))
    out.append(await store.get_run(run_id="nope"))
    out.append([r.run_id for r in await store.list_runs()])
    out.append([r.run_id for r in await store.list_runs(parent_run_id="orch")])
    out.append([r.run_id for r in await store.list_runs(conversation_id="conv-2")])
    out.append([r.run_id for r in await store.list_runs(parent_run_id="orch", conversation_id="conv-1")])
    for i, kind in enumerate(["run_started", "model_request_started", "model_request_completed", "tool_call_started", "tool_call_completed"]):
        ev = StepEvent(run_id="orch", kind=kind, step_index=i, timestamp=T0, tool_call_id="c1" if "tool" in kind else None,
                       tool_name="search" if "tool" in kind else None, metadata={"i": str(i)}, idempotency_key=f"{i}:{i}:{kind}:")
        await store.append_event(ev)
        await store.append_event(ev)  # a retried append is suppressed
    await store.append_event(StepEvent(run_id="orch", kind="model_request_failed", step_index=9, timestamp=T0, error="boom"))
    out.append(await store.list_events(run_id="orch"))
    out.append(await store.list_events(run_id="nope"))
    out.append(await store.latest_snapshot(run_id="orch"))
    await store.save_snapshot(ContinuableSnapshot(run_id="orch", step_index=1, messages=history("one"), timestamp=T0, idempotency_key="0:1:complete"))
    await store.save_snapshot(ContinuableSnapshot(run_id="orch", step_index=2, messages=history("two" * 30000), timestamp=T0, idempotency_key="1:2:complete"))
    await store.save_snapshot(ContinuableSnapshot(run_id="orch", step_index=1, messages=history("stale"), timestamp=T0, idempotency_key="0:1:complete"))
    await store.save_snapshot(ContinuableSnapshot(run_id="orch", step_index=3, messages=history("cut"), timestamp=T0, state="interrupted", idempotency_key="2:3:interrupted"))
    out.append(await store.latest_snapshot(run_id="orch"))
    out.append(await store.latest_snapshot(run_id="orch", include_interrupted=True))
    await store.record_tool_effect(ToolEffectRecord(tool_call_id="c1", tool_name="search", run_id="orch", status="started", started_at=T0))
    await store.record_tool_effect(ToolEffectRecord(tool_call_id="c2", tool_name="pay", run_id="orch", status="started", started_at=T0))
    await store.record_tool_effect(ToolEffectRecord(tool_call_id="c1", tool_name="search", run_id="orch", status="completed", started_at=T0, ended_at=T0))
    # What annotate_tool_effect writes from inside a tool body (the crash test calls it there).
    await store.record_tool_effect(ToolEffectRecord(tool_call_id="c2", tool_name="pay", run_id="orch", status="started", started_at=T0,
                                                    idempotency_key="pay-7", effect_summary="pays 120 EUR"))
    out.append(await store.get_tool_effect(run_id="orch", tool_call_id="c1"))
    out.append(await store.get_tool_effect(run_id="orch", tool_call_id="c2"))
    out.append(await store.get_tool_effect(run_id="orch", tool_call_id="none"))
    out.append(await store.list_unresolved_tool_effects(run_id="orch"))
    out.append(await continue_run(store, run_id="orch"))
    out.append(await fork_run(store, run_id="orch", include_interrupted=True))
    return out


def test_same_answers_as_the_reference_store(tmp_path):
    reference = asyncio.run(script(InMemoryStepStore()))
    store = StepchainStepStore(tmp_path, fsync="none")
    got = asyncio.run(script(store))
    assert len(got) == len(reference)
    for i, (a, b) in enumerate(zip(got, reference)):
        assert a == b, f"answer {i} differs"
    store.close()
    # What it wrote is an ordinary stepchain run (stepchain/v3): every journal verifies, the large snapshot is stored once
    # as a part (PARTS.md).
    for name in ("orch", "sub-a", StepchainStepStore.journal_name("sub_b=")):
        r = verify_journal_dir(str(tmp_path / name))
        assert r.ok, [p.summary() for p in r.problems]
    assert list((tmp_path / "orch" / "parts").glob("??/*")), "a large snapshot is stored as a part"
    # A second store over the same directory reads everything back from the journals alone.
    assert asyncio.run(StepchainStepStore(tmp_path).list_unresolved_tool_effects(run_id="orch")) == reference[-3]


def test_crash_mid_tool_call(tmp_path):
    """The proposal's acceptance test: a run killed mid-tool leaves a visible trail, a started effect with no outcome,
    and latest_snapshot returns the prior provider-valid snapshot, from which the run continues."""
    crashed = subprocess.run([sys.executable, str(HELPERS / "crash_agent.py"), str(tmp_path), "crash"], capture_output=True, text=True, timeout=300)
    assert crashed.returncode == 137, crashed.stderr
    store = StepchainStepStore(tmp_path, fsync="none")

    async def inspect():
        runs = await store.list_runs(conversation_id="conv-7")
        assert len(runs) == 1 and runs[0].agent_name == "payer"
        run_id = runs[0].run_id
        events = await store.list_events(run_id=run_id)
        unresolved = await store.list_unresolved_tool_effects(run_id=run_id)
        snap = await store.latest_snapshot(run_id=run_id)
        return run_id, events, unresolved, snap

    run_id, events, unresolved, snap = asyncio.run(inspect())
    kinds = [e.kind for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "tool_call_started" and events[-1].tool_name == "pay"
    assert "tool_call_completed" in kinds and "run_completed" not in kinds and "run_failed" not in kinds
    assert [(e.tool_name, e.tool_call_id, e.status, e.idempotency_key) for e in unresolved] == [("pay", "call-pay", "started", "pay-7")]
    assert snap is not None and is_provider_valid(snap.messages)
    assert "call-pay" not in json.dumps([m.model_dump(mode="json") if hasattr(m, "model_dump") else str(m) for m in snap.messages], default=str)
    path = str(tmp_path / StepchainStepStore.journal_name(run_id))
    report = verify_journal_dir(path)
    assert report.ok, [p.summary() for p in report.problems]
    from stepchain.runs import run_state
    from stepchain.journal import Journal
    state = run_state(Journal(path, read_only=True).read())
    assert [e.tool for e in state.pending()] == ["pay"], "the started effect has no outcome"
    assert state.continuation is not None and state.continuation < state.pending()[0].seq, "no false continuation point"
    if shutil.which("node") and CLI.exists():
        listed = subprocess.run(["node", str(CLI), "effect", "list", path, "--pending"], capture_output=True, text=True, timeout=120)
        assert listed.returncode == 0 and "pay" in listed.stdout
        assert subprocess.run(["node", str(CLI), "verify", path], capture_output=True, timeout=120).returncode == 0

    # The run continues from the snapshot: the payment is the caller's to check before it runs again.
    messages = asyncio.run(continue_run(store, run_id=run_id))
    assert messages == snap.messages
