/**
 * The writer's one-walk path (canonicalJsonChecked) against the reference (assertIJson, then
 * `canonicalize`): for any value, hostile or not, the same text or the same error — code, message and
 * JSON Pointer — under every option the writer uses. The refused.json vectors run through both paths in
 * canonical.test.ts; this file generates the rest.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { CanonicalError } from '../../src/canonical/errors.js';
import { canonicalJson, canonicalJsonChecked } from '../../src/canonical/jcs.js';
import type { ValidateOptions } from '../../src/canonical/validate.js';
import { awkwardKey, awkwardValue } from '../helpers/awkward-json.js';

type Outcome = { text: string } | { code: string; message: string; path: string };

function outcome(
  serialize: (value: unknown, options?: ValidateOptions) => string,
  value: unknown,
  options?: ValidateOptions,
): Outcome {
  try {
    return { text: serialize(value, options) };
  } catch (e) {
    if (!(e instanceof CanonicalError)) throw e;
    return { code: e.code, message: e.message, path: e.location.path ?? '' };
  }
}

function expectSameAsReference(value: unknown, options?: ValidateOptions): Outcome {
  const expected = outcome(canonicalJson, value, options);
  expect(outcome(canonicalJsonChecked, value, options)).toEqual(expected);
  return expected;
}

class Point {
  constructor(public x = 1) {}
}
class List extends Array<unknown> {}

/** Things no JSON text can carry, and things a plain walk might wave through: each must be refused as the reference refuses it. */
const hostile = fc.oneof(
  fc.constantFrom<unknown>(NaN, Infinity, -Infinity, undefined, 10n, Symbol('s'), () => 1),
  fc.constantFrom('\ud800', 'a\udc00b', '\udfff\ud800'),
  fc.constant(null).map(() => new Date(0)),
  fc.constant(null).map(() => new Map([['a', 1]])),
  fc.constant(null).map(() => new Point()),
  fc.constant(null).map(() => new Uint8Array([1])),
  fc.constant(null).map(() => Object(5)),
  fc.constant(null).map(() => ({ toJSON: () => 'x' })),
  fc.constant(null).map(() => ({ [Symbol('k')]: 1, a: 1 })),
  fc.constant(null).map(() => ({ ['\ud83d']: 1 })),
  fc.constant(null).map(() => ({ '$stepchain:blob': 1 })),
  fc.constant(null).map(() => Object.assign(Object.create(null) as object, { b: 1, a: [2] })),
  fc.constant(null).map(() => List.from([1, 2])),
  fc.constant(null).map(() => {
    const a = [1];
    a[3] = 2;
    return a;
  }),
  fc.constant(null).map(() => {
    const o: Record<string, unknown> = { a: 1 };
    o.self = { back: o };
    return o;
  }),
  fc.nat({ max: 8 }).map((n) => {
    let v: unknown = 'leaf';
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
    return v;
  }),
);

/** Valid JSON with hostile values planted at random depths and positions. */
const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    awkwardValue,
    hostile,
    fc.array(tie('tree'), { maxLength: 4 }),
    fc.dictionary(awkwardKey, tie('tree'), { maxKeys: 4 }),
  ),
}));

const options = fc.record(
  {
    maxDepth: fc.integer({ min: 1, max: 8 }),
    refuseReserved: fc.boolean(),
    basePath: fc.array(fc.oneof(awkwardKey, fc.nat({ max: 9 })), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);

describe('canonicalJsonChecked gives what the reference gives', () => {
  test('valid values: the same text (fast-check)', () => {
    fc.assert(
      fc.property(awkwardValue, (value) => {
        expect(expectSameAsReference(value)).toHaveProperty('text');
      }),
      { numRuns: 2000 },
    );
  });

  test('values with hostile parts, under any options: the same text or the same error (fast-check)', () => {
    let refused = 0;
    fc.assert(
      fc.property(tree, options, (value, opts) => {
        if ('code' in expectSameAsReference(value, opts)) refused++;
      }),
      { numRuns: 3000 },
    );
    expect(refused).toBeGreaterThan(500); // the generator does reach the refusals
  });

  test('a cycle is CYCLE, not the depth limit the fast walk stops at', () => {
    const o: Record<string, unknown> = {};
    o.me = o;
    expect(expectSameAsReference({ a: [o] })).toMatchObject({ code: 'CYCLE', path: '/a/0/me' });
  });

  test('depth exactly at the limit passes; one more is DEPTH_LIMIT', () => {
    let v: unknown = 1;
    for (let i = 0; i < 5; i++) v = [v];
    expect(expectSameAsReference(v, { maxDepth: 5 })).toEqual({ text: '[[[[[1]]]]]' });
    expect(expectSameAsReference([v], { maxDepth: 5 })).toMatchObject({ code: 'DEPTH_LIMIT' });
  });

  test('each member is read once: a getter cannot show the gate one value and the serializer another', () => {
    let reads = 0;
    const value = {
      get a() {
        reads++;
        return reads === 1 ? 'checked' : NaN;
      },
    };
    expect(canonicalJsonChecked(value)).toBe('{"a":"checked"}');
    expect(reads).toBe(1);
  });
});
