/** Errors raised by replay (spec/REPLAY.md §7). Codes are public API: add, never rename. */
import { StepchainError } from '../errors.js';

export type ReplayErrorCode =
  /** The journal or receipt to replay from does not verify (or is not a run journal). */
  | 'REPLAY_UNVERIFIED'
  /** A live request differs from the recorded one it had to match (strict, record-missing): the diff rides along. */
  | 'REPLAY_MISMATCH'
  /** A live request came after every recorded one was served (strict). */
  | 'REPLAY_EXHAUSTED'
  /** Lenient or record-missing needed a live model or tool and none was given. */
  | 'REPLAY_LIVE_MISSING'
  /** An option has the wrong type or value. */
  | 'REPLAY_OPTION_INVALID'
  /** The recorded request failed: the recorded error is replayed (its name and message ride along). */
  | 'REPLAY_RECORDED_FAILURE';

export class ReplayError extends StepchainError<ReplayErrorCode> {
  /** REPLAY_MISMATCH: the field differences, recorded (a) beside live (b), as JSON Pointers. */
  diff?: readonly { path: string; kind: string; a?: unknown; b?: unknown }[];
  /** REPLAY_MISMATCH: the recorded request and the live one, as compared. */
  recorded?: unknown;
  live?: unknown;
  /** REPLAY_RECORDED_FAILURE: the error object the recording holds. */
  recordedError?: unknown;
}
