/**
 * The verification report shared by the journal verifier and the receipt verifier (spec/FORMAT.md §6,
 * spec/RECEIPT.md §5). Codes are public API: add, never rename.
 */

export type ProblemCode =
  // a line that is not a canonical I-JSON record (FORMAT §4)
  | 'MALFORMED_LINE'
  | 'NONCANONICAL_LINE'
  | 'DUPLICATE_KEY'
  | 'LONE_SURROGATE'
  | 'NOT_FINITE_NUMBER'
  | 'DEPTH_LIMIT'
  | 'LINE_TOO_LONG'
  | 'TRUNCATED_LINE'
  // a record whose members are wrong (FORMAT §5)
  | 'MISSING_FIELD'
  | 'UNKNOWN_FIELD'
  | 'FIELD_INVALID'
  | 'UNSUPPORTED_VERSION'
  | 'MARKER_INVALID'
  // the chain (FORMAT §6)
  | 'GENESIS_INVALID'
  | 'GENESIS_MISMATCH'
  | 'HASH_MISMATCH'
  | 'LINK_BROKEN'
  | 'SEQ_GAP'
  | 'SEQ_OUT_OF_ORDER'
  | 'DUPLICATE_STEP'
  | 'HEAD_MISMATCH'
  | 'BUCKET_MISNAMED'
  // blobs (FORMAT §7)
  | 'BLOB_MISSING'
  | 'BLOB_CORRUPT'
  // journal directory (FORMAT §8)
  | 'JOURNAL_INVALID'
  | 'HEAD_CACHE_STALE'
  // receipts (RECEIPT §5)
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
  // redaction (REDACTION §6)
  | 'REDACTION_UNDECLARED'
  | 'REDACTION_MISSING'
  | 'ANCHOR_INVALID';

export interface ProblemLocation {
  /** Bucket file (journal) or tar entry (receipt) name. */
  file?: string;
  /** 1-based line number within `file`. */
  line?: number;
  /** 1-based column (UTF-8 byte offset + 1) within the line, for defects inside a line. */
  column?: number;
  seq?: number;
  /** Top-level record member concerned. */
  field?: string;
  /** JSON Pointer into the record, for defects below the top level. */
  path?: string;
}

export interface Problem {
  code: ProblemCode;
  message: string;
  location: ProblemLocation;
}

export interface ChainReport {
  ok: boolean;
  /** Digest the chain starts from: the genesis hash, or a partial range's starting prev_hash. */
  start_hash: string | null;
  start_seq: number;
  /** step_hash of the last complete step line, as stored; null when there is none or it is unreadable. */
  head: string | null;
  head_seq: number | null;
  /** Number of complete lines examined. */
  steps: number;
  problems: Problem[];
  /**
   * Conditions worth telling that do not break integrity, such as a journal's torn, uncommitted last line
   * or a stale head cache (both repaired on the next open). They never make `ok` false.
   */
  warnings: Problem[];
  /** True when more problems were found than the report keeps (maxProblems). */
  problems_truncated: boolean;
}

export function describeLocation(loc: ProblemLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined) parts.push(loc.line !== undefined ? `${loc.file}:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}` : loc.file);
  else if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.seq !== undefined) parts.push(`seq ${loc.seq}`);
  if (loc.path !== undefined) parts.push(loc.path === '' ? 'the record' : loc.path);
  else if (loc.field !== undefined) parts.push(loc.field);
  return parts.join(', ');
}
