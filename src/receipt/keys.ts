/**
 * Ed25519 keys (RFC 8032) for receipt signatures, spec/RECEIPT.md §5. Keys travel as PEM: the private key
 * as PKCS#8 (RFC 8410 §7), the public key as SubjectPublicKeyInfo (RFC 8410 §4), so OpenSSL reads them too.
 * The key id is "sha256:" + hex(SHA-256(the raw 32-byte public key)). Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import {
  PKCS8_PREFIX,
  isPemInput,
  keyIdOf,
  publicKeyDefect,
  seedFromPkcs8Pem,
  stripPrefix,
  type KeyFileInput,
  type KeyInput,
} from '../crypto/ed25519.js';
import { base64Decode, base64Encode } from './base64.js';
import { ReceiptError } from './errors.js';

// Key ids and the public-key check live beneath the chain (crypto/ed25519.ts), where approval records use them too.
export { keyIdOf, publicKeyDefect, isPemInput, type KeyInput, type KeyFileInput };
import { concatBytes } from '../bytes.js';

/** DER prefixes for Ed25519 keys: everything before the 32 key bytes. */
const SPKI_PREFIX = Uint8Array.from([0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00]);

export interface KeyPair {
  /** The 32-byte Ed25519 seed (RFC 8032 "private key"). */
  privateKey: Uint8Array;
  publicKey: Uint8Array;
  keyId: string;
}

export function generateKeyPair(): KeyPair {
  const privateKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyIdOf(publicKey) };
}

/** The key pair for a 32-byte seed (for tests and vectors with fixed keys). */
export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  if (!(seed instanceof Uint8Array) || seed.length !== 32)
    throw new ReceiptError('KEY_INVALID', 'an Ed25519 private key is 32 bytes');
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

/** A signing key: 32 raw seed bytes, or `{ pem }` holding a PKCS#8 PEM. Throws ReceiptError KEY_INVALID. */
export function parsePrivateKey(key: KeyInput): Uint8Array {
  if (key instanceof Uint8Array) {
    if (key.length !== 32)
      throw new ReceiptError('KEY_INVALID', `an Ed25519 private key is 32 bytes, not ${key.length}`);
    return key;
  }
  if (isPemInput(key)) {
    const raw = seedFromPkcs8Pem(key.pem);
    if (raw) return raw;
  }
  throw new ReceiptError(
    'KEY_INVALID',
    typeof key === 'string'
      ? 'the signing key is a bare string; pass its PEM text as { pem: text }, or its file as { keyFile: path }'
      : 'the signing key is neither 32 bytes nor { pem } holding an Ed25519 PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----")',
  );
}

/** ASCII whitespace only (SP, HT, CR, LF): String.prototype.trim would also strip U+00A0, U+FEFF and others. */
function trimAscii(s: string): string {
  const ws = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
  let a = 0;
  let b = s.length;
  while (a < b && ws(s.charCodeAt(a))) a++;
  while (b > a && ws(s.charCodeAt(b - 1))) b--;
  return s.slice(a, b);
}
/** A PEM public key is about 113 characters; nothing this long is one (and it is not scanned further). */
const MAX_KEY_TEXT = 16 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export type PublicKeyResult = { ok: true; key: Uint8Array } | { ok: false; reason: string };

/**
 * Reads a pinned public key in exactly the forms spec/RECEIPT.md §5.2 accepts, and checks that it can verify
 * anything (§5.1: a canonical point encoding, not of small order):
 *   - exactly 32 bytes (a Uint8Array, for example a binary key file): the raw key;
 *   - otherwise UTF-8 text, with leading and trailing ASCII whitespace ignored, that is either the
 *     canonical base64 of 32 bytes, or a "-----BEGIN PUBLIC KEY-----" PEM block holding the Ed25519
 *     SubjectPublicKeyInfo of RFC 8410 §4 (what `stepchain keygen` writes to keyfile.pub).
 * Never throws; the reason says what the key is instead.
 */
export function decodePublicKey(key: unknown): PublicKeyResult {
  const no = (reason: string): PublicKeyResult => ({ ok: false, reason });
  let text: string;
  if (isPemInput(key)) text = key.pem;
  else if (key instanceof Uint8Array) {
    if (key.length === 32) return checkPoint(Uint8Array.from(key));
    if (key.length === 0) return no('the pinned key is empty (0 bytes)');
    try {
      text = utf8.decode(key);
    } catch {
      return no(`the pinned key is ${key.length} bytes that are neither 32 raw key bytes nor UTF-8 text`);
    }
  } else if (typeof key === 'string') text = key;
  else return no(`the pinned key is ${key === null ? 'null' : typeof key}, not bytes or text`);
  if (text.length > MAX_KEY_TEXT)
    return no(`the pinned key is ${text.length} characters of text; a public key is a few hundred at most`);
  const t = trimAscii(text);
  if (t === '') return no(text === '' ? 'the pinned key is empty' : 'the pinned key is only whitespace');
  if (t.startsWith('-----BEGIN ')) {
    const lines = t.split(/\r?\n/);
    const label = /^-----BEGIN ([A-Z0-9 ]+)-----$/.exec(lines[0]!)?.[1];
    if (label === 'PRIVATE KEY')
      return no(
        'the pinned key is a PEM private key ("BEGIN PRIVATE KEY"); pin the public key (keyfile.pub), and keep the private key private',
      );
    if (label !== 'PUBLIC KEY')
      return no(`the pinned key is a PEM block labelled ${JSON.stringify(label ?? lines[0])}, not "PUBLIC KEY"`);
    if (lines.length < 3 || lines[lines.length - 1] !== '-----END PUBLIC KEY-----')
      return no('the pinned key\'s PEM block does not end with "-----END PUBLIC KEY-----" on a line of its own');
    const body = lines.slice(1, -1);
    if (!body.every((l) => /^[A-Za-z0-9+/=]+$/.test(l)))
      return no("the pinned key's PEM block holds a line that is not base64 (PEM headers are not accepted)");
    const raw = stripPrefix(base64Decode(body.join('')), SPKI_PREFIX);
    return raw
      ? checkPoint(raw)
      : no(
          "the pinned key's PEM block is not an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4: 302a300506032b6570032100 and 32 key bytes)",
        );
  }
  const raw = base64Decode(t);
  if (raw === null)
    return no(
      'the pinned key is text but neither canonical base64 (RFC 4648, padded) nor a "-----BEGIN PUBLIC KEY-----" PEM block',
    );
  if (raw.length !== 32) return no(`the pinned key is the base64 of ${raw.length} bytes; an Ed25519 public key is 32`);
  return checkPoint(raw);
}

function checkPoint(raw: Uint8Array): PublicKeyResult {
  const why = publicKeyDefect(raw);
  return why ? { ok: false, reason: `the pinned key ${why}` } : { ok: true, key: raw };
}

/** `decodePublicKey`'s key, or null when it is not one (kept for callers that need no reason). */
export function parsePublicKey(key: unknown): Uint8Array | null {
  const r = decodePublicKey(key);
  return r.ok ? r.key : null;
}
