/**
 * The writer's fast serializer (canonicalJsonTrusted) against the reference (`canonicalize` behind the
 * I-JSON gate): byte-identical on every vector and on generated values built to find the places a
 * hand-rolled JCS goes wrong — integer-like member names (which JavaScript enumerates first, in numeric
 * order), names that differ only past the BMP, -0, exponents, escapes and deep nesting.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonChecked, canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { awkwardKey, awkwardValue, fromBits } from '../helpers/awkward-json.js';
import { loadVectors } from '../helpers/vectors.js';

interface CanonicalCase {
  id: string;
  group: 'numbers' | 'values';
  ieee754_hex?: string;
  input_json?: string;
  expected: string;
}
interface StepHashCase {
  id: string;
  record: unknown;
  preimage: string;
}

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

describe('member order: small objects sorted by insertion, large ones by the engine (the bound is 24 members)', () => {
  // Up to 60 members in the order a caller built them (integer-like names enumerate first, in numeric
  // order), so both sides of the bound, already-sorted prefixes and reversed runs all occur.
  const wide = fc.uniqueArray(fc.tuple(awkwardKey, fc.oneof(fc.integer(), fc.string({ maxLength: 3 }))), {
    maxLength: 60,
    selector: ([k]) => k,
  });
  test('canonicalJsonTrusted and canonicalJsonChecked equal canonicalize on wide objects (fast-check)', () => {
    fc.assert(
      fc.property(wide, fc.boolean(), (members, reversed) => {
        const value: Record<string, unknown> = {};
        for (const [k, v] of reversed ? [...members].reverse() : members) value[k] = v;
        const nested = { outer: value, list: [value, { z: 1, a: value }] };
        expect(canonicalJsonTrusted(value)).toBe(canonicalJson(value));
        expect(canonicalJsonChecked(value)).toBe(canonicalJson(value));
        expect(canonicalJsonChecked(nested)).toBe(canonicalJson(nested));
      }),
      { numRuns: 1000 },
    );
  });

  test("the sort works on its own copy of the names: the caller's object keeps its member order", () => {
    const value = { b: 1, a: 2, c: { y: 1, x: 2 } };
    expect(canonicalJsonChecked(value)).toBe('{"a":2,"b":1,"c":{"x":2,"y":1}}');
    expect(Object.keys(value)).toEqual(['b', 'a', 'c']);
    expect(Object.keys(value.c)).toEqual(['y', 'x']);
  });
});
