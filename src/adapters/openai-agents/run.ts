/**
 * The part of a stepchain run (the agent runtime, spec/RUNS.md) the Agents SDK adapter writes
 * through, and how it opens a child run for a handoff target or an agent used as a tool.
 */
import type { Run } from '../../index.js';

export type AdapterRun = Pick<Run, 'beginModel' | 'beginTool' | 'endModel' | 'runId' | 'identity'> &
  Partial<Pick<Run, 'resolveEffect' | 'effects'>>;

/** Opens the child run of `parent` for the agent named `agent`. */
export type ChildRunFactory = (parent: AdapterRun, agent: string) => Promise<Run>;
