/**
 * The storage interface (spec/FORMAT.md §8): what every store and every journal offers, whatever
 * holds the bytes. The file store and the in-memory store both implement it, and one conformance suite
 * (test/store/conformance.test.ts) runs against both.
 */
import type { BlobProblemCode, ChainProblemCode, ChainReport } from '../chain/report.js';
import type { Genesis, StepInput, StepRecord } from '../record/index.js';
import type { ChainHead, ChainSource, SeqRange, StoredLine } from '../chain/source.js';

/** The problems of a journal's verify (spec/FORMAT.md §8.13): the chain's, the blobs', and the store's own. */
export type JournalProblemCode = ChainProblemCode | BlobProblemCode | 'JOURNAL_INVALID' | 'HEAD_CACHE_STALE';
export type JournalReport = ChainReport<JournalProblemCode>;

/** `fsync` durability modes; see spec/FORMAT.md §8 for what each promises when append resolves. */
export type FsyncMode = 'always' | 'batch' | 'none';

/** What `append` returns: the step's place in the chain. */
export interface AppendResult {
  seq: number;
  step_id: string;
  step_hash: string;
  prev_hash: string;
}

/** A fork's record of where it came from (spec/FORMAT.md §8). */
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

export interface JournalConfig {
  /** A bucket is closed once it holds this many bytes; the next step starts a new one. */
  bucket_bytes: number;
  /** A content field whose canonical JSON reaches this many UTF-8 bytes is stored as a blob. */
  blob_threshold: number;
}

export interface CreateOptions {
  /** Bucket rotation size in bytes (default 64 MiB, at least 4 KiB). */
  bucketBytes?: number;
  /** Blob threshold in bytes (default 64 KiB, from 1 KiB to 1 MiB). */
  blobThreshold?: number;
  /** The genesis `created_at` (default now). */
  createdAt?: Date | string;
  /** The genesis `journal_id` (default a random UUID). */
  journalId?: string;
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

export interface Journal extends ChainSource {
  /** The id the journal was opened under. */
  readonly id: string;
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  readonly readOnly: boolean;
  /**
   * Appends one step. Concurrent calls are group-committed; the promise resolves once the step is
   * durable as the fsync mode promises. A step_id the journal already holds (within the idempotency
   * window) with identical content returns the existing step; with different content, STEP_ID_CONFLICT.
   */
  append(step: StepInput): Promise<AppendResult>;
  /** Appends steps as one unit: all are committed, contiguously and in order, or none is. */
  appendMany(steps: readonly StepInput[]): Promise<AppendResult[]>;
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
   * Verifies the whole journal read-only: the chain, every referenced blob, a fork's lineage, the head
   * cache. Never modifies anything; a torn uncommitted tail and a stale head cache are warnings.
   */
  verify(options?: JournalVerifyOptions): Promise<JournalReport>;
  /** Waits for queued appends, flushes deferred fsyncs, and releases resources. Idempotent. */
  close(): Promise<void>;
}

export interface JournalVerifyOptions {
  /** A head obtained out of band (published, signed, remembered): the last step_hash must equal it. */
  expectHead?: string;
  /** Called after each line with the number of lines verified so far (for progress bars). */
  onProgress?: (lines: number) => void;
}

export interface Store {
  create(id: string, options?: CreateOptions): Promise<Journal>;
  open(id: string, options?: OpenOptions): Promise<Journal>;
  /** Ids of the journals in the store, sorted. */
  list(): Promise<string[]>;
  /** A new journal `to` whose steps 0..fromStep are byte-identical to `parent`'s. The parent is only read. */
  fork(parent: Journal, options: ForkOptions): Promise<Journal>;
}

export type { ChainHead, ChainSource, SeqRange, StoredLine, StepInput, StepRecord, Genesis, ChainReport };
