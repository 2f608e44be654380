/**
 * A streamed batch (spec/FILE-STORE.md §18, SQLITE.md §6, POSTGRES.md §6): a stream of steps of any length
 * appended as one all-or-nothing unit, `chunk` steps at a time, so a writer's memory is one chunk whatever
 * the stream's length. This module reads the stream, prepares each chunk (an error names the step's place
 * in the whole stream) and tallies what was added; each store writes the chunks and keeps the promise its
 * own way: the file store behind a pending-batch mark, a database inside one transaction.
 */
import type { StepInput } from '../record/input.js';
import { StoreError } from './errors.js';
import type { PreparedStep } from './prepare.js';
import type { AppendResult } from './types.js';

/** Steps a streamed batch prepares, seals and writes at a time: its memory, whatever the stream's length (bench/RESULTS.md). */
export const STREAM_CHUNK = 256;

/** appendMany calls with more steps than this are written as a streamed batch. */
export const STREAM_MANY = 4096;

/** What a streamed batch committed. */
export interface StreamedBatch {
  /** Steps the stream held. */
  steps: number;
  /** Lines it added (a step repeating a committed one by step_id adds none). */
  appended: number;
  /** Seqs of the first and last line added; null when none was. */
  first: number | null;
  last: number | null;
}

export interface StreamOptions {
  /** Steps per chunk (default STREAM_CHUNK). */
  chunk?: number;
  /** Called with each chunk's results, in order, once the chunk is written (not yet committed). */
  onResults?: (results: AppendResult[]) => void;
}

/** What writing one chunk gave: each step's result and the seqs of the lines it added. */
export interface ChunkWritten {
  results: AppendResult[];
  /** Lines added (a repeated step adds none), and the seq of the first. */
  added: number;
  first: number | null;
}

/**
 * Reads `steps` and hands them on `chunk` at a time: `prepare` (the shared prepare, and a v3 journal's
 * parts), then `write` (sequence and write against the running tail, uncommitted). Throws what either
 * throws, with a prepare error renumbered to the step's index in the stream; an empty stream is OPTION_INVALID.
 * The caller commits only if this resolves.
 */
export async function streamChunks(
  steps: AsyncIterable<StepInput> | Iterable<StepInput>,
  options: StreamOptions,
  prepare: (group: StepInput[]) => Promise<PreparedStep[]>,
  write: (prepared: PreparedStep[]) => Promise<ChunkWritten>,
): Promise<StreamedBatch> {
  const chunk = options.chunk ?? STREAM_CHUNK;
  const result: StreamedBatch = { steps: 0, appended: 0, first: null, last: null };
  let group: StepInput[] = [];
  const flush = async (): Promise<void> => {
    let prepared: PreparedStep[];
    try {
      prepared = await prepare(group);
    } catch (e) {
      if (e instanceof Error) {
        const at = /^step (\d+) of the batch: /.exec(e.message);
        e.message = `step ${result.steps + Number(at?.[1] ?? 0)} of the batch: ${e.message.slice(at?.[0].length ?? 0)}`;
      }
      throw e;
    }
    const written = await write(prepared);
    options.onResults?.(written.results);
    result.steps += group.length;
    group = [];
    if (written.added === 0) return;
    result.appended += written.added;
    result.first ??= written.first;
    result.last = written.first! + written.added - 1;
  };
  for await (const step of steps) {
    group.push(step);
    if (group.length >= chunk) await flush();
  }
  if (group.length > 0) await flush();
  if (result.steps === 0) throw new StoreError('OPTION_INVALID', 'appendStream was given no steps');
  return result;
}
