/**
 * `stepchain/journal`: the journal contract (spec/FILE-STORE.md) that stores implement and adapters program
 * against — the types of stores, journals, steps, records and reports, and the error classes to tell
 * failures apart. No store, no I/O, no effect on import: an adapter that imports only this entry adds
 * nothing to a bundle but the error classes.
 */
export type {
  Store,
  Journal,
  JournalConfig,
  CreateOptions,
  OpenOptions,
  ForkOptions,
  JournalVerifyOptions,
  JournalReport,
  RunEntry,
  RunFilter,
  JournalProblemCode,
  AppendOptions,
  AppendResult,
  Lineage,
  RunStateCache,
} from './store/types.js';
export type { ChainSource, ChainHead, SeqRange, StoredLine } from './chain/source.js';
export type { StepInput, ToolCall, JsonInput } from './record/input.js';
export type { StepRecord, UnsealedRecord } from './record/seal.js';
export type { Genesis } from './record/formats.js';
export type { Json, JsonObject } from './canonical/json.js';
export type { ChainReport, Problem, ProblemLocation } from './chain/report.js';
export type { ProblemCode } from './problems.js';
export type { RunIdentity, RecordKind, GenesisV2, StepRecordV2 } from './record/v2.js';
export type { RuntimeErrorCode } from './runtime/errors.js';
// From the modules themselves, not runtime/index.js: that one also holds the effect runner (node:async_hooks),
// and this entry's graph stays free of Node's types (tsconfig.browser.json).
export type { StartRunOptions } from './runtime/start.js';
export type {
  BeginModelOptions,
  ModelOutcome,
  BeginToolOptions,
  ContinuationPoint,
  ModelCallHandle,
  EffectHandle,
  RunOpenOptions,
} from './runtime/run.js';
export type { Effect, ModelCall, EffectStatus, RunState } from './record/run-state.js';
export { StepchainError, type ErrorLocation } from './errors.js';
export { CanonicalError, type CanonicalErrorCode } from './canonical/errors.js';
export { RecordError, type RecordErrorCode } from './record/errors.js';
export { StoreError, type StoreErrorCode } from './store/errors.js';
export { RuntimeError } from './runtime/errors.js';
