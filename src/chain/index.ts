/** The step record, its hash and the chain verifier. Pure: runs in a browser. */
export {
  JOURNAL_FORMAT, RECORD_VERSION, CONTENT_FIELDS, ENVELOPE_FIELDS, RecordError, makeGenesis, genesisHash, genesisDefect,
  checkStepInput, sealRecord, computeStepHash, isValidId, isValidTimestamp, formatTimestamp, newStepId,
  type Json, type JsonObject, type Genesis, type StepRecord, type UnsealedRecord, type StepInput, type ContentField, type RecordErrorCode, type CheckedStep,
} from './record.js';
export { ChainVerifier, verifyChain, BLOB_MARKER, REDACTED_MARKER, type BlobRef, type VerifiedLine, type ChainVerifierOptions, type VerifyChainInput } from './verify.js';
export { describeLocation, type ChainReport, type Problem, type ProblemCode, type ProblemLocation } from './report.js';
export type { ChainSource, StoredLine, ChainHead, SeqRange } from './source.js';
