/**
 * `stepchain/erase`: erase a value from a stepchain/v3 journal, or one subject from every journal of a
 * store, keeping every step hash, head and checkpoint valid (spec/ERASURE.md): file, SQLite and Postgres stores.
 */
export {
  eraseValue,
  eraseMatching,
  resumeErasures,
  erasureStepId,
  type StuckErasure,
  type EraseRequest,
  type ErasureOutcome,
  type MatchRequest,
  type StoreErasureReport,
} from './erase/store.js';
export {
  ErasureError,
  ERASED_MARKER,
  ERASURE_KIND,
  type ErasureErrorCode,
  type ErasureInput,
} from './record/v3/erasure.js';
