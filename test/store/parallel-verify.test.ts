/**
 * Journal and receipt verification with the per-line checks on worker threads (the built pool, dist/, as
 * the CLI runs it) report exactly what the one-thread verifiers report — on a sound journal, on one whose
 * buckets and blobs were damaged, and on receipts, sound and damaged — and the workers really ran.
 */
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { exportReceipt, verifyReceiptFile } from '../../src/receipt/node.js';
import type { WorkerLineCheckPool } from '../../src/parallel/pool.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-parallel-');
let pool: WorkerLineCheckPool;

beforeAll(async () => {
  const { createLineCheckPool } = (await import(
    '../../dist/parallel/index.js' as string
  )) as typeof import('../../src/parallel/index.js');
  pool = createLineCheckPool({ threads: 2, batchBytes: 700 });
});
afterAll(async () => {
  await pool?.close();
});

async function makeJournal(id: string, n: number): Promise<string> {
  const store = new FileStore(dir, { fsync: 'none' });
  const j = await store.create(id, { blobThreshold: 1024, segmentBytes: 4096 });
  await j.appendMany(
    Array.from({ length: n }, (_, i) => ({
      input: { i, task: `task ${i}` },
      model: 'm',
      prompt: `step ${i}`,
      tool_call: { name: 'search', arguments: { q: `q${i}` } },
      result: i % 5 === 0 ? 'x'.repeat(1100 + i) : { ok: true, items: [i, i + 1] },
    })),
  );
  await j.close();
  return join(dir, id);
}

/** Both verifications of a journal directory; progress must count every line either way. */
async function bothWays(id: string) {
  const store = new FileStore(dir);
  const progress: number[][] = [[], []];
  const before = pool.answered;
  const a = await store.verify(id, { onProgress: (n) => void progress[0]!.push(n) });
  const b = await store.verify(id, { pool, onProgress: (n) => void progress[1]!.push(n) });
  await workersAnswered(before);
  return { a, b, progress };
}

/**
 * The workers ran: while none has answered, the feeder checks the oldest batch itself rather than wait
 * (chain/feeder.ts drain), so on a loaded machine the report can come before any worker's answer (then
 * dropped); the batches were sent all the same, and their answers arrive.
 */
async function workersAnswered(before: number): Promise<void> {
  await vi.waitFor(() => expect(pool.answered).toBeGreaterThan(before), { timeout: 30_000, interval: 20 });
}

describe('journal verify on worker threads', () => {
  test('a sound journal: the same report, and the workers ran', async () => {
    await makeJournal('sound', 80);
    const { a, b, progress } = await bothWays('sound');
    expect(a.ok).toBe(true);
    expect(b).toEqual(a);
    expect(progress[1]).toEqual(progress[0]);
  });

  test('a damaged journal (edited, dropped and repeated lines, a torn tail, a lost blob): the same report', async () => {
    const path = await makeJournal('damaged', 80);
    const buckets = readdirSync(join(path, 'buckets')).sort();
    expect(buckets.length).toBeGreaterThan(3);
    const edit = (name: string, fn: (lines: string[]) => string[]) => {
      const file = join(path, 'buckets', name);
      writeFileSync(file, fn(readFileSync(file, 'utf8').split(/(?<=\n)/)).join(''));
    };
    edit(buckets[0]!, (l) => [l[0]!.replace('"task 0"', '"task X"'), ...l.slice(1)]);
    edit(buckets[1]!, (l) => [l[0]!, ...l.slice(2)]);
    edit(buckets[2]!, (l) => [...l, l.at(-1)!]);
    edit(buckets.at(-1)!, (l) => [...l, l[0]!.slice(0, 40)]);
    const blobs = join(path, 'blobs', 'sha256');
    rmSync(join(blobs, readdirSync(blobs)[0]!));
    const { a, b } = await bothWays('damaged');
    expect(a.ok).toBe(false);
    expect(new Set(a.problems.map((p) => p.code))).toEqual(
      new Set(['HASH_MISMATCH', 'SEQ_GAP', 'LINK_BROKEN', 'DUPLICATE_STEP', 'BLOB_MISSING']),
    );
    expect(b).toEqual(a);
  });
});

describe('receipt verify on worker threads', () => {
  test('a sound receipt and a damaged one: the same reports, observers see the same lines in order', async () => {
    const store = new FileStore(dir);
    await makeJournal('for-receipt', 60);
    const j = await store.open('for-receipt', { readOnly: true });
    const tar = join(dir, 'r.tar');
    await exportReceipt(j, { out: tar });
    await j.close();
    const damaged = join(dir, 'damaged.tar');
    const bytes = readFileSync(tar);
    const at = bytes.indexOf('"step 30"');
    bytes[at + 6] = '9'.charCodeAt(0);
    writeFileSync(damaged, bytes);
    for (const file of [tar, damaged]) {
      const lines: unknown[][] = [[], []];
      const before = pool.answered;
      const a = await verifyReceiptFile(file, {
        onLine: (l) => void lines[0]!.push([l.file, l.line, l.seq, l.step_hash, l.text]),
      });
      const b = await verifyReceiptFile(file, {
        pool,
        onLine: (l) => void lines[1]!.push([l.file, l.line, l.seq, l.step_hash, l.text]),
      });
      expect(a.ok).toBe(file === tar);
      expect(b).toEqual(a);
      expect(lines[1]).toEqual(lines[0]);
      await workersAnswered(before);
    }
  });
});
