/** The agent runtime (spec/RUNS.md; its records spec/FORMAT.md §11): runs, model requests and tool effects in flight, the continuation point, value conversion. */
export { RuntimeError, type RuntimeErrorCode } from './errors.js';
export {
  toJournalValue,
  errorValue,
  outcomeValue,
  type JournalValueOptions,
  type JournalInput,
  type RunMeta,
  type BytesValue,
  type Unrepresentable,
  type UnrepresentableMarker,
} from './value.js';
export {
  runState,
  foldRecord,
  emptyState,
  pendingOf,
  toolCallOf,
  intentKey,
  resolutionOf,
  RESOLUTION_DECISIONS,
  type ToolCallValue,
  type RunState,
  type Effect,
  type ModelCall,
  type EffectStatus,
  type BoundaryAnomaly,
  type Resolution,
  type ResolutionDecision,
  type RunRecord,
} from '../record/run-state.js';
export { startRun, resumeRun, runIdentity, type StartRunOptions } from './start.js';
export {
  Run,
  type BeginModelOptions,
  type ModelOutcome,
  type ModelToolCall,
  type BeginToolOptions,
  type ContinuationPoint,
  type ModelCallHandle,
  type EffectHandle,
  type RunOpenOptions,
  type EffectDecision,
  type ResolveOptions,
  type CompleteOptions,
} from './run.js';
export {
  beginEffect,
  runEffect,
  currentEffect,
  withEffect,
  type EffectClass,
  type EffectScope,
  type EffectRun,
} from './effects.js';
export type {
  ApprovalRequest,
  ApprovalOutcome,
  ApprovalState,
  RequestApprovalOptions,
  AwaitApprovalOptions,
  DecideApprovalOptions,
  SignedDecision,
} from './approvals.js';
export { resumeHistory, type ResumeHistory } from './history.js';
export type { KeyInput } from '../approval/sign.js';
export { underRunRules } from './given-batch.js';
