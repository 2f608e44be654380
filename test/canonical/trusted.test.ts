/**
 * The writer's fast serializer (canonicalJsonTrusted) against the reference (`canonicalize` behind the
 * I-JSON gate): byte-identical on every vector and on generated values built to find the places a
 * hand-rolled JCS goes wrong — integer-like member names (which JavaScript enumerates first, in numeric
 * order), names that differ only past the BMP, -0, exponents, escapes and deep nesting.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { awkwardValue, fromBits } from '../helpers/awkward-json.js';
import { loadVectors } from '../helpers/vectors.js';

interface CanonicalCase { id: string; group: 'numbers' | 'values'; ieee754_hex?: string; input_json?: string; expected: string }
interface StepHashCase { id: string; record: unknown; preimage: string }

const canonical = loadVectors<CanonicalCase>('canonical.json');

describe('canonicalJsonTrusted equals canonicalize on validated values', () => {
  test('every canonical.json vector', () => {
    for (const c of canonical.cases) {
      const value = c.group === 'numbers' ? fromBits(c.ieee754_hex!) : JSON.parse(c.input_json!);
      expect(canonicalJsonTrusted(value), c.id).toBe(c.expected);
    }
  });

  test('every step-hashes.json record gives its golden preimage', () => {
    const hashes = loadVectors<StepHashCase>('step-hashes.json');
    expect(hashes.cases.length).toBeGreaterThan(0);
    for (const c of hashes.cases) expect(canonicalJsonTrusted(c.record), c.id).toBe(c.preimage);
  });

  test('integer-like member names are sorted as strings, not in enumeration order', () => {
    const value = { '10': 1, '2': 2, b: 3, '1': 4, a: 5 };
    expect(Object.keys(value)).toEqual(['1', '2', '10', 'b', 'a']); // what JSON.stringify alone would follow
    expect(canonicalJsonTrusted(value)).toBe('{"1":4,"10":1,"2":2,"a":5,"b":3}');
  });

  test('generated values (fast-check)', () => {
    fc.assert(
      fc.property(awkwardValue, (value) => {
        expect(canonicalJsonTrusted(value)).toBe(canonicalJson(value));
      }),
      { numRuns: 2000 },
    );
  });
});
