/** Pinned replay (spec/REPLAY.md): a verified run journal served back as a cassette, and the verdict of a replay. */
export {
  replayFrom,
  Replay,
  type ReplayMode,
  type ReplayOptions,
  type ReplaySource,
  type ReplayAnswer,
  type ReplayEntry,
  type ReplayedHead,
} from './replay.js';
export { ReplayError, type ReplayErrorCode } from './errors.js';
export {
  matchKey,
  modelProjection,
  toolProjection,
  type ModelRequest,
  type ToolRequest,
  type RequestKind,
} from './request.js';
export { explain, type Explanation, type DivergenceClass, type ExplainInput } from './explain.js';
