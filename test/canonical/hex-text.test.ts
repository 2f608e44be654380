/**
 * The in-place digest and seed tests (src/canonical/hex-text.ts) that replaced sticky regular expressions in
 * the member rules: the same answer as those expressions for any text at any offset — near-digests that differ
 * in one character (upper case, a digit past 'f', a character past 0xff whose low byte is a hex digit, a
 * surrogate), spans that run past the text's end, and the quotes.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { isDigestTextAt, isHex64TextAt } from '../../src/canonical/hex-text.js';

const DIGEST = /^"sha256:[0-9a-f]{64}"$/;
const SEED = /^"[0-9a-f]{64}"$/;
const byRegex = (re: RegExp, text: string, start: number, end: number): boolean =>
  end <= text.length && re.test(text.slice(start, end));

const hex64 = fc.stringMatching(/^[0-9a-f]{64}$/);
/** One character that is not a lowercase hex digit, several of them close to one. */
const notHex = fc.constantFrom('A', 'F', 'g', '/', ':', '`', 'G', '\u0130', '\u0161', '\u0231', '\ud800', '"', ' ');

/** A valid text with, maybe, one character replaced; placed at an offset inside other text. */
const placed = (prefix: string) =>
  fc
    .tuple(fc.string({ maxLength: 8 }), hex64, fc.option(fc.tuple(fc.nat(63), notHex)), fc.string({ maxLength: 8 }))
    .map(([before, hex, change, after]) => {
      const digits = change === null ? hex : hex.slice(0, change[0]) + change[1] + hex.slice(change[0] + 1);
      return { text: `${before}"${prefix}${digits}"${after}`, start: before.length };
    });

test.each([
  ['isDigestTextAt', isDigestTextAt, 'sha256:', 73, DIGEST],
  ['isHex64TextAt', isHex64TextAt, '', 66, SEED],
] as const)('%s agrees with its pattern at every offset and span', (_name, isAt, prefix, length, pattern) => {
  fc.assert(
    fc.property(placed(prefix), fc.integer({ min: -2, max: 2 }), ({ text, start }, stretch) => {
      const end = start + length + stretch;
      expect(isAt(text, start, end)).toBe(byRegex(pattern, text, start, end));
    }),
    { numRuns: 2000 },
  );
});

test('a span past the end of the text is never a digest', () => {
  const text = '"sha256:' + 'a'.repeat(64) + '"';
  expect(isDigestTextAt(text, 0, 73)).toBe(true);
  expect(isDigestTextAt(text.slice(0, 72), 0, 73)).toBe(false);
  expect(isHex64TextAt('"' + 'a'.repeat(63), 0, 66)).toBe(false);
});
