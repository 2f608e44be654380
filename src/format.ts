/**
 * `stepchain/format`: the building blocks of the formats, for tools, independent implementations and test
 * vectors — canonical JSON and the strict scanner (spec/FORMAT.md §3–§4), digests, the record profiles
 * and the genesis (§5–§6, §10), the streaming chain verifier (§6), the journal contract's shared parts
 * (§7 and FILE-STORE.md: prepare, sequencing, segments, the idempotency index, verifySource, the commit queue), the
 * receipt's manifest, tar profile, DSSE and limits (RECEIPT.md), the receipt writer's two passes, and the
 * redaction format's policies, commitments, anchor and proofs (REDACTION.md). Node: the receipt writer and
 * the commit queue use Node streams and timers; the verifiers alone are `stepchain/verify`.
 */
export { canonicalJson, canonicalBytes } from './canonical/jcs.js';
export { assertIJson, type ValidateOptions } from './canonical/validate.js';
export { scanCanonical, type ScanCode, type ScanDefect, type ScanResult, type MarkerSpan } from './canonical/scan.js';
export { digestUtf8, digestBytes, isDigest, toHex, sha256Stream, type Sha256Stream } from './canonical/sha256.js';
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
  checkBatch,
  unpackFacts,
  ChainFeeder,
  type LineBatch,
  type PackedFacts,
  type LineCheckPool,
  type ChainFeederOptions,
  type VerifiedLine,
  type ChainVerifierOptions,
  type VerifyChainInput,
  type LineFacts,
  type LineProblem,
  type SplitLine,
  type ChainProblemCode,
  type BlobProblemCode,
} from './chain/index.js';
export { prepareSteps, type PreparedStep, type BlobPayload } from './store/prepare.js';
export {
  sequenceBatch,
  knownSteps,
  stepIdsOf,
  type Group,
  type GroupOutcome,
  type SequencedBatch,
  type Tail,
} from './store/sequencer.js';
export { IdempotencyWindow, type IdempotencyIndex, type CommittedStep } from './store/idempotency.js';
export { placeLine, segmentLabel, type SegmentCursor } from './store/segments.js';
export {
  verifySource,
  journalReport,
  type VerifiableJournal,
  type SourceSegment,
  type SourceLine,
  type SourceVerification,
  type VerifySourceOptions,
} from './store/verify-source.js';
export { CommitQueue, type CommitSink } from './store/commit-queue.js';
export { DEFAULT_SEGMENT_BYTES, DEFAULT_BLOB_THRESHOLD, journalConfig } from './store/config.js';
export { copyPrefix, type PrefixSink } from './store/fork.js';
export { restoreRecord } from './store/restore.js';
export { assertJournalId, isJournalId } from './store/ids.js';
export { STORE_FORMAT } from './store/meta.js';
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
export {
  keyPairFromSeed,
  keyIdOf,
  parsePrivateKey,
  decodePublicKey,
  privateKeyToPem,
  publicKeyToPem,
} from './receipt/keys.js';
export { planReceipt, writeReceipt, type ReceiptWriterInput, type ReceiptPlan } from './receipt/writer.js';
export { receiptBytes, receiptInput, writePlanToFile, openReceiptSource, readKeyFile } from './receipt/node.js';
export { receiptSource, type ReceiptSource } from './receipt/source.js';
export {
  compilePolicy,
  parsePolicyText,
  POLICY_FORMAT,
  type Policy,
  type PolicyRule,
  type CompiledRule,
  type RedactMode,
} from './redact/policy.js';
export { DETECTORS, DETECTOR_IDS, findSecrets, type Detector, type Match } from './redact/detectors.js';
export {
  commitment,
  stepCommitment,
  randomSalts,
  seededSalts,
  fixedSalts,
  SALT_BYTES,
  type SaltSource,
} from './redact/commit.js';
export { redactStep, type Redaction, type RedactionMarker } from './redact/redact.js';
export {
  REDACTION_FORMAT,
  anchorDefect,
  redactionsDefect,
  compareAnchor,
  type AnchorBlock,
  type Declaration,
  type StepOpening,
} from './redact/anchor.js';
export { planPublication, type Publication, type PublishCoreOptions } from './redact/publish.js';
export { preparePublication, publicationBytes, readPolicyFile } from './redact/node.js';
export {
  discloseFromSecrets,
  secretsFile,
  SECRETS_FORMAT,
  DISCLOSURE_FORMAT,
  type SecretsFile,
  type SecretEntry,
  type DisclosureProof,
  type DisclosureProblemCode,
} from './redact/disclose.js';
export { discloseStepFromSecrets, STEP_DISCLOSURE_FORMAT, type StepDisclosureProof } from './redact/disclose-step.js';
export { discloseHashFromSecrets, HASH_DISCLOSURE_FORMAT, type HashDisclosureProof } from './redact/disclose-hash.js';
// Transparency proofs (spec/PROOFS.md): what a log, a witness or another store needs to sign and prove;
// the verifiers are in stepchain/verify. TreeStorage and CheckpointKeeper are what a store implements.
export {
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
