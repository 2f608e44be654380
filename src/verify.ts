/**
 * `stepchain/verify`: everything an auditor needs to check a receipt, a chain, a disclosure or a proof, with
 * no Node-only imports, so it runs unchanged in a browser page (test/purity.test.ts keeps it that way).
 * Verifiers return reports and never throw on what they check. The building blocks they use (canonical
 * JSON, records, markers, manifests, proof leaves) are `stepchain/format`.
 */
export {
  ChainVerifier,
  verifyChain,
  type VerifiedLine,
  type ChainVerifierOptions,
  type VerifyChainInput,
} from './chain/index.js';
export { describeLocation, type ChainReport, type Problem, type ProblemLocation } from './chain/report.js';
export type { ProblemCode } from './problems.js';
export type { Genesis, StepRecord, Json } from './record/index.js';
export type { ReceiptReport, ByteInput } from './receipt/verify.js';
// The one receipt verifier (issue 38): plain, published, proven, time-stamped and co-signed receipts alike.
export {
  verifyReceipt,
  type ReceiptVerifyOptions,
  type ReceiptVerdict,
  type ReceiptRequirements,
  type PublicationSection,
} from './verifier/index.js';
export { decodePublicKey, type PublicKeyResult } from './receipt/keys.js';
export type { PublishedReport, UnboundText } from './redact/verify.js';
export { verifyDisclosure, type DisclosureProof, type DisclosureReport } from './redact/disclose.js';
export { verifyOpening, type SlotOpening, type OpeningReport } from './redact/opening.js';
export { verifyStepDisclosure, type StepDisclosureReport } from './redact/disclose-step.js';
export { verifyHashDisclosure, type HashDisclosureReport } from './redact/disclose-hash.js';
export { verifyUnitOpening, type UnitOpening, type UnitOpeningReport } from './redact/v3-opening.js';
export {
  verifyCheckpoint,
  verifyProofDocument,
  verifyInclusion,
  verifyRange,
  verifyConsistency,
  checkWitnessUpdate,
  parseCheckpoint,
  parseVerifierKey,
  noteVerifier,
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
// A pinned TSA certificate, parsed for the attestation checks' `tsa` option.
export { parseTsaCertificate } from './attest/index.js';
export type {
  AttestOptions,
  AttestReport,
  AttestProblemCode,
  Cosigner,
  TsaCertificate,
  CosignEnvelope,
  CosignStatement,
} from './attest/index.js';
