/**
 * Effect classes and the tool body's view of its effect (spec/RUNS.md §5): the policy each class
 * applies to a pending effect in the way, recorded as the decision of a policy; currentEffect inside a
 * recorded tool; a run started inside a tool is that tool's run's child.
 */
import { describe, expect, test } from 'vitest';
import { MemoryStore, resumeRun, RuntimeError, startRun, type JournalInput, type Store } from '../../src/index.js';
import { currentEffect, runEffect } from '../../src/runtime.js';

/** A run whose first process died inside `tool(args)`: the resumed Run, and the pending effect's id. */
async function crashed(
  store: Store,
  runId: string,
  tool: string,
  args: JournalInput,
  idempotencyKey?: string,
): Promise<{ id: string }> {
  const first = await startRun(store, { runId });
  const e = await first.beginTool({ name: tool, args, ...(idempotencyKey === undefined ? {} : { idempotencyKey }) });
  return { id: e.id };
}

describe('effect classes decide what happens to a pending effect in the way', () => {
  test('undeclared (irreversible): refused, the body does not run, nothing decided', async () => {
    const store = new MemoryStore();
    const { id } = await crashed(store, 'c-irr', 'pay', { invoice: 'INV-9' });
    const run = await resumeRun(store, 'c-irr');
    let ran = 0;
    const refused = await runEffect(run, { name: 'pay', args: { invoice: 'INV-9' } }, () => ++ran).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(RuntimeError);
    expect(refused).toMatchObject({ code: 'EFFECT_PENDING', pendingEffect: id });
    const refusedToo = await runEffect(run, { name: 'pay', args: { invoice: 'INV-9' } }, () => ++ran, {
      kind: 'irreversible',
    }).catch((e: unknown) => e);
    expect(refusedToo).toMatchObject({ code: 'EFFECT_PENDING' });
    expect(ran).toBe(0);
    expect((await run.pendingEffects()).map((e) => e.id)).toEqual([id]);
  });

  test('read-only: resolved retry by policy:read-only, and run again naming it', async () => {
    const store = new MemoryStore();
    const { id } = await crashed(store, 'c-ro', 'weather', { city: 'Oslo' });
    const run = await resumeRun(store, 'c-ro');
    expect(
      await runEffect(run, { name: 'weather', args: { city: 'Oslo' } }, () => ({ tempC: 3 }), { kind: 'read-only' }),
    ).toEqual({ tempC: 3 });
    const [old, again] = await run.effects();
    expect(old).toMatchObject({ id, status: 'failed', resolution: { decision: 'retry', by: 'policy:read-only' } });
    expect(again).toMatchObject({ status: 'completed', retryOf: id, result: { tempC: 3 } });
  });

  test('idempotent: resent under the same key after a retry by policy:idempotent; a completed key returns its result without running', async () => {
    const store = new MemoryStore();
    const key = (args: unknown) => `mail-${(args as { to: string }).to}`;
    const { id } = await crashed(store, 'c-idem', 'send', { to: 'a@b.example' }, 'mail-a@b.example');
    const run = await resumeRun(store, 'c-idem');
    let sent = 0;
    const send = () => ({ message_id: `m-${++sent}` });
    expect(
      await runEffect(run, { name: 'send', args: { to: 'a@b.example' } }, send, { kind: 'idempotent', key }),
    ).toEqual({ message_id: 'm-1' });
    expect(
      await runEffect(run, { name: 'send', args: { to: 'a@b.example' } }, send, { kind: 'idempotent', key }),
    ).toEqual({ message_id: 'm-1' });
    expect(sent).toBe(1);
    const effects = await run.effects();
    expect(effects.map((e) => [e.idempotencyKey, e.status, e.resolution?.by ?? null, e.retryOf])).toEqual([
      ['mail-a@b.example', 'failed', 'policy:idempotent', null],
      ['mail-a@b.example', 'completed', null, id],
    ]);
  });

  test('compensatable: its compensation runs as an effect of its own, the pending one is resolved compensated naming it, then it runs again', async () => {
    const store = new MemoryStore();
    const { id } = await crashed(store, 'c-comp', 'book', { room: 12 });
    const run = await resumeRun(store, 'c-comp');
    const cancelled: unknown[] = [];
    const out = await runEffect(run, { name: 'book', args: { room: 12 } }, () => 'booked', {
      kind: 'compensatable',
      compensate: (args) => (cancelled.push(args), 'cancelled'),
    });
    expect(out).toBe('booked');
    expect(cancelled).toEqual([{ room: 12 }]);
    const [old, undo, again] = await run.effects();
    expect(undo).toMatchObject({
      tool: 'book.compensate',
      status: 'completed',
      args: { effect: id, arguments: { room: 12 } },
      result: 'cancelled',
    });
    expect(old).toMatchObject({
      id,
      status: 'failed',
      resolution: { decision: 'compensated', by: 'policy:compensatable' },
    });
    expect(again).toMatchObject({ status: 'completed', retryOf: null });
    expect((await run.journal.verify()).ok).toBe(true);
  });
});

describe('a tool body sees its effect', () => {
  test('currentEffect() inside runEffect is the run and the effect; outside, undefined', async () => {
    const store = new MemoryStore();
    const run = await startRun(store, { runId: 'ctx' });
    expect(currentEffect()).toBeUndefined();
    const seen = await runEffect(run, { name: 'charge', args: {} }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      const scope = currentEffect()!;
      await scope.effect.annotate({ idempotencyKey: `pay-${scope.effect.id}` });
      return { run: scope.run.runId, effect: scope.effect.id };
    });
    const [effect] = await run.effects();
    expect(seen).toEqual({ run: 'ctx', effect: effect!.id });
    expect(effect!.idempotencyKey).toBe(`pay-${effect!.id}`);
  });

  test("a run started inside a tool (an agent used as a tool) is that run's child without being told", async () => {
    const store = new MemoryStore();
    const parent = await startRun(store, { runId: 'orchestrator' });
    await runEffect(parent, { name: 'delegate', args: { task: 't' } }, async () => {
      const child = await startRun(store, { runId: 'sub-agent' });
      await child.complete('done');
      return 'ok';
    });
    expect((await resumeRun(store, 'sub-agent', { readOnly: true })).identity).toEqual({
      parent_run_id: 'orchestrator',
    });
    expect((await store.runs({ parentRunId: 'orchestrator' })).map((r) => r.id)).toEqual(['sub-agent']);
  });
});
