/** The chain verifier and its report (spec/FORMAT.md §6): the per-line check, the link check, segments. Pure. */
export { ChainVerifier, type VerifiedLine, type ChainVerifierOptions } from './verifier.js';
export { checkLine, checkLineBytes, decodeLine, type LineFacts, type LineProblem } from './line.js';
export { checkBatch, unpackFacts, type LineBatch, type PackedFacts, type LineCheckPool } from './batch.js';
export { ChainFeeder, BATCH_BYTES, type ChainFeederOptions } from './feeder.js';
export { LinkChecker, type LinkStart } from './links.js';
export { verifyChain, verifyFile, declaredFirstSeq, type VerifyChainInput } from './files.js';
export { LineSplitter, type SplitLine } from './lines.js';
export { ProblemList, ProblemBudget, MAX_PROBLEMS } from './problems.js';
export {
  describeLocation,
  describeProblem,
  type ChainReport,
  type Problem,
  type ChainProblemCode,
  type BlobProblemCode,
  type ProblemLocation,
} from './report.js';
export type { ChainSource, StoredLine, ChainHead, SeqRange } from './source.js';
