/**
 * The problems a receipt verifier reports (spec/RECEIPT.md §5): the chain's and the blobs' (FORMAT), and
 * the archive's own. A FatalProblem is one after which the archive's structure can no longer be trusted:
 * reading stops there (§7).
 */
import type { BlobProblemCode, ChainProblemCode, ProblemLocation } from '../chain/report.js';

export type ReceiptProblemCode =
  | ChainProblemCode
  | BlobProblemCode
  | 'ARCHIVE_INVALID'
  | 'ARCHIVE_UNSAFE'
  | 'ARCHIVE_LIMIT'
  | 'ENTRY_MISSING'
  | 'ENTRY_UNEXPECTED'
  | 'MANIFEST_INVALID'
  | 'DIGEST_MISMATCH'
  | 'COUNT_MISMATCH'
  | 'SIGNATURE_INVALID'
  | 'SIGNATURE_MISSING'
  | 'KEY_MISMATCH'
  /** A stepchain/v3 part a record references is not in the receipt, or its entry is not the part (PARTS.md §9). */
  | 'PART_MISSING'
  | 'PART_CORRUPT'
  /** A published receipt's public part file does not give its address (REDACTION.md §13.10). */
  | 'PART_ADDRESS_MISMATCH'
  /** A notice: an approval record's unsalted digest (APPROVALS.md §2.1) shown beside a call not shown whole (§8). */
  | 'DIGEST_UNSALTED';

/** A problem that stops reading: thrown by the readers, caught once by the verifier. */
export class FatalProblem {
  constructor(
    readonly code: ReceiptProblemCode,
    readonly message: string,
    readonly location: ProblemLocation = {},
  ) {}
}

/** How the reading of the archive ended, for an extension's `finish`. */
export interface ReceiptReading {
  /**
   * A fatal problem stopped it (§7): what follows that problem was not read, even when every chain line
   * was. Not a problem code, since ENTRY_UNEXPECTED is fatal in step 6 and not in step 7.
   */
  stopped: boolean;
}
