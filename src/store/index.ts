/**
 * The journal store (spec/FORMAT.md §8): the embedded file store, the in-memory store and the storage
 * interface they share. Node-only entry point: importing it installs node:crypto's SHA-256.
 */
import { useNodeHash } from '../node/fast-hash.js';

useNodeHash();

export { FileStore, DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STALE_MS, DEFAULT_IDEMPOTENCY_WINDOW, DEFAULT_BATCH_SYNC_MS, type FileStoreOptions } from './file-store.js';
export { MemoryStore, type MemoryStoreOptions } from './memory.js';
export { StoreError, type StoreErrorCode } from './errors.js';
export { DEFAULT_BUCKET_BYTES, DEFAULT_BLOB_THRESHOLD, STORE_FORMAT } from './layout.js';
export { LOCK_NAME } from './lock.js';
export type {
  Store, Journal, JournalVerifyOptions, AppendResult, Lineage, JournalConfig, CreateOptions, OpenOptions, ForkOptions, FsyncMode,
  ChainHead, ChainSource, SeqRange, StoredLine, StepInput, StepRecord, Genesis, ChainReport, JournalReport, JournalProblemCode,
} from './types.js';
