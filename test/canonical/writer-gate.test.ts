/**
 * The writer's gate (spec/FORMAT.md §3.2) at the edges its mutation run left open (test/mutation/SURVIVORS.md,
 * src/canonical): canonicalJsonChecked serializes ordinary I-JSON data in its own single walk, handing to the
 * reference gate only what it cannot vouch for; an object that is not plain data is refused with a message
 * naming what it is, and a hint, whatever its prototype chain looks like.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonChecked } from '../../src/canonical/jcs.js';
import { assertIJson } from '../../src/canonical/validate.js';
import { refusal } from '../helpers/refusal.js';

/** A plain object whose member `v` counts how often it is read: a walk reads each member once. */
function counted(v: unknown): { leaf: Record<string, unknown>; reads: () => number } {
  let n = 0;
  const leaf: Record<string, unknown> = {};
  Object.defineProperty(leaf, 'v', { enumerable: true, get: () => (n++, v) });
  return { leaf, reads: () => n };
}

describe('canonicalJsonChecked: one walk for ordinary data (the reference gate is the fallback, not a second pass)', () => {
  test.each([
    [
      'inside an array of every scalar kind',
      (leaf: unknown) => ({ a: [1, -0.5, true, false, null, 'x', leaf], n: 2, b: true }),
    ],
    ["as an array's only item", (leaf: unknown) => [leaf]],
    ['after numbers and booleans in an object', (leaf: unknown) => ({ a: 1e21, b: false, c: leaf })],
  ])("a member %s is read once, and the text is the reference's", (_, build) => {
    const probe = counted(7);
    const text = canonicalJsonChecked(build(probe.leaf));
    expect(probe.reads()).toBe(1);
    const reference = counted(7);
    expect(text).toBe(canonicalJson(build(reference.leaf)));
  });

  test('a value exactly at maxDepth is serialized by the one walk; one level more is DEPTH_LIMIT at its path', () => {
    const probe = counted(1);
    // Depth 3: the outer object, {b}, and the leaf object holding v.
    expect(canonicalJsonChecked({ a: { b: probe.leaf } }, { maxDepth: 3 })).toBe('{"a":{"b":{"v":1}}}');
    expect(probe.reads()).toBe(1);
    const e = refusal(() => canonicalJsonChecked({ a: { b: { c: {} } } }, { maxDepth: 3 }));
    expect(e.code).toBe('DEPTH_LIMIT');
    expect(e.location.path).toBe('/a/b/c');
  });

  test('an array hole still reaches the reference gate: UNSUPPORTED_TYPE at the hole', () => {
    const holed = [1, , 3]; // a hole at index 1
    for (const serialize of [canonicalJson, canonicalJsonChecked]) {
      const e = refusal(() => serialize({ a: holed }));
      expect(e.code).toBe('UNSUPPORTED_TYPE');
      expect(e.location.path).toBe('/a/1');
    }
  });
});

describe('an object that is not plain data: NOT_PLAIN_OBJECT naming what it is, with a hint', () => {
  class Point {
    x = 1;
  }
  const anonymous = new (class {})();
  const noConstructor = Object.create(Object.create(null) as object) as object;
  const oddName = Object.create({ constructor: { name: 5 } }) as object;
  const objectNamed = Object.create(
    Object.create(Object.prototype, { constructor: { value: { name: 'Object' } } }) as object,
  ) as object;

  test.each([
    ['a class instance names its class', new Point(), /\ba Point is not plain JSON data/],
    ['an anonymous class: a custom prototype', anonymous, /an object with a custom prototype is not plain/],
    [
      'a prototype without a constructor: a custom prototype, not a TypeError',
      noConstructor,
      /an object with a custom prototype is not plain/,
    ],
    [
      'a constructor whose name is not a string: a custom prototype',
      oddName,
      /an object with a custom prototype is not plain/,
    ],
    [
      "a prototype claiming to be Object's",
      objectNamed,
      /an object whose prototype is not Object\.prototype is not plain/,
    ],
  ])('%s', (_, v, message) => {
    for (const check of [assertIJson, canonicalJson, canonicalJsonChecked]) {
      const e = refusal(() => check({ list: [v] }));
      expect(e.code, check.name).toBe('NOT_PLAIN_OBJECT');
      expect(e.location.path).toBe('/list/0');
      expect(e.message).toMatch(message);
      expect(e.hint ?? '').not.toBe('');
    }
  });

  test('an object with a toJSON method: NOT_PLAIN_OBJECT with a hint to call it first', () => {
    const e = refusal(() => assertIJson({ d: { toJSON: () => 1 } }));
    expect(e.code).toBe('NOT_PLAIN_OBJECT');
    expect(e.location.path).toBe('/d');
    expect(e.message).toMatch(/an object with a toJSON method is not plain/);
    expect(e.hint ?? '').not.toBe('');
  });

  test('symbol-keyed members: UNSUPPORTED_TYPE saying so', () => {
    const e = refusal(() => assertIJson({ d: { a: 1, [Symbol('k')]: 2 } }));
    expect(e.code).toBe('UNSUPPORTED_TYPE');
    expect(e.location.path).toBe('/d');
    expect(e.message).toMatch(/symbol-keyed members are not JSON/);
  });
});
