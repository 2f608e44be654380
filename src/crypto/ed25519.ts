/**
 * Ed25519 as spec/RECEIPT.md §5 uses it, beneath the chain so that the chain verifier's approval records
 * (spec/APPROVALS.md) are checked by the same exact rules as receipts: key ids, the public-key check, DSSE's
 * pre-authentication encoding and the signature check. Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { digestBytes } from '../canonical/sha256.js';
import { base64Decode } from './base64.js';

const encoder = new TextEncoder();

/** "sha256:" + hex(SHA-256(raw public key)). */
export function keyIdOf(publicKey: Uint8Array): string {
  return digestBytes(publicKey);
}

/**
 * Why 32 bytes cannot be an Ed25519 public key under spec/RECEIPT.md §5.1, or null: the encoding must be
 * canonical (y < p, and no "negative zero" x) and the point must not be of small order — a small-order
 * key makes signatures that verify for any message.
 */
export function publicKeyDefect(raw: Uint8Array): string | null {
  if (!(raw instanceof Uint8Array) || raw.length !== 32) return 'is not 32 bytes';
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(raw, false); // zip215 false: RFC 8032 §5.1.3 decoding, canonical only
  } catch {
    return 'is not the canonical encoding of a point on Ed25519';
  }
  if (point.isSmallOrder())
    return 'is a point of small order, which no signer can own: signatures with it verify for many messages';
  return null;
}

/** PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, LEN in ASCII decimal bytes. */
export function pae(payloadType: string, body: Uint8Array): Uint8Array {
  const type = encoder.encode(payloadType);
  const head = encoder.encode(`DSSEv1 ${type.length} `);
  const mid = encoder.encode(` ${body.length} `);
  const out = new Uint8Array(head.length + type.length + mid.length + body.length);
  out.set(head, 0);
  out.set(type, head.length);
  out.set(mid, head.length + type.length);
  out.set(body, head.length + type.length + mid.length);
  return out;
}

const Point = ed25519.Point;
/** L, the order of the prime-order subgroup (RFC 8032 §5.1). */
const L = Point.Fn.ORDER;

function littleEndian(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/**
 * Why an Ed25519 signature does not verify under spec/RECEIPT.md §5.1, or null when it does. The rules are
 * RFC 8032 §5.1.7 made exact where the RFC leaves a choice, because conforming verifiers must agree:
 * S < L; A and R canonically encoded (y < p, no "negative zero"); A not of small order; and the
 * cofactorless equation [S]B = R + [k]A with k = SHA-512(R || A || M) mod L over the bytes as received.
 * @noble/curves' own verify checks the cofactored equation ([8][S]B = [8]R + [8][k]A), which accepts
 * signatures under a mixed-order key that Go, OpenSSL, BoringSSL and libsodium refuse, so the equation is
 * written out here (vectors/receipts.json pins the difference: invalid-signature-mixed-order-key).
 */
export function signatureDefect(message: Uint8Array, sig: Uint8Array, publicKey: Uint8Array): string | null {
  if (sig.length !== 64) return 'the signature is not 64 bytes';
  const keyWhy = publicKeyDefect(publicKey);
  if (keyWhy) return `public_key ${keyWhy}`;
  const rBytes = sig.subarray(0, 32);
  const s = littleEndian(sig.subarray(32));
  if (s >= L) return "the signature's S is not reduced modulo L (a malleable, non-canonical encoding)";
  let R: InstanceType<typeof Point>;
  try {
    R = Point.fromBytes(rBytes, false);
  } catch {
    return "the signature's R is not the canonical encoding of a point";
  }
  const A = Point.fromBytes(publicKey, false);
  const h = sha512.create().update(rBytes).update(publicKey).update(message).digest();
  const k = littleEndian(h) % L;
  const left = Point.BASE.multiplyUnsafe(s); // S is public: no need for the constant-time ladder
  const right = k === 0n ? R : R.add(A.multiplyUnsafe(k));
  return left.equals(right) ? null : 'the signature does not verify ([S]B ≠ R + [k]A)';
}

/** The DER prefix of an Ed25519 PKCS#8 private key (RFC 8410 §7): everything before the 32 seed bytes. */
export const PKCS8_PREFIX = Uint8Array.from([
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
]);

export function unpem(text: string, label: string): Uint8Array | null {
  const m = new RegExp(
    `^\\s*-----BEGIN ${label}-----\\r?\\n([A-Za-z0-9+/=\\r\\n]+?)\\r?\\n?-----END ${label}-----\\s*$`,
  ).exec(text);
  if (!m) return null;
  return base64Decode(m[1]!.replace(/\r?\n/g, ''));
}

export function stripPrefix(der: Uint8Array | null, prefix: Uint8Array): Uint8Array | null {
  if (der?.length !== prefix.length + 32) return null;
  for (let i = 0; i < prefix.length; i++) if (der[i] !== prefix[i]) return null;
  return der.slice(prefix.length);
}

/** The 32-byte seed of an Ed25519 PKCS#8 PEM text ("-----BEGIN PRIVATE KEY-----"), or null. */
export function seedFromPkcs8Pem(text: string): Uint8Array | null {
  return stripPrefix(unpem(text, 'PRIVATE KEY'), PKCS8_PREFIX);
}

/**
 * A key as a caller hands one in, the same everywhere a key is taken: its bytes, or PEM text tagged as
 * such. A bare string is not one: it read as PEM text in one place, a path in another and base64 in a third.
 */
export type KeyInput = Uint8Array | { pem: string };

/** On the Node entries a key may also be a file: `{ keyFile }` names a PEM key file. */
export type KeyFileInput = KeyInput | { keyFile: string };

/** Whether `key` is a `{ pem }` key input (a guard for what plain JavaScript passes). */
export function isPemInput(key: unknown): key is { pem: string } {
  return key !== null && typeof key === 'object' && 'pem' in key && typeof key.pem === 'string';
}
