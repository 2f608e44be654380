/**
 * `stepchain/verify`: everything an auditor needs to check a chain, with no Node-only imports, so it runs
 * unchanged in a browser page. test/purity.test.ts keeps it that way.
 */
export {
  ChainVerifier,
  verifyChain,
  type VerifiedLine,
  type ChainVerifierOptions,
  type VerifyChainInput,
} from './chain/index.js';
export { BLOB_MARKER, REDACTED_MARKER, type BlobRef } from './record/markers.js';
export { describeLocation, type ChainReport, type Problem, type ProblemLocation } from './chain/report.js';
export type { ProblemCode } from './problems.js';
export {
  genesisHash,
  genesisDefect,
  JOURNAL_FORMAT,
  type Genesis,
  type StepRecord,
  type Json,
} from './record/index.js';
export { canonicalJson, scanCanonical, digestUtf8, digestBytes, isDigest } from './canonical/index.js';
export { type VerifyReceiptOptions, type ReceiptReport, type ByteInput } from './receipt/verify.js';
// The one receipt verifier (issue 38): plain, published, proven and attested receipts alike.
export {
  verifyReceipt,
  REQUIREMENT_UNMET,
  type ReceiptVerifyOptions,
  type ReceiptVerdict,
  type ReceiptRequirements,
  type PublicationSection,
} from './verifier/index.js';
export { notAReceipt } from './receipt/describe.js';
/** Which SHA-256 engine hashes the chain's lines on this platform (diagnostic: the verification page shows it). */
export { lineHashEngine } from './chain/batch.js';
export {
  settleVerdict,
  settleJournalVerdict,
  firstAlteredStep,
  messageBesideCode,
  TO_PIN,
  type AuditVerdict,
  type VerdictFields,
  type JournalPins,
} from './chain/verdict.js';
export { decodePublicKey, type PublicKeyResult } from './receipt/keys.js';
export {
  verifyPublishedReceipt,
  publishedReceiptHooks,
  type PublishedReport,
  type UnboundText,
} from './redact/verify.js';
export { viewSlots, printablePointer } from './redact/unbound.js';
export { verifyDisclosure, type DisclosureProof, type DisclosureReport } from './redact/disclose.js';
export { verifyOpening, SLOT_OPENING_FORMAT, type SlotOpening, type OpeningReport } from './redact/opening.js';
export { verifyStepDisclosure, STEP_DISCLOSURE_FORMAT, type StepDisclosureReport } from './redact/disclose-step.js';
export { verifyHashDisclosure, HASH_DISCLOSURE_FORMAT, type HashDisclosureReport } from './redact/disclose-hash.js';
export { diff, summarize, formatDiff, type DiffOptions, type DiffReport } from './diff/index.js';
export {
  verifyCheckpoint,
  policyDefect,
  verifyProofDocument,
  parseProofDocument,
  verifyInclusion,
  verifyRange,
  verifyConsistency,
  checkWitnessUpdate,
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  noteVerifier,
  parseJournalOrigin,
  stepLeafHash,
  rootOfLeaves,
  verifyProvenReceipt,
  receiptProofHooks,
  SIG_ED25519,
  SIG_COSIGNATURE_V1,
  type Checkpoint,
  type CheckpointPolicy,
  type CheckpointReport,
  type Cosignature,
  type NoteVerifier,
  type ProofReport,
  type ProofProblem,
  type ProofProblemCode,
  type TreeHead,
  type ReceiptProofOptions,
  type ReceiptProofReport,
  type Verdict,
} from './proofs/index.js';
export {
  receiptAttestHooks,
  verifyAttestedReceipt,
  parseTsaCertificate,
  checkToken,
  timestampSubject,
  statementBytes,
  parseStatement,
  cosignatureHolds,
  type AttestOptions,
  type AttestReport,
  type AttestProblemCode,
  type Cosigner,
  type TsaCertificate,
  type CosignEnvelope,
  type CosignStatement,
} from './attest/index.js';
