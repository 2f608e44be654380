/**
 * A detector's span in a string is mapped onto the string's chunks by the byte offsets of its escaped text
 * (REDACTION.md §13: chunks are cut from the JCS text). The offsets are now counted per code point instead of
 * encoding each one's JSON text (publishing a chat spent most of its time there); this holds the count to the
 * encoding it replaced, for every kind of code point: escaped ASCII, controls, multi-byte, pairs and lone
 * surrogates.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapedOffsets } from '../../src/redact/escaped-offsets.js';

/** The offsets as they were computed: each code point's JSON text, encoded. */
function encodedOffsets(s: string): number[] {
  const enc = new TextEncoder();
  const off = new Array<number>(s.length + 1);
  let at = 0;
  for (let i = 0; i < s.length;) {
    const cp = s.codePointAt(i)!;
    off[i] = at;
    if (cp > 0xffff) off[i + 1] = at;
    at += enc.encode(JSON.stringify(String.fromCodePoint(cp))).length - 2;
    i += cp > 0xffff ? 2 : 1;
  }
  off[s.length] = at;
  return off;
}

describe('escapedOffsets', () => {
  it('counts every code point of the BMP and the astral planes as its encoded JSON text', () => {
    const all: string[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp += cp < 0x10000 ? 1 : 97) all.push(String.fromCodePoint(cp));
    // Lone surrogates one at a time, so that neighbours do not pair up.
    const text = all.join('\u0000');
    expect(escapedOffsets(text)).toEqual(encodedOffsets(text));
  });

  it('agrees with the encoding on any UTF-16 text, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(escapedOffsets(s)).toEqual(encodedOffsets(s));
      }),
      { numRuns: 500 },
    );
  });
});
