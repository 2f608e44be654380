/**
 * The scanner's fast paths (issue 9, bench/) against the reference they skip: a number is canonical
 * exactly when String(Number(token)) === token, and a string's characters are checked one by one. Each
 * fast path must give the same verdict as the reference on generated input.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { isShortestDecimal, scanCanonical } from '../../src/canonical/scan.js';

const digitString = (min: number, max: number) =>
  fc.array(fc.constantFrom(...'0123456789'), { minLength: min, maxLength: max }).map((a) => a.join(''));

/** Decimals as the grammar allows them: optional "-", integer part without a leading zero, a fraction. */
const decimal = fc
  .tuple(
    fc.boolean(),
    fc.oneof(
      fc.constant('0'),
      digitString(0, 17).map((d) => '1' + d),
    ),
    fc.nat(8),
    digitString(1, 18),
  )
  .map(([neg, int, zeros, frac]) => `${neg ? '-' : ''}${int}.${'0'.repeat(zeros)}${frac}`);

/** Integers as the grammar allows them, up to 20 digits. */
const integer = fc
  .tuple(
    fc.boolean(),
    fc.oneof(
      fc.constant('0'),
      digitString(0, 19).map((d) => String(1 + (d.length % 9)) + d),
    ),
  )
  .map(([neg, digits]) => `${neg ? '-' : ''}${digits}`);

describe('number fast paths', () => {
  test('isShortestDecimal only accepts what Number::toString prints', () => {
    fc.assert(
      fc.property(decimal, (t) => {
        if (isShortestDecimal(t, 0, t.indexOf('.'), t.length)) expect(String(Number(t))).toBe(t);
      }),
      { numRuns: 20_000 },
    );
  });

  test.each([
    ['0.1', true],
    ['0.000001', true],
    ['0.0000001', false],
    ['-0.5', true],
    ['1.0', false],
    ['0.10', false],
    ['123456789012.345', true],
    ['1234567890123.456', false],
    ['0.30000000000000004', false],
  ])('isShortestDecimal(%s) is %s', (t, expected) => {
    expect(isShortestDecimal(t, 0, t.indexOf('.'), t.length)).toBe(expected);
  });

  test.each([
    ['-0'],
    ['0'],
    ['123456789012345'],
    ['1234567890123456'],
    ['-0.0'],
    ['1e2'],
    ['0.0000001'],
    ['100000000000000000000000'],
  ])('the scanner and String(Number()) agree on %s', (t) => {
    const line = `{"a":${t}}`;
    expect(scanCanonical(line).defect === null).toBe(String(Number(t)) === t);
  });

  test('the scanner calls a number canonical exactly when String(Number(token)) === token', () => {
    fc.assert(
      fc.property(fc.oneof(decimal, integer, fc.double({ noNaN: true, noDefaultInfinity: true }).map(String)), (t) => {
        const expected = String(Number(t)) === t && Number.isFinite(Number(t));
        expect(scanCanonical(`[${t}]`).defect === null).toBe(expected);
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('string fast path', () => {
  test('long and short strings: same verdict as the character rules', () => {
    const unit = fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom(...'abc XYZ-0.9é€') },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          '\\n',
          '\\"',
          '\\\\',
          '\\u0001',
          '\\/',
          '\\u0041',
          '"',
          '\\',
          '\u0001',
          '\ud800',
          '\udc00',
          '\ud83d\ude00',
          '\\ud83d\\ude00',
        ),
      },
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 120 }), (parts) => {
        const body = parts.join('');
        const text = `"${body}"`;
        const scanned = scanCanonical(text).defect;
        // The reference: the same string scanned one unit per call (no run is long enough for the fast path).
        let reference: unknown;
        try {
          const value: unknown = JSON.parse(text);
          reference =
            typeof value === 'string' && JSON.stringify(value) === text && value.isWellFormed() ? null : 'defect';
        } catch {
          reference = 'defect';
        }
        expect(scanned === null ? null : 'defect').toBe(reference);
      }),
      { numRuns: 5_000 },
    );
  });
});
