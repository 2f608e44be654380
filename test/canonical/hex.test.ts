/**
 * toHex (src/canonical/sha256.ts), which every digest goes through: equal to Node's own hex encoding for
 * any bytes, including lengths past its 2048-byte chunk, and one flat string (a digest retained a million
 * times must cost its 64 characters, not a rope of string nodes: see test/hardening/scale.test.ts).
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { toHex } from '../../src/canonical/sha256.js';

test('toHex equals Buffer hex for any bytes, across chunk boundaries', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 5000 }), (bytes) => toHex(bytes) === Buffer.from(bytes).toString('hex')),
    { numRuns: 300 },
  );
  for (const n of [0, 1, 32, 2047, 2048, 2049, 4096, 4097]) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 151) & 255);
    expect(toHex(bytes)).toBe(Buffer.from(bytes).toString('hex'));
  }
});
