/**
 * A batch of records given whole to a run journal (the CLI's `append --jsonl`), under the rules one record
 * given whole keeps (given-record.ts).
 */
import { randomUUID } from 'node:crypto';
import { capabilitiesOf, writerProfile } from '../record/formats.js';
import { foldRecord, type RunState } from '../record/run-state.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import type { Journal } from '../store/types.js';
import { committedResend, endedRefusal, isRuleRefusal, refuseGiven, sameContent } from './given-record.js';
import { Run } from './run.js';

/**
 * A run journal's batch under the run's rules (RUNS.md §1, §5; given-record.ts), as `append` of one
 * record keeps them: each record is checked against the run's state read before the batch and the batch's
 * records before it, and the batch is appended only after the seq that state was read to (HEAD_MOVED,
 * nothing written, when another writer appended meanwhile). Null for a journal that is not a run's.
 */
export async function underRunRules(
  journal: Journal,
  steps: AsyncIterable<StepInput>,
): Promise<{ steps: AsyncGenerator<StepInput>; after: number; saveState: () => Promise<void> } | null> {
  if (!capabilitiesOf(journal.genesis).runRecords) return null;
  const run = Run.of(journal);
  const state: RunState = structuredClone(await run.refresh());
  const after = state.lastSeq;
  const runId = run.runId;
  // The batch's records by step_id: one repeated in the batch with the same content is the store's to answer.
  const earlier = new Map<string, Record<string, unknown>>();
  async function* checked(): AsyncGenerator<StepInput> {
    let line = 0;
    for await (const step of steps) {
      line++;
      const kind = typeof step.kind === 'string' ? step.kind : 'step';
      const record = { ...step, kind };
      try {
        const ended = endedRefusal(runId, state.status, record);
        if (ended !== null) throw ended;
        refuseGiven(runId, state, record);
      } catch (e) {
        // A re-send (of a committed step, or of one earlier in this batch) is answered by the store, not refused.
        const first = step.step_id === undefined ? undefined : earlier.get(step.step_id);
        if (
          isRuleRefusal(e) &&
          (first !== undefined ? sameContent(first, record) : await committedResend(journal, record, after))
        ) {
          yield step;
          continue;
        }
        if (e instanceof Error) e.message = `step ${line} of the batch (kind ${kind}): ${e.message}`;
        throw e;
      }
      if (step.step_id !== undefined) earlier.set(step.step_id, record);
      // Folded as the record it will be, so the batch's later records are checked against it.
      foldRecord(state, {
        ...record,
        v: writerProfile(journal.genesis).version,
        seq: state.lastSeq + 1,
        step_id: step.step_id ?? randomUUID(),
        ts: step.ts ?? new Date().toISOString(),
      } as unknown as StepRecord);
      yield step;
    }
  }
  // `saveState`, once the batch is committed: the run as it was read before it (FILE-STORE.md §19), so the next
  // command folds from there, not from the chain's start, and an append's cost does not grow with the run
  // (the batch's own records are folded by the command after it). Not before: a refused batch writes nothing.
  return { steps: checked(), after, saveState: () => run.saveState() };
}
