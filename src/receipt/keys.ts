/**
 * Ed25519 keys (RFC 8032) for receipt signatures, spec/RECEIPT.md §5. Keys travel as PEM: the private key
 * as PKCS#8 (RFC 8410 §7), the public key as SubjectPublicKeyInfo (RFC 8410 §4), so OpenSSL reads them too.
 * The key id is "sha256:" + hex(SHA-256(the raw 32-byte public key)). Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { digestBytes } from '../canonical/sha256.js';
import { base64Decode, base64Encode } from './base64.js';
import { ReceiptError } from './errors.js';
import { concatBytes } from '../bytes.js';

/** DER prefixes for Ed25519 keys: everything before the 32 key bytes. */
const PKCS8_PREFIX = Uint8Array.from([0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]);
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

export interface KeyPair {
  /** The 32-byte Ed25519 seed (RFC 8032 "private key"). */
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  keyId: string;
}

/** "sha256:" + hex(SHA-256(raw public key)). */
export function keyIdOf(publicKey: Uint8Array): string {
  return digestBytes(publicKey);
}

export function generateKeyPair(): KeyPair {
  const privateKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyIdOf(publicKey) };
}

/** The key pair for a 32-byte seed (for tests and vectors with fixed keys). */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new ReceiptError('KEY_INVALID', 'an Ed25519 private key is 32 bytes');
  const publicKey = ed25519.getPublicKey(seed);
  return { privateKey: Uint8Array.from(seed), publicKey, keyId: keyIdOf(publicKey) };
}

function pem(label: string, der: Uint8Array): string {
  const b64 = base64Encode(der);
  const lines: string[] = [];
  for (let i = 0; i < b64.length; i += 64) lines.push(b64.slice(i, i + 64));
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}


export function privateKeyToPem(privateKey: Uint8Array): string {
  return pem('PRIVATE KEY', concatBytes([PKCS8_PREFIX, privateKey]));
}

export function publicKeyToPem(publicKey: Uint8Array): string {
  return pem('PUBLIC KEY', concatBytes([SPKI_PREFIX, publicKey]));
}

function unpem(text: string, label: string): Uint8Array | null {
  const m = new RegExp(`^\\s*-----BEGIN ${label}-----\\r?\\n([A-Za-z0-9+/=\\r\\n]+?)\\r?\\n?-----END ${label}-----\\s*$`).exec(text);
  if (!m) return null;
  return base64Decode(m[1]!.replace(/\r?\n/g, ''));
}

function stripPrefix(der: Uint8Array | null, prefix: Uint8Array): Uint8Array | null {
  if (der === null || der.length !== prefix.length + 32) return null;
  for (let i = 0; i < prefix.length; i++) if (der[i] !== prefix[i]) return null;
  return der.slice(prefix.length);
}

/** A signing key: 32 raw seed bytes, or a PKCS#8 PEM text. Throws ReceiptError KEY_INVALID. */
export function parsePrivateKey(key: Uint8Array | string): Uint8Array {
  if (key instanceof Uint8Array) {
    if (key.length !== 32) throw new ReceiptError('KEY_INVALID', `an Ed25519 private key is 32 bytes, not ${key.length}`);
    return key;
  }
  if (typeof key === 'string') {
    const raw = stripPrefix(unpem(key, 'PRIVATE KEY'), PKCS8_PREFIX);
    if (raw) return raw;
  }
  throw new ReceiptError('KEY_INVALID', 'the signing key is neither 32 bytes nor an Ed25519 PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----")');
}

/**
 * A public key: 32 raw bytes, an SPKI PEM text, or the 32 bytes in standard base64. Returns null for
 * anything else (the verifier turns that into a problem; it never throws).
 */
export function parsePublicKey(key: unknown): Uint8Array | null {
  if (key instanceof Uint8Array) return key.length === 32 ? key : null;
  if (typeof key !== 'string') return null;
  if (key.includes('-----BEGIN')) return stripPrefix(unpem(key, 'PUBLIC KEY'), SPKI_PREFIX);
  const raw = base64Decode(key.trim());
  return raw && raw.length === 32 ? raw : null;
}
