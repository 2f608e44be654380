/**
 * Problem codes and the error class of the proofs domain (spec/PROOFS.md §10). Verifiers never throw on
 * what they verify: they return a `ProofProblem`. `ProofError` is thrown only at the caller's own
 * boundary — a proof asked for a leaf past the tree, a malformed signing key, a node reader that broke.
 * Codes are public API: add, never rename.
 */
import { StepchainError } from '../errors.js';

export type ProofProblemCode =
  /** A proof document, hash list or hash that is not what PROOFS.md §7 defines (bad JSON, bad base64, a hash that is not 32 bytes). */
  | 'PROOF_MALFORMED'
  /** A leaf index or range that is not inside the tree (index ≥ size, from > to). */
  | 'INDEX_OUT_OF_RANGE'
  /** The new tree is smaller than the old one: a truncated (or rolled-back) log. */
  | 'SIZE_DECREASED'
  /** The proof holds more or fewer hashes than its sizes and indices call for. */
  | 'PROOF_LENGTH_INVALID'
  /** An inclusion proof leads to another root than the checkpoint's: the leaves are not in that tree. */
  | 'ROOT_MISMATCH'
  /** A consistency proof does not connect the two roots: the new tree does not extend the old one. */
  | 'INCONSISTENT'
  /** A tree size, note, proof or signature count past the limits of PROOFS.md §11. */
  | 'LIMIT_EXCEEDED'
  /** A signed note that breaks the signed-note grammar (PROOFS.md §8.1). */
  | 'NOTE_MALFORMED'
  /** A note text that is not a checkpoint (PROOFS.md §8.2). */
  | 'CHECKPOINT_MALFORMED'
  /** The checkpoint's origin is not the one expected (or not the log key's name). */
  | 'ORIGIN_MISMATCH'
  /** No signature line of the log key. */
  | 'SIGNATURE_MISSING'
  /** A signature line of the log key that does not verify. */
  | 'SIGNATURE_INVALID'
  /** A cosignature line of a policy witness that does not verify (a forged or altered cosignature). */
  | 'COSIGNATURE_INVALID'
  /** Fewer valid witness cosignatures than the policy's quorum. */
  | 'QUORUM_NOT_MET'
  /** The verification policy itself is unusable (no log key, a quorum above the witness count, one key twice). */
  | 'POLICY_INVALID'
  /** A witness was given an old size that is not the size it last cosigned (tlog-witness "409 Conflict"). */
  | 'OLD_SIZE_MISMATCH'
  /** An earlier checkpoint was pinned, and what was verified cannot be connected to it (a partial receipt without a consistency proof). */
  | 'CONSISTENCY_UNPROVEN'
  /** Two trees of the same size with different roots: the log showed two histories (PROOFS.md §9.8). */
  | 'FORKED';

export interface ProofProblem {
  code: ProofProblemCode;
  /** One sentence naming what is wrong and where (informative, not part of the vectors). */
  message: string;
}

export type ProofErrorCode =
  /** Arguments out of the domain: an index past the tree, sizes in the wrong order, a non-integer. */
  | 'ARGUMENT_INVALID'
  /** A signing key or verifier key that cannot be used. */
  | 'KEY_INVALID'
  /** A serialized tree state that does not parse or does not add up (PROOFS.md §5). */
  | 'TREE_STATE_INVALID'
  /** A node reader returned the wrong number of hashes or a hash that is not 32 bytes. */
  | 'NODE_READER_FAILED'
  /** A text to be signed that is not a valid note text or checkpoint. */
  | 'NOTE_INVALID'
  /** A log refused to sign a checkpoint that does not extend the last one it signed for the origin (PROOFS.md §8.6). */
  | 'CHECKPOINT_REFUSED';

export class ProofError extends StepchainError<ProofErrorCode> {}

/** The problem record; `code` also opens the message so a log line alone is enough to look it up. */
export function problem(code: ProofProblemCode, message: string): ProofProblem {
  return { code, message: `${code}: ${message}` };
}
