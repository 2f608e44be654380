/**
 * `stepchain/langgraph`: a LangGraph checkpointer whose threads are stepchain journals (spec/LANGGRAPH.md).
 * Needs the optional peer dependencies `@langchain/langgraph-checkpoint` and `@langchain/core`; the core
 * entries (`stepchain`, `stepchain/verify`) never import them.
 */
export { StepchainSaver, type StepchainSaverOptions, type CheckpointHead } from './saver.js';
export { LangGraphError, type LangGraphErrorCode } from './errors.js';
export { readThread, type ThreadCheckpoint } from './history.js';
export type { StoredValue, CheckpointRecord, WritesRecord, ThreadRecord, ParentRef } from './records.js';
export {
  requestToolApproval,
  signToolApproval,
  recordToolApproval,
  type ApprovalPrompt,
  type SignedApproval,
} from './approval.js';
