/**
 * The run reader (spec/RUNS.md §2, §3), rule by rule, on records built by hand: what each kind
 * folds into the state (effects, model requests, the requested set, the run's status), the anomalies
 * (OUTCOME_WITHOUT_START, KIND_MISMATCH, OUTCOME_REPEATED) that leave the state unchanged, the
 * continuation point, and the pending effects in seq order. The runtime's own tests (test/runtime) drive it
 * through real runs; these pin each rule alone, and were written from the surviving mutants of
 * src/record/run-state.ts (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import type { Json } from '../../src/canonical/json.js';
import { emptyState, foldRecord, pendingOf, runState, toolCallOf } from '../../src/record/run-state.js';
import type { StepRecord } from '../../src/record/seal.js';

const ts = (s: number): string => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

/** A v2 record with only what the reader looks at (the rest is the chain's business). */
function rec(
  seq: number,
  kind: string,
  fields: { id?: string; ref?: string | null; tool_call?: Json; result?: Json; error?: Json; model?: Json } = {},
): StepRecord {
  return {
    v: 2,
    seq,
    kind,
    step_id: fields.id ?? `s${seq}`,
    ref: fields.ref ?? null,
    ts: ts(seq),
    input: null,
    model: fields.model ?? null,
    prompt: null,
    tool_call: fields.tool_call ?? null,
    result: fields.result ?? null,
    error: fields.error ?? null,
    meta: null,
    prev_hash: 'x',
    step_hash: 'y',
  } as unknown as StepRecord;
}
const toolStart = (
  seq: number,
  id: string,
  call: Record<string, Json> = { name: 'fetch', arguments: { url: 'u' } },
): StepRecord => rec(seq, 'tool.started', { id, tool_call: call });

describe('§11.4 step 1: tool.started', () => {
  test("a new effect with the tool call's members, status started, in flight", () => {
    const s = runState([
      toolStart(0, 'e1', {
        name: 'fetch',
        arguments: { url: 'u' },
        call_id: 'c1',
        idempotency_key: 'k1',
        summary: 'get u',
      }),
    ]);
    expect(s.effects.get('e1')).toEqual({
      id: 'e1',
      seq: 0,
      tool: 'fetch',
      args: { url: 'u' },
      callId: 'c1',
      idempotencyKey: 'k1',
      summary: 'get u',
      status: 'started',
      startedAt: ts(0),
      endedAt: null,
      endSeq: null,
      durationMs: null,
      result: null,
      error: null,
      resolution: null,
      retryOf: null,
    });
    expect(s.inFlight).toBe(1);
    expect(s.continuation).toBeNull();
    expect(s.lastSeq).toBe(0);
  });

  test('members absent or not strings are null; arguments absent are null; a tool_call that is not an object gives nulls', () => {
    const s = runState([
      toolStart(0, 'a', { name: 7, arguments: null, call_id: 1, idempotency_key: ['k'], summary: { s: 1 } }),
      rec(1, 'tool.started', { id: 'b', tool_call: null }),
      rec(2, 'tool.started', { id: 'c', tool_call: [{ name: 'x' }] }),
    ]);
    for (const id of ['a', 'b', 'c'])
      expect(s.effects.get(id)).toMatchObject({
        tool: null,
        args: null,
        callId: null,
        idempotencyKey: null,
        summary: null,
      });
    expect(s.inFlight).toBe(3);
  });
});

describe('§11.4 step 2: tool outcomes', () => {
  test('tool.completed: status, result, end seq and time, duration; out of flight; the continuation moves', () => {
    const s = runState([toolStart(0, 'e1'), rec(3, 'tool.completed', { ref: 'e1', result: { ok: 1 } })]);
    expect(s.effects.get('e1')).toMatchObject({
      status: 'completed',
      result: { ok: 1 },
      error: null,
      endSeq: 3,
      endedAt: ts(3),
      durationMs: 3000,
    });
    expect(s.inFlight).toBe(0);
    expect(s.continuation).toBe(3);
    expect(pendingOf(s)).toEqual([]);
  });

  test('tool.failed: status failed and its error', () => {
    const s = runState([toolStart(0, 'e1'), rec(1, 'tool.failed', { ref: 'e1', error: { message: 'boom' } })]);
    expect(s.effects.get('e1')).toMatchObject({
      status: 'failed',
      error: { message: 'boom' },
      result: null,
      endSeq: 1,
      durationMs: 1000,
    });
    expect(s.inFlight).toBe(0);
  });

  test('tool.updated: replaces the idempotency key and summary given, keeps those not given, ends nothing', () => {
    const s = runState([
      toolStart(0, 'e1', { name: 'pay', arguments: {}, idempotency_key: 'k0', summary: 'first' }),
      rec(1, 'tool.updated', { ref: 'e1', tool_call: { name: 'pay', arguments: {}, idempotency_key: 'k1' } }),
    ]);
    expect(s.effects.get('e1')).toMatchObject({
      status: 'started',
      idempotencyKey: 'k1',
      summary: 'first',
      endSeq: null,
    });
    const t = runState([
      toolStart(0, 'e1', { name: 'pay', arguments: {}, idempotency_key: 'k0', summary: 'first' }),
      rec(1, 'tool.updated', { ref: 'e1', tool_call: { name: 'pay', arguments: {}, summary: 'second' } }),
    ]);
    expect(t.effects.get('e1')).toMatchObject({ status: 'started', idempotencyKey: 'k0', summary: 'second' });
    // An update with no tool call at all changes nothing (and is no error).
    const u = runState([
      toolStart(0, 'e1', { name: 'pay', arguments: {}, idempotency_key: 'k0', summary: 'first' }),
      rec(1, 'tool.updated', { ref: 'e1', tool_call: null }),
    ]);
    expect(u.effects.get('e1')).toMatchObject({ status: 'started', idempotencyKey: 'k0', summary: 'first' });
    expect(u.anomalies).toEqual([]);
    expect(t.inFlight).toBe(1);
    expect(t.continuation).toBeNull();
    expect(pendingOf(t).map((e) => e.id)).toEqual(['e1']);
  });

  test('an outcome naming nothing started: OUTCOME_WITHOUT_START at its seq, nothing changes', () => {
    const s = runState([rec(0, 'tool.completed', { ref: 'nope' })]);
    expect(s.anomalies).toEqual([
      { seq: 0, code: 'OUTCOME_WITHOUT_START', message: expect.stringContaining('"nope"') },
    ]);
    expect(s.effects.size).toBe(0);
    expect(s.inFlight).toBe(0);
  });

  test('a tool outcome naming a model request: KIND_MISMATCH, and the request is still in flight', () => {
    const s = runState([rec(0, 'model.started', { id: 'm1' }), rec(1, 'tool.completed', { ref: 'm1' })]);
    expect(s.anomalies.map((a) => [a.seq, a.code])).toEqual([[1, 'KIND_MISMATCH']]);
    expect(s.models.get('m1')!.status).toBe('started');
    expect(s.inFlight).toBe(1);
  });

  test("a second start under an effect's id: STEP_ID_REPEATED at its seq; the pending effect stands, unchanged and pending", () => {
    const s = runState([
      toolStart(0, 'e1'),
      rec(1, 'tool.started', { id: 'e1', tool_call: { name: 'refund', arguments: { n: 1 } } }),
    ]);
    expect(s.anomalies).toEqual([
      { seq: 1, code: 'STEP_ID_REPEATED', message: expect.stringContaining('started at seq 0') },
    ]);
    expect(s.effects.get('e1')).toMatchObject({ seq: 0, status: 'started' });
    expect(s.effects.get('e1')!.tool).not.toBe('refund');
    expect(pendingOf(s).map((e) => [e.id, e.seq])).toEqual([['e1', 0]]);
    expect(s.inFlight).toBe(1);
  });

  test("a model start under a tool effect's id (and the reverse): STEP_ID_REPEATED, nothing put in flight", () => {
    const s = runState([
      toolStart(0, 'x'),
      rec(1, 'tool.completed', { ref: 'x', result: 1 }),
      rec(2, 'model.started', { id: 'x' }),
      rec(3, 'model.started', { id: 'm' }),
      rec(4, 'tool.started', { id: 'm', tool_call: { name: 'f', arguments: null } }),
    ]);
    expect(s.anomalies.map((a) => [a.seq, a.code])).toEqual([
      [2, 'STEP_ID_REPEATED'],
      [4, 'STEP_ID_REPEATED'],
    ]);
    expect(s.models.has('x')).toBe(false);
    expect(s.effects.has('m')).toBe(false);
    expect(s.inFlight).toBe(1);
    expect(s.continuation).toBe(2);
  });

  test('a second outcome: OUTCOME_REPEATED, the effect unchanged, the count of in flight unchanged', () => {
    const s = runState([
      toolStart(0, 'e1'),
      rec(1, 'tool.completed', { ref: 'e1', result: 1 }),
      rec(2, 'tool.failed', { ref: 'e1', error: 'late' }),
      rec(3, 'tool.updated', { ref: 'e1', tool_call: { name: 'f', arguments: null, summary: 'x' } }),
    ]);
    expect(s.anomalies.map((a) => [a.seq, a.code])).toEqual([
      [2, 'OUTCOME_REPEATED'],
      [3, 'OUTCOME_REPEATED'],
    ]);
    expect(s.effects.get('e1')).toMatchObject({
      status: 'completed',
      result: 1,
      error: null,
      endSeq: 1,
      summary: null,
    });
    expect(s.inFlight).toBe(0);
  });
});

describe('§11.4 steps 3–4: model requests and the requested set', () => {
  test('model.started, then model.completed asking for two tool calls (a list of {id})', () => {
    const s = runState([
      rec(0, 'model.started', { id: 'm1', model: 'gpt' }),
      rec(2, 'model.completed', {
        ref: 'm1',
        tool_call: [{ id: 'c1', name: 'a' }, { id: 'c2', name: 'b' }, { name: 'no id' }, 'text'],
      }),
    ]);
    expect(s.models.get('m1')).toEqual({
      id: 'm1',
      seq: 0,
      model: 'gpt',
      status: 'completed',
      startedAt: ts(0),
      endedAt: ts(2),
      endSeq: 2,
      durationMs: 2000,
      error: null,
    });
    expect([...s.requested]).toEqual(['c1', 'c2']);
    expect(s.inFlight).toBe(0);
    // Something was asked for and has no tool outcome: nothing to continue from yet.
    expect(s.continuation).toBeNull();
  });

  test('one tool call object, by id or call_id; the tool outcome of each clears it, and only then the continuation moves', () => {
    const records = [
      rec(0, 'model.started', { id: 'm1' }),
      rec(1, 'model.completed', { ref: 'm1', tool_call: { call_id: 'c1', name: 'a' } }),
      toolStart(2, 'e1', { name: 'a', arguments: null, call_id: 'c1' }),
      rec(3, 'tool.completed', { ref: 'e1' }),
    ];
    const s = emptyState();
    const continuation: Array<number | null> = [];
    for (const r of records) {
      foldRecord(s, r);
      continuation.push(s.continuation);
    }
    expect(continuation).toEqual([null, null, null, 3]);
    expect(s.requested.size).toBe(0);
  });

  test('model.failed: status failed and its error; asks for nothing', () => {
    const s = runState([
      rec(0, 'model.started', { id: 'm1' }),
      rec(1, 'model.failed', { ref: 'm1', error: 'rate', tool_call: [{ id: 'c1' }] }),
    ]);
    expect(s.models.get('m1')).toMatchObject({ status: 'failed', error: 'rate', endSeq: 1 });
    expect(s.requested.size).toBe(0);
    expect(s.continuation).toBe(1);
  });

  test('model outcomes: nothing started is OUTCOME_WITHOUT_START, a tool effect is KIND_MISMATCH, a second one OUTCOME_REPEATED', () => {
    const s = runState([
      rec(0, 'model.completed', { ref: 'x' }),
      toolStart(1, 'e1'),
      rec(2, 'model.failed', { ref: 'e1', error: 'e' }),
      rec(3, 'model.started', { id: 'm1' }),
      rec(4, 'model.completed', { ref: 'm1' }),
      rec(5, 'model.failed', { ref: 'm1', error: 'e' }),
    ]);
    expect(s.anomalies.map((a) => [a.seq, a.code])).toEqual([
      [0, 'OUTCOME_WITHOUT_START'],
      [2, 'KIND_MISMATCH'],
      [5, 'OUTCOME_REPEATED'],
    ]);
    expect(s.anomalies[0]!.message).toContain('"x"');
    expect(s.models.get('m1')).toMatchObject({ status: 'completed', error: null, endSeq: 4 });
    expect(s.effects.get('e1')!.status).toBe('started');
    expect(s.inFlight).toBe(1);
  });
});

describe("§11.4 steps 5–6: the run's status, the continuation point, pending effects", () => {
  test('running until run.completed or run.failed', () => {
    expect(runState([rec(0, 'run.started')]).status).toBe('running');
    expect(runState([rec(0, 'run.started'), rec(1, 'run.completed')]).status).toBe('completed');
    expect(runState([rec(0, 'run.started'), rec(1, 'run.failed', { error: 'x' })]).status).toBe('failed');
  });

  test('the continuation is the last seq with nothing in flight; null before any record', () => {
    expect(emptyState().continuation).toBeNull();
    expect(emptyState().lastSeq).toBe(-1);
    const s = runState([
      rec(0, 'run.started'),
      toolStart(1, 'e1'),
      rec(2, 'step'),
      rec(3, 'tool.completed', { ref: 'e1' }),
      rec(4, 'step'),
    ]);
    expect(s.continuation).toBe(4);
    const t = runState([rec(0, 'run.started'), toolStart(1, 'e1'), rec(2, 'step')]);
    expect(t.continuation).toBe(0);
    expect(t.lastSeq).toBe(2);
  });

  test('a v1 record is a step: it only moves the continuation', () => {
    const v1 = {
      v: 1,
      seq: 0,
      step_id: 's',
      ts: ts(0),
      input: null,
      model: null,
      prompt: null,
      tool_call: null,
      result: null,
      meta: null,
    } as unknown as StepRecord;
    const s = runState([v1]);
    expect(s).toMatchObject({ continuation: 0, lastSeq: 0, status: 'running', inFlight: 0 });
  });

  test('pending effects: those still started, in seq order (a step_id started again is STEP_ID_REPEATED: the first start stands)', () => {
    const s = runState([
      toolStart(0, 'a'),
      toolStart(1, 'b'),
      toolStart(2, 'done'),
      rec(3, 'tool.completed', { ref: 'done' }),
      toolStart(4, 'a'),
    ]);
    expect(pendingOf(s).map((e) => [e.id, e.seq])).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    expect(s.anomalies.map((a) => [a.seq, a.code])).toEqual([[4, 'STEP_ID_REPEATED']]);
  });
});

describe('toolCallOf', () => {
  test.each<[string, Json, unknown]>([
    [
      'a full call',
      { name: 'f', arguments: { a: 1 }, call_id: 'c', idempotency_key: 'k', summary: 's' },
      { name: 'f', arguments: { a: 1 }, call_id: 'c', idempotency_key: 'k', summary: 's' },
    ],
    ['arguments absent', { name: 'f' }, { name: 'f', arguments: null }],
    [
      'optional members not strings are left out',
      { name: 'f', arguments: 1, call_id: 2, idempotency_key: null, summary: [] },
      { name: 'f', arguments: 1 },
    ],
    ['name not a string', { name: 1, arguments: {} }, null],
    ['null', null, null],
    ['an array', [{ name: 'f' }], null],
    ['a string', 'f', null],
  ])('%s', (_name, call, expected) => {
    expect(toolCallOf({ tool_call: call } as never)).toEqual(expected);
  });
});
