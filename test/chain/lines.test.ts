// The one line splitter (spec/FORMAT.md §4.4): wherever a stream is cut into pieces, the lines, their
// offsets and the too-long verdicts are those of the whole stream split at each newline.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, type SplitLine } from '../../src/chain/lines.js';
import { Buffer } from 'node:buffer';

/** The lines of a whole buffer, split the obvious way. */
function expected(bytes: Uint8Array, maxBytes: number, start: number): SplitLine[] {
  const out: SplitLine[] = [];
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    const tooLong = i - from > maxBytes;
    out.push({
      bytes: tooLong ? new Uint8Array(0) : bytes.slice(from, i),
      terminated: true,
      start: start + from,
      end: start + i + 1,
      tooLong,
    });
    from = i + 1;
  }
  if (from < bytes.length) {
    const tooLong = bytes.length - from > maxBytes;
    out.push({
      bytes: tooLong ? new Uint8Array(0) : bytes.slice(from),
      terminated: false,
      start: start + from,
      end: start + bytes.length,
      tooLong,
    });
  }
  return out;
}

const plain = (lines: SplitLine[]) => lines.map((l) => ({ ...l, bytes: Array.from(l.bytes) }));

describe('LineSplitter', () => {
  it('gives the same lines however the stream is cut, through push() and through split()', () => {
    const stream = fc.array(fc.constantFrom(0x0a, 0x61, 0x62, 0x7b), { maxLength: 120 });
    fc.assert(
      fc.property(
        stream,
        fc.array(fc.nat(120), { maxLength: 8 }),
        fc.integer({ min: 0, max: 12 }),
        fc.nat(1000),
        (data, cuts, maxBytes, start) => {
          const bytes = Uint8Array.from(data);
          const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
          const pieces: Uint8Array[] = [];
          let at = 0;
          for (const p of [...points, bytes.length]) {
            pieces.push(bytes.slice(at, p));
            at = p;
          }
          const want = plain(expected(bytes, maxBytes, start));

          const pushed = new LineSplitter(maxBytes, start);
          const viaPush = pieces.flatMap((piece) => pushed.push(piece));
          const pushedTorn = pushed.end();
          expect(plain(pushedTorn === null ? viaPush : [...viaPush, pushedTorn])).toEqual(want);

          const splitter = new LineSplitter(maxBytes, start);
          const viaSplit: SplitLine[] = [];
          for (const piece of pieces) {
            // The caller reuses its buffer once split returns: lines must not depend on it afterwards.
            const buffer = piece.slice();
            splitter.split(buffer, (b, tooLong, s, e) =>
              viaSplit.push({ bytes: b.slice(), terminated: true, start: s, end: e, tooLong }),
            );
            buffer.fill(0x7a);
          }
          const torn = splitter.end();
          expect(plain(torn === null ? viaSplit : [...viaSplit, torn])).toEqual(want);
          expect(splitter.lines).toBe(want.filter((l) => l.terminated).length);

          // The same with one Node Buffer reused for every piece, as a file reader with one read buffer does
          // (a Buffer's own slice is a view: the splitter must copy what it keeps).
          const reused = Buffer.alloc(bytes.length + 1);
          const fromBuffer = new LineSplitter(maxBytes, start);
          const viaBuffer: SplitLine[] = [];
          for (const piece of pieces) {
            reused.set(piece);
            fromBuffer.split(reused.subarray(0, piece.length), (b, tooLong, s, e) =>
              viaBuffer.push({ bytes: Uint8Array.from(b), terminated: true, start: s, end: e, tooLong }),
            );
            reused.fill(0x7a);
          }
          const bufferTorn = fromBuffer.end();
          expect(plain(bufferTorn === null ? viaBuffer : [...viaBuffer, bufferTorn])).toEqual(want);
        },
      ),
      { numRuns: 400 },
    );
  });
});
