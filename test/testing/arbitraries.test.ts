import fc from 'fast-check';
import { expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { jsonNumber, jsonValue, step } from '../../src/testing/index.js';

// What the kit generates is what a journal hands back: a value that changed through JCS (such as -0,
// which JCS writes as 0) would make a generated record differ from the one read back.
test('generated values survive the canonical round trip unchanged', () => {
  fc.assert(
    fc.property(jsonValue(), (v) => {
      expect(JSON.parse(canonicalJson(v))).toEqual(v);
    }),
    { numRuns: 2000 },
  );
});

test('generated numbers are never -0', () => {
  fc.assert(
    fc.property(jsonNumber(), (n) => !Object.is(n, -0)),
    { numRuns: 5000 },
  );
});

test('generated steps survive the canonical round trip unchanged', () => {
  fc.assert(
    fc.property(step(), (s) => {
      expect(JSON.parse(canonicalJson(s))).toEqual(s);
    }),
    { numRuns: 500 },
  );
});
