/**
 * The SQLite driver is synchronous, so a store that never gave the event loop a turn kept a process's timers
 * and I/O waiting for as long as its appends ran: a loop of small streamed batches ran for 8 s and a 100 ms timer never
 * fired, and a streamed batch held every timer until it ended (outsider J, F2). Each transaction now starts after
 * a turn of the event loop, and a streamed batch takes one between its chunks. No timing: a timer due at once
 * must have run before the appends end, and the batch, still open, must be invisible to a reader meanwhile.
 * And a batch whose own input throws fails with that error, as in the file store, not as SERVER_ERROR (outsider M).
 */
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import type { StepInput } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-sqlite-loop-');
const stores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});
const storeAt = (name: string): SqliteStore => {
  const s = new SqliteStore(join(root, name));
  stores.push(s);
  return s;
};

describe('a SQLite store gives the event loop its turns', () => {
  test('a timer due at once runs during a loop of awaited small streamed batches, not after it', async () => {
    const j = await storeAt('appends.db').create('j', { format: 'stepchain/v3' });
    let ranAt: number | null = null;
    let batches = 0;
    setTimeout(() => void (ranAt = batches), 0);
    for (; batches < 300; batches++) await j.appendStream([{ input: { n: batches } }, { input: 'second' }]);
    expect(ranAt).not.toBeNull();
    expect(ranAt!).toBeLessThan(300);
  });

  test('a streamed batch lets timers run between its chunks, and stays invisible until it commits', async () => {
    const store = storeAt('stream.db');
    const j = await store.create('j', { format: 'stepchain/v3' });
    await j.append({ input: 'before' });
    const reader = await store.open('j', { readOnly: true });
    let produced = 0;
    let timerSawProduced: number | null = null;
    let headDuring: number | null | undefined;
    setTimeout(() => {
      timerSawProduced = produced;
      void reader.head().then((h) => void (headDuring = h?.seq ?? null));
    }, 0);
    function* steps(): Generator<StepInput> {
      for (; produced < 4000; produced++) yield { input: { n: produced } };
    }
    const batch = await j.appendStream(steps());
    expect(batch.steps).toBe(4000);
    expect(timerSawProduced).not.toBeNull();
    expect(timerSawProduced!).toBeLessThan(4000);
    // What the reader saw meanwhile: the chain as last committed, the step before the batch.
    expect(headDuring).toBe(0);
    expect((await reader.head())?.seq).toBe(4000);
    expect((await j.verify()).ok).toBe(true);
  });

  test("a streamed batch whose input throws fails with the input's own error, not as the store's, and writes nothing", async () => {
    const j = await storeAt('throws.db').create('j', { format: 'stepchain/v3' });
    await j.append({ input: 'before' });
    const mine = new Error('the source of the steps failed');
    function* steps(): Generator<StepInput> {
      for (let i = 0; i < 1000; i++) {
        if (i === 600) throw mine;
        yield { input: { i } };
      }
    }
    await expect(j.appendStream(steps())).rejects.toBe(mine);
    expect((await j.head())?.seq).toBe(0);
    expect((await j.verify()).ok).toBe(true);
  });
});
