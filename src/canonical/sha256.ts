/**
 * SHA-256 (FIPS 180-4) behind one seam. In Node, node:crypto's native hash does the work; anywhere else
 * (a browser page), the portable @noble/hashes. The choice is made once, when this module loads, by asking
 * the platform for node:crypto (`process.getBuiltinModule`, Node ≥ 20.16): nothing is imported from Node,
 * so the module stays browser-safe, and no entry point, caller or dependency swaps the hash behind the
 * verifier's back — the backend is not exported from any entry. test/canonical/sha256.test.ts proves the
 * two identical on every vector and on generated inputs.
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
  /** Lowercase hex digest of a string's UTF-8, where the platform has a one-shot hash (node:crypto's hash). */
  hexUtf8?(text: string): string;
  /** The same digest as 32 characters, one per byte (U+0000–U+00FF), where the platform has a one-shot hash. */
  latin1Utf8?(text: string): string;
  /** Lowercase hex digest of the concatenated parts' UTF-8, where the platform has a one-shot hash. */
  hexUtf8Parts?(parts: readonly string[]): string;
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
    if (parts.length === 1) return nobleSha256(encoder.encode(parts[0]));
    const h = nobleSha256.create();
    for (const part of parts) h.update(encoder.encode(part));
    return h.digest();
  },
  bytes(data) {
    return nobleSha256(data);
  },
};

/** The one name of a Node module in this file: asked for at run time, never imported (test/proofs/purity.test.ts). */
const NODE_CRYPTO = 'node:crypto';

/** The part of node:crypto this module uses. */
interface NodeHash {
  update(data: Uint8Array | string, encoding?: 'utf8'): NodeHash;
  digest(): Uint8Array;
}
type CreateHash = (algorithm: 'sha256') => NodeHash;
interface OneShot {
  (algorithm: 'sha256', data: string, encoding: 'hex' | 'latin1'): string;
  (algorithm: 'sha256', data: Uint8Array, encoding: 'buffer'): Uint8Array;
  (algorithm: 'sha256', data: Uint8Array, encoding: 'hex'): string;
}

/** node:crypto's one-shot `hash` (Node ≥ 20.12), or null. */
function nodeOneShot(host: object): OneShot | null {
  const p = (host as { process?: { getBuiltinModule?: unknown } }).process;
  const crypto =
    typeof p?.getBuiltinModule === 'function'
      ? (p.getBuiltinModule as (id: string) => unknown)(NODE_CRYPTO)
      : undefined;
  const hash = (crypto as { hash?: unknown } | undefined)?.hash;
  return typeof hash === 'function' ? (hash as OneShot) : null;
}

/** node:crypto's createHash when `host` is Node's global object, else null (a browser has no `process`). */
export function nodeCreateHash(host: object): CreateHash | null {
  const p = (host as { process?: { getBuiltinModule?: unknown } }).process;
  const crypto =
    typeof p?.getBuiltinModule === 'function'
      ? (p.getBuiltinModule as (id: string) => unknown)(NODE_CRYPTO)
      : undefined;
  const create = (crypto as { createHash?: unknown } | undefined)?.createHash;
  return typeof create === 'function' ? (create as CreateHash) : null;
}

/**
 * Where parts are encoded before one hash: outside the JavaScript heap, reused. Joining a stored line's two
 * halves (the step hash's B, FORMAT §14.7) made a flat copy of the whole line on the heap for every line
 * verified, about 1.6 KB a bench line that the young generation then collected; encoding each part in place
 * is also faster (1.25 µs against 1.45 µs a line, bench/RESULTS.md). A text longer than the scratch is joined.
 */
const PARTS_SCRATCH = new Uint8Array(64 * 1024);

function hexOfParts(oneShot: OneShot, parts: readonly string[]): string {
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    // At most 3 bytes per UTF-16 unit: a part that might not fit is not tried (encodeInto would stop short). A
    // part ending in a high surrogate may be half a pair the next part ends: encoded alone, each half would be
    // U+FFFD, the pair joined is one character, so such parts are joined.
    if (3 * part.length > PARTS_SCRATCH.length - at || (i < parts.length - 1 && endsInHighSurrogate(part)))
      return oneShot('sha256', parts.join(''), 'hex');
    at += encoder.encodeInto(part, at === 0 ? PARTS_SCRATCH : PARTS_SCRATCH.subarray(at)).written;
  }
  return oneShot('sha256', PARTS_SCRATCH.subarray(0, at), 'hex');
}

function endsInHighSurrogate(text: string): boolean {
  const c = text.charCodeAt(text.length - 1);
  return c >= 0xd800 && c <= 0xdbff;
}

/** A Uint8Array over a Buffer's bytes (no copy), so every backend returns the same type. */
const plain = (d: Uint8Array): Uint8Array => new Uint8Array(d.buffer, d.byteOffset, d.length);

function nodeBackendOf(createHash: CreateHash, oneShot: OneShot | null): Sha256Backend {
  return {
    name: NODE_CRYPTO,
    // A small text costs a third of createHash's time through the one-shot call (measured: 0.34 µs against
    // 0.84 µs for 60 bytes): committed records (FORMAT §12) hash a dozen small texts per step.
    ...(oneShot === null
      ? {}
      : {
          hexUtf8: (text: string) => oneShot('sha256', text, 'hex'),
          latin1Utf8: (text: string) => oneShot('sha256', text, 'latin1'),
          hexUtf8Parts: (parts: readonly string[]) => hexOfParts(oneShot, parts),
        }),
    create() {
      const h = createHash('sha256');
      return {
        update: (data) => void h.update(data),
        digest: () => plain(h.digest()),
      };
    },
    utf8(parts) {
      const h = createHash('sha256');
      for (const part of parts) h.update(part, 'utf8');
      return plain(h.digest());
    },
    // The one-shot call for bytes too: a tree node's 65 bytes hash in 0.8 µs against 1.25 µs through
    // createHash (measured), and the writer's tree hashes about two of them per step.
    bytes:
      oneShot === null
        ? (data) => plain(createHash('sha256').update(data).digest())
        : (data) => plain(oneShot('sha256', data, 'buffer')),
  };
}

const createHash = nodeCreateHash(globalThis);
/** node:crypto's SHA-256, where the platform has it. */
export const nodeBackend: Sha256Backend | null =
  createHash === null ? null : nodeBackendOf(createHash, nodeOneShot(globalThis));

let backend: Sha256Backend = nodeBackend ?? nobleBackend;

/**
 * For bench/ only, which measures the portable hash against the native one: not exported from any entry
 * point, so no dependency of an application can reach it.
 */
export function setSha256Backend(next: Sha256Backend): void {
  backend = next;
}

export function sha256Backend(): Sha256Backend {
  return backend;
}

/** The two character codes of each byte's lowercase hex, at 2b and 2b + 1. */
const HEX_CODES = (() => {
  const codes = new Uint16Array(512);
  for (let b = 0; b < 256; b++) {
    const hex = b.toString(16).padStart(2, '0');
    codes[2 * b] = hex.charCodeAt(0);
    codes[2 * b + 1] = hex.charCodeAt(1);
  }
  return codes;
})();
/** Arguments per fromCharCode call: bounded, never the input's length. */
const HEX_CHUNK = 2048;
let hexScratch = new Uint16Array(2 * 32);
/** A digest's 64 codes, passed whole: no view of the scratch made for each of the digests a step hex-encodes. */
const digestCodes = new Uint16Array(2 * 32);

/**
 * Lowercase hex of `bytes`, built as one flat string from character codes. Appending two characters at a
 * time builds a rope of about 30 string nodes per digest, which every retained digest (step hashes,
 * idempotency keys) keeps: about 900 bytes instead of 80, and 5x slower (measured on 300 000 digests).
 */
export function toHex(bytes: Uint8Array): string {
  if (bytes.length === 32) {
    for (let i = 0, j = 0; i < 32; i++, j += 2) {
      const at = 2 * bytes[i]!;
      digestCodes[j] = HEX_CODES[at]!;
      digestCodes[j + 1] = HEX_CODES[at + 1]!;
    }
    return String.fromCharCode.apply(null, digestCodes as unknown as number[]);
  }
  let out = '';
  for (let start = 0; start < bytes.length; start += HEX_CHUNK) {
    const end = Math.min(bytes.length, start + HEX_CHUNK);
    const n = 2 * (end - start);
    if (hexScratch.length < n) hexScratch = new Uint16Array(n);
    for (let i = start, j = 0; i < end; i++, j += 2) {
      const at = 2 * bytes[i]!;
      hexScratch[j] = HEX_CODES[at]!;
      hexScratch[j + 1] = HEX_CODES[at + 1]!;
    }
    out += String.fromCharCode.apply(null, hexScratch.subarray(0, n) as unknown as number[]);
  }
  return out;
}

/** `"sha256:" + lowercase hex`, the form every digest takes in stepchain documents. */
export function digestUtf8(...parts: string[]): string {
  if (parts.length > 1 && backend.hexUtf8Parts !== undefined) return 'sha256:' + backend.hexUtf8Parts(parts);
  if (backend.hexUtf8 !== undefined)
    return 'sha256:' + backend.hexUtf8(parts.length === 1 ? parts[0]! : parts.join(''));
  return 'sha256:' + toHex(backend.utf8(parts));
}

/**
 * Lowercase hex of SHA-256 over one string's UTF-8, without the `sha256:` prefix: for hashes whose hex is
 * cut or embedded (commitment salts and slot digests, FORMAT §12), where the prefix would be added only
 * to be sliced off again.
 */
export function hexUtf8(text: string): string {
  return backend.hexUtf8 !== undefined ? backend.hexUtf8(text) : toHex(backend.utf8([text]));
}

/**
 * SHA-256 over one string's UTF-8 as 32 characters, one per byte (U+0000–U+00FF): a digest kept or handed between
 * threads as bytes (the approval check's earlier calls, approval/earlier-calls.ts), without hex to write and
 * parse again (node:crypto writes this form as cheaply as hex, half the length).
 */
export function latin1Utf8(text: string): string {
  if (backend.latin1Utf8 !== undefined) return backend.latin1Utf8(text);
  return String.fromCharCode.apply(null, backend.utf8([text]) as unknown as number[]);
}

/**
 * Whether the SHA-256 in effect is the portable one (@noble/hashes: a browser), where hashing many short
 * messages through the batched kernel (canonical/sha256-batch.ts) and whole entries through WebCrypto pays.
 * Inside Node, node:crypto's native hash is used as before.
 */
export function sha256IsPortable(): boolean {
  return backend === nobleBackend;
}

/** The part of WebCrypto used here (this module's types name no platform library). */
interface SubtleDigest {
  digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>;
}

/**
 * SHA-256 of a whole buffer through the platform's native WebCrypto (`crypto.subtle.digest`), or null where
 * the backend in effect is already native (node:crypto streams at the CPU's speed) or the platform has no
 * WebCrypto. In a browser the backend is @noble/hashes, at about 2.6× node:crypto's CPU (bench/RESULTS.md,
 * "The page against the CLI"); a caller that holds a whole archive entry anyway digests it natively here.
 * WebCrypto has no incremental form, so this is only for bytes held whole.
 */
export function wholeDigest(): ((data: Uint8Array) => Promise<Uint8Array>) | null {
  if (!sha256IsPortable()) return null;
  const subtle = (globalThis as { crypto?: { subtle?: SubtleDigest } }).crypto?.subtle;
  if (subtle === undefined || typeof subtle.digest !== 'function') return null;
  return async (data) => new Uint8Array(await subtle.digest('SHA-256', data));
}

/** An incremental hash from the backend in effect (node:crypto inside Node). */
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
