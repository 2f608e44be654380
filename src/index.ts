/**
 * stepchain: a hash-chained, append-only journal for the steps an AI agent takes, with receipts anyone can
 * verify offline. This is the Node entry point, with the task-level API: stores and journals, one way to
 * export a receipt and one to verify it, publishing and disclosure, diff, keys, errors. The other entries:
 * `stepchain/journal` (the journal contract's types, side-effect free, for adapters), `stepchain/verify`
 * (the browser-safe verifiers), `stepchain/format` (the formats' building blocks) and `stepchain/testing`.
 *
 * Naming (README, "The library's entry points"): members that are a format's own — record, genesis, head, manifest and report
 * members, as on disk and in `--json` — keep its snake_case; everything the library names itself, options
 * and methods, is camelCase.
 */
// Errors: one class per domain, each with a closed union of stable codes.
export { StepchainError, type ErrorLocation } from './errors.js';
export { CanonicalError, type CanonicalErrorCode } from './canonical/errors.js';
export { RecordError, type RecordErrorCode } from './record/errors.js';
export { StoreError, type StoreErrorCode } from './store/errors.js';
export { ReceiptError, type ReceiptErrorCode } from './receipt/errors.js';
export { PolicyError, RedactError, type PolicyErrorCode, type RedactErrorCode } from './redact/errors.js';
export { DiffError, type DiffErrorCode } from './diff/errors.js';
export { VERSION } from './version.js';

// Stores and journals.
export { FileStore, type FileStoreOptions } from './store/file/store.js';
export type { FsyncMode } from './store/file/writer.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js';
export { openStore, parseLocation, type Location, type OpenedStore } from './location.js';
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
  RunProgress,
  RunStatus,
  AppendOptions,
  AppendResult,
  Lineage,
} from './store/types.js';
export type { ChainSource, ChainHead, SeqRange, StoredLine } from './chain/source.js';
export type { StepInput, ToolCall, JsonInput } from './record/input.js';
export type { StepRecord } from './record/seal.js';
export type { Genesis } from './record/formats.js';
export type { Json, JsonObject } from './canonical/json.js';

// The agent runtime: runs, model requests and tool effects in flight, the continuation point (RUNS.md).
export {
  RuntimeError,
  startRun,
  resumeRun,
  Run,
  toJournalValue,
  toolCallOf,
  type ToolCallValue,
  type RuntimeErrorCode,
  type StartRunOptions,
  type BeginModelOptions,
  type ModelOutcome,
  type BeginToolOptions,
  type ContinuationPoint,
  type RunOpenOptions,
  type ModelCallHandle,
  type EffectHandle,
  type Effect,
  type ModelCall,
  type EffectStatus,
  type RunState,
  type BoundaryAnomaly,
  type JournalValueOptions,
  type BytesValue,
  type EffectDecision,
  type ResolveOptions,
  type CompleteOptions,
  type Resolution,
  type ResolutionDecision,
  type Unrepresentable,
  beginEffect,
  runEffect,
  currentEffect,
  withEffect,
  type EffectClass,
  type EffectScope,
  type EffectRun,
  resumeHistory,
  type ResumeHistory,
} from './runtime/index.js';

// Approval records (spec/APPROVALS.md): the signed statement and its signature, for approvers outside a Run.
export {
  signApproval,
  approvalStatement,
  type ApprovalStatement,
  type DecisionMeta,
  type ApproverIdentity,
  type ApprovalEntry,
  type ApproverFacts,
  type PinnedApprover,
} from './approval/index.js';
export type {
  ApprovalRequest,
  ApprovalOutcome,
  ApprovalState,
  RequestApprovalOptions,
  AwaitApprovalOptions,
  DecideApprovalOptions,
  SignedDecision,
} from './runtime/index.js';

// Pinned replay: a verified run journal served back as a cassette (spec/REPLAY.md).
export {
  replayFrom,
  ReplayError,
  explain,
  type Replay,
  type ReplayMode,
  type ReplayOptions,
  type ReplaySource,
  type ReplayAnswer,
  type ReplayEntry,
  type ReplayedHead,
  type ReplayErrorCode,
  type ModelRequest,
  type ToolRequest,
  type Explanation,
  type DivergenceClass,
  type ExplainInput,
} from './replay/index.js';
export { VOLATILE_PATTERNS } from './diff/volatile.js';
export type { RunIdentity, RecordKind, GenesisV2, StepRecordV2 } from './record/v2.js';

// Receipts: export one, verify one (a path, bytes or a stream), keys.
export {
  exportReceipt,
  verifyReceiptAt as verifyReceipt,
  keygen,
  readPublicKeyFile,
  type ExportOptions,
  type ExportResult,
  type KeygenResult,
} from './receipt/node.js';
export type { VerifyReceiptOptions, ReceiptReport, ByteInput } from './receipt/verify.js';
export { generateKeyPair, type KeyPair, type KeyInput, type KeyFileInput } from './receipt/keys.js';

// Publishing a redacted receipt, disclosing what it hides.
export {
  publish,
  verifyPublishedAt as verifyPublishedReceipt,
  disclose,
  discloseStep,
  discloseHash,
  verifyDisclosureFiles,
  type PublishOptions,
  type PublishResult,
} from './redact/node.js';
export type { PublishedReport, VerifyPublishedOptions, UnboundText } from './redact/verify.js';
// A v2 journal's publication is against its original head; a withheld field is opened from the journal.
export { openSlot, verifyOpening, type SlotOpening, type OpeningReport } from './redact/opening.js';
export type { PolicyDocument } from './redact/policy.js';

// Verification on every core: pass a pool as `pool` to journal.verify, store.verify or verifyReceipt.
export { createLineCheckPool, type WorkerLineCheckPool, type LineCheckPoolOptions } from './parallel/index.js';
export type { LineCheckPool } from './chain/batch.js';

// Comparing runs.
export { diff, summarize, formatDiff, type DiffOptions, type DiffReport } from './diff/index.js';

// Reports.
export { describeLocation, type ChainReport, type Problem, type ProblemLocation } from './chain/report.js';
export type { ProblemCode } from './problems.js';
