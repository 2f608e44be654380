/**
 * Errors raised by the diff engine (spec/DIFF.md §7). Codes are public API: add, never rename. Defined beside the
 * ignore patterns, below diff, redact and replay, because a refused pattern is a DiffError wherever it is compiled
 * (DIFF.md §4.2); diff/index.ts re-exports it.
 */
import { StepchainError } from '../errors.js';

export type DiffErrorCode =
  /** An option has the wrong type or an out-of-range value. */
  | 'BAD_OPTION'
  /** An `ignore` pattern is not a valid pattern (spec/DIFF.md §4). */
  | 'BAD_IGNORE_PATTERN'
  /** A run is neither an iterable, an async iterable nor a ChainSource. */
  | 'BAD_INPUT'
  /** A step is not a JSON object with a non-negative integer seq, or a stored line does not parse. */
  | 'BAD_STEP'
  /** A blob reference had to be resolved and the source does not hold the blob. */
  | 'BLOB_MISSING'
  /** A blob's bytes do not hash to its digest or are not JSON. */
  | 'BLOB_INVALID';

export class DiffError extends StepchainError<DiffErrorCode> {}
