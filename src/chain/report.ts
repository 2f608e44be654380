/**
 * The verification report (spec/FORMAT.md §6.4) and the problem codes of the chain (§4–§7). Each layer
 * composes its codes upward from these: the journal store adds FILE-STORE.md's (store/types.ts), the receipt verifier
 * RECEIPT §5's (receipt/verify.ts), the published-receipt verifier REDACTION §6's (redact/verify.ts). Codes
 * are public API: add, never rename.
 */

import type { ApprovalEntry } from '../approval/ledger.js';

export type ChainProblemCode =
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
  // stepchain/v3 (FORMAT §14): the deep tier, and notices about kinds this verifier does not check
  | 'ROOT_MISMATCH'
  | 'WITHHELD_IN_JOURNAL'
  | 'KIND_UNKNOWN'
  | 'KIND_UNCHECKED'
  // erasure in stepchain/v3 (ERASURE.md §5): problems, then notices (an erased value, an erasure not yet carried out)
  | 'ERASURE_UNRECORDED'
  | 'ERASURE_MISMATCH'
  | 'ERASURE_PENDING'
  | 'ERASURE_OUT_OF_RANGE'
  | 'ERASURE_WITHHELD'
  | 'VALUE_ERASED'
  // approval records in stepchain/v3 (APPROVALS.md §5): problems, then notices (an approver not pinned, a value withheld)
  | 'APPROVAL_INVALID'
  | 'APPROVAL_MISMATCH'
  | 'APPROVAL_MISSING'
  | 'APPROVAL_DENIED'
  | 'APPROVAL_EXPIRED'
  | 'APPROVAL_REPEATED'
  | 'APPROVER_UNKNOWN'
  | 'APPROVER_UNPINNED'
  | 'APPROVAL_UNCHECKED';

/** Blobs (FORMAT §7): reported by whoever holds them, a store or a receipt verifier. */
export type BlobProblemCode = 'BLOB_MISSING' | 'BLOB_CORRUPT';

export interface ProblemLocation {
  /** The segment (a journal's bucket file, a receipt's chain entry) or other file concerned. */
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

/** A problem of any layer; a layer's reports say which codes they carry (ChainReport<ChainProblemCode>, …). */
export interface Problem<Code extends string = string> {
  code: Code;
  message: string;
  location: ProblemLocation;
}

export interface ChainReport<Code extends string = string> {
  ok: boolean;
  /** Digest the chain starts from: the genesis hash, or a partial range's starting prev_hash. */
  start_hash: string | null;
  start_seq: number;
  /** step_hash of the last complete step line, as stored; null when there is none or it is unreadable. */
  head: string | null;
  head_seq: number | null;
  /** Number of complete lines examined. */
  steps: number;
  problems: Problem<Code>[];
  /**
   * Conditions worth telling that do not break integrity, such as a journal's torn, uncommitted last line
   * or a stale head cache (both repaired on the next open). They never make `ok` false.
   */
  warnings: Problem<Code>[];
  /** True when more problems were found than the report keeps (maxProblems). */
  problems_truncated: boolean;
  /** stepchain/v3: every approval request in the chain and what became of it, who decided (APPROVALS.md §6); absent when there is none. */
  approvals?: ApprovalEntry[];
}

/** A problem in one line of text: "CODE at location: message" (what errors quote when a chain does not verify). */
export function describeProblem(p: Problem): string {
  return `${p.code} at ${describeLocation(p.location)}: ${p.message}`;
}

export function describeLocation(loc: ProblemLocation): string {
  const parts: string[] = [];
  if (loc.file !== undefined)
    parts.push(
      loc.line !== undefined ? `${loc.file}:${loc.line}${loc.column !== undefined ? `:${loc.column}` : ''}` : loc.file,
    );
  else if (loc.line !== undefined) parts.push(`line ${loc.line}`);
  if (loc.seq !== undefined) parts.push(`seq ${loc.seq}`);
  if (loc.path !== undefined) parts.push(loc.path === '' ? 'the record' : loc.path);
  else if (loc.field !== undefined) parts.push(loc.field);
  return parts.join(', ');
}
