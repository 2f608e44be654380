/**
 * The diff's equality key (src/diff/key.ts): its fast path (native JSON.stringify when members are already
 * in sorted order) and its walk must write the same text, so equal values get equal keys whichever path
 * each side took. For I-JSON values both must equal JCS, which is independent of either.
 */
import * as fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { equalityKey, KEY_HASH_THRESHOLD, sameProjection } from '../../src/diff/key.js';
import { jsonValue } from '../../src/testing/index.js';

/** The same value with every object's members inserted in reverse order (forces the walk). */
function reversed(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(reversed);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).reverse()) out[k] = reversed((v as Record<string, unknown>)[k]);
  return out;
}

/** The same value with members in sorted order (takes the fast path where names are not integer-like). */
function sorted(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map(sorted);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sorted((v as Record<string, unknown>)[k]);
  return out;
}

const key = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.nat({ max: 20 }).map(String),
  fc.constantFrom('10', '2', 'é', '\ud83d\ude00', '\uffff'),
);
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    jsonValue(),
    fc.constantFrom(-0, 1e21, 5e-324),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
}));

describe('equalityKey', () => {
  test('the fast path and the walk write the same key, and it is JCS for I-JSON values', () => {
    fc.assert(
      fc.property(value, (v) => {
        const expected =
          `{"result":${canonicalJson(v)},"input":null}`.length > KEY_HASH_THRESHOLD
            ? null
            : `{"input":null,"result":${canonicalJson(v)}}`;
        const keys = [sorted(v), reversed(sorted(v)), v].map((x) => equalityKey({ result: x, input: null }, 100));
        expect(keys[1]).toBe(keys[0]);
        expect(keys[2]).toBe(keys[0]);
        if (expected !== null) expect(keys[0]).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  test('integer-like member names, which JavaScript enumerates first, are still sorted as strings', () => {
    expect(equalityKey({ f: { b: 1, '10': 2, '2': 3 } }, 100)).toBe('{"f":{"10":2,"2":3,"b":1}}');
  });

  test('what JSON cannot carry is refused with its path on either path', () => {
    expect(() => equalityKey({ f: { a: 1, b: [1, Number.NaN] } }, 100)).toThrow(/NaN is not a JSON number/);
    expect(() => equalityKey({ f: { a: undefined } }, 100)).toThrow(/undefined/);
    expect(() => equalityKey({ f: [[[1]]] }, 3)).toThrow(/deeper than 3/);
  });
});

/** Values equalityKey refuses, or that only a walk of both sides can tell apart. */
const odd = fc.constantFrom<unknown>(
  Number.NaN,
  Infinity,
  undefined,
  () => 1,
  Symbol('s'),
  1n,
  new Date(0),
  new Map(),
  -0,
  0,
  '\ud800',
  [1, , 3],
);
const { oddValue } = fc.letrec<{ oddValue: unknown }>((tie) => ({
  oddValue: fc.oneof(
    { depthSize: 'small' },
    value,
    odd,
    fc.array(tie('oddValue'), { maxLength: 3 }),
    fc.dictionary(key, tie('oddValue'), { maxKeys: 3 }),
  ),
}));

function keyOrError(v: unknown, maxDepth: number): string {
  try {
    return equalityKey(v, maxDepth);
  } catch {
    return 'refused';
  }
}

describe('sameProjection', () => {
  test('a yes implies that both keys exist and are equal (fast-check, hostile values and shallow limits)', () => {
    let yes = 0;
    fc.assert(
      fc.property(oddValue, oddValue, fc.boolean(), fc.integer({ min: 1, max: 6 }), (x, y, twin, maxDepth) => {
        // Half the time compare a value with a copy of itself, so that yes is common enough to mean something.
        const a = { result: x };
        const b = { result: twin ? x : y };
        if (sameProjection(a, b, maxDepth)) {
          yes++;
          const ka = keyOrError(a, maxDepth);
          expect(ka).not.toBe('refused');
          expect(keyOrError(b, maxDepth)).toBe(ka);
        }
      }),
      { numRuns: 3000 },
    );
    expect(yes).toBeGreaterThan(300);
  });

  test('equal values parsed from the same canonical text are the same, and any change is not', () => {
    fc.assert(
      fc.property(value, value, (x, y) => {
        const text = canonicalJson({ input: x, result: y });
        expect(sameProjection(JSON.parse(text), JSON.parse(text), 128)).toBe(true);
        const other = canonicalJson({ input: y, result: x });
        expect(sameProjection(JSON.parse(text), JSON.parse(other), 128)).toBe(
          equalityKey(JSON.parse(text), 128) === equalityKey(JSON.parse(other), 128),
        );
      }),
      { numRuns: 1000 },
    );
  });

  test('what the key refuses is never the same, even compared with itself', () => {
    for (const bad of [Number.NaN, Infinity, undefined, [1, , 2], new Date(0), { deep: [[[1]]] }]) {
      const p = { result: bad };
      expect(sameProjection(p, p, 3)).toBe(false);
    }
    expect(sameProjection({ result: -0 }, { result: 0 }, 3)).toBe(true);
  });
});
