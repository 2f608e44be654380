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
  | 'VALUE_UNREPRESENTABLE'
  /**
   * Beginning what would repeat an effect of unknown outcome (same call id, same tool and arguments, or
   * same idempotency key as a pending effect), or completing a run while effects are pending (RUNS.md §5).
   */
  | 'EFFECT_PENDING'
  /**
   * The CLI's `effect begin` with an idempotency key, or an --id, whose effect completed (beginTool returns that
   * effect); Run.record (and `append`) given a tool.started under the id of an effect that completed with the same intent.
   */
  | 'EFFECT_EXISTS'
  /** An append to a run that already has its run.completed or run.failed record. */
  | 'RUN_ENDED'
  /** A resolution of an effect that is not pending (it has an observed outcome). */
  | 'EFFECT_NOT_PENDING'
  /** resumeRun of a run whose journal does not verify (tampered, truncated): refused rather than resumed. */
  | 'RUN_INVALID'
  /** An approval call on a journal that is not stepchain/v3 (approval records exist only there: spec/APPROVALS.md). */
  | 'APPROVAL_FORMAT'
  /** No approval request with that id in the run. */
  | 'APPROVAL_UNKNOWN'
  /** beginTool for a request with no decision yet. */
  | 'APPROVAL_PENDING'
  /** beginTool for a denied request. */
  | 'APPROVAL_DENIED'
  /** beginTool, or a decision, after the request's expires_at. */
  | 'APPROVAL_EXPIRED'
  /** beginTool with a call other than the one the request presented. */
  | 'APPROVAL_MISMATCH'
  /** beginTool for a grant an effect already used (one grant, one effect). */
  | 'APPROVAL_USED'
  /** A second decision on a request. */
  | 'APPROVAL_DECIDED'
  /** A decision on a request a fork copied from its parent (at or before the fork point): it would authorise nothing here, and its parent's signature on the same statement would work there. */
  | 'APPROVAL_FORKED'
  /** A request whose record is not well formed. */
  | 'APPROVAL_INVALID'
  /** beginTool without naming a request for a call that was presented for approval in this run. */
  | 'APPROVAL_REQUIRED';

export class RuntimeError extends StepchainError<RuntimeErrorCode> {
  /** With EFFECT_PENDING: the id of the pending effect the call would repeat (from beginTool), or the first one pending (from complete). */
  pendingEffect?: string;
}
