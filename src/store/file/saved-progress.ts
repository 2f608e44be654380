/**
 * A run's progress for a directory store's listing (issue 36), read from its saved run state
 * (`.run-state.json`, FILE-STORE.md §19) without opening the journal or folding its records — when that
 * state is current: folded to the chain's own last step (its seq and step hash). Otherwise (absent,
 * unreadable, another run's, behind the head) null, and the listing folds the run as before.
 *
 * The head compared with is the chain's (the last line of the last bucket, with the pending-batch mark),
 * not `head.json`: the cache may lag a writer's commits (§7), and a writer SIGKILLed between committing a
 * tool.started line and rewriting the cache leaves a cache that still matches the state saved before it —
 * which would list a run that died mid-tool as running instead of interrupted. Reading the last line costs
 * one directory listing and one tail read more than the cache; it is what §7 tells a reader that wants the head to do.
 */
import { restoreRunState, savedPoint } from '../../record/saved-run-state.js';
import { statusOfState } from '../run-progress.js';
import type { RunProgress } from '../runs.js';
import { JournalPaths } from './layout.js';
import { readHead, runStateFile } from './reads.js';

/** The progress of the run `runId` in journal directory `dir` from its saved state, or null when that state is not current. */
export async function savedProgress(dir: string, runId: string): Promise<RunProgress | null> {
  const text = await runStateFile(dir, true).read();
  if (text === null) return null;
  const point = savedPoint(text, runId);
  if (point === null) return null;
  let head;
  try {
    head = await readHead(new JournalPaths(dir));
  } catch {
    return null; // a damaged chain: folding it reports the damage
  }
  if (head?.seq !== point.seq || head.step_hash !== point.step_hash) return null;
  const restored = restoreRunState(point.saved);
  return restored === null ? null : statusOfState(restored.state);
}
