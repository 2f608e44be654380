/**
 * What an adapter rebuilds a framework's history from when a run resumes (spec/RUNS.md §3): the last
 * model answer at or before the continuation point — its request's prompt and its answer — and the tool
 * outcomes recorded after it, up to the point. Each adapter turns these into its framework's messages.
 */
import type { RunRecord } from '../record/run-state.js';
import type { Run } from './run.js';

export interface ResumeHistory {
  /** The continuation point (null: no record yet). */
  seq: number | null;
  /** The last model.completed record at or before the point, or null when no model call completed there. */
  answer: RunRecord | null;
  /** The tool.completed and tool.failed records after `answer` (all of them when it is null), in seq order. */
  outcomes: RunRecord[];
  /** The run's records 0..seq. */
  steps: RunRecord[];
}

export async function resumeHistory(run: Pick<Run, 'continuationPoint'>): Promise<ResumeHistory> {
  const { seq, steps } = await run.continuationPoint();
  let last = -1;
  for (let i = steps.length - 1; i >= 0; i--) {
    if (steps[i]!.kind === 'model.completed') {
      last = i;
      break;
    }
  }
  const outcomes = steps.slice(last + 1).filter((r) => r.kind === 'tool.completed' || r.kind === 'tool.failed');
  return { seq, answer: last === -1 ? null : steps[last]!, outcomes, steps };
}
