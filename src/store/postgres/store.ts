/**
 * The Postgres store (spec/POSTGRES.md): journals kept in one schema of a PostgreSQL database, written by
 * any number of processes on any number of machines, serialized by the database itself. The same Store
 * contract as the file store; the tables are created on first write and versioned (schema.ts).
 */
import { PostgresPartStore } from './parts.js';
import { genesisHash, makeGenesis } from '../../record/formats.js';
import { defaultConfig, journalConfig } from '../config.js';
import { StoreError } from '../errors.js';
import { confirmUnerased } from '../fork.js';
import { withAppendsHeld } from '../../chain/source.js';
import { afterLiveErasure } from '../../record/v3/erasure-pending.js';
import type { StoreDiagnostics, StoreHealth } from '../health.js';
import { assertJournalId, intOption } from '../ids.js';
import { STORE_FORMAT, parseMeta, serializeMeta, type JournalMeta } from '../meta.js';
import type { RunEntry, RunFilter } from '../runs.js';
import { copyPrefixRows } from '../rows/lines.js';
import { runsOfRows } from '../rows/run-state.js';
import type {
  CreateOptions,
  ForkOptions,
  Journal,
  JournalConfig,
  JournalReport,
  JournalVerifyOptions,
  OpenOptions,
  Store,
} from '../types.js';
import { createPool, guardClients, type ConnectionConfig, type DbClient, type DbPool } from './driver.js';
import { sqlState, translate } from './errors.js';
import { checkHealth } from './health.js';
import { PostgresJournal } from './journal.js';
import { parsePostgresLocation } from './location.js';
import { IntakeHub } from './intake.js';
import { DEFAULT_SCHEMA, migrate, schemaState, tablesIn, tooNew, SCHEMA_VERSION, type Tables } from './schema.js';
import { checkServer } from './schema.js';
import { findJournal, insertBlobs, insertJournal, insertLines, listJournals, listRunMeta, updateHead } from './sql.js';
import { verifyJournalRows } from './verify.js';
import { holdingJournal, holdsFor, type ConnectionHolds } from './holds.js';

export const DEFAULT_PG_LOCK_TIMEOUT_MS = 20_000;
export const DEFAULT_PG_IDLE_TIMEOUT_MS = 10_000;
export const DEFAULT_PG_IDEMPOTENCY_WINDOW = 10_000;

export interface PostgresStoreOptions {
  /**
   * A libpq connection URI (postgres://user@host:port/db, optionally ?schema=name). What it leaves out
   * comes from the libpq environment: PGPASSWORD, ~/.pgpass, PGHOST, PGPORT, PGUSER, PGDATABASE, PGSSLMODE.
   */
  connectionString?: string;
  /** Further settings for the pool the store creates (host, port, ssl, max, connectionTimeoutMillis…). */
  connection?: ConnectionConfig;
  /** A pool the caller owns (a pg.Pool); the store uses it and never ends it. At least 2 connections. */
  pool?: DbPool;
  /** The schema holding the store's tables (default "stepchain"; or ?schema= in the URI). */
  schema?: string;
  /** How many most recent steps an idempotent retry is recognized in (default 10,000), as in the file store. */
  idempotencyWindow?: number;
  /** How long an append waits for another writer's transaction on the same journal (default 20 s): LOCK_TIMEOUT. */
  lockTimeoutMs?: number;
  /**
   * A writer's transaction idle for this long is ended by the server (default 10 s), so a writer that
   * stopped mid-transaction (a frozen VM, a cut network) holds its journal no longer than this.
   */
  idleTimeoutMs?: number;
  /**
   * Follow every commit with the Merkle tree (default true), in the commit's transaction; false defers it
   * to the next checkpoint or proof (as FileJournalOptions.merkleTree). For measuring the tree's cost.
   */
  merkleTree?: boolean;
  /** Group commit across processes through the intake table (§6.6); opt-in (default false) until its hardening has been attacked again: a role that can write the intake table could make an honest writer chain rows it planted. False: each commit takes the head row itself. */
  intake?: boolean;
  /** Defaults for `create`, as in the file store: segment rotation size and blob threshold. */
  segmentBytes?: number;
  blobThreshold?: number;
}

/** What journals and the verifier share: the pool, the tables, and the writers' settings. */
export interface StoreContext {
  pool: DbPool;
  tables: Tables;
  /** The server as people may see it (password masked). */
  display: string;
  lockTimeoutMs: number;
  idleTimeoutMs: number;
  idempotencyWindow: number;
  /** Whether commits feed the tree (PostgresStoreOptions.merkleTree). */
  merkleTree: boolean;
  /** The intake (spec/POSTGRES.md §6.6), null when PostgresStoreOptions.intake is false. */
  intake: IntakeHub | null;
  /** The operations that keep a connection while they need another, at most the pool's size less one at once (holds.ts). */
  holds: ConnectionHolds;
}

export class PostgresStore implements Store<PostgresJournal>, StoreDiagnostics {
  readonly backend = 'postgres';
  /** The server and schema, password masked. */
  readonly display: string;
  readonly tables: Tables;
  private readonly settings: Omit<StoreContext, 'pool' | 'tables' | 'display' | 'intake'>;
  private readonly useIntake: boolean;
  private hub: IntakeHub | null = null;
  private readonly defaults: JournalConfig;
  private readonly ownPool: boolean;
  private readonly poolConfig: ConnectionConfig;
  private pool: Promise<DbPool> | null;
  private readyFor: { read: Promise<StoreContext | null> | null; write: Promise<StoreContext> | null } = {
    read: null,
    write: null,
  };
  private closed = false;

  constructor(options: string | PostgresStoreOptions) {
    const o: PostgresStoreOptions = typeof options === 'string' ? { connectionString: options } : (options ?? {});
    if (o === null || typeof o !== 'object')
      throw new StoreError('OPTION_INVALID', 'PostgresStore takes a connection URI or an options object');
    let schema = o.schema;
    let display = "postgres (the caller's pool)";
    const config: ConnectionConfig = { ...(o.connection ?? {}) };
    if (o.connectionString !== undefined) {
      const loc = parsePostgresLocation(o.connectionString);
      if (loc.journal !== undefined) {
        throw new StoreError(
          'OPTION_INVALID',
          `${loc.display}: a store is a database and a schema; name the journal in create() or open(), not in the store's URI`,
        );
      }
      if (loc.schema !== undefined && schema !== undefined && loc.schema !== schema) {
        throw new StoreError('OPTION_INVALID', `${loc.display} names schema ${loc.schema}, the options name ${schema}`);
      }
      schema ??= loc.schema;
      config.connectionString = loc.connectionString;
      display = loc.display;
    } else if (o.pool === undefined) {
      const c = o.connection ?? {};
      display = `postgres://${String(c.user ?? process.env.PGUSER ?? '')}@${String(c.host ?? process.env.PGHOST ?? 'localhost')}:${String(c.port ?? process.env.PGPORT ?? 5432)}/${String(c.database ?? process.env.PGDATABASE ?? '')}`;
    }
    this.tables = tablesIn(schema ?? DEFAULT_SCHEMA);
    this.display = `${display} (schema ${this.tables.schema})`;
    if (config.max !== undefined) intOption('connection.max', config.max, 10, 2, 10_000);
    // A hold of a journal's appends keeps a connection while its last look reads on another (outsider 15).
    const callersMax = (o.pool as { options?: { max?: unknown } } | undefined)?.options?.max;
    if (typeof callersMax === 'number') intOption('pool.options.max', callersMax, 10, 2, 10_000);
    this.poolConfig = config;
    this.ownPool = o.pool === undefined;
    this.pool = o.pool === undefined ? null : Promise.resolve(guardClients(o.pool));
    this.settings = {
      idempotencyWindow: intOption(
        'idempotencyWindow',
        o.idempotencyWindow,
        DEFAULT_PG_IDEMPOTENCY_WINDOW,
        1,
        10_000_000,
      ),
      merkleTree: o.merkleTree !== false,
      lockTimeoutMs: intOption('lockTimeoutMs', o.lockTimeoutMs, DEFAULT_PG_LOCK_TIMEOUT_MS, 1, 3_600_000),
      idleTimeoutMs: intOption('idleTimeoutMs', o.idleTimeoutMs, DEFAULT_PG_IDLE_TIMEOUT_MS, 100, 3_600_000),
      holds: holdsFor(typeof callersMax === 'number' ? callersMax : config.max, this.display),
    };
    this.defaults = defaultConfig(o);
    this.useIntake = o.intake === true;
  }

  private getPool(): Promise<DbPool> {
    if (this.closed)
      return Promise.reject(
        new StoreError('CLOSED', `the store for ${this.display} is closed`, { hint: 'make a new PostgresStore' }),
      );
    this.pool ??= createPool(this.poolConfig).then(guardClients);
    return this.pool;
  }

  private async context(): Promise<StoreContext> {
    const pool = await this.getPool();
    if (this.useIntake) this.hub ??= new IntakeHub(pool, this.tables, this.ownPool ? this.poolConfig : null);
    return { pool, tables: this.tables, display: this.display, ...this.settings, intake: this.hub };
  }

  /**
   * For writers: the schema at SCHEMA_VERSION, created or migrated if needed (once per store). A failed
   * attempt is not remembered, so the next call tries again (the server may be back).
   */
  private ready(mode: 'write'): Promise<StoreContext>;
  private ready(mode: 'read'): Promise<StoreContext | null>;
  private ready(mode: 'read' | 'write'): Promise<StoreContext | null> {
    if (mode === 'write') {
      this.readyFor.write ??= this.context().then(async (ctx) => {
        try {
          await checkServer(ctx);
        } catch (e) {
          throw translate(e, this.display, 'connecting');
        }
        await migrate(ctx.pool, ctx.tables, this.display);
        return ctx;
      });
      const p = this.readyFor.write;
      p.catch(() => {
        if (this.readyFor.write === p) this.readyFor.write = null;
      });
      return p;
    }
    if (this.readyFor.write !== null) return this.readyFor.write.catch(() => this.ready('read'));
    // Readers never migrate: an absent schema is an empty store (null), a newer one SCHEMA_TOO_NEW.
    this.readyFor.read ??= this.context().then(async (ctx) => {
      let state;
      try {
        await checkServer(ctx);
        state = await schemaState(ctx.pool, ctx.tables);
      } catch (e) {
        throw translate(e, this.display, 'connecting');
      }
      if (!state.installed) return null;
      if (state.version > SCHEMA_VERSION) throw tooNew(state.version, ctx.tables, this.display);
      return ctx;
    });
    const p = this.readyFor.read;
    // Neither a failure nor "not installed yet" is remembered: another process may create the schema.
    p.then(
      (ctx) => {
        if (ctx === null && this.readyFor.read === p) this.readyFor.read = null;
      },
      () => {
        if (this.readyFor.read === p) this.readyFor.read = null;
      },
    );
    return p;
  }

  private taken(id: string): StoreError {
    return new StoreError('JOURNAL_EXISTS', `journal ${JSON.stringify(id)} already exists in ${this.display}`, {
      hint: 'open it, or choose another id',
    });
  }

  private notFound(id: string): StoreError {
    return new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in ${this.display}`, {
      hint: 'create it first, or check the id with list()',
    });
  }

  async create(id: string, options: CreateOptions = {}): Promise<PostgresJournal> {
    assertJournalId(id);
    const config = journalConfig(options, this.defaults);
    const genesis = makeGenesis(options);
    const ctx = await this.ready('write');
    const meta: JournalMeta = { format: STORE_FORMAT, genesis, config, lineage: null };
    const key = await this.withClient(ctx, `creating journal ${id}`, (client) =>
      insertJournal(client, ctx.tables, id, serializeMeta(meta), genesisHash(genesis)),
    );
    if (key === null) throw this.taken(id);
    return new PostgresJournal(ctx, id, key, meta, false);
  }

  async open(id: string, options: OpenOptions = {}): Promise<PostgresJournal> {
    assertJournalId(id);
    const readOnly = options.readOnly === true;
    const ctx = readOnly ? await this.ready('read') : await this.ready('write');
    if (ctx === null) throw this.notFound(id);
    let row;
    try {
      row = await findJournal(ctx.pool, ctx.tables, id);
    } catch (e) {
      throw translate(e, this.display, `opening journal ${id}`);
    }
    if (row === null) throw this.notFound(id);
    const meta = parseMeta(row.meta, `${ctx.tables.schema}.journals (id ${id}) meta`);
    return new PostgresJournal(ctx, id, row.key, meta, readOnly);
  }

  /** Without a filter: every journal id, sorted. With one: the matching run journals' ids, in chronological order. */
  async list(filter?: RunFilter): Promise<string[]> {
    if (filter !== undefined) return (await this.runs(filter)).map((r) => r.id);
    const ctx = await this.ready('read');
    if (ctx === null) return [];
    try {
      return await listJournals(ctx.pool, ctx.tables);
    } catch (e) {
      throw translate(e, this.display, 'listing journals');
    }
  }

  /**
   * The run journals (FORMAT §11.1) matching `filter`, in chronological order, each with its progress: one
   * statement over the journals and run_state tables (spec/POSTGRES.md §4.2). A run whose row is not at its
   * head (written before schema version 3, or a fork not yet appended to) is folded from its records.
   */
  async runs(filter: RunFilter = {}): Promise<RunEntry[]> {
    const ctx = await this.ready('read');
    if (ctx === null) return [];
    let rows;
    try {
      // A schema from before version 3 (a reader never migrates) has no run_state: 42P01, undefined table.
      rows = await listRunMeta(ctx.pool, ctx.tables, filter.status, true).catch((e: unknown) => {
        if (sqlState(e) === '42P01') return listRunMeta(ctx.pool, ctx.tables, filter.status, false);
        throw e;
      });
    } catch (e) {
      throw translate(e, this.display, 'listing runs');
    }
    return runsOfRows(this, rows, (id) => `${ctx.tables.schema}.journals (id ${id}) meta`, filter);
  }

  /**
   * Verifies journal `id` read-only without opening it: metadata that does not parse is reported as
   * JOURNAL_INVALID, like every other defect, rather than thrown.
   */
  async verify(id: string, options: JournalVerifyOptions = {}): Promise<JournalReport> {
    assertJournalId(id);
    const ctx = await this.ready('read');
    if (ctx === null) throw this.notFound(id);
    return verifyJournalRows(ctx, id, options);
  }

  /**
   * A new journal whose steps 0..fromStep are byte-identical to the parent's, built in one transaction:
   * the row, the copied lines (verified as they stream past) and blobs, then the lineage and the head. A
   * failure anywhere leaves no journal.
   */
  async fork(parent: Journal, options: ForkOptions): Promise<PostgresJournal> {
    if (options === null || typeof options !== 'object')
      throw new StoreError('OPTION_INVALID', 'fork takes { fromStep, to }');
    const to = options.to;
    assertJournalId(to, 'fork target id');
    const ctx = await this.ready('write');
    const config: JournalConfig = {
      blobThreshold: parent.config.blobThreshold,
      segmentBytes: parent.config.segmentBytes,
    };
    const draft: JournalMeta = { format: STORE_FORMAT, genesis: parent.genesis, config, lineage: null };
    const fork = async (): Promise<{ key: number; meta: JournalMeta }> =>
      this.withClient(ctx, `forking journal ${parent.id} into ${to}`, async (client) => {
        await client.query('BEGIN');
        try {
          const key = await insertJournal(client, ctx.tables, to, serializeMeta(draft), genesisHash(parent.genesis));
          if (key === null) throw this.taken(to);
          const copied = await copyPrefixRows(parent, options.fromStep, config.segmentBytes, {
            insert: (lines) => insertLines(client, ctx.tables, key, lines),
            blob: (digest, bytes) => insertBlobs(client, ctx.tables, key, [{ digest, bytes }]),
            // A v3 journal's parts (PARTS.md §7): committed before the fork; one left by a failed fork is unreferenced.
            part: (address, bytes) =>
              new PostgresPartStore(ctx.pool, ctx.tables.schema, to, ctx.display).put([
                { address, bytes, indexKey: '' },
              ]),
          });
          const { cursor } = copied;
          const lineage = copied.lineage;
          const meta: JournalMeta = { ...draft, lineage };
          await updateHead(client, ctx.tables, key, { seq: lineage.from_step, hash: lineage.parent_step_hash, cursor });
          await client.query(`UPDATE ${ctx.tables.journals} SET meta = $2 WHERE key = $1`, [key, serializeMeta(meta)]);
          // The last look for erasure records, then the commit, with the parent's appends held when it can
          // hold them (store/fork.ts confirmUnerased).
          const commit = async (): Promise<void> => {
            await confirmUnerased(parent, options.fromStep, copied.checkedTo);
            await client.query('COMMIT');
          };
          // A parent in this database is held by the fork's own transaction (its head row's lock, which every
          // append takes), whichever store opened it; any other by its own hold around the look and the COMMIT.
          const lockedIn =
            parent instanceof PostgresJournal &&
            (await holdingJournal(parent.holdKey, `forking journal ${parent.id}`, ctx.lockTimeoutMs, async () => {
              if (!(await parent.lockIn(client, ctx))) return false;
              await commit();
              return true;
            }));
          if (!lockedIn) await withAppendsHeld(parent, commit);
          return { key, meta };
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          throw e;
        }
      });
    // A fork that meets an erase between its record and its rewrite waits for it (record/v3/erasure-pending.ts).
    const made = await afterLiveErasure(() =>
      ctx.holds.run(`forking journal ${parent.id} into ${to}`, ctx.lockTimeoutMs, fork),
    );
    return new PostgresJournal(ctx, to, made.key, made.meta, false);
  }

  /**
   * Removes journal `id` whole (spec/FILE-STORE.md §15) in one transaction: its head row is locked first, so
   * a writer mid-commit finishes before it and the next append fails (JOURNAL_NOT_FOUND); its lines, blobs,
   * parts and row go together or not at all.
   */
  async remove(id: string): Promise<void> {
    assertJournalId(id);
    const ctx = await this.ready('write');
    await this.withClient(ctx, `removing journal ${id}`, async (client) => {
      await client.query('BEGIN');
      try {
        const row = await client.query<{ key: string }>(
          `SELECT key FROM ${ctx.tables.journals} WHERE id = $1 FOR UPDATE`,
          [id],
        );
        if (row.rows.length === 0) throw this.notFound(id);
        const key = row.rows[0]!.key;
        await client.query(`DELETE FROM ${ctx.tables.runState} WHERE journal = $1`, [key]);
        await client.query(`DELETE FROM ${ctx.tables.treeTiles} WHERE journal = $1`, [key]);
        await client.query(`DELETE FROM ${ctx.tables.treeState} WHERE journal = $1`, [key]);
        await client.query(`DELETE FROM ${ctx.tables.checkpoints} WHERE journal = $1`, [key]);
        await client.query(`DELETE FROM ${ctx.tables.steps} WHERE journal = $1`, [key]);
        await client.query(`DELETE FROM ${ctx.tables.blobs} WHERE journal = $1`, [key]);
        // A v3 journal's parts, index and part key (§4.3), keyed by id: a journal made again under the id
        // starts without them; and its intake rows (§6.6), keyed by the row's key.
        const rows = [
          ['parts', id],
          ['part_index', id],
          ['part_keys', id],
          ['intake', key],
        ] as const;
        for (const [table, of] of rows) {
          const name = `"${ctx.tables.schema}".${table}`;
          const found = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [name]);
          if (found.rows[0]?.t != null) await client.query(`DELETE FROM ${name} WHERE journal = $1`, [of]);
        }
        await client.query(`DELETE FROM ${ctx.tables.journals} WHERE key = $1`, [key]);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      }
    });
  }

  /**
   * Reachability, schema version and writability, read without writing anything (no migration either):
   * what `stepchain doctor` prints. Never throws for a server problem: it reports it.
   */
  async health(journal?: string): Promise<StoreHealth> {
    let pool: DbPool | null = null;
    try {
      pool = await this.getPool();
    } catch (e) {
      return checkHealth(null, this.tables, this.display, journal, e);
    }
    return checkHealth(pool, this.tables, this.display, journal);
  }

  /** Ends the store's own pool (a caller's pool is left alone). Journals opened from it stop working. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pool = this.pool;
    this.pool = null;
    await this.hub?.close();
    if (pool !== null && this.ownPool) await (await pool).end();
  }

  /** Runs `fn` on one connection; a driver error becomes a coded StoreError naming what was being done. */
  private async withClient<T>(ctx: StoreContext, doing: string, fn: (client: DbClient) => Promise<T>): Promise<T> {
    let client: DbClient;
    try {
      client = await ctx.pool.connect();
    } catch (e) {
      throw translate(e, this.display, doing);
    }
    let failed = false;
    try {
      return await fn(client);
    } catch (e) {
      failed = !(e instanceof StoreError);
      throw translate(e, this.display, doing);
    } finally {
      client.release(failed);
    }
  }
}
