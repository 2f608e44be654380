import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CHUNK_MAX, CHUNK_MAX_LONG, CHUNK_THRESHOLD, LONG_TEXT, chunkEnds, escapedText } from './v3-helpers.js';

/** The chunk ends as the first implementation computed them (a view of exactly the text, ok[] filled always). */
function referenceEnds(text: Uint8Array): number[] | null {
  if (text.length <= CHUNK_THRESHOLD) return null;
  const max = text.length > LONG_TEXT ? CHUNK_MAX_LONG : CHUNK_MAX;
  const ok = new Uint8Array(text.length + 1).fill(1);
  for (let i = 0; i < text.length; i++) {
    if (text[i] === 0x5c) {
      const len = text[i + 1] === 0x75 ? 6 : 2;
      for (let k = 1; k < len && i + k <= text.length; k++) ok[i + k] = 0;
      i += len - 1;
      continue;
    }
    if ((text[i]! & 0xc0) === 0x80) ok[i] = 0;
  }
  const ends: number[] = [];
  let s = 0;
  while (s < text.length) {
    let e = Math.min(s + max, text.length);
    if (e < text.length) {
      let cut = -1;
      for (let k = e; k > s + (max >> 1); k--) {
        if (text[k - 1] === 0x20 && ok[k] === 1) {
          cut = k;
          break;
        }
      }
      if (cut > 0) e = cut;
      else while (e > s && ok[e] !== 1) e--;
    }
    ends.push(e);
    s = e;
  }
  return ends;
}

// Bytes that decide chunk ends: backslash, `u`, space, UTF-8 lead and continuation bytes, plain letters.
const decisive = fc.constantFrom(0x5c, 0x75, 0x20, 0x41, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xf0, 0x9f, 0x22);
const bytes = (maxLength: number) =>
  fc
    .array(fc.oneof(decisive, fc.integer({ min: 0, max: 255 })), { maxLength, size: 'max' })
    .map((a) => Uint8Array.from(a));
// Strings as the writer meets them: words, spaces, quotes, backslashes, control characters, non-ASCII.
const piece = fc.oneof(
  fc.constantFrom(' ', 'word ', '"', '\\', '\n', '\u0001', 'é', '€', '😀', 'a b c '),
  fc.string({ maxLength: 12 }),
);
// The same without anything JSON escapes (most texts): spaces, words and multi-byte characters only.
const plain = fc.constantFrom(' ', 'word ', 'é', '€', '😀', 'a b c ', 'xyzxyzxyz', 'ü ');
const plainTexts = (maxLength: number) =>
  fc.array(plain, { maxLength, size: 'max' }).map((a) => escapedText(a.join('')));
const noBackslash = (maxLength: number) => bytes(maxLength).map((b) => b.map((x) => (x === 0x5c ? 0x5d : x)));
const texts = (maxLength: number) => fc.array(piece, { maxLength, size: 'max' }).map((a) => escapedText(a.join('')));

describe('chunkEnds over a range of a larger buffer (the scan passes its own bytes, no view)', () => {
  it('gives the chunk ends of the same bytes on their own, for escaped texts and for any bytes (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.oneof(texts(60), bytes(400), texts(1000), plainTexts(100), noBackslash(400), plainTexts(1200)),
        bytes(8),
        bytes(8),
        (text, before, after) => {
          const buf = new Uint8Array(before.length + text.length + after.length);
          buf.set(before);
          buf.set(text, before.length);
          buf.set(after, before.length + text.length);
          const expected = referenceEnds(text);
          expect(chunkEnds(buf, before.length, before.length + text.length)).toEqual(expected);
          expect(chunkEnds(text)).toEqual(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a backslash as the last byte of the range ends a two-byte escape, whatever byte follows the range', () => {
    const text = new Uint8Array(70).fill(0x41);
    text[69] = 0x5c;
    const buf = Uint8Array.from([...text, 0x75, 0x30, 0x30]);
    expect(chunkEnds(buf, 0, 70)).toEqual(referenceEnds(text));
    expect(chunkEnds(buf, 0, 70)).toEqual([64, 70]);
  });
});
