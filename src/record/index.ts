/** The record profile (spec/FORMAT.md §5, §6.1, §10): formats, profiles, the genesis, markers, sealing. Pure. */
export { RecordError, type RecordErrorCode } from './errors.js';
export { isValidId, isValidTimestamp, formatTimestamp, newStepId } from './fields.js';
export {
  BLOB_MARKER,
  REDACTED_MARKER,
  isMarker,
  isBlobBody,
  isRedactedBody,
  blobRefOf,
  blobMarker,
  type BlobRef,
  type RedactedBody,
} from './markers.js';
export {
  keyOfTexts,
  keyOfRecord,
  stepHashWithout,
  type RecordProfile,
  type JournalFormat,
  type FormatCapabilities,
  type MemberRule,
  type RuleViolation,
  type StepTexts,
  type Envelope,
} from './profile.js';
export {
  FORMAT_V1,
  RECORD_VERSION_V1,
  CONTENT_FIELDS,
  STEP_V1,
  JOURNAL_V1,
  toolNameOf,
  type ContentField,
  type GenesisV1,
  type StepRecordV1,
} from './v1.js';
export {
  FORMAT_V2,
  RECORD_VERSION_V2,
  RECORD_KINDS,
  CONTENT_FIELDS_V2,
  STEP_V2,
  JOURNAL_V2,
  runIdentityDefect,
  endsStarted,
  type RecordKind,
  type RunIdentity,
  type GenesisV2,
  type StepRecordV2,
} from './v2.js';
export {
  DEFAULT_FORMAT,
  JOURNAL_FORMAT,
  REDACTABLE_MEMBERS,
  journalFormat,
  formatOf,
  writerProfile,
  genesisDefect,
  makeGenesis,
  genesisHash,
  type Genesis,
} from './formats.js';
export { sealRecord, sealMemberTexts, computeStepHash, type StepRecord, type UnsealedRecord } from './seal.js';
export { checkStepInput, type StepInput, type CheckedStep } from './input.js';
export { blobDefect, blobValue, fetchBlob, type FetchedBlob } from './blobs.js';
export type { Json, JsonObject } from '../canonical/json.js';
