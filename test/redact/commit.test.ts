/**
 * Salts and commitments at the API's edge (spec/REDACTION.md §5.2, §5.3, §6.2): a salt is exactly 32
 * bytes, or the commitment refuses it (RangeError) rather than hashing something no verifier would
 * accept; random salts are fresh, distinct and never share bytes; fixed salts run out loudly; a salt's hex
 * form is exactly 64 lowercase hex digits. Written from the surviving mutants of src/redact/commit.ts
 * (test/mutation/SURVIVORS.md).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  commitment,
  fixedSalts,
  randomSalts,
  saltFromHex,
  saltToHex,
  stepCommitment,
  SALT_BYTES,
} from '../../src/redact/index.js';

const salt = (fill: number, length = SALT_BYTES): Uint8Array => new Uint8Array(length).fill(fill);
const STEP_HASH = 'sha256:' + 'ab'.repeat(32);

describe('a salt is exactly 32 bytes', () => {
  test.each([
    ['31 bytes', salt(1, 31)],
    ['33 bytes', salt(1, 33)],
    ['empty', salt(1, 0)],
    ['an array of numbers', Array.from(salt(1)) as never],
    ['hex text', 'ab'.repeat(32) as never],
  ])('%s: commitment and stepCommitment throw RangeError, saying what a salt is', (_name, s) => {
    expect(() => commitment(s, 'value')).toThrow(new RangeError('a salt is exactly 32 bytes'));
    expect(() => stepCommitment(s, STEP_HASH)).toThrow(new RangeError('a salt is exactly 32 bytes'));
  });

  test.each(['sha256:' + 'AB'.repeat(32), 'sha256:' + 'ab'.repeat(31), 'ab'.repeat(32), ''])(
    'step hash %j: stepCommitment throws RangeError, saying what a step hash is',
    (h) => {
      expect(() => stepCommitment(salt(1), h)).toThrow(
        new RangeError('a step hash is "sha256:" and 64 lowercase hex digits'),
      );
    },
  );

  test('fixedSalts hands out its salts in order, then refuses, naming the salt (by its index) that is missing or of another length', () => {
    const next = fixedSalts([salt(1), salt(2)]);
    expect(next()).toEqual(salt(1));
    expect(next()).toEqual(salt(2));
    expect(() => next()).toThrow(new RangeError('fixed salt 2 is missing or not 32 bytes'));
    const bad = fixedSalts([salt(1), salt(2, 16)]);
    expect(bad()).toEqual(salt(1));
    expect(() => bad()).toThrow(new RangeError('fixed salt 1 is missing or not 32 bytes'));
  });
});

describe('randomSalts', () => {
  test('1 000 salts (several pools of 64): each 32 bytes, all distinct, no two sharing bytes of one pool', () => {
    const next = randomSalts();
    const salts = Array.from({ length: 1000 }, () => next());
    for (const s of salts) expect(s.length).toBe(SALT_BYTES);
    expect(new Set(salts.map(saltToHex)).size).toBe(1000);
    // No overlap: a 16-byte half of a salt never reappears at the start or end of another.
    const halves = new Set<string>();
    for (const s of salts)
      for (const h of [saltToHex(s.subarray(0, 16)), saltToHex(s.subarray(16))]) {
        expect(halves.has(h)).toBe(false);
        halves.add(h);
      }
    // Separate copies: a salt's buffer is its own 32 bytes (a view into the pool would carry the other 63
    // salts to whoever holds one), and changing one salt changes no other.
    for (const s of salts.slice(0, 65)) expect(s.buffer.byteLength).toBe(SALT_BYTES);
    salts[0]!.fill(0);
    expect(saltToHex(salts[1]!)).not.toBe('00'.repeat(32));
  });
});

describe('saltFromHex', () => {
  test('round-trips with saltToHex', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), (bytes) => {
        expect(saltFromHex(saltToHex(bytes))).toEqual(bytes);
      }),
      { numRuns: Number(process.env.RUNS ?? 100) },
    );
  });

  test.each([
    ['upper case', 'AB'.repeat(32)],
    ['63 digits', 'a'.repeat(63)],
    ['65 digits', 'a'.repeat(65)],
    ['a non-hex digit', 'g' + 'a'.repeat(63)],
    ['a prefix', 'sha256:' + 'a'.repeat(64)],
    ['a number', 1234],
    ['null', null],
    ['an object whose text is 64 hex digits', { toString: () => 'ab'.repeat(32) }],
    ['an array holding the text', ['ab'.repeat(32)]],
  ])('%s: null', (_name, hex) => {
    expect(saltFromHex(hex)).toBeNull();
  });
});
