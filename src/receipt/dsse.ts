/**
 * The DSSE envelope (github.com/secure-systems-lab/dsse, protocol v1) over the receipt manifest,
 * spec/RECEIPT.md §5: Ed25519 signs PAE(payloadType, manifest bytes), verified by the exact rules of §5.1.
 * Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { sha512 } from '@noble/hashes/sha2.js';
import { base64Encode } from './base64.js';
import { keyIdOf, publicKeyDefect } from './keys.js';

export const PAYLOAD_TYPE = 'application/vnd.stepchain.receipt-manifest+json';

const encoder = new TextEncoder();

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

export interface DsseEnvelope {
  payload: string;
  payloadType: string;
  signatures: Array<{ keyid: string; sig: string }>;
}

/** The signature entry: the envelope and the public key it verifies with. */
export interface SignatureDocument {
  envelope: DsseEnvelope;
  format: typeof SIGNATURE_FORMAT;
  public_key: string;
}

export const SIGNATURE_FORMAT = 'stepchain-receipt-signature/v1';

export function signManifest(manifest: Uint8Array, privateKey: Uint8Array): SignatureDocument {
  const publicKey = ed25519.getPublicKey(privateKey);
  const sig = ed25519.sign(pae(PAYLOAD_TYPE, manifest), privateKey);
  return {
    envelope: { payload: base64Encode(manifest), payloadType: PAYLOAD_TYPE, signatures: [{ keyid: keyIdOf(publicKey), sig: base64Encode(sig) }] },
    format: SIGNATURE_FORMAT,
    public_key: base64Encode(publicKey),
  };
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
  if (s >= L) return 'the signature\'s S is not reduced modulo L (a malleable, non-canonical encoding)';
  let R: InstanceType<typeof Point>;
  try {
    R = Point.fromBytes(rBytes, false);
  } catch {
    return 'the signature\'s R is not the canonical encoding of a point';
  }
  const A = Point.fromBytes(publicKey, false);
  const h = sha512.create().update(rBytes).update(publicKey).update(message).digest();
  const k = littleEndian(h) % L;
  const left = Point.BASE.multiplyUnsafe(s); // S is public: no need for the constant-time ladder
  const right = k === 0n ? R : R.add(A.multiplyUnsafe(k));
  return left.equals(right) ? null : 'the signature does not verify ([S]B ≠ R + [k]A)';
}

export function verifySignatureBytes(message: Uint8Array, sig: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return signatureDefect(message, sig, publicKey) === null;
  } catch {
    return false;
  }
}
