/** Errors raised while exporting a receipt or handling keys (spec/RECEIPT.md). Verification never throws. */
import { StepchainError } from '../errors.js';

export type ReceiptErrorCode =
  /** `from`/`to` are not seqs of the journal, or from > to. */
  | 'RANGE_INVALID'
  /** The journal (or the range) holds no step: there is nothing to prove. */
  | 'EMPTY_RANGE'
  /** The range ends between an erased record and its erasure record (spec/ERASURE.md §6.5). */
  | 'RANGE_SPLITS_ERASURE'
  /** An erasure the journal records for a step of the range is not yet carried out (spec/ERASURE.md §4). */
  | 'ERASURE_PENDING'
  /** The chain being exported does not verify; a receipt is never written for a broken chain. */
  | 'CHAIN_INVALID'
  /** A step references a blob the source does not hold. */
  | 'BLOB_MISSING'
  /** A blob's bytes do not match its digest or the size its reference records. */
  | 'BLOB_CORRUPT'
  /** The receipt would exceed a verifier limit (spec/RECEIPT.md §6). */
  | 'LIMIT_EXCEEDED'
  /** The source changed between the export's verifying pass and its writing pass. */
  | 'SOURCE_CHANGED'
  /** Extra manifest members that are not I-JSON or collide with the base members. */
  | 'MANIFEST_INVALID'
  /** A signing or public key that cannot be read. */
  | 'KEY_INVALID'
  /** A key file exists already (keygen never overwrites). */
  | 'KEY_EXISTS'
  /** A receipt opened as a chain source does not verify (the message names the first problem). */
  | 'RECEIPT_INVALID'
  /** The receipt file or a key file could not be written (the cause is the file system's error). */
  | 'OUTPUT_FAILED'
  /** Bad arguments: a missing `out`, an unknown option value. */
  | 'ARGUMENT_INVALID';

export class ReceiptError extends StepchainError<ReceiptErrorCode> {}
