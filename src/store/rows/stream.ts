/**
 * A streamed batch in a database store (SQLITE.md §6, POSTGRES.md §6), inside the one transaction its store
 * holds for the whole stream: each chunk prepared (a v3 journal's parts through `parts`, on the connection
 * the store chose), written against the head as the transaction left it, the head then read again. What the
 * two stores share; how a chunk is written and the head read back is each store's `write`.
 */
import type { StepInput } from '../../record/input.js';
import { writerProfile, type Genesis } from '../../record/formats.js';
import { faultPoint } from '../faults.js';
import type { JournalParts } from '../parts-prepare.js';
import { prepareSteps, type PreparedStep } from '../prepare.js';
import type { GroupOutcome } from '../sequencer.js';
import { streamChunks, type StreamedBatch, type StreamOptions } from '../stream.js';
import type { LockedHead } from './lines.js';

export interface RowStream {
  genesis: Genesis;
  blobThreshold: number;
  parts: JournalParts | null;
  /** The head as the transaction holds it before the first chunk. */
  start: LockedHead;
  /** Writes one chunk after `head`, uncommitted: its outcome, and the head after it (`head` when it added none). */
  write(head: LockedHead, prepared: PreparedStep[]): Promise<{ outcome: GroupOutcome; head: LockedHead }>;
}

export function streamRows(
  steps: AsyncIterable<StepInput> | Iterable<StepInput>,
  options: StreamOptions,
  rows: RowStream,
): Promise<StreamedBatch> {
  const profile = writerProfile(rows.genesis);
  let head = rows.start;
  return streamChunks(
    steps,
    options,
    async (group) => {
      const prepared = prepareSteps(group, rows.blobThreshold, profile);
      return rows.parts === null ? prepared : rows.parts.prepare(prepared);
    },
    async (prepared) => {
      const written = await rows.write(head, prepared);
      if (!written.outcome.ok) throw written.outcome.error;
      const added = written.head.seq - head.seq;
      const first = added === 0 ? null : head.seq + 1;
      head = written.head;
      faultPoint('after-chunk');
      return { results: written.outcome.results, added, first };
    },
  );
}
