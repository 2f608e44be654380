/**
 * `stepchain/openai-agents` end to end against the real `@openai/agents` 0.20 package and its own fake
 * model: a handoff, a guardrail, a parallel pair of tool calls, a tool error, a large binary tool result,
 * an agent used as a tool and a streamed run are recorded; the handoff target and the agent used as a tool
 * get child runs; every journal verifies, a receipt exports and verifies, a second identical workflow diffs
 * as `same` run for run, and the requests the SDK built are exactly those it builds without stepchain.
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { exportReceipt, startRun, verifyReceipt, type Run, type StepRecord } from '../../src/index.js';
import { toJournalValue } from '../../src/runtime.js';
import { diff } from '../../src/replay.js';
import { adapterStores } from './stores.js';
import { agentsRecorder, type AgentsRecorder } from '../../src/adapters/openai-agents/index.js';
import { PART_MARKER } from '../../src/record/v3/commit.js';
import { tempDir } from '../helpers/tmp.js';
import { withRefsAsOffsets } from './refs.js';
import { BIG, runWorkflow, type Workflow } from './openai-agents-fixture.js';
import { all } from '../helpers/outcomes.js';

/** The same suite on the file store and on the SQLite store (one database file). */
const root = tempDir('stepchain-agents-');
const STORES = adapterStores(root);

describe.each(STORES)('on the %s', (_name, makeStore) => {
  const store = makeStore();

  const records = (run: Run): Promise<StepRecord[]> => all(run.journal.read());
  const kindOf = (r: StepRecord): string => String((r as unknown as { kind?: unknown }).kind);
  const toolOf = (r: StepRecord): string | undefined => (r.tool_call as { name?: string } | null)?.name;

  /** What the fake models were asked, without the volatile members (abort signal, the SDK's tracing internals). */
  function requests(w: Workflow): unknown[] {
    return w.models.flatMap((m) =>
      m.calls.map((c) => {
        const { signal: _s, tracing: _t, _internal: _i, ...rest } = c.request as unknown as Record<string, unknown>;
        return rest;
      }),
    );
  }

  async function recorded(runId: string): Promise<{ run: Run; recorder: AgentsRecorder; workflow: Workflow }> {
    const run = await startRun(store, { runId, agent: 'triage', conversationId: 'conv-1', labels: { env: 'test' } });
    const recorder = agentsRecorder(run, { store });
    const workflow = await runWorkflow(recorder);
    await run.complete(toJournalValue(workflow.finalOutput)); // the test's workflow holds it untyped
    return { run, recorder, workflow };
  }

  describe('a recorded Agents SDK workflow', async () => {
    const first = await recorded('agents-run-a');
    const second = await recorded('agents-run-b');
    const rootSteps = await records(first.run);
    const [specialist, researcher] = first.recorder.childRuns();

    test('the SDK ran the whole workflow', () => {
      expect(first.workflow.finalOutput).toBe('Paris 21C, Oslo 5C; Paris is in France.');
      expect(first.workflow.lastAgent).toBe('specialist');
      expect(first.workflow.streamedOutput).toBe('All done.');
    });

    test('the handoff target and the agent used as a tool are child runs, linked by parent run id', () => {
      expect(first.recorder.childRuns()).toHaveLength(2);
      expect(specialist!.identity).toEqual({
        agent: 'specialist',
        conversation_id: 'conv-1',
        labels: { env: 'test' },
        parent_run_id: first.run.runId,
      });
      expect(researcher!.identity).toEqual({
        agent: 'researcher',
        conversation_id: 'conv-1',
        labels: { env: 'test' },
        parent_run_id: specialist!.runId,
      });
    });

    test("a child run is completed when its agent finishes; the root run is the caller's to end", async () => {
      expect(await specialist!.status()).toBe('completed');
      expect(await researcher!.status()).toBe('completed');
      expect(await first.run.status()).toBe('completed');
    });

    test('the root run records the triage model call, the guardrail result, the handoff and the streamed run', () => {
      expect(rootSteps.filter((r) => kindOf(r) === 'model.completed')).toHaveLength(2);
      const guardrail = rootSteps.find((r) => kindOf(r) === 'tool.completed' && toolOf(r) === 'guardrail');
      expect(guardrail?.tool_call).toMatchObject({ name: 'guardrail', arguments: { name: 'no_secrets' } });
      expect(guardrail?.result).toEqual({ triggered: false });
      const handoff = rootSteps.find((r) => kindOf(r) === 'tool.completed' && toolOf(r) === 'handoff');
      expect(handoff?.tool_call).toMatchObject({ arguments: { from_agent: 'triage', to_agent: 'specialist' } });
      const triage = rootSteps.find((r) => kindOf(r) === 'model.completed')!;
      expect(triage.model).toEqual({ name: 'scripted' });
      expect(triage.prompt).toEqual({
        systemInstructions: 'route',
        input: [{ type: 'message', role: 'user', content: 'What is the weather in Paris and Oslo?' }],
      });
      expect((triage.result as { output: { name: string }[] }).output[0]).toMatchObject({
        type: 'function_call',
        name: 'transfer_to_specialist',
      });
      // The handoff is not an awaited tool call: the SDK, not a recorded tool, answers it.
      expect(triage.tool_call).toEqual([]);
      const streamedStep = rootSteps.filter((r) => kindOf(r) === 'model.completed')[1]!;
      expect(streamedStep.prompt).toMatchObject({ systemInstructions: 'summarize' });
      expect(JSON.stringify(streamedStep.result)).toContain('All done.');
    });

    test('the specialist run records its three model calls and every tool call with its callId and outcome', async () => {
      const steps = await records(specialist!);
      expect(steps.filter((r) => kindOf(r) === 'model.completed')).toHaveLength(3);
      const effects = await specialist!.effects();
      expect(effects.map((e) => [e.tool, e.callId, e.status]).sort()).toEqual([
        ['ask_researcher', 'r1', 'completed'],
        ['explode', 'x1', 'failed'],
        ['snapshot', 's1', 'completed'],
        ['weather', 'w1', 'completed'],
        ['weather', 'w2', 'completed'],
      ]);
      // The parallel pair: both intents are durable before either outcome.
      const pair = steps.filter((r) => toolOf(r) === 'weather').map(kindOf);
      expect(pair).toEqual(['tool.started', 'tool.started', 'tool.completed', 'tool.completed']);
      const failed = steps.find((r) => kindOf(r) === 'tool.failed') as unknown as { error: unknown };
      expect(failed.error).toMatchObject({ name: 'Error', message: 'boom' });
      const firstModel = steps.find((r) => kindOf(r) === 'model.completed')!;
      expect(firstModel.tool_call).toEqual([
        { id: 'w1', name: 'weather', arguments: { city: 'Paris' } },
        { id: 'w2', name: 'weather', arguments: { city: 'Oslo' } },
      ]);
      expect(await specialist!.pendingEffects()).toEqual([]);
    });

    test('the large binary tool result is a bytes value stored once as a part', async () => {
      const steps = await records(specialist!);
      const snap = steps.find((r) => kindOf(r) === 'tool.completed' && toolOf(r) === 'snapshot')!;
      const value = (snap.result as { bytes: { type: string; size: number; base64: string } }).bytes;
      expect(value).toMatchObject({ type: 'bytes', size: BIG.length });
      expect(Buffer.from(value.base64, 'base64').equals(Buffer.from(BIG))).toBe(true);
      let line = '';
      for await (const l of specialist!.journal.lines({ from: snap.seq, to: snap.seq })) line = l.text;
      expect(line).toContain(PART_MARKER);
    });

    test('the researcher run records its model call', async () => {
      const steps = await records(researcher!);
      const call = steps.find((r) => kindOf(r) === 'model.completed')!;
      expect(call.prompt).toMatchObject({ systemInstructions: 'research' });
      expect(JSON.stringify(call.result)).toContain('Paris is in France.');
    });

    test('every journal verifies; a receipt of each exports and verifies', async () => {
      for (const run of [first.run, ...first.recorder.childRuns()]) {
        expect((await run.journal.verify()).ok).toBe(true);
        const out = join(root, `${run.runId}.tar`);
        await exportReceipt(run.journal, { out });
        const report = await verifyReceipt(await readFile(out));
        expect(report.ok, JSON.stringify(report.problems)).toBe(true);
      }
    });

    test('a second identical workflow diffs as same, run for run', async () => {
      const a = [first.run, ...first.recorder.childRuns()];
      const b = [second.run, ...second.recorder.childRuns()];
      expect(b).toHaveLength(a.length);
      for (let i = 0; i < a.length; i++) {
        // `ref` is the started record's random step_id: compared as the offset it points back (refs.ts).
        const report = await diff(await withRefsAsOffsets(a[i]!.journal), await withRefsAsOffsets(b[i]!.journal));
        expect(report.divergences, a[i]!.runId).toEqual([]);
        expect(report.same).toBe(true);
      }
    });

    test('the requests the SDK built are exactly those it builds without stepchain: no stepchain field, no durable id', async () => {
      const bare = await runWorkflow(undefined);
      expect(isDeepStrictEqual(requests(first.workflow), requests(bare))).toBe(true);
      const sent = JSON.stringify(requests(first.workflow));
      expect(sent).not.toMatch(/stepchain/i);
      for (const r of rootSteps) expect(sent).not.toContain(r.step_id);
      expect(sent).not.toContain(first.run.runId);
    });
  });

  describe('Agents SDK failures and tracing off', () => {
    test('a model error is a failed model request, and the error still reaches the caller', async () => {
      const { Agent, Runner, setTraceProcessors, setTracingDisabled } = await import('@openai/agents');
      const { ScriptedModel, modelError } = await import('@openai/agents/testing');
      const run = await startRun(store, { runId: 'agents-fail-model' });
      const recorder = agentsRecorder(run, { store });
      setTraceProcessors([recorder]);
      setTracingDisabled(false);
      const agent = new Agent({
        name: 'bot',
        instructions: 'x',
        model: recorder.model(new ScriptedModel([modelError(new Error('HTTP 500'))]), 'scripted'),
      });
      await expect(new Runner().run(agent, 'hi')).rejects.toThrow('HTTP 500');
      const rs = await records(run);
      expect(rs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed']);
      expect((rs[2] as unknown as { error: unknown }).error).toMatchObject({ message: 'HTTP 500' });
    });

    test('a streamed model call that throws is a failed request', async () => {
      const { Agent, Runner, setTraceProcessors, setTracingDisabled } = await import('@openai/agents');
      const { ScriptedModel, modelError } = await import('@openai/agents/testing');
      const run = await startRun(store, { runId: 'agents-fail-stream' });
      const recorder = agentsRecorder(run, { store });
      setTraceProcessors([recorder]);
      setTracingDisabled(false);
      const agent = new Agent({
        name: 'bot',
        instructions: 'x',
        model: recorder.model(new ScriptedModel([modelError(new Error('socket reset'))]), 'scripted'),
      });
      const streamed = await new Runner().run(agent, 'hi', { stream: true });
      await expect(
        (async () => {
          for await (const _ of streamed) {
            /* drain */
          }
          await streamed.completed;
        })(),
      ).rejects.toThrow('socket reset');
      expect((await records(run)).map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed']);
    });

    test('a tool result JSON cannot represent stays a success: the SDK gets the real value, the journal a marker in its place (RUNS.md §6)', async () => {
      const { Agent, Runner, setTraceProcessors, setTracingDisabled } = await import('@openai/agents');
      const { ScriptedModel, assistantMessage, functionCall } = await import('@openai/agents/testing');
      const run = await startRun(store, { runId: 'agents-unrepresentable' });
      const recorder = agentsRecorder(run, { store });
      setTraceProcessors([recorder]);
      setTracingDisabled(false);
      // An HTTP client's response object, as a tool returns it: a back reference, a NaN, a method.
      const response: Record<string, unknown> = { status: 200, ratio: Number.NaN, text: () => 'body' };
      response['self'] = response;
      const fetchPage = recorder.tool({
        name: 'fetch_page',
        description: 'an HTTP response',
        parameters: z.object({}),
        execute: async () => response,
      });
      const model = new ScriptedModel([
        [functionCall('fetch_page', {}, { callId: 'f1' })],
        [assistantMessage('fetched')],
      ]);
      const agent = new Agent({
        name: 'bot',
        instructions: 'x',
        model: recorder.model(model, 'scripted'),
        tools: [fetchPage],
      });
      const result = await new Runner().run(agent, 'fetch it');
      await recorder.flush();
      expect(result.finalOutput).toBe('fetched');
      // The SDK got the very value the tool returned, and told the model what it makes of it, not a failure.
      const item = result.newItems.find((i) => i.type === 'tool_call_output_item') as { output: unknown } | undefined;
      expect(item?.output).toBe(response);
      const told = JSON.stringify(model.calls[1]!.request.input);
      expect(told).toContain('[object with circular references]');
      expect(told).not.toMatch(/error|fail|unrepresentable/i);
      const effects = await run.effects();
      expect(effects.map((e) => [e.tool, e.callId, e.status])).toEqual([['fetch_page', 'f1', 'completed']]);
      expect(effects[0]!.result).toMatchObject({
        status: 200,
        ratio: { unrepresentable: 'the number NaN' },
        self: { unrepresentable: 'a reference back to an enclosing value (a cycle)' },
      });
      expect(await run.pendingEffects()).toEqual([]);
      expect((await run.journal.verify()).ok).toBe(true);
    });

    test("with tracing off every record goes to the recorder's run: no child runs, nothing lost", async () => {
      const run = await startRun(store, { runId: 'agents-no-tracing' });
      const recorder = agentsRecorder(run, { store });
      const workflow = await runWorkflow(recorder, { tracing: false });
      expect(workflow.finalOutput).toBe('Paris 21C, Oslo 5C; Paris is in France.');
      expect(recorder.childRuns()).toEqual([]);
      const steps = await records(run);
      // triage 1 + specialist 3 + researcher 1 + summarizer 1 model calls; 5 tool effects; no handoff or guardrail records (they come from spans).
      expect(steps.filter((r) => kindOf(r) === 'model.completed')).toHaveLength(6);
      expect((await run.effects()).map((e) => e.tool).sort()).toEqual([
        'ask_researcher',
        'explode',
        'snapshot',
        'weather',
        'weather',
      ]);
      expect(await run.pendingEffects()).toEqual([]);
    });
  });
});
