/**
 * The link check's duplicate rule and the line splitter (spec/FORMAT.md §6.3 steps 2 and 6–7): a line
 * repeating the previous one is DUPLICATE_STEP alone, and the next line links to the original; a repeat of
 * an earlier line is out of order; and however a stream is cut into pieces, the splitter yields the same
 * lines, each over the limit flagged and the lines after it intact. Written from the surviving mutants of
 * src/chain (npm run mutate; test/mutation/SURVIVORS.md).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { verifyChain } from '../../src/chain/files.js';
import { LineSplitter } from '../../src/chain/lines.js';
import { describeLocation, describeProblem, type ProblemLocation } from '../../src/chain/report.js';
import { genesisHash, makeGenesis } from '../../src/record/formats.js';
import { sealRecord } from '../../src/record/seal.js';
import { v1Fields } from '../helpers/chains.js';

const genesis = makeGenesis({ journalId: 'links', createdAt: '2026-01-01T00:00:00.000Z' });
const G = genesisHash(genesis);
const enc = new TextEncoder();

function chain(n: number): string[] {
  const out: string[] = [];
  let prev = G;
  for (let seq = 0; seq < n; seq++) {
    const { record, line } = sealRecord(v1Fields(seq, prev) as never);
    out.push(line);
    prev = record.step_hash;
  }
  return out;
}
const verify = (lines: string[]) =>
  verifyChain({ genesis, files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(lines.join('')) }] });
const where = (r: ReturnType<typeof verify>) =>
  r.problems.map((p) => ({ code: p.code, line: p.location?.line, seq: p.location?.seq }));

describe('DUPLICATE_STEP (§6.3)', () => {
  const [l0, l1, l2] = chain(3) as [string, string, string];

  test('the previous line again: DUPLICATE_STEP alone, and the next line links to the original', () => {
    const r = verify([l0, l1, l1, l2]);
    expect(where(r)).toEqual([{ code: 'DUPLICATE_STEP', line: 3, seq: 1 }]);
    expect(r.ok).toBe(false);
    expect(r.head).toBe(JSON.parse(l2).step_hash);
  });

  test("the previous line again at the end: the head is still the original's", () => {
    const r = verify([l0, l1, l1]);
    expect(where(r)).toEqual([{ code: 'DUPLICATE_STEP', line: 3, seq: 1 }]);
    expect(r.head).toBe(JSON.parse(l1).step_hash);
    expect(r.head_seq).toBe(1);
  });

  test('an earlier line again (not the previous one) is out of order and breaks the link, not a duplicate', () => {
    const codes = verify([l0, l1, l0]).problems.map((p) => p.code);
    expect(codes).toContain('SEQ_OUT_OF_ORDER');
    expect(codes).toContain('LINK_BROKEN');
    expect(codes).not.toContain('DUPLICATE_STEP');
  });

  test('a gap is SEQ_GAP at the line after it, and the chain goes on from there', () => {
    const r = verify([l0, l2]);
    expect(where(r).map((p) => p.code)).toEqual(['SEQ_GAP', 'LINK_BROKEN']);
    expect(where(r)[0]).toEqual({ code: 'SEQ_GAP', line: 2, seq: 2 });
    // A line with problems is still read (only a duplicate is skipped): the head is the last line's.
    expect(r.head).toBe(JSON.parse(l2).step_hash);
    expect(r.head_seq).toBe(2);
  });
});

describe('LineSplitter', () => {
  /** What the lines of `text` are, by definition: split at each newline, over `max` bytes flagged. */
  function expected(bytes: Uint8Array, max: number) {
    const out: Array<{ text: string; tooLong: boolean; start: number; end: number; terminated: boolean }> = [];
    let start = 0;
    for (let i = 0; i <= bytes.length; i++) {
      if (i === bytes.length ? i > start : bytes[i] === 0x0a) {
        const terminated = i < bytes.length;
        const tooLong = i - start > max;
        out.push({
          text: tooLong ? '' : Buffer.from(bytes.subarray(start, i)).toString('latin1'),
          tooLong,
          start,
          end: terminated ? i + 1 : i,
          terminated,
        });
        start = i + 1;
      }
    }
    return out;
  }

  test('any cut into pieces gives the same lines, offsets and over-long flags; the lines after a long one are intact', () => {
    const line = fc.oneof(fc.constant(''), fc.string({ unit: fc.constantFrom('a', 'b', '{'), maxLength: 12 }));
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 8 }),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 6 }),
        (lines, torn, max, cuts) => {
          const text = lines.join('\n') + (torn || lines.length === 0 ? '' : '\n');
          const bytes = enc.encode(text);
          const splitter = new LineSplitter(max);
          const got: Array<{ text: string; tooLong: boolean; start: number; end: number; terminated: boolean }> = [];
          let at = 0;
          for (let k = 0; at < bytes.length; k++) {
            const size = cuts[k % cuts.length]!;
            // A fresh buffer each time, overwritten after use: lines must not keep views of it.
            const piece = bytes.slice(at, at + size);
            for (const l of splitter.push(piece))
              got.push({
                text: Buffer.from(l.bytes).toString('latin1'),
                tooLong: l.tooLong,
                start: l.start,
                end: l.end,
                terminated: l.terminated,
              });
            piece.fill(0x7e);
            at += size;
          }
          const last = splitter.end();
          if (last)
            got.push({
              text: Buffer.from(last.bytes).toString('latin1'),
              tooLong: last.tooLong,
              start: last.start,
              end: last.end,
              terminated: last.terminated,
            });
          expect(got).toEqual(expected(bytes, max));
          expect(splitter.lines).toBe(got.filter((l) => l.terminated).length);
          expect(splitter.end()).toBeNull();
        },
      ),
      { numRuns: Number(process.env.RUNS ?? 300) },
    );
  });

  test('a line that grows past the limit across pieces, then short lines in the same piece and the next', () => {
    const s = new LineSplitter(4);
    expect(s.push(enc.encode('abc'))).toEqual([]);
    expect(s.push(enc.encode('def'))).toEqual([]);
    const out = s.push(enc.encode('g\nab\ncd'));
    expect(out.map((l) => [Buffer.from(l.bytes).toString(), l.tooLong, l.start, l.end])).toEqual([
      ['', true, 0, 8],
      ['ab', false, 8, 11],
    ]);
    expect(s.push(enc.encode('\n')).map((l) => [Buffer.from(l.bytes).toString(), l.tooLong, l.start, l.end])).toEqual([
      ['cd', false, 11, 14],
    ]);
    expect(s.end()).toBeNull();
  });
});

describe('describeLocation / describeProblem: how a location is written in messages (the CLI\'s "file:line:column, seq, field" form)', () => {
  test.each<[ProblemLocation, string]>([
    [{ file: 'b.jsonl', line: 3, column: 7, seq: 2, field: 'seq' }, 'b.jsonl:3:7, seq 2, seq'],
    [{ file: 'b.jsonl', line: 3 }, 'b.jsonl:3'],
    [{ file: 'b.jsonl' }, 'b.jsonl'],
    [{ file: 'b.jsonl', column: 4 }, 'b.jsonl'],
    [{ line: 5, column: 2 }, 'line 5'],
    [{ seq: 0 }, 'seq 0'],
    [{ path: '' }, 'the record'],
    [{ path: '/input/a', field: 'input' }, '/input/a'],
    [{ field: 'prev_hash' }, 'prev_hash'],
    [{}, ''],
  ])('%j → %s', (loc, text) => {
    expect(describeLocation(loc)).toBe(text);
  });

  test('a problem: CODE at location: message', () => {
    expect(
      describeProblem({
        code: 'LINK_BROKEN',
        message: 'm',
        location: { file: 'f', line: 1, seq: 0, field: 'prev_hash' },
      }),
    ).toBe('LINK_BROKEN at f:1, seq 0, prev_hash: m');
  });
});
