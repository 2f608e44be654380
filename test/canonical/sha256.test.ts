import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import * as nodeCrypto from 'node:crypto';
import {
  latin1Utf8,
  nobleBackend,
  nodeBackend as maybeNode,
  nodeCreateHash,
  setSha256Backend,
  sha256Backend,
  toHex,
} from '../../src/canonical/sha256.js';
import { loadVectors } from '../helpers/vectors.js';

const nodeBackend = maybeNode!;

interface StepHashCase {
  id: string;
  preimage: string;
  step_hash: string;
}

const steps = loadVectors<StepHashCase>('step-hashes.json');

// node:crypto may stand in for @noble/hashes only if the two agree everywhere (the brief's rule).
describe('node:crypto and @noble/hashes give identical SHA-256', () => {
  test.each(steps.cases.map((c) => [c.id, c] as const))('step-hashes vector %s', (_id, c) => {
    for (const backend of [nobleBackend, nodeBackend]) {
      expect('sha256:' + toHex(backend.utf8([c.preimage]))).toBe(c.step_hash);
    }
  });

  test('on generated text split into parts, and on bytes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 5 }),
        fc.uint8Array({ maxLength: 300 }),
        (parts, bytes) => {
          expect(toHex(nodeBackend.utf8(parts))).toBe(toHex(nobleBackend.utf8(parts)));
          expect(toHex(nodeBackend.bytes(bytes))).toBe(toHex(nobleBackend.bytes(bytes)));
          expect(toHex(nobleBackend.utf8(parts))).toBe(toHex(nobleBackend.utf8([parts.join('')])));
          // The streaming method, fed the bytes in pieces, agrees with both one-shot digests.
          const cut = bytes.length >> 1;
          for (const backend of [nobleBackend, nodeBackend]) {
            const h = backend.create();
            h.update(bytes.subarray(0, cut));
            h.update(bytes.subarray(cut));
            expect(toHex(h.digest())).toBe(toHex(nobleBackend.bytes(bytes)));
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  test("a digest as one-byte characters is the digest's bytes, with either hash", () => {
    const codes = (s: string): number[] => Array.from(s, (c) => c.charCodeAt(0));
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), (text) => {
        const digest = Array.from(nobleBackend.utf8([text]));
        expect(codes(latin1Utf8(text))).toEqual(digest);
        setSha256Backend(nobleBackend);
        try {
          expect(codes(latin1Utf8(text))).toEqual(digest);
        } finally {
          setSha256Backend(nodeBackend);
        }
      }),
      { numRuns: 300 },
    );
  });

  test('parts hashed in one scratch (hexUtf8Parts): any text, past the scratch too, as if joined', () => {
    const parts = nodeBackend.hexUtf8Parts!;
    const joined = (ps: string[]): string => toHex(nobleBackend.utf8([ps.join('')]));
    fc.assert(
      fc.property(
        fc.array(
          fc.string({
            unit: fc.oneof(fc.constantFrom('\ud83d', '\ude00'), fc.string({ unit: 'grapheme', maxLength: 1 })),
            maxLength: 300,
          }),
          { maxLength: 6 },
        ),
        (ps) => {
          expect(parts(ps)).toBe(joined(ps));
        },
      ),
      { numRuns: 500 },
    );
    // Around the 64 KiB scratch: ASCII that fits exactly, one that does not, and three-byte characters.
    for (const ps of [
      ['a'.repeat(21_000), 'b'.repeat(845)],
      ['a'.repeat(40_000), 'b'.repeat(40_000)],
      ['\u20ac'.repeat(21_845), 'x'],
      ['\u20ac'.repeat(30_000), '\ud83d\ude00'.repeat(10)],
      // A surrogate pair cut between two parts is one character joined; lone halves stay U+FFFD.
      ['a\ud83d', '\ude00b'],
      ['\ud83d', '\ude00', '\ud83d'],
      ['\udc00x', 'y\ud800'],
      [],
    ])
      expect(parts(ps)).toBe(joined(ps));
  });

  test('the FIPS 180-4 "abc" example', () => {
    const abc = 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad';
    expect(toHex(nobleBackend.utf8(['abc']))).toBe(abc);
    expect(toHex(nodeBackend.utf8(['a', 'bc']))).toBe(abc);
  });
});

describe('the backend is chosen inside the library, not installed by an entry point', () => {
  test('in Node, node:crypto is in effect from the first import of any module', () => {
    expect(maybeNode).not.toBeNull();
    expect(sha256Backend().name).toBe('node:crypto');
  });

  test('without a `process` (a browser), or without getBuiltinModule, there is no node backend, so @noble/hashes stays', () => {
    expect(nodeCreateHash({})).toBeNull();
    expect(nodeCreateHash({ process: {} })).toBeNull();
    expect(nodeCreateHash({ process: { getBuiltinModule: () => undefined } })).toBeNull();
    expect(
      nodeCreateHash({
        process: { getBuiltinModule: (id: string) => (id === 'node:crypto' ? nodeCrypto : undefined) },
      }),
    ).toBe(nodeCrypto.createHash);
  });
});
