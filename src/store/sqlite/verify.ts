/**
 * Verifying a journal held in a SQLite file, read-only (spec/SQLITE.md §8): the head row and the count of
 * rows past it in one statement, then the row stores' shared verification (store/rows/verify.ts) over pages
 * of rows and the blobs table, on the reader connection. Nothing is written and no lock is taken.
 */
import { StoreError } from '../errors.js';
import { verifyRowJournal } from '../rows/verify.js';
import type { JournalReport, JournalVerifyOptions } from '../types.js';
import type { Connection } from './driver.js';
import { translate } from './errors.js';
import type { SqliteContext } from './journal.js';
import { linesPage, readBlob, verifySnapshot } from './sql.js';

export async function verifySqliteJournal(
  ctx: SqliteContext,
  id: string,
  options: JournalVerifyOptions = {},
): Promise<JournalReport> {
  const doing = `verifying journal ${id}`;
  const notFound = (): StoreError =>
    new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in ${ctx.display}`, {
      hint: 'check the id with list(), or `stepchain doctor`',
    });
  const row = ctx.db.read(doing, (db) => verifySnapshot(db, id));
  if (row === null) throw notFound();
  const key = Number(row.key);
  const read = <T>(fn: (db: Connection) => T): T => {
    const out = ctx.db.read(doing, (db) => ({ value: fn(db) }));
    if (out === null) throw notFound();
    return out.value;
  };
  try {
    return await verifyRowJournal(
      {
        snap: {
          meta: String(row.meta),
          headSeq: Number(row.head_seq),
          headHash: String(row.head_hash),
          bucketFirst: Number(row.bucket_first),
          bucketSize: Number(row.bucket_size),
          beyond: Number(row.beyond),
        },
        metaFile: `${ctx.display} journals`,
        blobsWhere: `${ctx.display} blobs`,
        page: async (from, to) => read((db) => linesPage(db, key, from, to)),
        blob: async (digest, size) => read((db) => readBlob(db, key, digest, size)),
      },
      id,
      options,
    );
  } catch (e) {
    throw translate(e, ctx.display, doing);
  }
}
