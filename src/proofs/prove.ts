/**
 * Proof generation (spec/PROOFS.md §7.1–§7.3): which subtrees a proof holds, in which order, and their
 * hashes read through a NodeReader. Inclusion proofs cover a range of leaves from..to (inclusive); for
 * one leaf the proof is RFC 9162 §2.1.3.1's audit path. Consistency proofs are RFC 9162 §2.1.4.1's.
 * Planning is pure arithmetic, O(log n); the reader is asked for every hash at once.
 */
import { isSize, splitPoint } from './math.js';
import { readSpans, type NodeReader, type Span } from './nodes.js';
import { ProofError } from './problems.js';

function inclusionArgsDefect(from: number, to: number, size: number): string | null {
  if (!isSize(size)) return `size ${String(size)} is not an integer from 0 to 2^53 − 1`;
  if (!isSize(from) || !isSize(to)) return 'from and to are leaf indices: integers from 0';
  if (from > to) return `from (${from}) is after to (${to})`;
  if (to >= size) return `leaf ${to} is not in a tree of ${size} leaves`;
  return null;
}

/**
 * The subtrees whose hashes make up the inclusion proof of leaves from..to in a tree of `size`, in proof
 * order (PROOFS.md §7.1, RANGE_PROOF): for each subtree on the way down that straddles the range's edge,
 * the proof of its left part, then of its right part, then — when only one part holds range leaves —
 * the hash of the other.
 */
export function inclusionSpans(from: number, to: number, size: number): Span[] {
  const defect = inclusionArgsDefect(from, to, size);
  if (defect) throw new ProofError('ARGUMENT_INVALID', defect);
  const out: Span[] = [];
  const end = to + 1;
  const walk = (lo: number, hi: number): void => {
    if (from <= lo && hi <= end) return;
    const mid = lo + splitPoint(hi - lo);
    if (end <= mid) {
      walk(lo, mid);
      out.push({ start: mid, end: hi });
    } else if (from >= mid) {
      walk(mid, hi);
      out.push({ start: lo, end: mid });
    } else {
      walk(lo, mid);
      walk(mid, hi);
    }
  };
  walk(0, size);
  return out;
}

/**
 * The subtrees of RFC 9162 §2.1.4.1's consistency proof from `oldSize` to `size`, in proof order. Empty
 * when oldSize is 0 (every tree extends the empty tree) or equals size.
 */
export function consistencySpans(oldSize: number, size: number): Span[] {
  if (!isSize(oldSize) || !isSize(size))
    throw new ProofError('ARGUMENT_INVALID', 'tree sizes are integers from 0 to 2^53 − 1');
  if (oldSize > size)
    throw new ProofError('ARGUMENT_INVALID', `the old size ${oldSize} is larger than the new size ${size}`);
  const out: Span[] = [];
  if (oldSize === 0 || oldSize === size) return out;
  const sub = (m: number, lo: number, hi: number, whole: boolean): void => {
    if (m === hi - lo) {
      if (!whole) out.push({ start: lo, end: hi });
      return;
    }
    const k = splitPoint(hi - lo);
    if (m <= k) {
      sub(m, lo, lo + k, whole);
      out.push({ start: lo + k, end: hi });
    } else {
      sub(m - k, lo + k, hi, false);
      out.push({ start: lo, end: lo + k });
    }
  };
  sub(oldSize, 0, size, true);
  return out;
}

/** The inclusion proof of leaves from..to (inclusive) in the tree of `size` leaves behind `reader`. */
export async function proveInclusion(
  reader: NodeReader,
  from: number,
  to: number,
  size: number,
): Promise<Uint8Array[]> {
  return readSpans(reader, inclusionSpans(from, to, size));
}

/** The consistency proof from the tree of `oldSize` leaves to the tree of `size` leaves behind `reader`. */
export async function proveConsistency(reader: NodeReader, oldSize: number, size: number): Promise<Uint8Array[]> {
  return readSpans(reader, consistencySpans(oldSize, size));
}
