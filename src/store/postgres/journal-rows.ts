/**
 * The Postgres journal's statements beside its append path (spec/POSTGRES.md): the saved run state an
 * append writes in its own transaction (§4.2), learning the fate of a COMMIT that went unanswered (§6), and
 * replacing one line in place for an erasure (§6.5, ERASURE.md §6.1). Each runs on a client the journal
 * holds, under the journal's head row lock where it writes.
 */
import type { ChainHead } from '../../chain/source.js';
import type { Genesis } from '../../record/formats.js';
import { parseStoredTree } from '../../proofs/log.js';
import { MemoryTree, treeRoot, type NodeReader } from '../../proofs/nodes.js';
import { stepLeafHash } from '../../proofs/hash.js';
import { StoreError } from '../errors.js';
import type { JournalParts } from '../parts-prepare.js';
import { restoreRecord } from '../restore.js';
import { blobOfRow, rowLines } from '../rows/lines.js';
import { advanceRunState } from '../rows/run-state.js';
import { partReferenceText, type LineRewrite, type RewriteOutcome } from '../rewrite.js';
import type { SequencedBatch } from '../sequencer.js';
import type { RunStateCache } from '../types.js';
import type { DbClient, DbPool } from './driver.js';
import { isConnectionLoss, sqlState, translate } from './errors.js';
import { PostgresTreeStorage, rowLeaves } from './tree.js';
import {
  beginAndLockHead,
  headWithTree,
  holdsLine,
  linesPage,
  putRunState,
  readBlob,
  runStateRow,
  type LockedHead,
  type NewLine,
} from './sql.js';
import type { Tables } from './schema.js';
import type { StoreContext } from './store.js';

/** SQLSTATE undefined_table: the tree's tables on a schema older than version 2. */
export const UNDEFINED_TABLE = '42P01';

/** What the run-state row is written for: the journal's row, genesis and parts. */
export interface RunStateTarget {
  client: DbClient;
  tables: Tables;
  key: number;
  genesis: Genesis;
  where: string;
  parts: JournalParts | null;
}

/**
 * The run_state row after the batch's lines, in the append's transaction. A line that cannot be folded (a
 * blob or part unreadable here) removes the row instead of failing the append (under a savepoint, as a
 * failed statement ends a Postgres transaction): readers then fold the run from its records, and the next
 * append folds it again.
 */
export async function advanceRunStateRow(
  at: RunStateTarget,
  head: LockedHead,
  lines: SequencedBatch['lines'],
): Promise<void> {
  const { client, tables: t, key, genesis, where } = at;
  const resolve = at.parts?.resolver();
  await client.query('SAVEPOINT run_state');
  try {
    const row = await advanceRunState(
      {
        runId: genesis.journal_id,
        row: await runStateRow(client, t, key),
        head: { seq: head.seq, step_hash: head.hash },
        older: (to) => rowLines((from, end) => linesPage(client, t, key, from, end), { from: 0, to }, where),
        restore: async (text, seq) => {
          const record = await restoreRecord(genesis, text, seq, where, async (ref) =>
            blobOfRow(await readBlob(client, t, key, ref.digest, ref.size), ref.digest, ref.size, where),
          );
          return resolve === undefined ? record : resolve(record, seq);
        },
      },
      lines,
    );
    await putRunState(client, t, key, row);
  } catch (e) {
    if (isConnectionLoss(e)) throw e;
    await client.query('ROLLBACK TO SAVEPOINT run_state');
    await client.query(`DELETE FROM ${t.runState} WHERE journal = $1`, [key]);
  }
}

/** The run_state row's saved state, or null (a schema from before version 3, or the server gone: the run is folded from its records). */
export async function readRunStateRow(pool: DbPool, tables: Tables, key: number): ReturnType<RunStateCache['read']> {
  try {
    return (await runStateRow(pool, tables, key))?.state ?? null;
  } catch {
    return null;
  }
}

/** After a COMMIT that went unanswered: waits for that transaction to end (the row lock), then looks for its last line. */
export async function commitFateOf(
  ctx: StoreContext,
  key: number,
  last: NewLine,
): Promise<'committed' | 'absent' | 'unknown'> {
  let client: DbClient;
  try {
    client = await ctx.pool.connect();
  } catch {
    return 'unknown';
  }
  try {
    await beginAndLockHead(client, ctx.tables, key, ctx.lockTimeoutMs, ctx.idleTimeoutMs);
    const held = await holdsLine(client, ctx.tables, key, last.seq, last.text);
    await client.query('ROLLBACK');
    client.release();
    return held ? 'committed' : 'absent';
  } catch {
    client.release(true);
    return 'unknown';
  }
}

/**
 * Replaces the line of `seq` in place, in the caller's transaction holding the head row lock: the row is
 * updated and the parts the old line named that no line and no other part references any more are deleted.
 * The old row version stays in the table's files as a dead tuple until VACUUM, and in the WAL until recycled
 * (ERASURE.md §6.2).
 */
export async function rewriteRow(
  client: DbClient,
  t: Tables,
  journal: { key: number; id: string },
  head: LockedHead,
  seq: number,
  rewrite: (line: string) => LineRewrite | null,
): Promise<RewriteOutcome | null> {
  const { key, id } = journal;
  const { rows } = await client.query<{ line: string; bucket: number }>(
    `SELECT line, bucket::float8 AS bucket FROM ${t.steps} WHERE journal = $1 AND seq = $2`,
    [key, seq],
  );
  if (rows[0] === undefined) return null;
  const old = rows[0].line;
  const next = rewrite(old);
  if (next === null) return null;
  await client.query(`UPDATE ${t.steps} SET line = $3 WHERE journal = $1 AND seq = $2`, [key, seq, next.line]);
  // The head row counts the open segment's bytes (the file store's tail bucket length): a sealed line is longer.
  if (rows[0].bucket === head.cursor.first) {
    await client.query(`UPDATE ${t.journals} SET bucket_size = bucket_size + $2 WHERE key = $1`, [
      key,
      Buffer.byteLength(next.line, 'utf8') - Buffer.byteLength(old, 'utf8'),
    ]);
  }
  // The saved run state holds the record's values as folded (ERASURE.md §6.2): dropped, so readers fold the run
  // from its records (the sealed line now) and the next append writes the row again.
  const { rows: keeps } = await client.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [t.runState]);
  if (keeps[0]?.present === true) await client.query(`DELETE FROM ${t.runState} WHERE journal = $1`, [key]);
  const partsDeleted: string[] = [];
  const partsTable = `"${t.schema}".parts`;
  const { rows: has } = await client.query(`SELECT to_regclass($1) IS NOT NULL AS present`, [partsTable]);
  if (has[0]?.present !== true) {
    next.beforeCommit?.();
    return { partsDeleted };
  }
  for (const address of new Set(next.parts)) {
    const needle = partReferenceText(address);
    const { rows: used } = await client.query(
      `SELECT 1 FROM ${t.steps} WHERE journal = $1 AND strpos(line, $2) > 0
       UNION ALL SELECT 1 FROM ${partsTable} WHERE journal = $3 AND address <> $4 AND position(convert_to($2, 'UTF8') IN bytes) > 0 LIMIT 1`,
      [key, needle, id, address],
    );
    if (used.length > 0) continue;
    const gone = await client.query(`DELETE FROM ${partsTable} WHERE journal = $1 AND address = $2`, [id, address]);
    await client.query(`DELETE FROM "${t.schema}".part_index WHERE journal = $1 AND address = $2`, [id, address]);
    if ((gone.rowCount ?? 0) > 0) partsDeleted.push(address);
  }
  next.beforeCommit?.();
  return { partsDeleted };
}

/**
 * A read-only journal's tree at its current size, for proofs: the stored tree when it is the head's, else one
 * built in memory from the rows (a reader never writes, and never migrates).
 */
export async function storedOrRowsTree(
  ctx: StoreContext,
  key: number,
  id: string,
  where: string,
  head: () => Promise<ChainHead | null>,
): Promise<{ size: number; root: Uint8Array; reader: NodeReader }> {
  const storage = new PostgresTreeStorage(ctx.pool, ctx.tables, key);
  let row;
  try {
    row = await headWithTree(ctx.pool, ctx.tables, key);
  } catch (e) {
    // A reader never migrates: on a schema older than version 2 there are no tree tables to read.
    if (sqlState(e) !== UNDEFINED_TABLE) throw translate(e, ctx.display, `reading the tree of journal ${id}`);
    const at = await head();
    row = { seq: at?.seq ?? -1, hash: at?.step_hash ?? '', tree: null };
  }
  if (row === null) throw new StoreError('JOURNAL_NOT_FOUND', `journal ${id} is no longer in ${ctx.display}`);
  const size = row.seq + 1;
  const stored = row.tree === null ? null : parseStoredTree(row.tree);
  if (stored !== null && stored.tree.size === size && stored.step_hash === (size === 0 ? null : row.hash)) {
    const reader = storage.reader();
    return { size, root: await treeRoot(reader, size), reader };
  }
  const memory = new MemoryTree();
  for await (const l of rowLeaves(ctx.pool, ctx.tables, key, where)(0)) {
    if (l.seq >= size) break;
    memory.append(stepLeafHash(l.step_hash)!);
  }
  return { size, root: await treeRoot(memory, size), reader: memory };
}
