/**
 * An effect id that is already in the run (spec/RUNS.md §5, "An id already in the run"): the repeat checks
 * come first, the id names the effect it already is, and only the Run that sent that very record and still
 * holds it in flight is answered by the store's idempotent retry.
 */
import { describe, expect, test } from 'vitest';
import { MemoryStore, startRun, type Journal } from '../../src/index.js';
import { Run } from '../../src/runtime.js';

const code = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'no error',
    (e: unknown) => (e as { code?: unknown }).code,
  );

/** The journal, except that its next append lands and then reports a failure (its acknowledgement is lost). */
function losingOneAck(journal: Journal): Journal {
  let lose = true;
  return new Proxy(journal, {
    get(target, name, receiver) {
      if (name === 'append') {
        return async (...args: Parameters<Journal['append']>) => {
          const at = await target.append(...args);
          if (lose) {
            lose = false;
            throw new Error('connection reset after the write');
          }
          return at;
        };
      }
      const v = Reflect.get(target, name, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

const starts = async (run: Run): Promise<number> => (await run.effects()).length;

describe('beginTool with the id of an effect already in the run', () => {
  test('the same Run re-sending its own begin whose acknowledgement was lost: the one effect, not two', async () => {
    const store = new MemoryStore();
    const first = await startRun(store, { runId: 'r-ack' });
    const run = Run.of(losingOneAck(first.journal));
    await expect(run.beginTool({ name: 'pay', args: { eur: 5 }, id: 'P', idempotencyKey: 'K' })).rejects.toThrow(
      'connection reset',
    );
    const again = await run.beginTool({ name: 'pay', args: { eur: 5 }, id: 'P', idempotencyKey: 'K' });
    expect(again).toMatchObject({ id: 'P', seq: 1, status: 'started' });
    await run.refresh();
    expect(await starts(run)).toBe(1);
    await again.complete({ ok: true });
    // Once it has an outcome, the id is no longer in flight: the completed effect is handed back.
    const third = await run.beginTool({ name: 'pay', args: { eur: 5 }, id: 'P' });
    expect(third).toMatchObject({ id: 'P', status: 'completed', result: { ok: true } });
    await first.close();
  });

  test('another Run (another process, or another handle) begins a pending id: EFFECT_PENDING naming it', async () => {
    const store = new MemoryStore();
    const first = await startRun(store, { runId: 'r-pend' });
    await first.beginTool({ name: 'mail', args: { to: 'a' }, id: 'M' });
    const other = Run.of(await store.open('r-pend'));
    // Different arguments: no intent match, only the id says it is M.
    const refused = await other.beginTool({ name: 'mail', args: { to: 'b' }, id: 'M' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'EFFECT_PENDING', pendingEffect: 'M' });
    expect(await starts(other)).toBe(1);
    await other.close();
    await first.close();
  });

  test('a failed, resolved or different effect under the id: STEP_ID_CONFLICT; a retry without the id names retry_of', async () => {
    const store = new MemoryStore();
    const run = await startRun(store, { runId: 'r-taken' });
    await run.beginTool({ name: 'pay', args: { eur: 5 }, id: 'P' });
    await run.resolveEffect('P', { retry: true }, { reason: 'not at the provider' });
    expect(await code(run.beginTool({ name: 'pay', args: { eur: 5 }, id: 'P' }))).toBe('STEP_ID_CONFLICT');
    const retry = await run.beginTool({ name: 'pay', args: { eur: 5 } });
    expect((await run.effects()).find((e) => e.id === retry.id)?.retryOf).toBe('P');
    await retry.complete({ ok: 1 });
    expect(await code(run.beginTool({ name: 'refund', args: { eur: 5 }, id: retry.id }))).toBe('STEP_ID_CONFLICT');
    const observed = await run.beginTool({ name: 'mail', args: {}, id: 'F' });
    await observed.fail(new Error('smtp down'));
    expect(await code(run.beginTool({ name: 'mail', args: {}, id: 'F' }))).toBe('STEP_ID_CONFLICT');
    expect(await starts(run)).toBe(3);
    await run.close();
  });
});
