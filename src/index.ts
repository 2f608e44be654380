/**
 * stepchain: a hash-chained, append-only journal for the steps an AI agent takes, with receipts anyone can
 * verify offline. This is the Node entry point for an application that journals its agent's steps: stores
 * and journals, runs, one way to export a receipt and one to verify it, keys, the errors these throw. Each
 * other user has an entry of their own (a name in two entries is one binding, test/architecture.test.ts):
 * `stepchain/runtime` (effects, journal values, approvals: what adapters build on), `stepchain/publish`
 * (redacted receipts and disclosures), `stepchain/replay` (replay and diff, for test authors),
 * `stepchain/keys`, `stepchain/verify` (auditors: browser-safe), `stepchain/format` (the format alone),
 * `stepchain/journal` (the contract's types, for adapters and other stores) and `stepchain/testing`.
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
export { VERSION } from './version.js';

// Stores and journals.
export { FileStore, type FileStoreOptions } from './store/file/store.js';
export type { FileJournal } from './store/file/journal.js';
export type { FsyncMode } from './store/file/writer.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.js';
export { openStore, type Location, type OpenedStore } from './location.js';
export type { StoreHealth, HealthProblem, StoreDiagnostics } from './store/health.js';
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

// Runs (RUNS.md): start one, resume one after a crash. The rest of the runtime (effects, journal values,
// approvals, the Run class itself) is `stepchain/runtime`.
export { startRun, resumeRun, RuntimeError, type RuntimeErrorCode } from './runtime/index.js';
export type {
  Run,
  StartRunOptions,
  BeginModelOptions,
  ModelOutcome,
  ModelToolCall,
  RunMeta,
  JournalInput,
  BeginToolOptions,
  ContinuationPoint,
  RunOpenOptions,
  ModelCallHandle,
  EffectHandle,
  Effect,
  ModelCall,
  EffectStatus,
  RunState,
  ToolCallValue,
  ApprovalRequest,
  ApprovalOutcome,
  ApprovalState,
  RequestApprovalOptions,
  AwaitApprovalOptions,
  DecideApprovalOptions,
  SignedDecision,
} from './runtime/index.js';
export type { RunIdentity, RecordKind, GenesisV2, StepRecordV2 } from './record/v2.js';

// Receipts: export one, verify one. The verifier takes bytes or a stream (read a file first); keys: make a
// pair, or write one to a key file (`stepchain/keys` holds the rest).
// Until the one receipt verifier (src/receipt/verify-any.ts, issue 38) is wired here, this is the older
// verifier that also takes a path: not yet the same binding as stepchain/verify's (test/architecture.test.ts).
// The one receipt verifier (the same binding as stepchain/verify's): bytes or a stream; read a file first.
export { verifyReceipt, type ReceiptVerifyOptions, type ReceiptVerdict } from './verifier/index.js';
export { exportReceipt, keygen, type ExportOptions, type ExportResult, type KeygenResult } from './receipt/node.js';
export type { VerifyReceiptOptions, ReceiptReport, ByteInput } from './receipt/verify.js';
export { generateKeyPair, type KeyPair, type KeyInput, type KeyFileInput } from './receipt/keys.js';

// Verification on every core: pass a pool as `pool` to journal.verify, store.verify or verifyReceipt.
export { createLineCheckPool, type WorkerLineCheckPool, type LineCheckPoolOptions } from './parallel/index.js';
export type { LineCheckPool } from './chain/batch.js';

// Reports.
export type { ChainReport, Problem, ProblemLocation } from './chain/report.js';
export type { ProblemCode } from './problems.js';
