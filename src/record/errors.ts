/** The error a writer raises for a step or genesis that breaks the record profile (spec/FORMAT.md §5, §6.1). */
import { StepchainError } from '../errors.js';

export type RecordErrorCode = 'FIELD_INVALID' | 'FIELD_NOT_ALLOWED' | 'GENESIS_INVALID';

export class RecordError extends StepchainError<RecordErrorCode> {}
