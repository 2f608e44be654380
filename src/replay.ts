/**
 * `stepchain/replay`: for test authors comparing runs — pinned replay (spec/REPLAY.md: a verified run journal
 * served back as a cassette, and why a replay diverged) and the divergence diff (spec/DIFF.md) with the
 * patterns of fields that change on every run. `stepchain/testing` holds the assertions built on them.
 */
export {
  replayFrom,
  ReplayError,
  explain,
  type Replay,
  type ReplayMode,
  type ReplayOptions,
  type ReplaySource,
  type ReplayAnswer,
  type ReplayEntry,
  type ReplayedHead,
  type ReplayErrorCode,
  type ModelRequest,
  type ToolRequest,
  type Explanation,
  type DivergenceClass,
  type ExplainInput,
} from './replay/index.js';
export {
  diff,
  summarize,
  formatDiff,
  DiffError,
  type DiffErrorCode,
  type DiffOptions,
  type DiffReport,
} from './diff/index.js';
export { VOLATILE_PATTERNS } from './diff/volatile.js';
