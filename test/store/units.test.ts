/** Properties of the store's pure parts and its line reader: the idempotency window and readLines. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { IdempotencyWindow } from '../../src/store/sequencer.js';
import { readLastLine, readLines } from '../../src/store/lines.js';
import { tempDir } from '../helpers/tmp.js';

describe('IdempotencyWindow', () => {
  test('holds exactly the step_ids of the last `size` seqs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 200 }), (size, idChoices) => {
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
          expect(w.get(id)?.seq).toBe(inWindow ? seq : undefined);
        }
      }),
    );
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
      fc.asyncProperty(fc.array(line, { maxLength: 6 }), fc.option(line.filter((s) => s.length > 0), { nil: undefined }), async (lines, tail) => {
        const path = join(dir, `f${k++}`);
        const text = lines.map((l) => l + '\n').join('') + (tail ?? '');
        writeFileSync(path, text);
        const got: Array<{ text: string; terminated: boolean; start: number; end: number }> = [];
        for await (const r of readLines(path)) got.push({ text: r.bytes.toString('utf8'), terminated: r.terminated, start: r.start, end: r.end });
        const expected = lines.map((l) => ({ text: l, terminated: true }));
        if (tail !== undefined) expected.push({ text: tail, terminated: false });
        expect(got.map(({ text: t, terminated }) => ({ text: t, terminated }))).toEqual(expected);
        for (const g of got) expect(Buffer.from(text).subarray(g.start, g.end).toString()).toBe(g.terminated ? g.text + '\n' : g.text);
        const last = await readLastLine(path);
        expect(last.line?.bytes.toString() ?? null).toBe(lines.length > 0 ? lines[lines.length - 1]! : null);
      }),
      { numRuns: 40 },
    );
  });

  test('does not buffer a line longer than maxBytes', async () => {
    const path = join(dir, 'long');
    writeFileSync(path, 'short\n' + 'y'.repeat(200_000) + '\nafter\n' + 'z'.repeat(150_000));
    const got = [];
    for await (const r of readLines(path, 0, 100_000)) got.push([r.bytes.toString().slice(0, 5), r.tooLong, r.terminated, r.end - r.start]);
    expect(got).toEqual([
      ['short', false, true, 6],
      ['', true, true, 200_001],
      ['after', false, true, 6],
      ['', true, false, 150_000],
    ]);
  });
});
