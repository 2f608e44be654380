/**
 * A read near the end of the last bucket starts where its first line is, found from the file's end
 * (src/store/file/reads.ts): the same lines as a read from the bucket's start, for any range, with several
 * buckets, a torn tail, and a streamed batch's pending lines after the head.
 */
import { appendFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-tail-read-');

async function lines(store: FileStore, id: string, from: number, to?: number): Promise<string[]> {
  const j = await store.open(id, { readOnly: true });
  const out: string[] = [];
  for await (const l of j.lines(to === undefined ? { from } : { from, to })) out.push(`${l.seq} ${l.text}`);
  await j.close();
  return out;
}

describe('tail reads', () => {
  test('property: any range reads the same lines as the whole read sliced, with a torn tail and pending lines after the head', async () => {
    const store = new FileStore(root, { fsync: 'none', segmentBytes: 4096 });
    const j = await store.create('t');
    await j.appendMany(Array.from({ length: 120 }, (_, i) => ({ input: { i, pad: 'x'.repeat((i % 7) * 13) } })));
    await j.close();
    const all = await lines(store, 't', 0);
    expect(all).toHaveLength(120);
    const buckets = readdirSync(join(root, 't', 'buckets')).sort();
    expect(buckets.length).toBeGreaterThan(2);
    const last = join(root, 't', 'buckets', buckets.at(-1)!);
    appendFileSync(last, '{"seq":999,"torn');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 119 }), fc.integer({ min: 0, max: 30 }), async (from, span) => {
        const to = Math.min(119, from + span);
        expect(await lines(store, 't', from, to)).toEqual(all.slice(from, to + 1));
        expect(await lines(store, 't', from)).toEqual(all.slice(from));
      }),
      { numRuns: 60 },
    );
  });

  test('lines of a pending batch after the head are not read, and the head line is found under them', async () => {
    const store = new FileStore(join(root, 'p'), { fsync: 'none' });
    const j = await store.create('t');
    await j.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: i })));
    const head = (await j.head())!;
    await j.close();
    const bucket = join(root, 'p', 't', 'buckets', '0000000000000000.jsonl');
    const size = statSync(bucket).size;
    const all = await lines(store, 't', 0);
    // Two lines as a dead batch left them, with the mark that says they are not committed (FILE-STORE §18).
    const pending = (seq: number): string => all[9]!.slice(2).replace('"seq":9,', `"seq":${seq},`);
    appendFileSync(bucket, `${pending(10)}\n${pending(11)}\n`);
    writeFileSync(
      join(root, 'p', 't', '.batch-pending.json'),
      JSON.stringify({ bucket: 0, size, seq: head.seq, step_hash: head.step_hash }),
    );
    expect(await lines(store, 't', 8)).toEqual(all.slice(8));
    expect(await lines(store, 't', 9, 9)).toEqual(all.slice(9));
    expect(await lines(store, 't', 3, 5)).toEqual(all.slice(3, 6));
  });
});
