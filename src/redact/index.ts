/**
 * Redaction with re-anchoring and salted anchor commitments (spec/REDACTION.md): policies, detectors, the redaction walk, commitments,
 * the publisher, disclosure and the published-receipt verifier. The verification modules (verify.js,
 * disclose.js, anchor.js) are pure; node.js holds the file I/O.
 */
export { PolicyError, RedactError, type PolicyErrorCode, type RedactErrorCode } from './errors.js';
export {
  compilePolicy,
  parsePolicyText,
  POLICY_FORMAT,
  type Policy,
  type PolicyDocument,
  type PolicyRule,
  type CompiledRule,
  type RedactMode,
} from './policy.js';
export {
  DETECTORS,
  DETECTOR_IDS,
  DETECTOR_PATTERNS,
  findSecrets,
  placeholder,
  type Detector,
  type Match,
} from './detectors.js';
export {
  commitment,
  stepCommitment,
  randomSalts,
  seededSalts,
  fixedSalts,
  saltToHex,
  saltFromHex,
  COMMITMENT_TAG,
  STEP_COMMITMENT_TAG,
  SALT_BYTES,
  type SaltSource,
} from './commit.js';
export { redactStep, type Redaction, type RedactionMarker } from './redact.js';
export {
  REDACTION_FORMAT,
  WITHDRAWN_FORMATS,
  anchorDefect,
  redactionsDefect,
  compareAnchor,
  type AnchorBlock,
  type Declaration,
  type StepOpening,
} from './anchor.js';
export {
  planPublication,
  escapedForms,
  MAX_ESCAPE_DEPTH,
  MIN_SWEEP_LENGTH,
  type Publication,
  type PublishCoreOptions,
} from './publish.js';
export {
  verifyPublishedReceipt,
  publishedReceiptHooks,
  MAX_UNBOUND_LISTED,
  type PublishedReport,
  type VerifyPublishedOptions,
  type MarkerValue,
  type Locate,
  type ReceiptHooks,
  type UnboundText,
} from './verify.js';
export {
  discloseFromSecrets,
  verifyDisclosure,
  secretsFile,
  proofDefect,
  SECRETS_FORMAT,
  DISCLOSURE_FORMAT,
  textFits,
  type DisclosureProof,
  type DisclosureReport,
  type DisclosureProblemCode,
  type SecretsFile,
  type SecretEntry,
} from './disclose.js';
export {
  discloseStepFromSecrets,
  verifyStepDisclosure,
  STEP_DISCLOSURE_FORMAT,
  type StepDisclosureProof,
  type StepDisclosureReport,
  type Opening,
} from './disclose-step.js';
export {
  discloseHashFromSecrets,
  verifyHashDisclosure,
  HASH_DISCLOSURE_FORMAT,
  type HashDisclosureProof,
  type HashDisclosureReport,
} from './disclose-hash.js';
export {
  publish,
  preparePublication,
  publicationBytes,
  verifyPublishedFile,
  disclose,
  discloseStep,
  discloseHash,
  verifyDisclosureFiles,
  readPolicyFile,
  loadPolicy,
  type PublishOptions,
  type PublishResult,
} from './node.js';
export { planCommittedPublication, type CommittedPublication, type WithheldSlot } from './commit-publish.js';
export { COMMITTED_PUBLICATION_FORMAT, publicationDefect, type PublicationBlock } from './publication.js';
export {
  openSlot,
  verifyOpening,
  openingDefect,
  SLOT_OPENING_FORMAT,
  type SlotOpening,
  type OpeningReport,
} from './opening.js';
export { viewSlots, printablePointer } from './unbound.js';
export { planV3Publication, type V3Publication } from './v3-publish.js';
export {
  publicRecordV3,
  checkPublicRecordV3,
  compareV3Declarations,
  type V3Declaration,
  type V3Withheld,
  type V3PublicRecord,
  type V3RecordProblem,
} from './v3-public.js';
export {
  openUnitV3,
  verifyUnitOpening,
  UNIT_OPENING_FORMAT,
  type UnitOpening,
  type UnitOpeningReport,
} from './v3-opening.js';
export { COMMITTED_PUBLICATION_FORMAT_V3 } from './publication.js';
