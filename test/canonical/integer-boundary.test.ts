/**
 * The scanner's integer fast path (src/canonical/scan.ts) at the edge of exact doubles (issue 15 item 11). An
 * integer token of at most 15 characters is taken as canonical without converting it; a 16-digit one may
 * exceed 2^53 and name a double that prints otherwise (9007199254740993 is the double 9007199254740992).
 * A mutant that let 16 characters through survived the suite, because every generated 16-digit integer
 * started with 7. These cases and the property over 15 to 17 digits, both signs, kill it.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { scanCanonical } from '../../src/canonical/scan.js';

/** What RFC 8785 makes canonical: the token is exactly Number::toString of its value. */
const canonical = (t: string): boolean => String(Number(t)) === t;
const scannedCanonical = (t: string): boolean => scanCanonical(`[${t}]`).defect === null;

const TWO_53 = 2n ** 53n;

describe('integers around 2^53', () => {
  test.each([
    ['9007199254740991', true], // 2^53 - 1, the largest safe integer
    ['9007199254740992', true], // 2^53
    ['9007199254740993', false], // rounds to 2^53
    ['9007199254740994', true],
    ['9007199254740995', false], // rounds to ...996 (ties to even)
    ['9999999999999999', false], // the double is 1e16
    ['1000000000000000', true], // 16 digits, exact
    ['8999999999999999', true], // 16 digits below 2^53
    ['99999999999999999', false],
    ['12345678901234567', false], // prints 12345678901234568
    ['123456789012345', true], // 15 digits: the fast path's whole range
    ['-999999999999999', true], // 15 digits and a sign: 16 characters, past the fast path
    ['-9007199254740993', false],
    ['-9007199254740992', true],
    ['-9999999999999999', false],
  ])('%s is canonical: %s', (t, expected) => {
    expect(canonical(t)).toBe(expected); // the premise, checked against the engine
    expect(scannedCanonical(t)).toBe(expected);
    const d = scanCanonical(`{"n":${t}}`).defect;
    if (!expected) expect(d).toMatchObject({ code: 'NONCANONICAL_LINE', index: 5, path: '/n' });
  });
});

/** Integers as the grammar allows them, with exactly `digits` digits and any first digit. */
const integerOf = (digits: number) =>
  fc
    .tuple(
      fc.boolean(),
      fc.integer({ min: 1, max: 9 }),
      fc.array(fc.integer({ min: 0, max: 9 }), { minLength: digits - 1, maxLength: digits - 1 }),
    )
    .map(([neg, first, rest]) => `${neg ? '-' : ''}${first}${rest.join('')}`);

describe('the fast path agrees with Number::toString', () => {
  test('on integers of 15, 16 and 17 digits with any first digit, both signs', () => {
    fc.assert(
      fc.property(fc.oneof(integerOf(15), integerOf(16), integerOf(17)), (t) => {
        expect(scannedCanonical(t)).toBe(canonical(t));
      }),
      { numRuns: 20_000 },
    );
  });

  test('on integers within 2^20 of ±2^53, where exact and rounded doubles alternate', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 20n), max: 2n ** 20n }), fc.boolean(), (offset, neg) => {
        const t = `${neg ? '-' : ''}${TWO_53 + offset}`;
        expect(scannedCanonical(t)).toBe(canonical(t));
      }),
      { numRuns: 5_000 },
    );
  });

  test('the 16-digit integers the property draws include some above 2^53', () => {
    // Guards the guard: the generator that let the mutant survive never drew one.
    const drawn = fc.sample(integerOf(16), { numRuns: 1000, seed: 15 });
    expect(drawn.some((t) => BigInt(t.replace('-', '')) > TWO_53)).toBe(true);
    expect(drawn.some((t) => !canonical(t))).toBe(true);
  });
});
