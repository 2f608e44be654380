/**
 * Idempotent retry in Postgres (spec/FILE-STORE.md §10, spec/POSTGRES.md §6): the steps table is the index.
 * A StepIdIndex belongs to one append transaction, made once its head row lock is held, and answers the
 * sequencer's one question per batch with one statement: the committed steps among the batch's step_ids,
 * within the last `window` steps (the window the file store keeps in memory, so a retry is recognized
 * exactly as far back in both). Nothing to remember between transactions: `committed` and `clear` do nothing.
 */
import { formatOf, type Genesis } from '../../record/formats.js';
import { StoreError } from '../errors.js';
import type { CommittedStep, IdempotencyIndex } from '../idempotency.js';
import type { DbClient } from './driver.js';
import { linesWithStepIds } from './sql.js';
import type { Tables } from './schema.js';

export class StepIdIndex implements IdempotencyIndex {
  constructor(
    private readonly client: DbClient,
    private readonly tables: Tables,
    private readonly key: number,
    private readonly genesis: Genesis,
    /** The locked head row's seq: the window counts back from it. */
    private readonly headSeq: number,
    private readonly window: number,
    private readonly where: string,
  ) {}

  async lookup(stepIds: readonly string[]): Promise<ReadonlyMap<string, CommittedStep>> {
    const found = new Map<string, CommittedStep>();
    const rows = await linesWithStepIds(this.client, this.tables, this.key, [...new Set(stepIds)], this.headSeq, this.window);
    // In seq order: of two steps with one step_id (a retry from past the window), the later one wins, as in the file store.
    for (const row of rows) {
      const rec = parseLine(row.line, row.seq, this.where);
      if (rec.seq !== row.seq || typeof rec.step_id !== 'string') throw corrupt(this.where, row.seq, `the row for seq ${row.seq} holds seq ${String(rec.seq)}`);
      const key = formatOf(this.genesis).select((n) => rec[n]).recordKey(rec);
      found.set(rec.step_id, { seq: row.seq, step_hash: rec.step_hash as string, prev_hash: rec.prev_hash as string, key, ts: rec.ts as string });
    }
    return found;
  }

  committed(): void {}

  clear(): void {}
}

/** A stored line as an object; JOURNAL_CORRUPT when it is not one. */
export function parseLine(line: string, seq: number, where: string): Record<string, unknown> {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    throw corrupt(where, seq, 'the line is not JSON');
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) throw corrupt(where, seq, 'the line is not a JSON object');
  return rec as Record<string, unknown>;
}

export function corrupt(where: string, seq: number, why: string): StoreError {
  return new StoreError('JOURNAL_CORRUPT', `${where} seq ${seq}: ${why}`, { location: { seq }, hint: 'run verify on the journal to locate the damage' });
}
