/**
 * The writer's gate and helpers at edges no other test reached (spec/FORMAT.md §3.2; each case a mutant that
 * survived, test/mutation/SURVIVORS.md): members JSON cannot see (symbol keys, a non-enumerable toJSON), an
 * array subclass, the hint an error carries, digests that are not strings, and JSON Pointer parsing.
 */
import { describe, expect, test } from 'vitest';
import { canonicalBytes, canonicalJson } from '../../src/canonical/jcs.js';
import { canonicalJsonChecked } from '../../src/canonical/jcs.js';
import { parsePointer, toPointer, escapeToken } from '../../src/canonical/pointer.js';
import { isDigest } from '../../src/canonical/sha256.js';
import { refusal } from '../helpers/refusal.js';

class Tagged extends Array<number> {}

describe('what JSON.stringify would silently drop or call is refused, on both writer paths', () => {
  const withToJSON = { a: 1 };
  Object.defineProperty(withToJSON, 'toJSON', { value: () => 'other', enumerable: false });
  test.each([
    ['a symbol-keyed member', { a: 1, [Symbol('s')]: 2 }, 'UNSUPPORTED_TYPE', '/v'],
    ['a non-enumerable toJSON method', withToJSON, 'NOT_PLAIN_OBJECT', '/v'],
    ['an array subclass', Tagged.from([1, 2]), 'NOT_PLAIN_OBJECT', '/v'],
  ])('%s', (_what, v, code, path) => {
    for (const serialize of [canonicalJson, canonicalJsonChecked]) {
      const e = refusal(() => serialize({ v }));
      expect(e.code, serialize.name).toBe(code);
      expect(e.location.path).toBe(path);
    }
  });
});

describe('errors carry a hint exactly when there is something to do', () => {
  test('a non-finite number: the hint says what to record instead', () => {
    const e = refusal(() => canonicalJson({ n: Number.NaN }));
    expect(typeof e.hint).toBe('string');
    expect(e.hint!.length).toBeGreaterThan(0);
    expect(e.message.endsWith(`(${e.hint})`)).toBe(true);
  });

  test('a cycle: no hint', () => {
    const o: Record<string, unknown> = {};
    o.self = o;
    const e = refusal(() => canonicalJson(o));
    expect(e.code).toBe('CYCLE');
    expect(e.hint).toBeUndefined();
    expect(e.message.endsWith(')')).toBe(false);
  });
});

test('canonicalBytes is the UTF-8 of canonicalJson', () => {
  const v = { b: 'é😀', a: [1, null] };
  expect(new TextDecoder().decode(canonicalBytes(v))).toBe(canonicalJson(v));
  expect(canonicalBytes(v)).toEqual(new TextEncoder().encode('{"a":[1,null],"b":"é😀"}'));
});

describe('isDigest', () => {
  const d = 'sha256:' + 'ab'.repeat(32);
  test.each([
    [d, true],
    [d.toUpperCase(), false],
    [d + '\n', false],
    [d.slice(0, -1), false],
    [[d], false], // String([d]) is the digest: only a string is one
    [{ toString: () => d }, false],
    [null, false],
  ])('%j: %s', (v, expected) => {
    expect(isDigest(v)).toBe(expected);
  });
});

describe('JSON Pointer parsing (RFC 6901)', () => {
  test.each([
    ['', []],
    ['/', ['']],
    ['/a~1b/c~0d', ['a/b', 'c~d']],
    ['/~01', ['~1']], // ~0 is unescaped after ~1, so this is "~1", not "/"
    ['/~0', ['~']],
    ['/0/-', ['0', '-']],
  ])('%j', (pointer, tokens) => {
    expect(parsePointer(pointer)).toEqual(tokens);
    expect(toPointer(tokens)).toBe(pointer);
  });

  test.each(['a', 'a/b', '/~2', '/a~', '/~/'])('%j is refused', (pointer) => {
    expect(() => parsePointer(pointer)).toThrow(RangeError);
  });

  test('tokens without ~ or / are written as they are; numbers as decimals', () => {
    expect(escapeToken('plain')).toBe('plain');
    expect(escapeToken(12)).toBe('12');
    expect(escapeToken('~/')).toBe('~0~1');
  });
});
