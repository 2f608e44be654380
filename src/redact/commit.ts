/**
 * Salted commitments (spec/REDACTION.md §5.2 and §6.2):
 *
 *   value commitment = digest( "stepchain-redaction/v1\n"      || salt || UTF-8(JCS(value)) )
 *   step commitment  = digest( "stepchain-redaction/v2 step\n" || salt || UTF-8(step_hash) )
 *
 * The ASCII tags separate these hashes from each other and from every other SHA-256 in stepchain (step
 * hashes and blob digests hash JSON text, which never starts with "s"); the salt has a fixed length of 32
 * bytes, so the split between salt and what follows is unambiguous. The salt makes a low-entropy value
 * (yes/no, a PIN) unguessable from its commitment, and a step commitment hides an original step hash,
 * which would otherwise let anyone test guesses of the step's redacted values. Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { isDigest, sha256Backend, sha256Stream, toHex } from '../canonical/sha256.js';

/** The value commitment's tag: unchanged since version 1 of the redaction format. */
export const COMMITMENT_TAG = 'stepchain-redaction/v1\n';
/** The step commitment's tag (an anchor of format stepchain-redaction/v2). */
export const STEP_COMMITMENT_TAG = 'stepchain-redaction/v2 step\n';
export const SALT_BYTES = 32;

const encoder = new TextEncoder();
const TAG_BYTES = encoder.encode(COMMITMENT_TAG);
const STEP_TAG_BYTES = encoder.encode(STEP_COMMITMENT_TAG);

/** The commitment to `value` under `salt` (32 bytes). Throws RangeError for another salt length. */
export function commitment(salt: Uint8Array, value: unknown): string {
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES)
    throw new RangeError(`a salt is exactly ${SALT_BYTES} bytes`);
  const h = sha256Stream();
  h.update(TAG_BYTES);
  h.update(salt);
  h.update(encoder.encode(canonicalJson(value, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH })));
  return 'sha256:' + toHex(h.digest());
}

/** The step commitment to an original step hash under `salt` (32 bytes). Throws RangeError for another salt or a non-digest. */
export function stepCommitment(salt: Uint8Array, stepHash: string): string {
  if (!(salt instanceof Uint8Array) || salt.length !== SALT_BYTES)
    throw new RangeError(`a salt is exactly ${SALT_BYTES} bytes`);
  if (!isDigest(stepHash)) throw new RangeError('a step hash is "sha256:" and 64 lowercase hex digits');
  const h = sha256Stream();
  h.update(STEP_TAG_BYTES);
  h.update(salt);
  h.update(encoder.encode(stepHash));
  return 'sha256:' + toHex(h.digest());
}

/**
 * Supplies one salt per redacted value and per committed step, in the order the publisher draws them
 * (spec/REDACTION.md §5.3: steps by seq; in a step, its values in walk order, then its step commitment).
 */
export type SaltSource = () => Uint8Array;

/** Salts drawn from the random source at once: one call per 64 salts instead of one per salt. */
const POOL_SALTS = 64;

/**
 * 32 bytes from the platform's cryptographic random source for every value and step (the default). The
 * bytes are drawn 64 salts at a time (each call costs about as much as hashing a salt's commitment,
 * profiled) and handed out as separate copies.
 */
export function randomSalts(): SaltSource {
  let pool = new Uint8Array(0);
  let at = 0;
  return () => {
    if (at === pool.length) {
      pool = crypto.getRandomValues(new Uint8Array(SALT_BYTES * POOL_SALTS));
      at = 0;
    }
    at += SALT_BYTES;
    return pool.slice(at - SALT_BYTES, at);
  };
}

/**
 * Deterministic salts for reproducible output and test vectors ONLY:
 * salt i = SHA-256(UTF-8("stepchain-redaction/v1 test salt\n" + seed + "\n" + decimal(i))), i = 0, 1, 2, …
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
    if (s?.length !== SALT_BYTES) throw new RangeError(`fixed salt ${i - 1} is missing or not ${SALT_BYTES} bytes`);
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
