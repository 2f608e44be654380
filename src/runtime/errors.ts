/** The agent runtime's error class (spec/RUNS.md). Codes are public API: add, never rename. */
import { StepchainError } from '../errors.js';

export type RuntimeErrorCode =
  /** startRun with a run id the store already holds. */
  | 'RUN_EXISTS'
  /** resumeRun of a run id the store does not hold. */
  | 'RUN_NOT_FOUND'
  /** A runtime call on a journal that is not a run journal (format stepchain/v1). */
  | 'NOT_A_RUN'
  /** A run id, agent name, label or option that breaks its rule. */
  | 'RUN_OPTION_INVALID'
  /** An outcome for an effect or model call id that was never begun in this run. */
  | 'EFFECT_UNKNOWN'
  /** A second outcome for an effect or model call that already has one. */
  | 'EFFECT_ALREADY_ENDED'
  /** A value with no faithful JSON form (a cycle, a function, a symbol, an unsafe integer). */
  | 'VALUE_UNREPRESENTABLE';

export class RuntimeError extends StepchainError<RuntimeErrorCode> {}
