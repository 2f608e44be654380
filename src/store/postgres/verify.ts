/**
 * Verifying a journal held in Postgres, read-only (spec/POSTGRES.md §8): the head row and the count of rows
 * past it in one snapshot, then the shared row-journal verification (store/rows/verify.ts) over pages of
 * rows and the blobs table. Nothing is written and no lock is taken; a writer may append meanwhile, so the
 * chain is read up to the head row as it was at the start.
 */
import { StoreError } from '../errors.js';
import type { JournalReport, JournalVerifyOptions } from '../types.js';
import { verifyRowJournal, type RowSnapshot } from '../rows/verify.js';
import { translate } from './errors.js';
import { linesPage, readBlob } from './sql.js';
import type { StoreContext } from './store.js';

export async function verifyJournalRows(
  ctx: StoreContext,
  id: string,
  options: JournalVerifyOptions = {},
): Promise<JournalReport> {
  try {
    const { key, snap } = await snapshot(ctx, id);
    return await verifyRowJournal(
      {
        snap,
        metaFile: `${ctx.tables.schema}.journals`,
        blobsWhere: `${ctx.tables.schema}.blobs`,
        page: (from, to) => linesPage(ctx.pool, ctx.tables, key, from, to),
        blob: (digest, size) => readBlob(ctx.pool, ctx.tables, key, digest, size),
      },
      id,
      options,
    );
  } catch (e) {
    throw translate(e, ctx.display, `verifying journal ${id}`);
  }
}

async function snapshot(ctx: StoreContext, id: string): Promise<{ key: number; snap: RowSnapshot }> {
  const t = ctx.tables;
  // One statement, one snapshot: the head row and the count of rows past it agree with each other.
  const r = await ctx.pool.query(
    `SELECT j.key, j.meta, j.head_seq, j.head_hash, j.bucket_first, j.bucket_size,
            (SELECT count(*) FROM ${t.steps} s WHERE s.journal = j.key AND s.seq > j.head_seq) AS beyond
     FROM ${t.journals} j WHERE j.id = $1`,
    [id],
  );
  const row = r.rows[0];
  if (row === undefined)
    throw new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in ${ctx.display}`, {
      hint: 'check the id with list(), or `stepchain doctor`',
    });
  return {
    key: Number(row.key),
    snap: {
      meta: String(row.meta),
      headSeq: Number(row.head_seq),
      headHash: String(row.head_hash),
      bucketFirst: Number(row.bucket_first),
      bucketSize: Number(row.bucket_size),
      beyond: Number(row.beyond),
    },
  };
}
