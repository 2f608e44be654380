/**
 * The shape checks of canonical/json.ts that every parser of a hostile document uses (FORMAT §3.1's data
 * model): a JSON object is neither null nor an array, an exact member set is exact, a seq is an integer
 * from 0 to 2^53 − 1. Each answers yes or no for anything and never throws.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { hasExactMembers, isObject, isSeq } from '../../src/canonical/json.js';

describe('isObject: a JSON object, not null, not an array', () => {
  test.each([
    ['{}', {}],
    ['an object with members', { a: 1 }],
    ['an object without a prototype', Object.create(null) as object],
  ])('%s is an object', (_, v) => {
    expect(isObject(v)).toBe(true);
  });

  test.each([
    ['null', null],
    ['undefined', undefined],
    ['[]', []],
    ['an array with members', [1, { a: 1 }]],
    ['a string', '{}'],
    ['a number', 0],
    ['true', true],
    ['a function', () => ({})],
  ])('%s is not an object', (_, v) => {
    expect(isObject(v)).toBe(false);
  });
});

describe('hasExactMembers: exactly the names given, no more, no fewer', () => {
  test('the same names in any insertion order', () => {
    expect(hasExactMembers({ b: 1, a: 2 }, ['a', 'b'])).toBe(true);
    expect(hasExactMembers({ a: 2, b: 1 }, ['a', 'b'])).toBe(true);
    expect(hasExactMembers({}, [])).toBe(true);
  });

  test('one member missing, one extra, one replaced', () => {
    expect(hasExactMembers({ a: 1 }, ['a', 'b'])).toBe(false);
    expect(hasExactMembers({ a: 1, b: 2, c: 3 }, ['a', 'b'])).toBe(false);
    expect(hasExactMembers({ a: 1, c: 2 }, ['a', 'b'])).toBe(false);
    expect(hasExactMembers({ x: 1 }, [])).toBe(false);
    expect(hasExactMembers({}, ['a'])).toBe(false);
  });

  test("the names are compared after sorting the object's: a member set sorted differently is not matched by position", () => {
    // Names given in UTF-16 order; the object's keys are sorted the same way before the positional compare.
    expect(hasExactMembers({ z: 1, a: 1, m: 1 }, ['a', 'm', 'z'])).toBe(true);
    expect(hasExactMembers({ a: 1, m: 1, z: 1 }, ['a', 'z', 'm'])).toBe(false);
  });

  test('agrees with a set comparison for any object and any sorted name list (fast-check)', () => {
    const name = fc.constantFrom('a', 'b', 'c', 'seq', 'size', '');
    fc.assert(
      fc.property(fc.uniqueArray(name), fc.uniqueArray(name), (keys, wanted) => {
        const o = Object.fromEntries(keys.map((k) => [k, 0]));
        const names = [...wanted].sort();
        const same = keys.length === names.length && names.every((n) => keys.includes(n));
        expect(hasExactMembers(o, names)).toBe(same);
      }),
      { numRuns: 300 },
    );
  });
});

describe('isSeq: an integer from 0 to 2^53 − 1', () => {
  test.each([0, 1, 42, Number.MAX_SAFE_INTEGER])('%s is a seq', (v) => {
    expect(isSeq(v)).toBe(true);
  });

  test.each([
    ['-1', -1],
    ['-0.5', -0.5],
    ['1.5', 1.5],
    ['2^53', 2 ** 53],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['the text "1"', '1'],
    ['1n', 1n],
    ['null', null],
    ['undefined', undefined],
  ])('%s is not a seq', (_, v) => {
    expect(isSeq(v)).toBe(false);
  });
});
