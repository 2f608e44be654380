/**
 * The check a witness runs before it cosigns (spec/PROOFS.md §9.5, after c2sp.org/tlog-witness
 * add-checkpoint): the new checkpoint must extend the last one it cosigned for that origin. The same
 * check keeps a writer from signing two inconsistent checkpoints, and an auditor holding an old
 * checkpoint from accepting a truncated or rewritten journal. Never throws. Pure.
 */
import { equalBytes } from './hash.js';
import { isSize } from './math.js';
import { problem } from './problems.js';
import { verifyConsistency, type Verdict } from './verify.js';

/** The part of a checkpoint the check needs. */
export interface TreeHead {
  origin: string;
  size: number;
  root: Uint8Array;
}

export interface WitnessUpdate {
  /** The last checkpoint this witness cosigned for the origin, or null if it never did. */
  last: TreeHead | null;
  /** The new (already signature-checked) checkpoint. */
  next: TreeHead;
  /** The consistency proof from `oldSize` to `next.size`. */
  proof: readonly Uint8Array[];
  /** The size the submitter believes the witness last cosigned (tlog-witness's "old" line); defaults to `last.size` or 0. */
  oldSize?: number;
}

/**
 * ok when `next` may be cosigned: same origin, old size ≤ new size (else SIZE_DECREASED), old size is
 * the size last cosigned (else OLD_SIZE_MISMATCH, tlog-witness's 409: the submitter should retry from
 * that size), and the consistency proof verifies (else INCONSISTENT, PROOF_LENGTH_INVALID, …).
 */
export function checkWitnessUpdate(update: WitnessUpdate): Verdict {
  const { last, next, proof } = update ?? ({} as WitnessUpdate);
  const fail = (code: Parameters<typeof problem>[0], message: string): Verdict => ({
    ok: false,
    problem: problem(code, message),
  });
  if (!next || typeof next.origin !== 'string' || !isSize(next.size) || !(next.root instanceof Uint8Array))
    return fail('PROOF_MALFORMED', 'the new checkpoint is not an origin, a size and a root');
  if (
    last !== null &&
    (!last || typeof last.origin !== 'string' || !isSize(last.size) || !(last.root instanceof Uint8Array))
  )
    return fail('PROOF_MALFORMED', 'the last cosigned checkpoint is not an origin, a size and a root');
  if (last && last.origin !== next.origin)
    return fail(
      'ORIGIN_MISMATCH',
      `the new checkpoint is for "${next.origin.slice(0, 300)}", the last one for "${last.origin.slice(0, 300)}"`,
    );
  const lastSize = last?.size ?? 0;
  const oldSize = update.oldSize ?? lastSize;
  if (!isSize(oldSize)) return fail('PROOF_MALFORMED', 'the old size is not an integer from 0 to 2^53 − 1');
  if (oldSize > next.size)
    return fail('SIZE_DECREASED', `the old size ${oldSize} is larger than the new checkpoint's ${next.size}`);
  if (oldSize !== lastSize)
    return fail(
      'OLD_SIZE_MISMATCH',
      `the last checkpoint cosigned for this origin has size ${lastSize}, not ${oldSize}`,
    );
  if (last?.size === next.size && !equalBytes(last.root, next.root)) {
    return fail('INCONSISTENT', `two different roots for size ${next.size}: the log forked`);
  }
  if (!last) {
    return Array.isArray(proof) && proof.length === 0
      ? { ok: true }
      : fail('PROOF_LENGTH_INVALID', 'a first checkpoint extends the empty tree and needs no proof');
  }
  return verifyConsistency({ oldSize: last.size, oldRoot: last.root, size: next.size, root: next.root, proof });
}
