/**
 * Every statement the Postgres store runs against its tables (spec/POSTGRES.md §4, §6), as plain functions
 * over a client or the pool. Nothing here knows the Journal interface: rows in, rows out. int8 columns
 * arrive as strings and are turned into numbers here (a seq is at most 2^53 − 1, FORMAT §5.1).
 */
import type { DbClient, DbPool } from './driver.js';
import { sqlState } from './errors.js';
import type { HeadRow, LineRow, LockedHead, NewLine } from '../rows/lines.js';
import type { Tables } from './schema.js';
import type { RunMetaRow, RunStateRow } from '../rows/run-state.js';
import { RUN_FORMAT_LIST, type RunStatus } from '../runs.js';

type Db = DbPool | DbClient;

export type { HeadRow, LockedHead, LineRow, NewLine } from '../rows/lines.js';
export { clashError } from '../rows/lines.js';

export interface JournalRow {
  key: number;
  meta: string;
}

const int = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

// ------------------------------------------------------------------ journals

export async function findJournal(db: Db, t: Tables, id: string): Promise<JournalRow | null> {
  const r = await db.query<{ key: string; meta: string }>(`SELECT key, meta FROM ${t.journals} WHERE id = $1`, [id]);
  const row = r.rows[0];
  return row === undefined ? null : { key: int(row.key), meta: row.meta };
}

export async function listJournals(db: Db, t: Tables): Promise<string[]> {
  // C collation: byte order, which for ids ([A-Za-z0-9_.-]) is JavaScript's sort order.
  const r = await db.query<{ id: string }>(`SELECT id FROM ${t.journals} ORDER BY id COLLATE "C"`);
  return r.rows.map((row) => row.id);
}

/**
 * The id, metadata and run state of every run journal (genesis format stepchain/v2 or v3), in one statement
 * (spec/POSTGRES.md §4.2): listing runs never opens a journal. With `status`, only the runs whose row says
 * it, and those whose row is not at the head (the caller folds them). A schema from before version 3 (read
 * by a reader, who never migrates) has no run_state table: every run is then one the caller folds.
 * The metadata text is canonical JSON, so the cast to jsonb only reads it.
 */
export async function listRunMeta(
  db: Db,
  t: Tables,
  status: RunStatus | undefined,
  withRunState: boolean,
): Promise<RunMetaRow[]> {
  const join = withRunState
    ? `LEFT JOIN ${t.runState} r ON r.journal = j.key`
    : 'LEFT JOIN (SELECT NULL::bigint AS journal, NULL::bigint AS seq, NULL::text AS status, NULL::int AS pending, NULL::text AS ended_at) r ON false';
  const r = await db.query<{
    id: string;
    meta: string;
    head_seq: string;
    seq: string | null;
    status: RunStatus | null;
    pending: number | null;
    ended_at: string | null;
  }>(
    `SELECT j.id, j.meta, j.head_seq, r.seq, r.status, r.pending, r.ended_at FROM ${t.journals} j ${join}
     WHERE (j.meta::jsonb) #>> '{genesis,format}' IN (${RUN_FORMAT_LIST}) AND ($1::text IS NULL OR r.status = $1 OR r.seq IS DISTINCT FROM j.head_seq)
     ORDER BY j.id COLLATE "C"`,
    [status ?? null],
  );
  return r.rows.map((row) => ({ ...row, head_seq: int(row.head_seq), seq: row.seq === null ? null : int(row.seq) }));
}

/** A journal's run_state row, or null. */
export async function runStateRow(
  db: Db,
  t: Tables,
  key: number,
): Promise<{ seq: number; step_hash: string; state: string } | null> {
  const r = await db.query<{ seq: string; step_hash: string; state: string }>(
    `SELECT seq, step_hash, state FROM ${t.runState} WHERE journal = $1`,
    [key],
  );
  const row = r.rows[0];
  return row === undefined ? null : { seq: int(row.seq), step_hash: row.step_hash, state: row.state };
}

export async function putRunState(client: DbClient, t: Tables, key: number, row: RunStateRow): Promise<void> {
  await client.query(
    `INSERT INTO ${t.runState} (journal, seq, step_hash, status, pending, ended_at, state) VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (journal) DO UPDATE SET seq = excluded.seq, step_hash = excluded.step_hash, status = excluded.status, pending = excluded.pending, ended_at = excluded.ended_at, state = excluded.state`,
    [key, row.seq, row.step_hash, row.status, row.pending, row.ended_at, row.state],
  );
}

/** Inserts a journal's row with an empty chain; null when the id is taken (the caller's JOURNAL_EXISTS). */
export async function insertJournal(
  client: DbClient,
  t: Tables,
  id: string,
  meta: string,
  genesisHash: string,
): Promise<number | null> {
  try {
    const r = await client.query<{ key: string }>(
      `INSERT INTO ${t.journals} (id, meta, head_seq, head_hash, bucket_first, bucket_size) VALUES ($1, $2, -1, $3, 0, 0) RETURNING key`,
      [id, meta, genesisHash],
    );
    return int(r.rows[0]!.key);
  } catch (e) {
    if (sqlState(e) === '23505') return null;
    throw e;
  }
}

/**
 * Opens the append transaction and takes the journal's head row lock, in one round trip: BEGIN, the
 * transaction's timeouts and SELECT … FOR UPDATE as one simple query. Everything inlined is an integer
 * this code produced. Null when the journal's row is gone.
 */
export async function beginAndLockHead(
  client: DbClient,
  t: Tables,
  key: number,
  lockTimeoutMs: number,
  idleTimeoutMs: number,
  /** Take the lock only if it is free (FOR UPDATE … SKIP LOCKED): null then also when another holds it. */
  skipLocked = false,
): Promise<LockedHead | null> {
  const k = Math.trunc(key);
  const sql = [
    'BEGIN',
    `SET LOCAL lock_timeout = ${Math.trunc(lockTimeoutMs)}`,
    `SET LOCAL idle_in_transaction_session_timeout = ${Math.trunc(idleTimeoutMs)}`,
    // The tree's state rides along (version 2): a commit that keeps the tree pays no extra round trip.
    lockHeadSql(t, k) + (skipLocked ? ' SKIP LOCKED' : ''),
  ];
  const results = (await client.query(sql.join('; '))) as unknown as { rows: Record<string, unknown>[] }[];
  return lockedHeadOfRow(results[3]?.rows[0]);
}

function lockHeadSql(t: Tables, key: number): string {
  return `SELECT j.head_seq::float8 AS head_seq, j.head_hash, j.bucket_first::float8 AS bucket_first, j.bucket_size::float8 AS bucket_size, s.state AS tree
     FROM ${t.journals} j LEFT JOIN ${t.treeState} s ON s.journal = j.key WHERE j.key = ${Math.trunc(key)} FOR UPDATE OF j`;
}

/** Inside the transaction beginAndLockHead began: the head row (and tree state) as this transaction left it. */
export async function lockedHeadNow(client: DbClient, t: Tables, key: number): Promise<LockedHead | null> {
  return lockedHeadOfRow((await client.query(lockHeadSql(t, key))).rows[0]);
}

function lockedHeadOfRow(row: Record<string, unknown> | undefined): LockedHead | null {
  if (row === undefined) return null;
  return {
    seq: row.head_seq as number,
    hash: String(row.head_hash),
    cursor: { first: row.bucket_first as number, size: row.bucket_size as number },
    tree: typeof row.tree === 'string' ? row.tree : null,
  };
}

/** The head row and the tree's state, read in one statement (one snapshot) without a lock: read-only proofs. */
export async function headWithTree(
  db: Db,
  t: Tables,
  key: number,
): Promise<{ seq: number; hash: string; tree: string | null } | null> {
  const r = await db.query<{ head_seq: number; head_hash: string; tree: string | null }>(
    `SELECT j.head_seq::float8 AS head_seq, j.head_hash, s.state AS tree FROM ${t.journals} j LEFT JOIN ${t.treeState} s ON s.journal = j.key WHERE j.key = $1`,
    [key],
  );
  const row = r.rows[0];
  return row === undefined ? null : { seq: row.head_seq, hash: row.head_hash, tree: row.tree };
}

/**
 * The stored lines among the last `window` steps (seq > headSeq − window) whose step_id is one of `ids`, in
 * seq order: the idempotency lookup (FILE-STORE.md §10), one statement per batch, served by (journal, step_id).
 */
export async function linesWithStepIds(
  client: DbClient,
  t: Tables,
  key: number,
  ids: readonly string[],
  headSeq: number,
  window: number,
): Promise<{ seq: number; line: string }[]> {
  const r = await client.query<{ seq: number; line: string }>(
    `SELECT seq::float8 AS seq, line FROM ${t.steps} WHERE journal = $1 AND step_id = ANY($2::text[]) AND seq > $3 ORDER BY seq`,
    [key, ids, headSeq - window],
  );
  return r.rows;
}

// ------------------------------------------------------------------ steps

/** Rows per INSERT: five parameters a row, far below the protocol's 65 535. */
const INSERT_ROWS = 1000;

/**
 * Inserts the lines and moves the head row. The last chunk and the head row go in one statement (a
 * data-modifying WITH), so a commit without retried step_ids or blobs is three round trips in all: lock,
 * write, COMMIT.
 */
export async function writeLines(
  client: DbClient,
  t: Tables,
  key: number,
  lines: readonly NewLine[],
  tail: HeadRow,
  also?: (values: unknown[]) => string[],
): Promise<void> {
  for (let i = 0; i < lines.length; i += INSERT_ROWS) {
    const last = i + INSERT_ROWS >= lines.length;
    const values: unknown[] = last ? [key, tail.seq, tail.hash, tail.cursor.first, tail.cursor.size] : [key];
    const insert = insertStatement(t, lines.slice(i, i + INSERT_ROWS), values);
    // `also`: further data-modifying CTEs for the last statement (the tree's rows, tree.ts).
    const ctes = [`inserted AS (${insert})`, ...(last && also ? also(values) : [])];
    await client.query(
      last
        ? `WITH ${ctes.join(', ')} UPDATE ${t.journals} SET head_seq = $2, head_hash = $3, bucket_first = $4, bucket_size = $5 WHERE key = $1`
        : insert,
      values,
    );
  }
}

/** Inserts lines without touching the head row (a fork's copy, whose head is set once at the end). */
export async function insertLines(client: DbClient, t: Tables, key: number, lines: readonly NewLine[]): Promise<void> {
  for (let i = 0; i < lines.length; i += INSERT_ROWS) {
    const values: unknown[] = [key];
    await client.query(insertStatement(t, lines.slice(i, i + INSERT_ROWS), values), values);
  }
}

/** The INSERT of `lines` into steps; their values are appended to `values`, whose $1 is the journal's key. */
function insertStatement(t: Tables, lines: readonly NewLine[], values: unknown[]): string {
  const rows: string[] = [];
  for (const l of lines) {
    const n = values.length;
    rows.push(`($1, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4})`);
    values.push(l.seq, l.bucket, l.stepId, l.text);
  }
  return `INSERT INTO ${t.steps} (journal, seq, bucket, step_id, line) VALUES ${rows.join(', ')}`;
}

export async function insertBlobs(
  client: DbClient,
  t: Tables,
  key: number,
  blobs: readonly { digest: string; bytes: Uint8Array }[],
): Promise<void> {
  // Identical values share one blob (FORMAT §7): a digest already stored is left as it is.
  for (const b of blobs) {
    await client.query(
      `INSERT INTO ${t.blobs} (journal, digest, bytes) VALUES ($1, $2, $3) ON CONFLICT (journal, digest) DO NOTHING`,
      [key, b.digest, Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength)],
    );
  }
}

export async function updateHead(client: DbClient, t: Tables, key: number, head: HeadRow): Promise<void> {
  await client.query(
    `UPDATE ${t.journals} SET head_seq = $2, head_hash = $3, bucket_first = $4, bucket_size = $5 WHERE key = $1`,
    [key, head.seq, head.hash, head.cursor.first, head.cursor.size],
  );
}

/** Rows per page of a range read, and the most bytes of lines a page holds (plus one line): a reader's memory. */
const PAGE_ROWS = 2000;
const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * One page of lines from `from` (inclusive) up to `to` (inclusive, or open-ended), in seq order. Pages are
 * seq ranges (seqs are contiguous), which the primary key serves far faster than ORDER BY … LIMIT
 * (measured: 3×). A page whose lines exceed PAGE_BYTES is cut after the line that crosses it, from the
 * lengths alone (octet_length reads the TOAST header, not the value), so memory stays bounded.
 */
export async function linesPage(db: Db, t: Tables, key: number, from: number, to: number | null): Promise<LineRow[]> {
  let end = to === null ? from + PAGE_ROWS : Math.min(from + PAGE_ROWS, to + 1);
  const size = await db.query<{ bytes: string | null }>(
    `SELECT sum(octet_length(line)) AS bytes FROM ${t.steps} WHERE journal = $1 AND seq >= $2 AND seq < $3`,
    [key, from, end],
  );
  if (Number(size.rows[0]?.bytes ?? 0) > PAGE_BYTES) {
    const lengths = await db.query<{ seq: number; bytes: number }>(
      `SELECT seq::float8 AS seq, octet_length(line) AS bytes FROM ${t.steps} WHERE journal = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
      [key, from, end],
    );
    let total = 0;
    for (const row of lengths.rows) {
      total += row.bytes;
      if (total > PAGE_BYTES) {
        end = row.seq + 1;
        break;
      }
    }
  }
  const r = await db.query<{ seq: number; bucket: number; line: string; bytes: number }>(
    `SELECT seq::float8 AS seq, bucket::float8 AS bucket, line, octet_length(line) AS bytes FROM ${t.steps} WHERE journal = $1 AND seq >= $2 AND seq < $3 ORDER BY seq`,
    [key, from, end],
  );
  return r.rows;
}

export async function lastLine(db: Db, t: Tables, key: number): Promise<{ seq: number; line: string } | null> {
  const r = await db.query<{ seq: string; line: string }>(
    `SELECT seq, line FROM ${t.steps} WHERE journal = $1 ORDER BY seq DESC LIMIT 1`,
    [key],
  );
  const row = r.rows[0];
  return row === undefined ? null : { seq: int(row.seq), line: row.line };
}

/** Whether the line at `seq` is exactly `line`: how an append whose COMMIT went unanswered learns its fate. */
export async function holdsLine(client: DbClient, t: Tables, key: number, seq: number, line: string): Promise<boolean> {
  const r = await client.query<{ same: boolean }>(
    `SELECT line = $3 AS same FROM ${t.steps} WHERE journal = $1 AND seq = $2`,
    [key, seq, line],
  );
  return r.rows[0]?.same === true;
}

// ------------------------------------------------------------------ blobs

/**
 * A blob's bytes; `size` given, a stored blob of another size comes back as its size alone, unread
 * (octet_length reads the TOAST header, not the value).
 */
export async function readBlob(
  db: Db,
  t: Tables,
  key: number,
  digest: string,
  size: number | undefined,
): Promise<{ size: number; bytes: Uint8Array | null } | null> {
  const r = await db.query<{ size: number; bytes: Buffer | null }>(
    `SELECT octet_length(bytes) AS size, CASE WHEN $3::bigint IS NULL OR octet_length(bytes) = $3 THEN bytes END AS bytes
     FROM ${t.blobs} WHERE journal = $1 AND digest = $2`,
    [key, digest, size ?? null],
  );
  const row = r.rows[0];
  if (row === undefined) return null;
  const b = row.bytes;
  return { size: row.size, bytes: b === null ? null : new Uint8Array(b.buffer, b.byteOffset, b.byteLength) };
}
