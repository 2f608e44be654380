/**
 * The store's tables and their versioned migrations (spec/POSTGRES.md §4, §5). Writers bring the schema up
 * to SCHEMA_VERSION on first use, under a transaction-scoped advisory lock and inside one transaction, so
 * running the migration twice, or from many processes at once, applies each version exactly once. Readers
 * never migrate. A schema newer than this version is SCHEMA_TOO_NEW: neither read nor written.
 */
import { StoreError } from '../errors.js';
import type { DbClient, DbPool } from './driver.js';
import { translate } from './errors.js';

/** The schema version this implementation reads and writes. */
export const SCHEMA_VERSION = 3;
/** The Postgres schema (namespace) holding the tables when the caller names none. */
export const DEFAULT_SCHEMA = 'stepchain';

const SCHEMA_RE = /^[a-z_][a-z0-9_]{0,62}$/;

/** Fully quoted table names of one store. */
export interface Tables {
  schema: string;
  journals: string;
  steps: string;
  blobs: string;
  migrations: string;
  /** Version 2: the Merkle tree's state, its tiles, and the checkpoints a journal signed (§4.5). */
  treeState: string;
  treeTiles: string;
  checkpoints: string;
  /** Version 3: each run journal's saved run state (§4.2). */
  runState: string;
}

/** Checks a schema name (lowercase, unquoted-identifier form, at most 63 bytes) and quotes its tables. */
export function tablesIn(schema: string): Tables {
  if (typeof schema !== 'string' || !SCHEMA_RE.test(schema)) {
    throw new StoreError(
      'OPTION_INVALID',
      `schema ${JSON.stringify(schema)} must be 1–63 characters from [a-z0-9_], not starting with a digit`,
    );
  }
  const q = `"${schema}"`;
  return {
    schema,
    journals: `${q}.journals`,
    steps: `${q}.steps`,
    blobs: `${q}.blobs`,
    migrations: `${q}.migrations`,
    treeState: `${q}.tree_state`,
    treeTiles: `${q}.tree_tiles`,
    checkpoints: `${q}.checkpoints`,
    runState: `${q}.run_state`,
  };
}

interface Migration {
  version: number;
  description: string;
  statements(t: Tables): string[];
}

/** Every version, in order. A new version appends an entry; an applied entry never changes. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'journals (with the head row), steps, blobs',
    statements: (t) => [
      // One row per journal. meta is the journal's metadata exactly as the file store's journal.json holds
      // it; the head columns are the committed tail, updated in the same transaction as the steps, and the
      // row's lock is what serializes writers (§6). fillfactor leaves room for HOT updates of the head.
      `CREATE TABLE ${t.journals} (
        key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE CHECK (id ~ '^[A-Za-z0-9_.-]{1,200}$'),
        meta text NOT NULL,
        head_seq bigint NOT NULL CHECK (head_seq >= -1),
        head_hash text NOT NULL,
        bucket_first bigint NOT NULL CHECK (bucket_first >= 0),
        bucket_size bigint NOT NULL CHECK (bucket_size >= 0),
        created_at timestamptz NOT NULL DEFAULT now()
      ) WITH (fillfactor = 50)`,
      // One row per step: the stored line, byte for byte, and the bucket the file store would put it in.
      `CREATE TABLE ${t.steps} (
        journal bigint NOT NULL REFERENCES ${t.journals} (key),
        seq bigint NOT NULL CHECK (seq >= 0),
        bucket bigint NOT NULL CHECK (bucket >= 0 AND bucket <= seq),
        step_id text NOT NULL,
        line text NOT NULL,
        PRIMARY KEY (journal, seq)
      )`,
      // The idempotency lookup (FILE-STORE.md §10): a retry's step_id among the last W steps.
      `CREATE INDEX steps_step_id ON ${t.steps} (journal, step_id)`,
      `CREATE TABLE ${t.blobs} (
        journal bigint NOT NULL REFERENCES ${t.journals} (key),
        digest text NOT NULL CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
        bytes bytea NOT NULL,
        PRIMARY KEY (journal, digest)
      )`,
    ],
  },
  {
    version: 2,
    description: 'the Merkle tree (tree_state, tree_tiles) and the checkpoints a journal signed',
    statements: (t) => [
      // Derived data (spec/PROOFS.md §5.2): the tree's state at `size` leaves, written in the same
      // transaction as the steps it covers, so the two never disagree; a journal without a row (made
      // before version 2, or a fork) gets one the first time it is written or checkpointed.
      `CREATE TABLE ${t.treeState} (
        journal bigint PRIMARY KEY REFERENCES ${t.journals} (key),
        size bigint NOT NULL CHECK (size >= 0),
        state text NOT NULL
      )`,
      // Tile level L (0–6): the hashes of the perfect subtrees of tree level 8·L, one row per hash.
      `CREATE TABLE ${t.treeTiles} (
        journal bigint NOT NULL REFERENCES ${t.journals} (key),
        tile_level smallint NOT NULL CHECK (tile_level BETWEEN 0 AND 6),
        idx bigint NOT NULL CHECK (idx >= 0),
        hash bytea NOT NULL CHECK (octet_length(hash) = 32),
        PRIMARY KEY (journal, tile_level, idx)
      )`,
      // Not derived: the log's record of what it signed (PROOFS.md §8.6). Never rebuilt, never updated.
      `CREATE TABLE ${t.checkpoints} (
        journal bigint NOT NULL REFERENCES ${t.journals} (key),
        origin text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        key_id bigint NOT NULL CHECK (key_id BETWEEN 0 AND 4294967295),
        note text NOT NULL,
        signed_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (journal, origin, size, key_id)
      )`,
    ],
  },
  {
    version: 3,
    description: "run_state: each run journal's saved run state, written with its steps",
    statements: (t) => [
      // Derived data (spec/POSTGRES.md §4.2): the run reader's state at the head, written in the same
      // transaction as the steps it folds; a journal without a row (made before version 3, or a fork) gets
      // one the first time it is appended to. status, pending and ended_at are what a listing reads.
      `CREATE TABLE ${t.runState} (
        journal bigint PRIMARY KEY REFERENCES ${t.journals} (key),
        seq bigint NOT NULL CHECK (seq >= 0),
        step_hash text NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
        pending integer NOT NULL CHECK (pending >= 0),
        ended_at text,
        state text NOT NULL
      )`,
    ],
  },
];

/** What a database holds: no store schema yet, or the version of the one it has. */
export type SchemaState = { installed: false } | { installed: true; version: number };

/** Reads the installed version without writing anything. */
export async function schemaState(db: DbPool | DbClient, t: Tables): Promise<SchemaState> {
  const found = await db.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [t.migrations]);
  if (found.rows[0]?.t == null) return { installed: false };
  const v = await db.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${t.migrations}`);
  const version = v.rows[0]?.v ?? 0;
  return { installed: true, version };
}

export function tooNew(version: number, t: Tables, server: string): StoreError {
  return new StoreError(
    'SCHEMA_TOO_NEW',
    `${server} schema "${t.schema}" is at version ${version}, written by a newer stepchain; this one reads and writes version ${SCHEMA_VERSION}`,
    {
      location: { file: server },
      hint: 'upgrade stepchain on this machine; the data is left untouched',
    },
  );
}

/**
 * Runs `work` on one connection in a transaction that first takes the migration's advisory lock on `schema`
 * (concurrent CREATE SCHEMA / CREATE TABLE IF NOT EXISTS race on the catalogs; the lock orders them), then
 * commits. On any failure: rolled back, the connection discarded, and `failed(error)` thrown.
 */
export async function underMigrationLock(
  pool: DbPool,
  schema: string,
  work: (client: DbClient) => Promise<void>,
  failed: (e: unknown) => unknown = (e) => e,
): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('stepchain:migrate'), hashtext($1))`, [schema]);
    await work(client);
    await client.query('COMMIT');
  } catch (e) {
    broken = true;
    await client.query('ROLLBACK').catch(() => {});
    throw failed(e);
  } finally {
    client.release(broken);
  }
}

/**
 * Brings the schema to SCHEMA_VERSION (writers only). Safe to run twice and from many processes at once:
 * the versions are re-read under a transaction-scoped advisory lock, every missing one is applied in
 * order with its row in `migrations`, and the transaction commits all of them or none.
 */
export async function migrate(pool: DbPool, t: Tables, server: string): Promise<void> {
  const state = await schemaState(pool, t);
  if (state.installed && state.version === SCHEMA_VERSION) return;
  if (state.installed && state.version > SCHEMA_VERSION) throw tooNew(state.version, t, server);
  await underMigrationLock(
    pool,
    t.schema,
    async (client) => {
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${t.schema}"`);
      await client.query(`CREATE TABLE IF NOT EXISTS ${t.migrations} (
      version integer PRIMARY KEY,
      description text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
      const now = await schemaState(client, t);
      const current = now.installed ? now.version : 0;
      if (current > SCHEMA_VERSION) throw tooNew(current, t, server);
      for (const m of MIGRATIONS) {
        if (m.version <= current) continue;
        for (const sql of m.statements(t)) await client.query(sql);
        await client.query(`INSERT INTO ${t.migrations} (version, description) VALUES ($1, $2)`, [
          m.version,
          m.description,
        ]);
      }
    },
    (e) => translate(e, server, `creating or migrating schema "${t.schema}"`),
  );
}

/** The server must keep text as UTF-8 bytes (lines are stored byte for byte) and be recent enough. */
export async function checkServer(ctx: { pool: DbPool; display: string }): Promise<void> {
  const r = await ctx.pool.query<{ encoding: string; version: number }>(
    `SELECT current_setting('server_encoding') AS encoding, current_setting('server_version_num')::int AS version`,
  );
  const row = r.rows[0]!;
  if (row.encoding !== 'UTF8') {
    throw new StoreError(
      'SERVER_ERROR',
      `${ctx.display}: the database's encoding is ${row.encoding}; the store keeps every line byte for byte as UTF-8 text and needs a UTF8 database`,
      {
        hint: "create the database with ENCODING 'UTF8'",
      },
    );
  }
  if (row.version < 120000) {
    throw new StoreError(
      'SERVER_ERROR',
      `${ctx.display}: PostgreSQL ${Math.floor(row.version / 10000)} is too old; the store needs 12 or later`,
    );
  }
}
