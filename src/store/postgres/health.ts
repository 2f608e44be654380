/**
 * The Postgres store's health check (spec/POSTGRES.md §9): reachable, server version, schema version
 * against SCHEMA_VERSION, and whether this role could write (privileges, a standby, a read-only
 * default), all learnt from catalog queries: nothing is created, migrated or written.
 */
import { isDigest } from '../../canonical/sha256.js';
import type { HealthProblem, StoreHealth } from '../health.js';
import type { DbPool } from './driver.js';
import { translate } from './errors.js';
import { SCHEMA_VERSION, schemaState, type SchemaState, type Tables } from './schema.js';

export type { StoreHealth } from '../health.js';

export async function checkHealth(
  pool: DbPool | null,
  t: Tables,
  display: string,
  journal?: string,
  failure?: unknown,
): Promise<StoreHealth> {
  const problems: HealthProblem[] = [];
  const health: StoreHealth = {
    ok: false,
    backend: 'postgres',
    location: display,
    reachable: false,
    server: null,
    schema: { name: t.schema, version: null, supported: SCHEMA_VERSION },
    writable: false,
    durability: null,
    problems,
  };
  const fail = (e: unknown, doing: string): StoreHealth => {
    const err = translate(e, display, doing);
    problems.push({ code: err.code, message: err.message.slice(err.code.length + 2) });
    return health;
  };
  if (pool === null) return fail(failure, 'connecting');
  try {
    const r = await pool.query(
      `SELECT current_setting('server_version') AS version, pg_is_in_recovery() AS standby,
              current_setting('transaction_read_only') = 'on' AS read_only,
              has_database_privilege(current_database(), 'CREATE') AS can_create,
              current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS synchronous_commit,
              to_regnamespace($1) IS NOT NULL AS schema_exists`,
      [`"${t.schema}"`],
    );
    const row = r.rows[0]!;
    health.reachable = true;
    health.server = `PostgreSQL ${String(row.version)}`;
    const fsync = String(row.fsync);
    const sc = String(row.synchronous_commit);
    health.durability = {
      fsync,
      synchronous_commit: sc,
      warning:
        fsync !== 'on'
          ? 'fsync is off: a crash of the server machine can lose or corrupt acknowledged steps'
          : sc === 'off'
            ? 'synchronous_commit is off: a crash of the server can lose the last acknowledged steps (a suffix of the chain, never a hole)'
            : null,
    };
    const state = await schemaState(pool, t);
    health.schema.version = state.installed ? state.version : null;
    if (state.installed && state.version > SCHEMA_VERSION) {
      problems.push({
        code: 'SCHEMA_TOO_NEW',
        message: `schema "${t.schema}" is at version ${state.version}, written by a newer stepchain; this one reads and writes version ${SCHEMA_VERSION}`,
      });
    }
    const privileged = await privilegesHeld(
      pool,
      t,
      state,
      row.schema_exists === true,
      row.can_create === true,
      problems,
    );
    if (row.standby === true)
      problems.push({
        code: 'NOT_WRITABLE',
        message: 'the server is a standby (in recovery): it can be read, not written',
      });
    else if (row.read_only === true)
      problems.push({ code: 'NOT_WRITABLE', message: 'default_transaction_read_only is on for this role or database' });
    health.writable = privileged && row.standby !== true && row.read_only !== true;
    if (journal !== undefined) await checkJournal(pool, t, state, journal, display, health);
  } catch (e) {
    return fail(e, 'checking its health');
  }
  health.ok = problems.length === 0;
  return health;
}

/**
 * Whether this role could write: USAGE on the installed schema and the rights on its tables, or, with no
 * schema yet, the right to create it (in the schema if it exists, else in the database).
 */
async function privilegesHeld(
  pool: DbPool,
  t: Tables,
  state: SchemaState,
  schemaExists: boolean,
  canCreate: boolean,
  problems: HealthProblem[],
): Promise<boolean> {
  let privileged: boolean;
  if (state.installed) {
    const p = await pool.query<{ ok: boolean }>(
      `SELECT has_schema_privilege($1, 'USAGE') AND has_table_privilege($2, 'SELECT, INSERT, UPDATE')
          AND has_table_privilege($3, 'SELECT, INSERT') AND has_table_privilege($4, 'SELECT, INSERT') AS ok`,
      [t.schema, t.journals, t.steps, t.blobs],
    );
    privileged = p.rows[0]?.ok === true;
    if (!privileged)
      problems.push({
        code: 'NOT_WRITABLE',
        message: `this role lacks USAGE on schema "${t.schema}" or SELECT/INSERT/UPDATE on its tables`,
      });
  } else {
    privileged = schemaExists
      ? (await pool.query<{ ok: boolean }>(`SELECT has_schema_privilege($1, 'CREATE') AS ok`, [t.schema])).rows[0]
          ?.ok === true
      : canCreate;
    if (!privileged)
      problems.push({
        code: 'NOT_WRITABLE',
        message: `schema "${t.schema}" is not installed and this role may not create it (the first writer creates it)`,
      });
  }
  return privileged;
}

/** The journal asked about: found or not, and its head as the journals table records it. */
async function checkJournal(
  pool: DbPool,
  t: Tables,
  state: SchemaState,
  journal: string,
  display: string,
  health: StoreHealth,
): Promise<void> {
  health.journal = { id: journal, found: false, head: null };
  if (state.installed && state.version <= SCHEMA_VERSION) {
    const j = await pool.query<{ head_seq: string; head_hash: string }>(
      `SELECT head_seq, head_hash FROM ${t.journals} WHERE id = $1`,
      [journal],
    );
    const h = j.rows[0];
    if (h !== undefined) {
      const seq = Number(h.head_seq);
      health.journal = {
        id: journal,
        found: true,
        head: seq >= 0 && isDigest(h.head_hash) ? { seq, step_hash: h.head_hash } : null,
      };
    }
  }
  if (!health.journal.found)
    health.problems.push({ code: 'JOURNAL_NOT_FOUND', message: `no journal ${JSON.stringify(journal)} in ${display}` });
}
