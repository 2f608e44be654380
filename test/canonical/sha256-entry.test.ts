/**
 * The hash seam's entry points (canonical/sha256.ts) under both backends: `digestUtf8` of several parts is
 * the digest of their concatenation, `hexUtf8` is the same without the prefix, `digestBytes` and
 * `sha256Stream` agree with them, all against FIPS 180-4's own example ("abc") and node:crypto. The
 * backend is swapped through `setSha256Backend` (bench/'s seam) and always put back.
 */
import * as nodeCrypto from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import {
  digestBytes,
  digestUtf8,
  hexUtf8,
  nobleBackend,
  nodeBackend,
  setSha256Backend,
  sha256Backend,
  sha256Stream,
  toHex,
} from '../../src/canonical/sha256.js';

const ABC = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
const utf8 = (s: string) => new TextEncoder().encode(s);
const reference = (s: string) => nodeCrypto.createHash('sha256').update(s, 'utf8').digest('hex');
const original = sha256Backend();
afterEach(() => setSha256Backend(original));

test('inside Node the node:crypto backend exists, with its one-shot hash (Node ≥ 20.12)', () => {
  expect(nodeBackend).not.toBeNull();
  expect(nodeBackend!.hexUtf8).toBeTypeOf('function');
});

const noOneShot =
  nodeBackend === null ? null : { ...nodeBackend, hexUtf8: undefined, name: 'node:crypto without one-shot' };

describe.each([
  ['node:crypto', nodeBackend],
  ['node:crypto without its one-shot hash', noOneShot],
  ['@noble/hashes', nobleBackend],
])('under %s', (_, backend) => {
  test('digestUtf8, hexUtf8, digestBytes and sha256Stream give the FIPS 180-4 digest of "abc"', () => {
    setSha256Backend(backend!);
    expect(sha256Backend()).toBe(backend);
    expect(digestUtf8('abc')).toBe(`sha256:${ABC}`);
    expect(digestUtf8('a', 'bc')).toBe(`sha256:${ABC}`);
    expect(digestUtf8('', 'a', '', 'b', 'c')).toBe(`sha256:${ABC}`);
    expect(hexUtf8('abc')).toBe(ABC);
    expect(digestBytes(utf8('abc'))).toBe(`sha256:${ABC}`);
    const h = sha256Stream();
    h.update(utf8('a'));
    h.update(utf8('bc'));
    expect(toHex(h.digest())).toBe(ABC);
  });

  test('text beyond ASCII is hashed as its UTF-8, split anywhere between code points', () => {
    setSha256Backend(backend!);
    const text = 'é😀 ☃ \u2028 日本';
    expect(digestUtf8(text)).toBe(`sha256:${reference(text)}`);
    expect(digestUtf8('é😀 ', '☃ \u2028', ' 日本')).toBe(`sha256:${reference(text)}`);
    expect(hexUtf8(text)).toBe(reference(text));
    expect(digestBytes(utf8(text))).toBe(`sha256:${reference(text)}`);
    expect(digestBytes(new Uint8Array(0))).toBe(`sha256:${reference('')}`);
  });
});
