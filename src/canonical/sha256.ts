/**
 * SHA-256 (FIPS 180-4) behind one seam. The portable implementation is @noble/hashes, so this module runs
 * in a browser; a Node entry point may install node:crypto's native hash with `setSha256Backend`, which the
 * test suite proves identical on every vector before anything relies on it.
 */
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';

/** An incremental SHA-256: feed bytes as they stream past, then take the digest once. */
export interface Sha256Stream {
  update(data: Uint8Array): void;
  digest(): Uint8Array;
}

export interface Sha256Backend {
  readonly name: string;
  /** A new incremental hash (archive entries are hashed as they stream, never held whole). */
  create(): Sha256Stream;
  /** Digest of the UTF-8 encoding of the concatenated parts. */
  utf8(parts: readonly string[]): Uint8Array;
  bytes(data: Uint8Array): Uint8Array;
}

const encoder = new TextEncoder();

export const nobleBackend: Sha256Backend = {
  name: '@noble/hashes',
  create() {
    const h = nobleSha256.create();
    return {
      update: (data) => void h.update(data),
      digest: () => h.digest(),
    };
  },
  utf8(parts) {
    if (parts.length === 1) return nobleSha256(encoder.encode(parts[0]!));
    const h = nobleSha256.create();
    for (const part of parts) h.update(encoder.encode(part));
    return h.digest();
  },
  bytes(data) {
    return nobleSha256(data);
  },
};

let backend: Sha256Backend = nobleBackend;

export function setSha256Backend(next: Sha256Backend): void {
  backend = next;
}

export function sha256Backend(): Sha256Backend {
  return backend;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i++) out += HEX[bytes[i]!];
  return out;
}

/** `"sha256:" + lowercase hex`, the form every digest takes in stepchain documents. */
export function digestUtf8(...parts: string[]): string {
  return 'sha256:' + toHex(backend.utf8(parts));
}

/** An incremental hash from the backend in effect (node:crypto inside Node once installed). */
export function sha256Stream(): Sha256Stream {
  return backend.create();
}

export function digestBytes(data: Uint8Array): string {
  return 'sha256:' + toHex(backend.bytes(data));
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

export function isDigest(value: unknown): value is string {
  return typeof value === 'string' && value.length === 71 && DIGEST_RE.test(value);
}
