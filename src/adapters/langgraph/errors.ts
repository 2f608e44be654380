/**
 * The LangGraph checkpointer's error class (spec/LANGGRAPH.md). Codes are public API: add, never rename.
 */
import { StepchainError } from '../../journal.js';

export type LangGraphErrorCode =
  /** A config without `configurable.thread_id` (or with a value of the wrong type) where one is required. */
  | 'CONFIG_INVALID'
  /** A journal record that says it is LangGraph's but breaks the shape spec/LANGGRAPH.md gives it. */
  | 'RECORD_INVALID'
  /** `deleteThread` on a store that does not offer `remove` (spec/FILE-STORE.md §15). */
  | 'REMOVE_UNSUPPORTED'
  /** A thread's journal that does not verify where the saver reads it (spec/LANGGRAPH.md §6): never resumed. */
  | 'THREAD_INVALID'
  /** An approval asked or answered through the interrupt flow in a way that cannot be recorded (spec/LANGGRAPH.md §9). */
  | 'LANGGRAPH_APPROVAL_INVALID';

export class LangGraphError extends StepchainError<LangGraphErrorCode> {}
