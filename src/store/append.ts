/**
 * The append path every store shares (spec/FILE-STORE.md §9): appendMany's argument rule, and for a store that
 * group-commits through a CommitQueue, the refusals of a closed or read-only journal and the shared prepare.
 * One place, so every store refuses the same input with the same code and message.
 */
import { writerProfile, type Genesis } from '../record/formats.js';
import type { StepInput } from '../record/input.js';
import type { CommitQueue } from './commit-queue.js';
import { StoreError } from './errors.js';
import type { JournalParts } from './parts-prepare.js';
import { prepareSteps } from './prepare.js';
import { STREAM_MANY, type StreamOptions } from './stream.js';
import type { AppendOptions, AppendResult, JournalConfig } from './types.js';

/** appendMany(steps): an array (OPTION_INVALID otherwise); none is no append at all. */
export function appendManyOf(
  steps: readonly StepInput[],
  append: (steps: readonly StepInput[]) => Promise<AppendResult[]>,
): Promise<AppendResult[]> {
  if (!Array.isArray(steps))
    return Promise.reject(new StoreError('OPTION_INVALID', 'appendMany takes an array of steps'));
  if (steps.length === 0) return Promise.resolve([]);
  return append(steps);
}

/**
 * appendMany of a store that streams (FILE-STORE.md §18, SQLITE.md §6, POSTGRES.md §6): a batch longer than
 * STREAM_MANY goes as one streamed batch, so the store's memory stays bounded beside the caller's array; a
 * shorter one, or one that names `after`, goes through the store's queue.
 */
export function appendManyStreaming(
  steps: readonly StepInput[],
  options: AppendOptions | undefined,
  enqueue: (steps: readonly StepInput[], options?: AppendOptions) => Promise<AppendResult[]>,
  stream: (steps: readonly StepInput[], options: StreamOptions) => Promise<unknown>,
): Promise<AppendResult[]> {
  return appendManyOf(steps, async (s) => {
    if (s.length <= STREAM_MANY || afterOf(options) !== undefined) return enqueue(s, options);
    const results: AppendResult[] = [];
    await stream(s, {
      onResults: (r) => {
        for (const x of r) results.push(x);
      },
    });
    return results;
  });
}

/** The seq an append must follow (AppendOptions.after), checked at the boundary: undefined when none is asked for. */
export function afterOf(options: AppendOptions | undefined): number | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object')
    throw new StoreError('OPTION_INVALID', 'append options must be an object such as { after: 41 }');
  const after = options.after;
  if (after === undefined) return undefined;
  if (!Number.isSafeInteger(after) || after < -1) {
    throw new StoreError(
      'OPTION_INVALID',
      `after must be the seq of the chain's last step (an integer, -1 for an empty chain), not ${JSON.stringify(after) ?? String(after)}`,
    );
  }
  return after;
}

/**
 * An AppendOptions member for the library's own writers, not part of the public options: with `after`, the
 * group's `unlessAfter` (sequencer.ts Group) — the chain may have moved past `after` by lines this does not
 * refuse. An erasure appends so (erase/common.ts).
 */
export const UNLESS_AFTER = Symbol('stepchain.unlessAfter');
export type WriterAppendOptions = AppendOptions & { [UNLESS_AFTER]?: (line: string) => boolean };

/** The `unlessAfter` of append options that name `after`, else undefined. */
export function unlessAfterOf(options: WriterAppendOptions | undefined): ((line: string) => boolean) | undefined {
  if (options?.after === undefined) return undefined;
  const unless: unknown = options[UNLESS_AFTER];
  return typeof unless === 'function' ? (unless as (line: string) => boolean) : undefined;
}

/** What a queued append needs to know of its journal. */
export interface QueuedJournal {
  readonly id: string;
  readonly readOnly: boolean;
  readonly config: Readonly<JournalConfig>;
  readonly genesis: Genesis;
  /** A stepchain/v3 journal's parts (PARTS.md): large values become parts, stored before the lines. */
  readonly parts?: JournalParts | null;
}

/** Why `journal` takes no append: CLOSED, READ_ONLY; null when it does. */
export function writeRefusal(journal: QueuedJournal, closed: boolean): StoreError | null {
  if (closed) return new StoreError('CLOSED', `journal ${journal.id} is closed`, { hint: 'open it again' });
  if (journal.readOnly)
    return new StoreError('READ_ONLY', `journal ${journal.id} was opened read-only`, {
      hint: 'open it without readOnly to append',
    });
  return null;
}

/** Refuses a closed (CLOSED) or read-only (READ_ONLY) journal, prepares the steps and queues them as one group. */
export function queueSteps(
  queue: CommitQueue,
  journal: QueuedJournal,
  closed: boolean,
  steps: readonly StepInput[],
  options?: AppendOptions,
): Promise<AppendResult[]> {
  const refused = writeRefusal(journal, closed);
  if (refused !== null) return Promise.reject(refused);
  try {
    const after = afterOf(options);
    const unless = unlessAfterOf(options);
    const prepared = prepareSteps(steps, journal.config.blobThreshold, writerProfile(journal.genesis));
    const parts = journal.parts;
    if (parts !== undefined && parts !== null)
      return parts.prepare(prepared).then((p) => queue.enqueue(p, after, unless));
    return queue.enqueue(prepared, after, unless);
  } catch (e) {
    return Promise.reject(e);
  }
}
