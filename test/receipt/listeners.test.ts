/**
 * Regression: exporting a large chain entry must not accumulate event listeners. The writer waited for
 * backpressure with once('drain') and once('close'); the unfired 'close' listener stayed each time, so a
 * big entry leaked listeners (and memory) until it closed — seen as MaxListenersExceededWarning in bench/.
 */
import { afterEach, expect, test } from 'vitest';
import { receiptBytes, verifyReceipt } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';

const warnings: Error[] = [];
const onWarning = (w: Error): void => void warnings.push(w);
afterEach(() => void process.off('warning', onWarning));

test('a multi-megabyte chain entry is written without piling up listeners', async () => {
  process.on('warning', onWarning);
  const journal = await new MemoryStore().create('big');
  const steps = Array.from({ length: 4000 }, (_, i) => ({ model: 'm', prompt: 'p'.repeat(900), result: { i } }));
  await journal.appendMany(steps);
  const tar = await receiptBytes(journal);
  expect(tar.length).toBeGreaterThan(4000 * 900);
  await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
  expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  expect((await verifyReceipt(tar)).ok).toBe(true);
});
