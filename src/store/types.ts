/**
 * The journal contract (spec/FILE-STORE.md): what every store and every journal offers, whatever holds
 * the bytes — a directory, memory, a database. Nothing here names a file: a journal's lines live in
 * segments with opaque labels, and its config holds only what decides its bytes. One conformance suite
 * (test/store/conformance.test.ts) runs against every store. Types only: importing this has no effect.
 */
import type { LineCheckPool } from '../chain/batch.js';
import type { BlobProblemCode, ChainProblemCode, ChainReport } from '../chain/report.js';
import type { ChainHead, ChainSource, SeqRange, StoredLine } from '../chain/source.js';
import type { CreatableFormat, Genesis } from '../record/formats.js';
import type { RunIdentity } from '../record/v2.js';
import type { RunEntry, RunFilter, RunProgress, RunStatus } from './runs.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';

/** The problems of a journal's verify (spec/FILE-STORE.md §13): the chain's, the blobs', and the store's own. */
export type JournalProblemCode =
  | ChainProblemCode
  | BlobProblemCode
  | 'PART_MISSING'
  | 'PART_CORRUPT'
  | 'PART_ADDRESS_MISMATCH'
  | 'JOURNAL_INVALID'
  | 'HEAD_CACHE_STALE'
  | 'BATCH_PENDING';
export type JournalReport = ChainReport<JournalProblemCode>;

/** What `append` returns: the step's place in the chain. */
export interface AppendResult {
  seq: number;
  step_id: string;
  step_hash: string;
  prev_hash: string;
  /** The step's `ts` as committed (for an idempotent repeat, the existing step's). */
  ts: string;
}

/** How an append is committed (spec/FILE-STORE.md §17). */
export interface AppendOptions {
  /**
   * Commit only if the chain's last step is still this seq (-1: an empty chain), so the steps become
   * `after + 1`…; otherwise nothing is written and the append fails with HEAD_MOVED. A writer whose
   * decision rests on what it has read (an outcome recorded once) appends on that knowledge without
   * reading again: another writer's append in between is caught by the store, under its lock.
   */
  after?: number;
}

/** A fork's record of where it came from (spec/FILE-STORE.md). */
export interface Lineage {
  /** The parent journal's id in its store. */
  parent_journal: string;
  /** Hash of the genesis object the fork shares with its parent. */
  parent_genesis_hash: string;
  /** The last step copied from the parent. */
  from_step: number;
  /** The parent's step_hash at `from_step`; the fork's step at `from_step` has the same hash. */
  parent_step_hash: string;
}

/**
 * What decides a journal's bytes, the same in every store: a fork or a copy keeps it, so its lines and its
 * receipts are byte-identical wherever it lives. A store may add settings of its own (`Journal<Config>`).
 */
export interface JournalConfig {
  /** A content field whose canonical JSON reaches this many UTF-8 bytes is stored as a blob (FORMAT §7). */
  blobThreshold: number;
  /**
   * A segment is closed once it holds this many bytes and the next line starts a new one (FILE-STORE.md §5: a
   * bucket file); a receipt starts a new chain entry where a segment starts (RECEIPT §3.3).
   */
  segmentBytes: number;
}

export interface CreateOptions {
  /** Segment rotation size in bytes (default 64 MiB, at least 4 KiB). */
  segmentBytes?: number;
  /** Blob threshold in bytes (default 64 KiB, from 1 KiB to 1 MiB). */
  blobThreshold?: number;
  /** The genesis `created_at` (default now). */
  createdAt?: Date | string;
  /** The genesis `journal_id` (default a random UUID). */
  journalId?: string;
  /**
   * A run identity: the journal is created as a run journal (stepchain/v3 unless `format` says v2) with it in
   * its genesis (FORMAT §11.1, §14), covered by the genesis hash. Absent: a stepchain/v1 journal, as before.
   */
  run?: RunIdentity;
  /**
   * The journal format (default `stepchain/v1`, or `stepchain/v3` when `run` is given); `stepchain/v2` records hash
   * salted slot commitments (FORMAT §12); `stepchain/v3` records commit every member, element and chunk (FORMAT §14).
   */
  format?: CreatableFormat;
}

export interface OpenOptions {
  /** Open without the lock and never write: appends fail with READ_ONLY. Default false. */
  readOnly?: boolean;
}

export interface ForkOptions {
  /** The last parent step the fork keeps (0 ≤ fromStep ≤ the parent's head seq). */
  fromStep: number;
  /** The new journal's id in this store. */
  to: string;
}

export interface Journal<Config extends JournalConfig = JournalConfig> extends ChainSource {
  /** The id the journal was opened under. */
  readonly id: string;
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: Readonly<Config>;
  readonly readOnly: boolean;
  /**
   * Appends one step. Concurrent calls are group-committed; the promise resolves once the step is
   * durable as the store promises (the file store: its fsync mode). A step_id the journal already holds (within the idempotency
   * window) with identical content returns the existing step; with different content, STEP_ID_CONFLICT.
   */
  append(step: StepInput, options?: AppendOptions): Promise<AppendResult>;
  /** Appends steps as one unit: all are committed, contiguously and in order, or none is. */
  appendMany(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]>;
  /** The last committed step, read from the chain itself (not the head cache); null when empty. */
  head(): Promise<ChainHead | null>;
  /** One step with blobs restored; null when seq is past the head. */
  get(seq: number): Promise<StepRecord | null>;
  /** Steps in seq order with blobs restored; memory bounded by the longest line. */
  read(range?: SeqRange): AsyncIterable<StepRecord>;
  lines(range?: SeqRange): AsyncIterable<StoredLine>;
  /**
   * A blob's bytes, or null when the journal does not hold it. Given the reference's `size`, a stored blob
   * of another size is refused with BLOB_CORRUPT before any of it is read.
   */
  blob(digest: string, size?: number): Promise<Uint8Array | null>;
  /**
   * Verifies the whole journal read-only: the chain, every referenced blob, a fork's lineage, and whatever
   * the store keeps besides (the file store: its directory and head cache). Never modifies anything.
   */
  verify(options?: JournalVerifyOptions): Promise<JournalReport>;
  /** Waits for queued appends, flushes deferred fsyncs, and releases resources. Idempotent. */
  close(): Promise<void>;
  /**
   * Where a run reader keeps its folded state beside the chain (derived data, FILE-STORE.md §19), so a
   * process that opens a run reads only the records after it. Absent where the store keeps none.
   */
  readonly runStateCache?: RunStateCache;
}

/** A run reader's saved state (FILE-STORE.md §19): only a hint, checked against the chain before use. */
export interface RunStateCache {
  /** The saved text, or null when there is none (or it cannot be read). */
  read(): Promise<string | null>;
  /** Replaces it; absent on a journal opened read-only (reading leaves a journal byte-identical). */
  write?: (text: string) => Promise<void>;
}

export interface JournalVerifyOptions {
  /** A head obtained out of band (published, signed, remembered): the last step_hash must equal it. */
  expectHead?: string;
  /** Called after each line with the number of lines verified so far (for progress bars). */
  onProgress?: (lines: number) => void;
  /**
   * Runs the per-line checks on these threads (`createLineCheckPool` from `stepchain`); without one they run
   * on the caller's thread. The report is the same, problem for problem.
   */
  pool?: LineCheckPool;
  /** stepchain/v3: also run the deep tier, recomputing every record's root from its values (FORMAT §14.7). */
  deep?: boolean;
  /** stepchain/v3: the pinned approvers' public keys (spec/APPROVALS.md §5): a decision by any other key is APPROVER_UNKNOWN. */
  approvers?: readonly { key: Uint8Array; name?: string }[];
}

export interface Store<J extends Journal = Journal> {
  create(id: string, options?: CreateOptions): Promise<J>;
  open(id: string, options?: OpenOptions): Promise<J>;
  /**
   * Without a filter: the ids of the journals in the store, sorted. With a filter (even `{}`): the ids of
   * the run journals (stepchain/v2) whose genesis identity matches it, in chronological order — created_at,
   * then id — as a guarantee (FORMAT §11.1). A store answers it without opening every journal.
   */
  list(filter?: RunFilter): Promise<string[]>;
  /**
   * The matching run journals with their identity, in the same chronological order; a store that keeps run
   * state (SQLite, Postgres) adds each run's `progress` and applies `filter.status` in one query; a directory
   * store adds it from each run's saved state when that is current (FILE-STORE.md §19), without opening the
   * journal; the others apply `filter.status` by folding each run (a directory store: each run without it).
   */
  runs(filter?: RunFilter): Promise<RunEntry[]>;
  /** A new journal `to` whose steps 0..fromStep are byte-identical to `parent`'s. The parent is only read. */
  fork(parent: Journal, options: ForkOptions): Promise<J>;
  /**
   * Removes journal `id` as a whole (spec/FILE-STORE.md §15): afterwards it is neither listed nor opened. A
   * journal is deleted whole or not at all; nothing removes or rewrites part of one. Optional so a store
   * that keeps history forever need not offer it; JOURNAL_NOT_FOUND when there is no such journal.
   */
  remove?(id: string): Promise<void>;
  /**
   * Finishes the removals a killed `remove` left, for a store whose removal is not one atomic step (the file
   * store: a renamed directory not yet deleted, FILE-STORE.md §15); returns how many. prune calls it first
   * (RETENTION.md §5 step 0), so that a prune killed mid-removal is finished by running it again.
   */
  finishRemovals?(): Promise<number>;
}

export type {
  ChainHead,
  ChainSource,
  SeqRange,
  StoredLine,
  StepInput,
  StepRecord,
  Genesis,
  ChainReport,
  RunEntry,
  RunFilter,
  RunProgress,
  RunStatus,
};
