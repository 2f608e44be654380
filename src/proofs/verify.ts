/**
 * Proof verification (spec/PROOFS.md §9.1–§9.3): RFC 9162 §2.1.3.2 for one leaf, its generalization to a
 * range of leaves, and RFC 9162 §2.1.4.2 for consistency. Every input is hostile: nothing here throws;
 * each failure is a ProofProblem with a stable code. Lengths are checked against the sizes before any
 * hashing, so a huge proof costs nothing. Pure; runs in a browser.
 */
import { EMPTY_ROOT, HASH_SIZE, equalBytes, nodeHash, rootOfLeaves } from './hash.js';
import { isPowerOfTwo, isSize, splitPoint } from './math.js';
import { consistencySpans, inclusionSpans } from './prove.js';
import { problem, type ProofProblem } from './problems.js';

export type Verdict = { ok: true } | { ok: false; problem: ProofProblem };

const OK: Verdict = { ok: true };
const fail = (code: ProofProblem['code'], message: string): Verdict => ({ ok: false, problem: problem(code, message) });

const isHash = (h: unknown): h is Uint8Array => h instanceof Uint8Array && h.length === HASH_SIZE;

function hashListDefect(proof: unknown): string | null {
  if (!Array.isArray(proof)) return 'the proof is not a list of hashes';
  for (let i = 0; i < proof.length; i++) if (!isHash(proof[i])) return `proof hash ${i} is not 32 bytes`;
  return null;
}

export interface InclusionInput {
  /** Index of the leaf. */
  index: number;
  /** Tree size of the checkpoint. */
  size: number;
  /** The leaf hash (for a step: `stepLeafHash(step_hash)`). */
  leaf: Uint8Array;
  proof: readonly Uint8Array[];
  /** The checkpoint's root hash. */
  root: Uint8Array;
}

/** RFC 9162 §2.1.3.2: is `leaf` the leaf at `index` of the tree of `size` leaves whose root is `root`? */
export function verifyInclusion(input: InclusionInput): Verdict {
  const { index, size, leaf, proof, root } = input ?? ({} as InclusionInput);
  if (!isSize(size) || !isSize(index)) return fail('PROOF_MALFORMED', 'index and size are integers from 0 to 2^53 − 1');
  if (!isHash(leaf) || !isHash(root)) return fail('PROOF_MALFORMED', 'the leaf hash and the root are 32 bytes each');
  const defect = hashListDefect(proof);
  if (defect) return fail('PROOF_MALFORMED', defect);
  if (index >= size) return fail('INDEX_OUT_OF_RANGE', `leaf ${index} is not in a tree of ${size} leaves`);
  const want = inclusionSpans(index, index, size).length;
  if (proof.length !== want)
    return fail(
      'PROOF_LENGTH_INVALID',
      `the inclusion proof of leaf ${index} in a tree of ${size} has ${want} hashes, not ${proof.length}`,
    );
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return fail('PROOF_LENGTH_INVALID', 'the proof goes past the root');
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn /= 2;
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return fail('PROOF_LENGTH_INVALID', 'the proof stops below the root');
  if (!equalBytes(r, root))
    return fail(
      'ROOT_MISMATCH',
      `leaf ${index} with this proof leads to another root than the tree of ${size} leaves has`,
    );
  return OK;
}

export interface RangeInput {
  /** Index of the first leaf. */
  from: number;
  /** Index of the last leaf (inclusive). */
  to: number;
  size: number;
  /** The hashes of leaves from..to, in order. */
  leaves: readonly Uint8Array[];
  proof: readonly Uint8Array[];
  root: Uint8Array;
}

/** PROOFS.md §9.2: are `leaves` the leaves from..to of the tree of `size` leaves whose root is `root`? */
export function verifyRange(input: RangeInput): Verdict {
  const { from, to, size, leaves, proof, root } = input ?? ({} as RangeInput);
  if (!isSize(size) || !isSize(from) || !isSize(to))
    return fail('PROOF_MALFORMED', 'from, to and size are integers from 0 to 2^53 − 1');
  if (!isHash(root)) return fail('PROOF_MALFORMED', 'the root is 32 bytes');
  const defect = hashListDefect(proof);
  if (defect) return fail('PROOF_MALFORMED', defect);
  if (from > to) return fail('INDEX_OUT_OF_RANGE', `from (${from}) is after to (${to})`);
  if (to >= size) return fail('INDEX_OUT_OF_RANGE', `leaf ${to} is not in a tree of ${size} leaves`);
  if (!Array.isArray(leaves) || leaves.length !== to - from + 1)
    return fail('PROOF_MALFORMED', `leaves ${from}..${to} are ${to - from + 1} hashes`);
  for (let i = 0; i < leaves.length; i++)
    if (!isHash(leaves[i])) return fail('PROOF_MALFORMED', `the hash of leaf ${from + i} is not 32 bytes`);
  const want = inclusionSpans(from, to, size).length;
  if (proof.length !== want)
    return fail(
      'PROOF_LENGTH_INVALID',
      `the inclusion proof of leaves ${from}..${to} in a tree of ${size} has ${want} hashes, not ${proof.length}`,
    );
  let next = 0;
  const end = to + 1;
  // Mirrors inclusionSpans: the proof's hashes are consumed in the order they were produced.
  const compute = (lo: number, hi: number): Uint8Array => {
    if (from <= lo && hi <= end) return rootOfLeaves(leaves.slice(lo - from, hi - from));
    const mid = lo + splitPoint(hi - lo);
    if (end <= mid) return nodeHash(compute(lo, mid), proof[next++]!);
    if (from >= mid) {
      const right = compute(mid, hi);
      return nodeHash(proof[next++]!, right);
    }
    const left = compute(lo, mid);
    return nodeHash(left, compute(mid, hi));
  };
  if (!equalBytes(compute(0, size), root))
    return fail(
      'ROOT_MISMATCH',
      `leaves ${from}..${to} with this proof lead to another root than the tree of ${size} leaves has`,
    );
  return OK;
}

export interface ConsistencyInput {
  oldSize: number;
  oldRoot: Uint8Array;
  size: number;
  root: Uint8Array;
  proof: readonly Uint8Array[];
}

/** RFC 9162 §2.1.4.2: does the tree (size, root) extend the tree (oldSize, oldRoot)? */
export function verifyConsistency(input: ConsistencyInput): Verdict {
  const { oldSize, oldRoot, size, root, proof } = input ?? ({} as ConsistencyInput);
  if (!isSize(oldSize) || !isSize(size)) return fail('PROOF_MALFORMED', 'tree sizes are integers from 0 to 2^53 − 1');
  if (!isHash(oldRoot) || !isHash(root)) return fail('PROOF_MALFORMED', 'roots are 32 bytes each');
  const defect = hashListDefect(proof);
  if (defect) return fail('PROOF_MALFORMED', defect);
  if (oldSize > size) return fail('SIZE_DECREASED', `the tree shrank from ${oldSize} to ${size} leaves`);
  const want = consistencySpans(oldSize, size).length;
  if (proof.length !== want)
    return fail(
      'PROOF_LENGTH_INVALID',
      `the consistency proof from ${oldSize} to ${size} has ${want} hashes, not ${proof.length}`,
    );
  if (oldSize === 0) {
    return equalBytes(oldRoot, EMPTY_ROOT)
      ? OK
      : fail('INCONSISTENT', 'the old tree is empty but its root is not the hash of the empty string');
  }
  if (oldSize === size) {
    return equalBytes(oldRoot, root)
      ? OK
      : fail('INCONSISTENT', `two different roots for the same size ${size}: the log forked`);
  }
  const path = [...proof];
  // Step 2: a power-of-two old tree is itself a node of the new one, and its root starts the walk.
  if (isPowerOfTwo(oldSize)) path.unshift(oldRoot);
  let fn = oldSize - 1;
  let sn = size - 1;
  while (fn % 2 === 1) {
    fn = (fn - 1) / 2;
    sn = Math.floor(sn / 2);
  }
  let fr = path[0]!;
  let sr = path[0]!;
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!;
    if (sn === 0) return fail('PROOF_LENGTH_INVALID', 'the proof goes past the root');
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return fail('PROOF_LENGTH_INVALID', 'the proof stops below the root');
  if (!equalBytes(fr, oldRoot))
    return fail('INCONSISTENT', `the proof does not lead to the old root: the first ${oldSize} leaves differ`);
  if (!equalBytes(sr, root))
    return fail(
      'INCONSISTENT',
      `the proof does not lead to the new root: the tree of ${size} leaves does not extend the old one`,
    );
  return OK;
}
