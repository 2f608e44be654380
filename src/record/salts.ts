/**
 * Salts and slot digests of committed records (spec/FORMAT.md §12.2): the record salt from the platform's
 * CSPRNG, the slot salts derived from it, and the salted digest of one slot — the definitions every other
 * part of commitment hashing (commitments.ts) builds on, and that vectors and tests recompute. Pure: runs
 * in a browser.
 */
import { digestUtf8, toHex } from '../canonical/sha256.js';

/** Tags that separate these hashes from every other SHA-256 in stepchain (FORMAT §12.2). */
export const SLOT_SALT_TAG = 'stepchain/v2 salt\n';
export const SLOT_DIGEST_TAG = 'stepchain/v2 slot\n';
/** A record salt and a slot salt: 128 bits, as 32 lowercase hex digits. */
export const SALT_HEX_DIGITS = 32;
const SALT_RE = /^[0-9a-f]{32}$/;
/** A salt's canonical text, quotes included, tested at a position (sticky). */
export const SALT_TEXT = /"[0-9a-f]{32}"/y;

export function isSaltHex(value: unknown): value is string {
  return typeof value === 'string' && value.length === SALT_HEX_DIGITS && SALT_RE.test(value);
}

let pool = new Uint8Array(0);
let poolAt = 0;
/**
 * A fresh record salt: 16 bytes from the platform's CSPRNG (crypto.getRandomValues), as hex. Drawn from a
 * pool of 4 KiB so a group commit of many steps asks the platform once (the OS call dominated otherwise).
 */
export function newRecordSalt(): string {
  if (poolAt + 16 > pool.length) {
    pool = globalThis.crypto.getRandomValues(new Uint8Array(4096));
    poolAt = 0;
  }
  // One flat string from the bytes (toHex), not a rope of 16 two-character pieces.
  const out = toHex(pool.subarray(poolAt, poolAt + 16));
  pool.fill(0, poolAt, poolAt + 16);
  poolAt += 16;
  return out;
}

/**
 * The salts of a record's slots, in the order of `slots` (UTF-16 order of the names): block j is
 * SHA-256(tag ‖ record salt ‖ "\n" ‖ decimal j) in hex; the slot at index i takes the first half of block
 * ⌊i/2⌋ when i is even, the second when odd. One hash serves two slots (a hash costs more than the rest of
 * a slot), and half a SHA-256 output says nothing about the other half, so disclosing one slot's salt
 * reveals neither its neighbour's nor the record salt.
 */
export function slotSalts(recordSalt: string, slots: readonly string[]): string[] {
  const out: string[] = [];
  for (let j = 0; 2 * j < slots.length; j++) {
    const block = digestUtf8(SLOT_SALT_TAG + recordSalt + '\n' + j);
    out.push(block.slice(7, 39));
    if (2 * j + 1 < slots.length) out.push(block.slice(39, 71));
  }
  return out;
}

/** The salt of one slot of a record whose slots are `slots` (slotSalts, for one). */
export function slotSalt(recordSalt: string, slot: string, slots: readonly string[]): string {
  const i = slots.indexOf(slot);
  if (i < 0) throw new RangeError(`${slot} is not one of the slots ${slots.join(', ')}`);
  const block = digestUtf8(SLOT_SALT_TAG + recordSalt + '\n' + Math.floor(i / 2));
  return i % 2 === 0 ? block.slice(7, 39) : block.slice(39, 71);
}

/**
 * The digest of one slot: SHA-256(tag ‖ slot salt ‖ "\n" ‖ JCS([name, value])), or JCS([name]) when the
 * (optional) member is absent — absence is committed too, so a withheld meta does not say whether there
 * was one. `valueText` is the member's canonical text as stored (a blob reference stays a reference).
 */
export function slotDigest(salt: string, slot: string, valueText: string | undefined): string {
  return digestUtf8(SLOT_DIGEST_TAG + salt + '\n["' + slot + (valueText === undefined ? '"]' : '",' + valueText + ']'));
}
