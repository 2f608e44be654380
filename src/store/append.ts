/**
 * The append path every store shares (spec/FORMAT.md §8.9): appendMany's argument rule, and for a store that
 * group-commits through a CommitQueue, the refusals of a closed or read-only journal and the shared prepare.
 * One place, so every store refuses the same input with the same code and message.
 */
import { writerProfile, type Genesis } from '../record/formats.js';
import type { StepInput } from '../record/input.js';
import type { CommitQueue } from './commit-queue.js';
import { StoreError } from './errors.js';
import { prepareSteps } from './prepare.js';
import type { AppendResult, JournalConfig } from './types.js';

/** appendMany(steps): an array (OPTION_INVALID otherwise); none is no append at all. */
export function appendManyOf(steps: readonly StepInput[], append: (steps: readonly StepInput[]) => Promise<AppendResult[]>): Promise<AppendResult[]> {
  if (!Array.isArray(steps)) return Promise.reject(new StoreError('OPTION_INVALID', 'appendMany takes an array of steps'));
  if (steps.length === 0) return Promise.resolve([]);
  return append(steps);
}

/** What a queued append needs to know of its journal. */
export interface QueuedJournal {
  readonly id: string;
  readonly readOnly: boolean;
  readonly config: Readonly<JournalConfig>;
  readonly genesis: Genesis;
}

/** Refuses a closed (CLOSED) or read-only (READ_ONLY) journal, prepares the steps and queues them as one group. */
export function queueSteps(queue: CommitQueue, journal: QueuedJournal, closed: boolean, steps: readonly StepInput[]): Promise<AppendResult[]> {
  if (closed) return Promise.reject(new StoreError('CLOSED', `journal ${journal.id} is closed`, { hint: 'open it again' }));
  if (journal.readOnly) {
    return Promise.reject(new StoreError('READ_ONLY', `journal ${journal.id} was opened read-only`, { hint: 'open it without readOnly to append' }));
  }
  try {
    return queue.enqueue(prepareSteps(steps, journal.config.blobThreshold, writerProfile(journal.genesis)));
  } catch (e) {
    return Promise.reject(e);
  }
}
