/**
 * Member names are part of a value (src/diff/key.ts, spec/DIFF.md §5.1; issue 15 item 11). A mutant that
 * compared objects by their values alone — {"a":1} and {"b":1} the same — passed the whole suite, because
 * the generated pairs never had equal values under different names. These tests build exactly such pairs,
 * for both the key (its fast path and its walk) and the side-by-side comparison.
 */
import * as fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { equalityKey, sameProjection } from '../../src/diff/key.js';
import { jsonValue } from '../../src/testing/index.js';

/** The same value with every object's members inserted in reverse order (forces the key's walk). */
function reversed(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(reversed);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).reverse()) out[k] = reversed((v as Record<string, unknown>)[k]);
  return out;
}

const same = (a: unknown, b: unknown): boolean => sameProjection({ result: a }, { result: b }, 100);
const key = (v: unknown): string => equalityKey({ result: v }, 100);

describe('objects with equal values under different names differ', () => {
  test.each([
    ['one member renamed', { a: 1 }, { b: 1 }],
    ['the same values, names swapped between them', { a: 1, b: 2 }, { a: 2, b: 1 }],
    ['a renamed member among equal ones', { a: 1, b: 1 }, { a: 1, c: 1 }],
    ['an empty name against a named one', { '': 'x' }, { x: 'x' }],
    ['a name differing only in case', { key: null }, { Key: null }],
    ['renamed inside an array', [{ a: [1] }], [{ b: [1] }]],
    ['renamed two levels down', { o: { p: { a: true } } }, { o: { p: { z: true } } }],
    ['integer-like names', { '1': 'v', '2': 'w' }, { '1': 'v', '3': 'w' }],
  ])('%s', (_what, a, b) => {
    expect(same(a, b)).toBe(false);
    expect(same(b, a)).toBe(false);
    expect(key(a)).not.toBe(key(b));
    expect(key(reversed(a))).not.toBe(key(b));
    expect(key(a)).toBe(key(reversed(a))); // and a value still equals itself, however its members are inserted
  });

  test('an own member named __proto__ against another name (a lookup by name would find Object.prototype)', () => {
    // JSON.parse makes "__proto__" an own member; an object literal would set the prototype instead.
    const a = JSON.parse('{"__proto__":{}}') as unknown;
    const b = { x: {} };
    expect(same(a, b)).toBe(false);
    expect(same(b, a)).toBe(false);
    expect(key(a)).not.toBe(key(b));
  });

  test('top-level members of a projection: the same value under another field is another step', () => {
    expect(sameProjection({ input: 'x' }, { result: 'x' }, 100)).toBe(false);
    expect(equalityKey({ input: 'x' }, 100)).not.toBe(equalityKey({ result: 'x' }, 100));
  });

  test('property: renaming any one member of any object changes the key and sameProjection says no', () => {
    const objectValue = fc.dictionary(fc.string({ maxLength: 4 }), jsonValue(), { minKeys: 1, maxKeys: 5 });
    fc.assert(
      fc.property(objectValue, fc.nat(), fc.string({ maxLength: 5 }), (obj, pick, fresh) => {
        const names = Object.keys(obj);
        const victim = names[pick % names.length]!;
        const newName = names.includes(fresh) ? `${fresh}\u0000${names.join('')}` : fresh;
        const renamed: Record<string, unknown> = {};
        for (const n of names) renamed[n === victim ? newName : n] = obj[n];
        // A value whose members are all the same is what let the mutant through: also try that.
        const flat = Object.fromEntries(names.map((n) => [n, 0]));
        const flatRenamed = Object.fromEntries(Object.keys(renamed).map((n) => [n, 0]));
        for (const [a, b] of [
          [obj, renamed],
          [flat, flatRenamed],
          [[obj], [renamed]],
        ] as const) {
          expect(same(a, b)).toBe(false);
          expect(key(a)).not.toBe(key(b));
          expect(key(reversed(a))).not.toBe(key(reversed(b)));
        }
      }),
      { numRuns: 2000 },
    );
  });
});
