/** Properties of the store's pure parts and its line reader: the idempotency index, segment rotation, sequencing, verifySource, readLines. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { IdempotencyWindow, type CommittedStep, type IdempotencyIndex } from '../../src/store/idempotency.js';
import { prepareSteps } from '../../src/store/prepare.js';
import { placeLine } from '../../src/store/segments.js';
import { knownSteps, sequenceBatch } from '../../src/store/sequencer.js';
import { journalReport, verifySource } from '../../src/store/verify-source.js';
import { STEP_V1, genesisHash, makeGenesis } from '../../src/record/index.js';
import { StoreError } from '../../src/store/errors.js';
import { readLastLine, readLineBatches, readLines } from '../../src/store/file/lines.js';
import { tempDir } from '../helpers/tmp.js';

describe('IdempotencyWindow', () => {
  test('holds exactly the step_ids of the last `size` seqs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 200 }),
        (size, idChoices) => {
          const w = new IdempotencyWindow(size);
          const latest = new Map<string, number>();
          idChoices.forEach((c, seq) => {
            const id = `id${c}`;
            w.add(id, { seq, step_hash: `h${seq}`, prev_hash: '', key: '', ts: '' });
            latest.set(id, seq);
          });
          const last = idChoices.length - 1;
          for (const [id, seq] of latest) {
            const inWindow = seq > last - size;
            expect(w.lookup([id]).get(id)?.seq).toBe(inWindow ? seq : undefined);
          }
        },
      ),
    );
  });

  test('still exact after its arrival list is compacted (past 4096 evictions), and after clear()', () => {
    const w = new IdempotencyWindow(50);
    const entry = (seq: number): CommittedStep => ({ seq, step_hash: `h${seq}`, prev_hash: '', key: '', ts: '' });
    // Ids repeat every 70 seqs, so an evicted seq's id may be in the window again under a later seq.
    for (let seq = 0; seq < 12_000; seq++) w.add(`id${seq % 70}`, entry(seq));
    for (let c = 0; c < 70; c++) {
      const latest = 12_000 - 70 + ((c - (12_000 % 70) + 70) % 70);
      expect(w.lookup([`id${c}`]).get(`id${c}`)?.seq, `id${c}`).toBe(latest > 12_000 - 1 - 50 ? latest : undefined);
    }
    w.clear();
    expect(w.lookup(['id1']).size).toBe(0);
    w.add('again', entry(3));
    expect(w.lookup(['again']).get('again')?.seq).toBe(3);
  });
});

describe('segment rotation (placeLine): the one rule every store numbers segments by', () => {
  test('a segment is never empty, and only a single line larger than segmentBytes makes one larger', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 1, max: 150 }), { maxLength: 60 }),
        (limit, sizes) => {
          let cursor = { first: 0, size: 0 };
          const segments = new Map<number, number[]>();
          sizes.forEach((bytes, seq) => {
            cursor = placeLine(cursor, seq, bytes, limit);
            segments.set(cursor.first, [...(segments.get(cursor.first) ?? []), bytes]);
          });
          for (const [first, lines] of segments) {
            expect(lines.length).toBeGreaterThan(0);
            const total = lines.reduce((a, b) => a + b, 0);
            if (lines.length > 1) expect(total).toBeLessThanOrEqual(limit);
            expect(sizes[first]).toBe(lines[0]);
          }
        },
      ),
    );
  });
});

describe('sequenceBatch with an IdempotencyIndex that answers later (a database)', () => {
  const genesis = makeGenesis({ journalId: 'idx', createdAt: '2026-01-01T00:00:00.000Z' });
  const step = { input: 'x', step_id: 'retry-1', ts: '2026-01-01T00:00:00.000Z' };
  const [prepared] = prepareSteps([step], 65536, STEP_V1);
  const committed: CommittedStep = {
    seq: 7,
    step_hash: `sha256:${'a'.repeat(64)}`,
    prev_hash: `sha256:${'b'.repeat(64)}`,
    key: prepared!.key,
    ts: step.ts,
  };
  const asked: string[][] = [];
  const slow: IdempotencyIndex = {
    lookup: async (ids) => {
      asked.push([...ids]);
      return new Map(ids.includes('retry-1') ? [['retry-1', committed]] : []);
    },
    committed: () => {},
    clear: () => {},
  };
  const tail = { seq: 9, hash: genesisHash(genesis) };

  test("the batch's step_ids are asked for once; a repeat of the committed step returns it, a changed one is STEP_ID_CONFLICT", async () => {
    const groups = [{ steps: [prepared!] }, { steps: prepareSteps([{ ...step, input: 'y' }], 65536, STEP_V1) }];
    const batch = sequenceBatch(groups, tail, await knownSteps(slow, groups), '2026-01-01T00:00:01.000Z');
    expect(asked).toEqual([['retry-1', 'retry-1']]);
    expect(batch.lines).toEqual([]);
    expect(batch.outcomes[0]).toEqual({
      ok: true,
      results: [
        {
          seq: 7,
          step_id: 'retry-1',
          step_hash: committed.step_hash,
          prev_hash: committed.prev_hash,
          ts: committed.ts,
        },
      ],
      blobs: [],
    });
    const second = batch.outcomes[1]!;
    expect(second.ok === false && second.error instanceof StoreError && second.error.code).toBe('STEP_ID_CONFLICT');
  });

  test('a batch without caller step_ids never asks', async () => {
    asked.length = 0;
    const groups = [{ steps: prepareSteps([{ input: 'z' }], 65536, STEP_V1) }];
    const batch = sequenceBatch(groups, tail, await knownSteps(slow, groups), '2026-01-01T00:00:01.000Z');
    expect(asked).toEqual([]);
    expect(batch.lines.map((l) => l.seq)).toEqual([10]);
  });
});

describe('verifySource: one verification for a journal wherever it lives', () => {
  const genesis = makeGenesis({ journalId: 'src', createdAt: '2026-01-01T00:00:00.000Z' });
  const prepared = prepareSteps([{ input: 'a' }, { result: 'x'.repeat(2000) }], 1024, STEP_V1);
  const batch = sequenceBatch(
    [{ steps: prepared }],
    { seq: -1, hash: genesisHash(genesis) },
    new Map(),
    '2026-01-01T00:00:01.000Z',
  );
  const lines = batch.lines.map((l) => l.text.slice(0, -1));
  const blob = prepared[1]!.blobs[0]!;
  const source = (blobs: Map<string, Uint8Array>) => ({
    genesis,
    lineage: null,
    blobsWhere: 'the table',
    segments: () => [{ label: 'range 0', declaredFirstSeq: null, lines: [lines] }],
    blob: async (ref: { digest: string }) => blobs.get(ref.digest) ?? null,
  });

  test('a store outside src/store/file* supplies segments and blobs and gets the chain, blob and lineage checks', async () => {
    const good = journalReport(await verifySource(source(new Map([[blob.digest, blob.bytes]]))));
    expect(good).toMatchObject({ ok: true, steps: 2, head_seq: 1, problems: [] });
    const missing = journalReport(await verifySource(source(new Map())));
    expect(missing.problems.map((p) => [p.code, p.message, p.location])).toEqual([
      [
        'BLOB_MISSING',
        `blob ${blob.digest} is not in the table (referenced by result)`,
        { file: 'range 0', line: 2, seq: 1, field: 'result' },
      ],
    ]);
  });
});

describe('readLines', () => {
  const dir = tempDir('stepchain-lines-');
  let k = 0;
  // Lines around the 64 KiB read chunk, so boundaries fall everywhere: inside lines and on newlines.
  const line = fc.oneof(
    fc.string({ maxLength: 40 }).map((s) => s.replace(/\n/g, ' ')),
    fc.integer({ min: 65_500, max: 66_000 }).map((nn) => 'x'.repeat(nn)),
  );

  test('yields every line exactly, marks only an unterminated tail, and reports offsets', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 6 }),
        fc.option(
          line.filter((s) => s.length > 0),
          { nil: undefined },
        ),
        async (lines, tail) => {
          const path = join(dir, `f${k++}`);
          const text = lines.map((l) => l + '\n').join('') + (tail ?? '');
          writeFileSync(path, text);
          const got: Array<{ text: string; terminated: boolean; start: number; end: number }> = [];
          for await (const r of readLines(path))
            got.push({ text: r.bytes.toString('utf8'), terminated: r.terminated, start: r.start, end: r.end });
          const expected = lines.map((l) => ({ text: l, terminated: true }));
          if (tail !== undefined) expected.push({ text: tail, terminated: false });
          expect(got.map(({ text: t, terminated }) => ({ text: t, terminated }))).toEqual(expected);
          for (const g of got)
            expect(Buffer.from(text).subarray(g.start, g.end).toString()).toBe(g.terminated ? g.text + '\n' : g.text);
          const last = await readLastLine(path);
          expect(last.line?.bytes.toString() ?? null).toBe(lines.length > 0 ? lines[lines.length - 1]! : null);
        },
      ),
      { numRuns: 40 },
    );
  });

  test('read on the calling thread (sync, as verify reads), reused buffers and an end: the same lines as read through the pool', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 6 }), fc.nat(200_000), async (lines, cut) => {
        const path = join(dir, `s${k++}`);
        const text = lines.map((l) => l + '\n').join('');
        writeFileSync(path, text);
        const end = Math.min(cut, text.length);
        const read = async (reading: Parameters<typeof readLineBatches>[3]) => {
          const got: string[] = [];
          // Each batch's lines are copied before the next is asked for: with reuse, the buffers are read into again.
          for await (const batch of readLineBatches(path, 0, Infinity, reading))
            for (const r of batch) got.push(`${r.start}-${r.end}-${r.terminated}:${r.bytes.toString('latin1')}`);
          return got;
        };
        for (const limit of [{}, { end }]) {
          const pooled = await read({ chunkBytes: 64 * 1024, ...limit });
          expect(await read({ chunkBytes: 64 * 1024, reuse: true, sync: true, ...limit })).toEqual(pooled);
          expect(await read({ chunkBytes: 1000, sync: true, ...limit })).toEqual(pooled);
        }
      }),
      { numRuns: 30 },
    );
  });

  test('does not buffer a line longer than maxBytes', async () => {
    const path = join(dir, 'long');
    writeFileSync(path, 'short\n' + 'y'.repeat(200_000) + '\nafter\n' + 'z'.repeat(150_000));
    const got = [];
    for await (const r of readLines(path, 0, 100_000))
      got.push([r.bytes.toString().slice(0, 5), r.tooLong, r.terminated, r.end - r.start]);
    expect(got).toEqual([
      ['short', false, true, 6],
      ['', true, true, 200_001],
      ['after', false, true, 6],
      ['', true, false, 150_000],
    ]);
  });
});
