/**
 * Transparency-log proofs for stepchain journals (spec/PROOFS.md): the RFC 6962 Merkle tree over the
 * steps, its incremental state, inclusion and consistency proofs, proof files, C2SP signed notes,
 * checkpoints and cosignatures, the witness check and the journal origin. Pure and browser-safe.
 */
export { EMPTY_ROOT, HASH_SIZE, leafHash, nodeHash, stepLeafHash, rootOfLeaves } from './hash.js';
export { MAX_TREE_SIZE } from './math.js';
export { TreeFrontier, frontierOf, TREE_STATE_FORMAT, type TreeState, type NodeSink } from './frontier.js';
export {
  MemoryTree,
  tileReader,
  tilePath,
  treeRoot,
  perfectNodes,
  TILE_HEIGHT,
  TILE_WIDTH,
  type NodeId,
  type NodeReader,
  type Span,
  type TileFetch,
} from './nodes.js';
export { proveInclusion, proveConsistency, inclusionSpans, consistencySpans } from './prove.js';
export {
  verifyInclusion,
  verifyRange,
  verifyConsistency,
  type Verdict,
  type InclusionInput,
  type RangeInput,
  type ConsistencyInput,
} from './verify.js';
export {
  parseNote,
  signNote,
  openNote,
  noteSigner,
  noteVerifier,
  parseVerifierKey,
  verifierKey,
  noteKeyId,
  SIG_ED25519,
  SIG_COSIGNATURE_V1,
  MAX_NOTE_BYTES,
  MAX_NOTE_SIGNATURES,
  type Note,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifier,
  type OpenedNote,
} from './note.js';
export {
  parseCheckpoint,
  formatCheckpoint,
  signCheckpoint,
  cosignCheckpoint,
  addSignatures,
  verifyCheckpoint,
  policyDefect,
  type Checkpoint,
  type CheckpointPolicy,
  type CheckpointReport,
  type Cosignature,
} from './checkpoint.js';
export { checkWitnessUpdate, type TreeHead, type WitnessUpdate } from './witness.js';
export { journalOrigin, parseJournalOrigin, MAX_ORIGIN_BYTES, type JournalOrigin } from './origin.js';
export {
  inclusionProofDocument,
  consistencyProofDocument,
  serializeProofDocument,
  parseProofDocument,
  verifyProofDocument,
  PROOF_FORMAT,
  MAX_PROOF_BYTES,
  type ProofDocument,
  type InclusionProofDocument,
  type ConsistencyProofDocument,
  type ProofReport,
  type VerifyProofOptions,
} from './document.js';
export { ProofError, type ProofErrorCode, type ProofProblem, type ProofProblemCode } from './problems.js';
export {
  JournalTree,
  leavesExtend,
  tileCountAt,
  tileLevelsAt,
  parseStoredTree,
  serializeStoredTree,
  MAX_TILE_LEVELS,
  type StoredTree,
  type TileNode,
  type TreeStorage,
  type ChainEnd,
  type LeafSource,
} from './log.js';
export {
  signJournalCheckpoint,
  lastCheckpoint,
  type CheckpointKeeper,
  type KeptCheckpoint,
  type SignedCheckpoint,
} from './keeper.js';
export {
  receiptProofHooks,
  receiptProofMember,
  verifyProvenReceipt,
  proveReceiptRange,
  proofMemberDefect,
  PROOF_MEMBER,
  type ReceiptProofMember,
  type ReceiptProofOptions,
  type ReceiptProofReport,
  type ProvenReceiptReport,
} from './receipt.js';
