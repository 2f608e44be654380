/**
 * The SQLite store's tables and their versioned migrations (spec/SQLITE.md §4, §5): the Postgres store's
 * tables (spec/POSTGRES.md §4) in SQLite's types, STRICT. Writers bring the file to SCHEMA_VERSION on
 * first use inside one BEGIN IMMEDIATE transaction (SQLite's write lock orders concurrent migrators, so
 * each version is applied exactly once); readers never migrate. A newer version is SCHEMA_TOO_NEW.
 */
import { StoreError } from '../errors.js';
import type { Connection } from './driver.js';

/** The schema version this implementation reads and writes. */
export const SQLITE_SCHEMA_VERSION = 2;
/** PRAGMA application_id of a stepchain store ("STCH"): file(1) and sqlite tools can tell what the file is. */
export const APPLICATION_ID = 0x53544348;

interface Migration {
  version: number;
  description: string;
  statements: string[];
}

/** Every version, in order. A new version appends an entry; an applied entry never changes. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'journals (with the head row), steps, blobs, the Merkle tree and the checkpoints a journal signed',
    statements: [
      // steps and blobs keep their rowid: their rows are large (a line up to the blob threshold, a blob
      // any size), and SQLite's documentation advises WITHOUT ROWID only for small rows; tree_tiles (32-byte
      // hashes) is one. meta is the file store's journal.json, byte for byte; the head columns move with the steps, in one
      // transaction. Ids are checked by the store; the CHECK keeps rows written around it within the id rule.
      `CREATE TABLE journals (
        key INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE CHECK (length(id) BETWEEN 1 AND 200 AND id NOT GLOB '*[^A-Za-z0-9_.-]*'),
        meta TEXT NOT NULL,
        head_seq INTEGER NOT NULL CHECK (head_seq >= -1),
        head_hash TEXT NOT NULL,
        bucket_first INTEGER NOT NULL CHECK (bucket_first >= 0),
        bucket_size INTEGER NOT NULL CHECK (bucket_size >= 0),
        created_at TEXT NOT NULL
      ) STRICT`,
      `CREATE TABLE steps (
        journal INTEGER NOT NULL REFERENCES journals (key),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        bucket INTEGER NOT NULL CHECK (bucket >= 0 AND bucket <= seq),
        step_id TEXT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (journal, seq)
      ) STRICT`,
      `CREATE INDEX steps_step_id ON steps (journal, step_id)`,
      `CREATE TABLE blobs (
        journal INTEGER NOT NULL REFERENCES journals (key),
        digest TEXT NOT NULL CHECK (digest GLOB 'sha256:[0-9a-f]*' AND length(digest) = 71),
        bytes BLOB NOT NULL,
        PRIMARY KEY (journal, digest)
      ) STRICT`,
      `CREATE TABLE tree_state (
        journal INTEGER PRIMARY KEY REFERENCES journals (key),
        size INTEGER NOT NULL CHECK (size >= 0),
        state TEXT NOT NULL
      ) STRICT`,
      `CREATE TABLE tree_tiles (
        journal INTEGER NOT NULL REFERENCES journals (key),
        tile_level INTEGER NOT NULL CHECK (tile_level BETWEEN 0 AND 6),
        idx INTEGER NOT NULL CHECK (idx >= 0),
        hash BLOB NOT NULL CHECK (length(hash) = 32),
        PRIMARY KEY (journal, tile_level, idx)
      ) STRICT, WITHOUT ROWID`,
      `CREATE TABLE checkpoints (
        journal INTEGER NOT NULL REFERENCES journals (key),
        origin TEXT NOT NULL,
        size INTEGER NOT NULL CHECK (size >= 0),
        key_id INTEGER NOT NULL CHECK (key_id BETWEEN 0 AND 4294967295),
        note TEXT NOT NULL,
        signed_at TEXT NOT NULL,
        PRIMARY KEY (journal, origin, size, key_id)
      ) STRICT`,
    ],
  },
  {
    version: 2,
    description: "run_state: each run journal's saved run state, written with its steps",
    statements: [
      // Derived data (spec/SQLITE.md §4.2): the run reader's state at the head, written in the same
      // transaction as the steps it folds; a journal without a row (made before version 2, or a fork) gets
      // one the first time it is appended to. status, pending and ended_at are what a listing reads.
      `CREATE TABLE run_state (
        journal INTEGER PRIMARY KEY REFERENCES journals (key),
        seq INTEGER NOT NULL CHECK (seq >= 0),
        step_hash TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
        pending INTEGER NOT NULL CHECK (pending >= 0),
        ended_at TEXT,
        state TEXT NOT NULL
      ) STRICT`,
    ],
  },
];

/** The installed version, read without writing anything: null when the file holds no store yet. */
export function installedVersion(db: Connection): number | null {
  const found = db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'migrations'`).get();
  if (found === undefined) return null;
  const row = db.prepare('SELECT max(version) AS v FROM migrations').get() as { v: number | null };
  return row.v ?? 0;
}

export function tooNew(version: number, file: string): StoreError {
  return new StoreError(
    'SCHEMA_TOO_NEW',
    `${file} holds a store at schema version ${version}, written by a newer stepchain; this one reads and writes version ${SQLITE_SCHEMA_VERSION}`,
    {
      location: { file },
      hint: 'upgrade stepchain on this machine; the file is left untouched',
    },
  );
}

/**
 * Brings the file to SQLITE_SCHEMA_VERSION (writers only), inside the caller's BEGIN IMMEDIATE transaction:
 * the version is read under the write lock, every missing migration applied in order with its row.
 */
export function migrate(db: Connection, file: string): void {
  db.exec(`CREATE TABLE IF NOT EXISTS migrations (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  const current = installedVersion(db) ?? 0;
  if (current > SQLITE_SCHEMA_VERSION) throw tooNew(current, file);
  const record = db.prepare('INSERT INTO migrations (version, description, applied_at) VALUES (?, ?, ?)');
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    for (const sql of m.statements) db.exec(sql);
    record.run(m.version, m.description, new Date().toISOString());
  }
}
