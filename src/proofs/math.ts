/**
 * Integer helpers for tree sizes and indices up to 2^53 − 1 (spec/PROOFS.md §11). JavaScript's bitwise
 * operators work on 32 bits, so everything here is written with division and multiplication, which are
 * exact on safe integers.
 */

/** The largest tree size (and so the largest index + 1) this implementation handles: 2^53 − 1. */
export const MAX_TREE_SIZE = Number.MAX_SAFE_INTEGER;

const TWO_32 = 2 ** 32;

export function isSize(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}

/** The number of bits of n (0 for 0): the smallest b with n < 2^b. */
export function bitLength(n: number): number {
  if (n < TWO_32) return 32 - Math.clz32(n);
  return 32 + bitLength(Math.floor(n / TWO_32));
}

/** The largest power of two strictly less than n, for n ≥ 2 (RFC 9162 §2.1.1's k). */
export function splitPoint(n: number): number {
  return 2 ** (bitLength(n - 1) - 1);
}

/** Whether n ≥ 1 is a power of two. */
export function isPowerOfTwo(n: number): boolean {
  return n >= 1 && 2 ** (bitLength(n) - 1) === n;
}

/** The number of one bits of n. */
export function popCount(n: number): number {
  let count = 0;
  for (
    let hi = Math.floor(n / TWO_32), lo = n % TWO_32;
    hi > 0 || lo > 0;
    hi = Math.floor(hi / 2), lo = Math.floor(lo / 2)
  ) {
    if (lo % 2 === 1) count++;
    if (hi % 2 === 1) count++;
  }
  return count;
}
