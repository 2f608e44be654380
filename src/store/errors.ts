/**
 * The journal store's one error class (spec/FILE-STORE.md). Codes are public API: add, never rename.
 * Each message names the file, seq or field concerned and says what to do.
 */
import { StepchainError } from '../errors.js';

export type StoreErrorCode =
  /** `open` of an id with no journal under the root. */
  | 'JOURNAL_NOT_FOUND'
  /** `create` or `fork` to an id that is already taken. */
  | 'JOURNAL_EXISTS'
  /** The journal directory or its metadata file is not a journal this version can open. */
  | 'JOURNAL_INVALID'
  /** The committed chain cannot be extended safely (its last whole line is unreadable or does not link). */
  | 'JOURNAL_CORRUPT'
  /** A journal id outside [A-Za-z0-9_.-]{1,200}, containing "..", or with a leading dot. */
  | 'ID_INVALID'
  /** The journal lock stayed held by another writer past the contention timeout. */
  | 'LOCK_TIMEOUT'
  /**
   * This writer's lock was taken over (by a writer that could not check it alive, after staleness), found
   * before writing (nothing was written), or another writer's bytes appeared in the bucket around this
   * writer's write (the message says which; the batch is not acknowledged either way).
   */
  | 'LOCK_COMPROMISED'
  /** A caller-supplied step_id the journal already holds with different content. */
  | 'STEP_ID_CONFLICT'
  /** A stepchain/v3 step of kind "erasure" or with an `erasure:` step_id, appended by anything but erase (ERASURE.md §3.1). */
  | 'ERASURE_RESERVED'
  /** A stepchain/v3 append of an approval record in the shape written before statement v2 (a request's or a statement's unsalted `digest`): APPROVALS.md §2.1. */
  | 'APPROVAL_LEGACY'
  /** A stepchain/v3 append of an approval.requested whose `expires_at` names no real instant: APPROVALS.md §2. */
  | 'APPROVAL_INVALID'
  /** An append with `after` when the chain no longer ends at that seq (another writer appended); nothing was written. */
  | 'HEAD_MOVED'
  /** A step whose sealed line would exceed MAX_LINE_BYTES (only `meta` is never moved to a blob). */
  | 'STEP_TOO_LARGE'
  /** A seq or range that is not a non-negative integer, or outside the chain (fork's fromStep). */
  | 'RANGE_INVALID'
  /** A fork whose prefix ends between an erased record and its erasure record (spec/ERASURE.md §6.5). */
  | 'RANGE_SPLITS_ERASURE'
  /** A fork of steps an erasure recorded but not yet carried out names (spec/ERASURE.md §4): resume it first. */
  | 'ERASURE_PENDING'
  /** A copy whose source kept changing under it: erasures of copied steps recorded past each end it read (spec/ERASURE.md §6.4). */
  | 'SOURCE_CHANGED'
  /** A copy of a fork whose copied prefix holds an approval request: without the lineage its decisions would authorise effects twice (spec/POSTGRES.md §10). */
  | 'COPY_DROPS_LINEAGE'
  /** A copy into a fork holding nothing past its fork point: its first own steps would be another journal's (spec/APPROVALS.md §8). */
  | 'COPY_INTO_FORK'
  /** An append on a journal opened read-only. */
  | 'READ_ONLY'
  /** An operation on a closed journal. */
  | 'CLOSED'
  /** An option with a wrong type or out of range. */
  | 'OPTION_INVALID'
  /** A blob a record references is absent, or its bytes do not match the reference. */
  | 'BLOB_MISSING'
  | 'BLOB_CORRUPT'
  /** Any other file-system failure; `cause` holds the system error. */
  | 'IO_ERROR'
  /** A database store's server cannot be reached: refused, unresolvable, timed out, shutting down, connection lost. */
  | 'SERVER_UNREACHABLE'
  /** Every connection of a database store's pool stayed in use past the connection timeout: this process's own contention, not the server's. */
  | 'POOL_EXHAUSTED'
  /** The server refused the credentials (wrong or missing password, no such role, not allowed by pg_hba.conf). */
  | 'AUTH_FAILED'
  /** The database holds a store schema written by a newer stepchain; this version neither reads nor migrates it. */
  | 'SCHEMA_TOO_NEW'
  /** The optional database driver (the `pg` package) is not installed. */
  | 'DRIVER_MISSING'
  /** Any other database failure (permissions, a read-only server, a full disk…); `cause` holds the server's error. */
  | 'SERVER_ERROR'
  /** A location whose scheme (s3:, file:, http:…) names no store this version knows; nothing was created. */
  | 'SCHEME_UNKNOWN';

export class StoreError extends StepchainError<StoreErrorCode> {}

/** Wraps a system error as IO_ERROR naming what was being done and to which file. */
export function ioError(what: string, file: string, cause: unknown): StoreError {
  const code = (cause as { code?: unknown } | null)?.code;
  return new StoreError('IO_ERROR', `${what} ${file} failed${typeof code === 'string' ? ` (${code})` : ''}`, {
    location: { file },
    cause,
  });
}
