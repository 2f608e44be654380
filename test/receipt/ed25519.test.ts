/**
 * The Ed25519 verification rules of spec/RECEIPT.md §5.1 (issue 15 item 9): RFC 8032's own test vectors
 * verify; each rule refuses exactly its crafted input; the equation is the cofactorless one; and on honest
 * and damaged signatures the verifier agrees with @noble/curves' strict verify.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { signatureDefect, verifySignatureBytes } from '../../src/receipt/dsse.js';
import { keyPairFromSeed, publicKeyDefect } from '../../src/receipt/keys.js';

const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
const Point = ed25519.Point;
const L = Point.Fn.ORDER;
const le = (n: bigint): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => Number((n >> BigInt(8 * i)) & 0xffn));
const cat = (a: Uint8Array, b: Uint8Array): Uint8Array => Uint8Array.from([...a, ...b]);

describe('Ed25519 verification (RECEIPT.md §5.1)', () => {
  test.each([
    // RFC 8032 §7.1, TEST 1 and TEST 2: secret key, public key, message, signature.
    [
      '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
      'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
      '',
      'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    ],
    [
      '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
      '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
      '72',
      '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
    ],
  ])('RFC 8032 test vector with public key %#', (secret, pub, msg, sig) => {
    expect(Buffer.from(keyPairFromSeed(hex(secret)).publicKey).toString('hex')).toBe(pub);
    expect(signatureDefect(hex(msg), hex(sig), hex(pub))).toBeNull();
    const bad = hex(sig);
    bad[0]! ^= 1;
    expect(signatureDefect(hex(msg), bad, hex(pub))).toMatch(/does not verify|not the canonical encoding/);
  });

  const key = keyPairFromSeed(Uint8Array.from({ length: 32 }, (_, i) => i));
  const message = new TextEncoder().encode('DSSEv1 1 x 5 hello');
  const sig = ed25519.sign(message, key.privateKey);

  test('S must be below L: the same signature with S + L is refused', () => {
    const s = BigInt('0x' + Buffer.from(sig.subarray(32)).reverse().toString('hex'));
    expect(signatureDefect(message, cat(sig.subarray(0, 32), le(s + L)), key.publicKey)).toMatch(
      /not reduced modulo L/,
    );
  });

  test('every small-order point is refused as a key, and R = [S]B under it (which satisfies the equation) too', () => {
    const torsion = [1n, 2n, 3n, 4n, 5n, 6n, 7n].map((k) =>
      Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a').multiplyUnsafe(k),
    );
    for (const T of [Point.ZERO, ...torsion]) {
      const A = T.toBytes();
      expect(publicKeyDefect(A)).toMatch(/small order/);
      expect(signatureDefect(message, cat(Point.BASE.multiplyUnsafe(5n).toBytes(), le(5n)), A)).toMatch(/small order/);
    }
  });

  test('non-canonical encodings of keys and of R are refused (y ≥ p, and x = 0 with the sign bit)', () => {
    const p = 2n ** 255n - 19n;
    for (const enc of [le(p), le(p + 1n), le(p + 4n), le(1n | (1n << 255n))]) {
      expect(publicKeyDefect(enc)).toMatch(/canonical encoding/);
      expect(signatureDefect(message, cat(enc, sig.subarray(32)), key.publicKey)).toMatch(
        /R is not the canonical encoding/,
      );
    }
  });

  test('the equation is cofactorless: a mixed-order key a·B + T signs so that only the cofactored equation holds', () => {
    const a = 123456789n;
    const T = Point.fromHex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a');
    const A = Point.BASE.multiplyUnsafe(a).add(T).toBytes();
    expect(publicKeyDefect(A)).toBeNull(); // a mixed-order key is not small-order: the equation decides
    let separated = 0;
    for (let i = 1n; i <= 16n; i++) {
      const R = Point.BASE.multiplyUnsafe(i * 1000003n).toBytes();
      const k =
        BigInt(
          '0x' +
            Buffer.from(sha512(cat(cat(R, A), message)))
              .reverse()
              .toString('hex'),
        ) % L;
      const S = (i * 1000003n + k * a) % L;
      const s = cat(R, le(S));
      const cofactored = ed25519.verify(s, message, A, { zip215: false }); // @noble/curves checks [8][S]B = [8]R + [8][k]A
      expect(cofactored).toBe(true);
      const ours = signatureDefect(message, s, A);
      if (k % 8n === 0n)
        expect(ours).toBeNull(); // [k]T is the identity: both equations hold
      else {
        expect(ours).toMatch(/does not verify/);
        separated++;
      }
    }
    expect(separated).toBeGreaterThan(8);
  });

  test('on honest and damaged signatures of random keys and messages, the verifier agrees with @noble/curves strict verify', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ maxLength: 200 }),
        fc.option(fc.nat(64 * 8 - 1)),
        (seed, msg, flip) => {
          const pub = ed25519.getPublicKey(seed);
          const s = ed25519.sign(msg, seed);
          if (flip !== null) s[flip >> 3]! ^= 1 << (flip & 7);
          expect(verifySignatureBytes(msg, s, pub)).toBe(ed25519.verify(s, msg, pub, { zip215: false }));
        },
      ),
      { numRuns: 200 },
    );
  });
});
