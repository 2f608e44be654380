/** The agent runtime (spec/RUNS.md; its records spec/FORMAT.md §11): runs, model requests and tool effects in flight, the continuation point, value conversion. */
export { RuntimeError, type RuntimeErrorCode } from './errors.js';
export { toJournalValue, errorValue, type JournalValueOptions, type BytesValue } from './value.js';
export { runState, foldRecord, emptyState, pendingOf, toolCallOf, type ToolCallValue, type RunState, type Effect, type ModelCall, type EffectStatus, type BoundaryAnomaly } from '../record/run-state.js';
export { startRun, resumeRun, runIdentity, type StartRunOptions } from './start.js';
export {
  Run,
  type BeginModelOptions, type ModelOutcome, type BeginToolOptions, type ContinuationPoint, type ModelCallHandle, type EffectHandle,
} from './run.js';
