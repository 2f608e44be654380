/**
 * `stepchain/format`: the formats alone, for tools, independent implementations and test vectors — canonical
 * JSON and the strict scanner (spec/FORMAT.md §3–§4), digests, the record profiles, markers and the genesis
 * (§5–§6, §10), the chain's line checks (§6), a stored line read back into its record, the receipt's layout:
 * manifest, entry names, DSSE and limits (RECEIPT.md), the redaction format's commitments and document
 * formats (REDACTION.md), the attestation statements (TIME.md) and the transparency proofs (PROOFS.md).
 * Nothing of the write path: how a store prepares, sequences and commits steps, or how a receipt or a
 * publication is written, can change in any release. Verifiers are `stepchain/verify`; keys `stepchain/keys`.
 */
export { canonicalJson, canonicalBytes } from './canonical/jcs.js';
export { assertIJson, type ValidateOptions } from './canonical/validate.js';
export { scanCanonical, type ScanCode, type ScanDefect, type ScanResult, type MarkerSpan } from './canonical/scan.js';
export { digestUtf8, digestBytes, isDigest } from './canonical/sha256.js';
export { inexactNumber, numberAt } from './canonical/stored-numbers.js';
export { toPointer, parsePointer } from './canonical/pointer.js';
export { MAX_VALUE_DEPTH, MAX_RECORD_DEPTH, MAX_LINE_BYTES, RESERVED_PREFIX } from './canonical/limits.js';
export {
  JOURNAL_FORMAT,
  DEFAULT_FORMAT,
  FORMAT_V1,
  RECORD_VERSION_V1,
  CONTENT_FIELDS,
  STEP_V1,
  JOURNAL_V1,
  journalFormat,
  formatOf,
  writerProfile,
  makeGenesis,
  genesisHash,
  genesisDefect,
  sealRecord,
  sealMemberTexts,
  computeStepHash,
  checkStepInput,
  isValidId,
  isValidTimestamp,
  formatTimestamp,
  BLOB_MARKER,
  REDACTED_MARKER,
  blobRefOf,
  isMarker,
  blobDefect,
  toolNameOf,
  type RecordProfile,
  type JournalFormat,
  type FormatCapabilities,
  type MemberRule,
  type RuleViolation,
  type StepTexts,
  type Envelope,
  type BlobRef,
  type CheckedStep,
  type UnsealedRecord,
} from './record/index.js';
export {
  ChainVerifier,
  checkLine,
  LinkChecker,
  verifyChain,
  LineSplitter,
  checkLineBytes,
  type VerifiedLine,
  type ChainVerifierOptions,
  type VerifyChainInput,
  type LineFacts,
  type LineProblem,
  type SplitLine,
  type ChainProblemCode,
  type BlobProblemCode,
} from './chain/index.js';
// A stored line read back into its record, its blobs inlined (FORMAT.md §5, FILE-STORE.md).
export { restoreRecord } from './store/restore.js';
export {
  RECEIPT_FORMAT,
  MANIFEST_NAME,
  SIGNATURE_NAME,
  parseManifest,
  chainEntryName,
  blobEntryName,
  type ReceiptManifest,
  type ChainEntry,
  type BlobEntry,
  type ReceiptRange,
} from './receipt/manifest.js';
export { PAYLOAD_TYPE, SIGNATURE_FORMAT, pae, type DsseEnvelope, type SignatureDocument } from './receipt/dsse.js';
export * as receiptLimits from './receipt/limits.js';
// The redaction format (REDACTION.md): the commitments a redacted value is replaced by, and the documents'
// format identifiers. Writing a publication is `stepchain/publish`.
export { commitment, stepCommitment, SALT_BYTES } from './redact/commit.js';
export { REDACTION_FORMAT, type AnchorBlock, type Declaration, type StepOpening } from './redact/anchor.js';
export { POLICY_FORMAT, type Policy, type PolicyRule, type RedactMode } from './redact/policy.js';
export {
  SECRETS_FORMAT,
  DISCLOSURE_FORMAT,
  type SecretsFile,
  type SecretEntry,
  type DisclosureProof,
} from './redact/disclose.js';
export { STEP_DISCLOSURE_FORMAT, type StepDisclosureProof } from './redact/disclose-step.js';
export { HASH_DISCLOSURE_FORMAT, type HashDisclosureProof } from './redact/disclose-hash.js';
export { SLOT_OPENING_FORMAT, type SlotOpening } from './redact/opening.js';
// The attestation statements (TIME.md): what a timestamp is taken over and what a co-signer signs.
export {
  timestampSubject,
  statementBytes,
  parseStatement,
  type CosignStatement,
  type CosignEnvelope,
} from './attest/index.js';
// Transparency proofs (spec/PROOFS.md): the leaves and notes, and what a log, a witness or another store
// needs to sign and prove; the verifiers are in stepchain/verify. TreeStorage and CheckpointKeeper are what a
// store implements.
export {
  stepLeafHash,
  rootOfLeaves,
  parseNote,
  parseJournalOrigin,
  noteSigner,
  journalOrigin,
  verifierKey,
  signCheckpoint,
  cosignCheckpoint,
  addSignatures,
  proveInclusion,
  proveConsistency,
  inclusionProofDocument,
  consistencyProofDocument,
  serializeProofDocument,
  proveReceiptRange,
  receiptProofMember,
  TreeFrontier,
  MemoryTree,
  tileReader,
  treeRoot,
  JournalTree,
  signJournalCheckpoint,
  SIG_ED25519,
  SIG_COSIGNATURE_V1,
  type NoteSigner,
  type NodeReader,
  type TreeStorage,
  type CheckpointKeeper,
  type StoredTree,
  type SignedCheckpoint,
} from './proofs/index.js';
