/**
 * Every statement the SQLite store runs against its tables (spec/SQLITE.md §4, §6), as plain functions over
 * a connection: rows in, rows out. Statements are prepared once per connection. Integers come back as
 * JavaScript numbers (a seq is at most 2^53 − 1, FORMAT §5.1).
 */
import type { HeadRow, LineRow, LockedHead, NewLine } from '../rows/lines.js';
import type { RunMetaRow, RunStateRow } from '../rows/run-state.js';
import { RUN_FORMAT_LIST, type RunStatus } from '../runs.js';
import type { Connection, Statement } from './driver.js';
import { sqliteCode } from './errors.js';

const prepared = new WeakMap<Connection, Map<string, Statement>>();

/** The statement for `sql` on `db`, prepared on first use. */
export function stmt(db: Connection, sql: string): Statement {
  let cache = prepared.get(db);
  if (cache === undefined) prepared.set(db, (cache = new Map<string, Statement>()));
  let s = cache.get(sql);
  if (s === undefined) cache.set(sql, (s = db.prepare(sql)));
  return s;
}

export function isConstraint(e: unknown, kind: 'PRIMARYKEY' | 'UNIQUE'): boolean {
  return sqliteCode(e) === `SQLITE_CONSTRAINT_${kind}`;
}

// ------------------------------------------------------------------ journals

export function findJournal(db: Connection, id: string): { key: number; meta: string } | null {
  return (
    (stmt(db, 'SELECT key, meta FROM journals WHERE id = ?').get(id) as { key: number; meta: string } | undefined) ??
    null
  );
}

export function listJournals(db: Connection): string[] {
  // BINARY collation: byte order, which for ids ([A-Za-z0-9_.-]) is JavaScript's sort order.
  return (stmt(db, 'SELECT id FROM journals ORDER BY id').all() as { id: string }[]).map((r) => r.id);
}

/**
 * The id, metadata and run state of every run journal (genesis format stepchain/v2 or v3), in one statement
 * (spec/SQLITE.md §4.2); with `status`, only the runs whose row says it, and those whose row is not at the
 * head (the caller folds them).
 */
export function listRunMeta(db: Connection, status?: RunStatus): RunMetaRow[] {
  // A file from before version 2 (a reader never migrates) has no run_state: every run is one the caller folds.
  const withRows =
    stmt(db, `SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'run_state'`).get() !== undefined;
  const from = withRows
    ? 'run_state'
    : '(SELECT NULL AS journal, NULL AS seq, NULL AS status, NULL AS pending, NULL AS ended_at)';
  return stmt(
    db,
    `SELECT j.id, j.meta, j.head_seq, r.seq, r.status, r.pending, r.ended_at FROM journals j LEFT JOIN ${from} r ON r.journal = j.key
    WHERE json_extract(j.meta, '$.genesis.format') IN (${RUN_FORMAT_LIST}) AND (? IS NULL OR r.status = ? OR r.seq IS NOT j.head_seq) ORDER BY j.id`,
  ).all(status ?? null, status ?? null) as RunMetaRow[];
}

/** A journal's run_state row, or null. */
export function runStateRow(db: Connection, key: number): { seq: number; step_hash: string; state: string } | null {
  return (
    (stmt(db, 'SELECT seq, step_hash, state FROM run_state WHERE journal = ?').get(key) as
      { seq: number; step_hash: string; state: string } | undefined) ?? null
  );
}

export function putRunState(db: Connection, key: number, row: RunStateRow): void {
  stmt(
    db,
    `INSERT INTO run_state (journal, seq, step_hash, status, pending, ended_at, state) VALUES (?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (journal) DO UPDATE SET seq = excluded.seq, step_hash = excluded.step_hash, status = excluded.status, pending = excluded.pending, ended_at = excluded.ended_at, state = excluded.state`,
  ).run(key, row.seq, row.step_hash, row.status, row.pending, row.ended_at, row.state);
}

export function dropRunState(db: Connection, key: number): void {
  stmt(db, 'DELETE FROM run_state WHERE journal = ?').run(key);
}

/** Inserts a journal's row with an empty chain; null when the id is taken (the caller's JOURNAL_EXISTS). */
export function insertJournal(db: Connection, id: string, meta: string, genesisHash: string): number | null {
  try {
    const r = stmt(
      db,
      'INSERT INTO journals (id, meta, head_seq, head_hash, bucket_first, bucket_size, created_at) VALUES (?, ?, -1, ?, 0, 0, ?)',
    ).run(id, meta, genesisHash, new Date().toISOString());
    return Number(r.lastInsertRowid);
  } catch (e) {
    if (isConstraint(e, 'UNIQUE')) return null;
    throw e;
  }
}

export function setMeta(db: Connection, key: number, meta: string): void {
  stmt(db, 'UPDATE journals SET meta = ? WHERE key = ?').run(meta, key);
}

/** The head row with the tree's state, read inside the writer's transaction (which holds the write lock). Null when the journal's row is gone. */
export function lockedHead(db: Connection, key: number): LockedHead | null {
  const row = stmt(
    db,
    `SELECT j.head_seq, j.head_hash, j.bucket_first, j.bucket_size, s.state AS tree
    FROM journals j LEFT JOIN tree_state s ON s.journal = j.key WHERE j.key = ?`,
  ).get(key) as
    { head_seq: number; head_hash: string; bucket_first: number; bucket_size: number; tree: string | null } | undefined;
  if (row === undefined) return null;
  return {
    seq: row.head_seq,
    hash: row.head_hash,
    cursor: { first: row.bucket_first, size: row.bucket_size },
    tree: row.tree,
  };
}

export function updateHead(db: Connection, key: number, head: HeadRow): void {
  stmt(db, 'UPDATE journals SET head_seq = ?, head_hash = ?, bucket_first = ?, bucket_size = ? WHERE key = ?').run(
    head.seq,
    head.hash,
    head.cursor.first,
    head.cursor.size,
    key,
  );
}

/** The stored lines among the last `window` steps whose step_id is one of `ids`, in seq order (FILE-STORE.md §10). */
export function linesWithStepIds(
  db: Connection,
  key: number,
  ids: readonly string[],
  headSeq: number,
  window: number,
): { seq: number; line: string }[] {
  return stmt(
    db,
    `SELECT seq, line FROM steps WHERE journal = ? AND step_id IN (SELECT value FROM json_each(?)) AND seq > ? ORDER BY seq`,
  ).all(key, JSON.stringify(ids), headSeq - window) as { seq: number; line: string }[];
}

// ------------------------------------------------------------------ steps and blobs

export function insertLines(db: Connection, key: number, lines: readonly NewLine[]): void {
  const insert = stmt(db, 'INSERT INTO steps (journal, seq, bucket, step_id, line) VALUES (?, ?, ?, ?, ?)');
  for (const l of lines) insert.run(key, l.seq, l.bucket, l.stepId, l.text);
}

export function insertBlobs(
  db: Connection,
  key: number,
  blobs: readonly { digest: string; bytes: Uint8Array }[],
): void {
  // Identical values share one blob (FORMAT §7): a digest already stored is left as it is.
  const insert = stmt(
    db,
    'INSERT INTO blobs (journal, digest, bytes) VALUES (?, ?, ?) ON CONFLICT (journal, digest) DO NOTHING',
  );
  for (const b of blobs) insert.run(key, b.digest, Buffer.from(b.bytes.buffer, b.bytes.byteOffset, b.bytes.byteLength));
}

/** Rows per page of a range read, and the most bytes of lines a page holds (plus one line): a reader's memory. */
const PAGE_ROWS = 2000;
const PAGE_BYTES = 8 * 1024 * 1024;

/**
 * One page of lines from `from` (inclusive) up to `to` (inclusive, or open-ended), in seq order: a seq range
 * the primary key serves, cut after the line that crosses PAGE_BYTES (octet_length reads a TEXT value's
 * length from its record header), so memory stays bounded.
 */
export function linesPage(db: Connection, key: number, from: number, to: number | null): LineRow[] {
  let end = to === null ? from + PAGE_ROWS : Math.min(from + PAGE_ROWS, to + 1);
  const lengths = stmt(
    db,
    'SELECT seq, octet_length(line) AS bytes FROM steps WHERE journal = ? AND seq >= ? AND seq < ? ORDER BY seq',
  ).all(key, from, end) as { seq: number; bytes: number }[];
  let total = 0;
  for (const row of lengths) {
    total += row.bytes;
    if (total > PAGE_BYTES) {
      end = row.seq + 1;
      break;
    }
  }
  return stmt(
    db,
    'SELECT seq, bucket, line, octet_length(line) AS bytes FROM steps WHERE journal = ? AND seq >= ? AND seq < ? ORDER BY seq',
  ).all(key, from, end) as LineRow[];
}

export function lastLine(db: Connection, key: number): { seq: number; line: string } | null {
  return (
    (stmt(db, 'SELECT seq, line FROM steps WHERE journal = ? ORDER BY seq DESC LIMIT 1').get(key) as
      { seq: number; line: string } | undefined) ?? null
  );
}

/** A blob's bytes; `size` given, a stored blob of another size comes back as its size alone, unread. */
export function readBlob(
  db: Connection,
  key: number,
  digest: string,
  size: number | undefined,
): { size: number; bytes: Uint8Array | null } | null {
  const want = size ?? null;
  const row = stmt(
    db,
    'SELECT length(bytes) AS size, CASE WHEN ? IS NULL OR length(bytes) = ? THEN bytes END AS bytes FROM blobs WHERE journal = ? AND digest = ?',
  ).get(want, want, key, digest) as { size: number; bytes: Buffer | null } | undefined;
  if (row === undefined) return null;
  const b = row.bytes;
  return { size: row.size, bytes: b === null ? null : new Uint8Array(b.buffer, b.byteOffset, b.byteLength) };
}

/** The head row and the count of rows past it, in one statement (one snapshot): what verify starts from. */
export function verifySnapshot(db: Connection, id: string): Record<string, number | string> | null {
  return (
    (stmt(
      db,
      `SELECT j.key, j.meta, j.head_seq, j.head_hash, j.bucket_first, j.bucket_size,
      (SELECT count(*) FROM steps s WHERE s.journal = j.key AND s.seq > j.head_seq) AS beyond
    FROM journals j WHERE j.id = ?`,
    ).get(id) as Record<string, number | string> | undefined) ?? null
  );
}
