/**
 * Salted commitments to redacted values (spec/REDACTION.md §5.2):
 *
 *   commitment = digest( "stepchain-redaction/v1\n" || salt || UTF-8(JCS(value)) )
 *
 * The 23-byte ASCII tag separates this hash from every other SHA-256 in stepchain (step hashes and blob
 * digests hash JSON text, which never starts with "s"); the salt has a fixed length of 32 bytes, so the
 * split between salt and value is unambiguous. The salt makes a low-entropy value (yes/no, a phone
 * number) unguessable from its commitment. Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { sha256Backend, sha256Stream, toHex } from '../canonical/sha256.js';

export const COMMITMENT_TAG = 'stepchain-redaction/v1\n';
export const SALT_BYTES = 32;

const encoder = new TextEncoder();
const TAG_BYTES = encoder.encode(COMMITMENT_TAG);

/** The commitment to `value` under `salt` (32 bytes). Throws RangeError for another salt length. */
export function commitment(salt: Uint8Array, value: unknown): string {
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES) throw new RangeError(`a salt is exactly ${SALT_BYTES} bytes`);
  const h = sha256Stream();
  h.update(TAG_BYTES);
  h.update(salt);
  h.update(encoder.encode(canonicalJson(value, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH })));
  return 'sha256:' + toHex(h.digest());
}

/** Supplies one salt per redacted value, in the order the publisher redacts (spec/REDACTION.md §5.3). */
export type SaltSource = () => Uint8Array;

/** 32 bytes from the platform's cryptographic random source for every value (the default). */
export function randomSalts(): SaltSource {
  return () => crypto.getRandomValues(new Uint8Array(SALT_BYTES));
}

/**
 * Deterministic salts for reproducible output and test vectors ONLY: salt i = SHA-256(tag || seed || i).
 * Anyone who knows the seed can recompute every salt and so guess low-entropy values; never publish with a
 * known seed.
 */
export function seededSalts(seed: string): SaltSource {
  let i = 0;
  return () => sha256Backend().bytes(encoder.encode(`stepchain-redaction/v1 test salt\n${seed}\n${i++}`));
}

/** Salts taken in order from a list (each exactly 32 bytes); running out is an error. */
export function fixedSalts(salts: readonly Uint8Array[]): SaltSource {
  let i = 0;
  return () => {
    const s = salts[i++];
    if (!s || s.length !== SALT_BYTES) throw new RangeError(`fixed salt ${i - 1} is missing or not ${SALT_BYTES} bytes`);
    return s;
  };
}

const HEX_RE = /^[0-9a-f]{64}$/;

/** Salts are written as 64 lowercase hex digits in secrets files and proofs. */
export function saltToHex(salt: Uint8Array): string {
  return toHex(salt);
}

export function saltFromHex(hex: unknown): Uint8Array | null {
  if (typeof hex !== 'string' || !HEX_RE.test(hex)) return null;
  const out = new Uint8Array(SALT_BYTES);
  for (let i = 0; i < SALT_BYTES; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}
