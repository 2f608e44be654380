/**
 * The journal store (spec/FILE-STORE.md): the journal contract and its shared parts, the file store and
 * the in-memory store. An internal barrel (scripts and tests import it); the package's entry points are
 * src/index.ts, src/journal.ts, src/verify.ts, src/format.ts and src/testing/index.ts.
 */
export {
  FileStore,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_STALE_MS,
  DEFAULT_IDEMPOTENCY_WINDOW,
  DEFAULT_BATCH_SYNC_MS,
  type FileStoreOptions,
} from './file/store.js';
export type { FileJournal } from './file/journal.js';
export type { FsyncMode } from './file/writer.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { StoreError, type StoreErrorCode } from './errors.js';
export { DEFAULT_SEGMENT_BYTES, DEFAULT_BLOB_THRESHOLD } from './config.js';
export { STORE_FORMAT } from './meta.js';
export {
  verifySource,
  journalReport,
  type VerifiableJournal,
  type SourceSegment,
  type SourceLine,
  type SourceVerification,
} from './verify-source.js';
export { IdempotencyWindow, type IdempotencyIndex, type CommittedStep } from './idempotency.js';
export { placeLine, segmentLabel, type SegmentCursor } from './segments.js';
export { LOCK_NAME } from './file/lock.js';
export { copyJournal, type CopyOptions, type CopyResult } from './copy.js';
export type { StoreHealth, HealthProblem, StoreDiagnostics } from './health.js';
export type {
  Store,
  Journal,
  JournalVerifyOptions,
  AppendOptions,
  AppendResult,
  Lineage,
  JournalConfig,
  CreateOptions,
  OpenOptions,
  ForkOptions,
  ChainHead,
  ChainSource,
  SeqRange,
  StoredLine,
  StepInput,
  StepRecord,
  Genesis,
  ChainReport,
  JournalReport,
  JournalProblemCode,
} from './types.js';
