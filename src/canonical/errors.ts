/** Errors raised when a value cannot be represented canonically (spec/FORMAT.md §3). */
import { StepchainError } from '../errors.js';

export type CanonicalErrorCode =
  | 'NOT_FINITE_NUMBER'
  | 'UNSUPPORTED_TYPE'
  | 'NOT_PLAIN_OBJECT'
  | 'LONE_SURROGATE'
  | 'CYCLE'
  | 'DEPTH_LIMIT'
  | 'RESERVED_KEY';

export class CanonicalError extends StepchainError<CanonicalErrorCode> {}
