/** canonicalValue (canonical/value.ts): the value of a canonical text equals JSON.parse of it, in every case it short-cuts. */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { canonicalValue } from '../../src/canonical/value.js';
import { awkwardValue } from '../helpers/awkward-json.js';

describe('canonicalValue', () => {
  test.each([
    'null',
    'true',
    'false',
    '0',
    '-1.5',
    '1e+21',
    '"a"',
    '"a\\"b"',
    '""',
    '[]',
    '{}',
    '[null]',
    '{"n":null}',
  ])('%s reads as JSON.parse reads it', (text) => {
    expect(canonicalValue(`{"x":${text}}`, 5, 5 + text.length)).toEqual(JSON.parse(text));
  });

  test('equals JSON.parse on the JCS of any value, read inside a larger text (fast-check)', () => {
    fc.assert(
      fc.property(awkwardValue, (v) => {
        const text = canonicalJsonTrusted(v as never);
        expect(canonicalValue(`[1,${text},2]`, 3, 3 + text.length)).toEqual(JSON.parse(text));
      }),
      { numRuns: 500 },
    );
  });
});
