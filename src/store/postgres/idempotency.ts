/**
 * Idempotent retry in Postgres (spec/FILE-STORE.md §10, spec/POSTGRES.md §6): the steps table is the index.
 * A StepIdIndex belongs to one append transaction, made once its head row lock is held, and answers the
 * sequencer's one question per batch with one statement: the committed steps among the batch's step_ids,
 * within the last `window` steps (the window the file store keeps in memory, so a retry is recognized
 * exactly as far back in both). Nothing to remember between transactions: `committed` and `clear` do nothing.
 */
import type { Genesis } from '../../record/formats.js';
import type { CommittedStep, IdempotencyIndex } from '../idempotency.js';
import { committedSteps } from '../rows/lines.js';
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
    const rows = await linesWithStepIds(
      this.client,
      this.tables,
      this.key,
      [...new Set(stepIds)],
      this.headSeq,
      this.window,
    );
    return committedSteps(rows, this.genesis, this.where);
  }

  committed(): void {}

  clear(): void {}
}

export { corrupt, parseLine } from '../rows/lines.js';
