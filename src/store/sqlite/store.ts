/**
 * The SQLite store (spec/SQLITE.md): journals kept in one SQLite database file, written by any number of
 * processes on one machine, serialized by SQLite's own write lock (WAL mode). The same Store contract as
 * the file and Postgres stores and the Postgres store's structure: a head row per journal, steps, blobs,
 * the Merkle tree and checkpoints in tables created on first write and versioned (schema.ts).
 */
import { SqlitePartStore } from './parts.js';
import { resolve } from 'node:path';
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
import { copyPrefixRows } from '../rows/lines.js';
import { SqliteFile, type SqliteDurability } from './db.js';
import { checkHealth } from './health.js';
import { SqliteJournal, type SqliteContext } from './journal.js';
import {
  findJournal,
  insertBlobs,
  insertJournal,
  insertLines,
  listJournals,
  listRunMeta,
  setMeta,
  stmt,
  updateHead,
} from './sql.js';
import { verifySqliteJournal } from './verify.js';

export const DEFAULT_SQLITE_LOCK_TIMEOUT_MS = 20_000;
export const DEFAULT_SQLITE_IDEMPOTENCY_WINDOW = 10_000;

export interface SqliteStoreOptions {
  /**
   * What an acknowledged append survives (default 'always'), as the file store's modes (spec/SQLITE.md §9):
   * 'always' is PRAGMA synchronous = FULL (the WAL is fsynced at every commit), 'batch' is NORMAL (at WAL
   * checkpoints: an OS crash or power loss may lose the last commits, never a step in the middle), 'none' is OFF.
   */
  fsync?: SqliteDurability;
  /** How long an append waits for another process's write transaction on the file (default 20 s): LOCK_TIMEOUT. */
  lockTimeoutMs?: number;
  /** How many most recent steps an idempotent retry is recognized in (default 10,000), as in the other stores. */
  idempotencyWindow?: number;
  /** Follow every commit with the Merkle tree (default true); false defers it to the next checkpoint or proof. */
  merkleTree?: boolean;
  /** Defaults for `create`, as in the other stores: segment rotation size and blob threshold. */
  segmentBytes?: number;
  blobThreshold?: number;
}

export class SqliteStore implements Store<SqliteJournal>, StoreDiagnostics {
  readonly backend = 'sqlite';
  /** The database file, absolute. */
  readonly file: string;
  /** The store as people may see it: sqlite:<absolute path>. */
  readonly display: string;
  private readonly ctx: SqliteContext;
  private readonly defaults: JournalConfig;

  /** `file`: the database file (created, with its folder's -wal and -shm files, on first write). */
  constructor(file: string, options: SqliteStoreOptions = {}) {
    if (typeof file !== 'string' || file === '')
      throw new StoreError('OPTION_INVALID', 'SqliteStore takes the path of its database file');
    if (options === null || typeof options !== 'object')
      throw new StoreError('OPTION_INVALID', 'SqliteStore options must be an object');
    const fsync = options.fsync ?? 'always';
    if (fsync !== 'always' && fsync !== 'batch' && fsync !== 'none')
      throw new StoreError(
        'OPTION_INVALID',
        `fsync must be 'always', 'batch' or 'none' (got ${JSON.stringify(fsync)})`,
      );
    this.file = resolve(file);
    this.display = `sqlite:${this.file}`;
    const lockTimeoutMs = intOption(
      'lockTimeoutMs',
      options.lockTimeoutMs,
      DEFAULT_SQLITE_LOCK_TIMEOUT_MS,
      1,
      3_600_000,
    );
    this.ctx = {
      db: new SqliteFile(this.file, lockTimeoutMs, fsync),
      display: this.display,
      idempotencyWindow: intOption(
        'idempotencyWindow',
        options.idempotencyWindow,
        DEFAULT_SQLITE_IDEMPOTENCY_WINDOW,
        1,
        10_000_000,
      ),
      merkleTree: options.merkleTree !== false,
    };
    this.defaults = defaultConfig(options);
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

  async create(id: string, options: CreateOptions = {}): Promise<SqliteJournal> {
    assertJournalId(id);
    const config = journalConfig(options, this.defaults);
    const genesis = makeGenesis(options);
    const meta: JournalMeta = { format: STORE_FORMAT, genesis, config, lineage: null };
    const key = await this.ctx.db.write(`creating journal ${id}`, (db) =>
      insertJournal(db, id, serializeMeta(meta), genesisHash(genesis)),
    );
    if (key === null) throw this.taken(id);
    return new SqliteJournal(this.ctx, id, key, meta, false);
  }

  async open(id: string, options: OpenOptions = {}): Promise<SqliteJournal> {
    assertJournalId(id);
    const row = this.ctx.db.read(`opening journal ${id}`, (db) => findJournal(db, id));
    if (row === null) throw this.notFound(id);
    const meta = parseMeta(row.meta, `${this.display} journals (id ${id}) meta`);
    return new SqliteJournal(this.ctx, id, row.key, meta, options.readOnly === true);
  }

  /** Without a filter: every journal id, sorted. With one: the matching run journals' ids, in chronological order. */
  async list(filter?: RunFilter): Promise<string[]> {
    if (filter !== undefined) return (await this.runs(filter)).map((r) => r.id);
    return this.ctx.db.read('listing journals', listJournals) ?? [];
  }

  /**
   * The run journals (FORMAT §11.1) matching `filter`, in chronological order, each with its progress: one
   * statement over the journals and run_state tables (spec/SQLITE.md §4.2). A run whose row is not at its
   * head (written before schema version 2, or a fork not yet appended to) is folded from its records.
   */
  async runs(filter: RunFilter = {}): Promise<RunEntry[]> {
    const rows = this.ctx.db.read('listing runs', (db) => listRunMeta(db, filter.status)) ?? [];
    return runsOfRows(this, rows, (id) => `${this.display} journals (id ${id}) meta`, filter);
  }

  /** Verifies journal `id` read-only without opening it: metadata that does not parse is reported, not thrown. */
  async verify(id: string, options: JournalVerifyOptions = {}): Promise<JournalReport> {
    assertJournalId(id);
    return verifySqliteJournal(this.ctx, id, options);
  }

  /**
   * A new journal whose steps 0..fromStep are byte-identical to the parent's, built in one transaction: the
   * row, the copied lines (verified as they stream past) and blobs, then the lineage and the head. A failure
   * anywhere leaves no journal. The write lock is held for the copy.
   */
  async fork(parent: Journal, options: ForkOptions): Promise<SqliteJournal> {
    if (options === null || typeof options !== 'object')
      throw new StoreError('OPTION_INVALID', 'fork takes { fromStep, to }');
    const to = options.to;
    assertJournalId(to, 'fork target id');
    const config: JournalConfig = {
      blobThreshold: parent.config.blobThreshold,
      segmentBytes: parent.config.segmentBytes,
    };
    const draft: JournalMeta = { format: STORE_FORMAT, genesis: parent.genesis, config, lineage: null };
    // The last look and the commit (ERASURE.md §4.1): a parent in this database is held by the fork's own
    // transaction (the write lock); any other is held by its own hold around them, so that no erase records
    // meanwhile (a hold of another connection on this file would wait for this transaction's lock).
    const ownFile = parent instanceof SqliteJournal && parent.inFile(this.ctx.db.file);
    let finish: (() => Promise<void>) | null = null;
    const committing = async (commit: () => void): Promise<void> => {
      const last = async (): Promise<void> => {
        await finish?.();
        commit();
      };
      await (ownFile ? last() : withAppendsHeld(parent, last));
    };
    const fork = async (): Promise<{ key: number; meta: JournalMeta }> =>
      this.ctx.db.write(
        `forking journal ${parent.id} into ${to}`,
        async (db) => {
          const key = insertJournal(db, to, serializeMeta(draft), genesisHash(parent.genesis));
          if (key === null) throw this.taken(to);
          const copied = await copyPrefixRows(parent, options.fromStep, config.segmentBytes, {
            insert: (lines) => insertLines(db, key, lines),
            blob: (digest, bytes) => insertBlobs(db, key, [{ digest, bytes }]),
            // A v3 journal's parts, in the fork's own transaction (PARTS.md §7).
            part: (address, bytes) => new SqlitePartStore(db, to).put([{ address, bytes, indexKey: '' }]),
          });
          const { cursor } = copied;
          const lineage = copied.lineage;
          const meta: JournalMeta = { ...draft, lineage };
          finish = async () => {
            // The last look for erasure records, inside the fork's transaction (store/fork.ts confirmUnerased).
            await confirmUnerased(parent, options.fromStep, copied.checkedTo);
            updateHead(db, key, { seq: lineage.from_step, hash: lineage.parent_step_hash, cursor });
            setMeta(db, key, serializeMeta(meta));
          };
          return { key, meta };
        },
        committing,
      );
    // A fork that meets an erase between its record and its rewrite waits for it (record/v3/erasure-pending.ts).
    const made = await afterLiveErasure(fork);
    return new SqliteJournal(this.ctx, to, made.key, made.meta, false);
  }

  /**
   * Removes journal `id` whole (spec/FILE-STORE.md §15) in one transaction: a writer mid-commit finishes
   * before it (the write lock), and the next append fails (JOURNAL_NOT_FOUND); its lines, blobs, parts, tree
   * and row go together or not at all.
   */
  async remove(id: string): Promise<void> {
    assertJournalId(id);
    await this.ctx.db.write(`removing journal ${id}`, (db) => {
      const row = findJournal(db, id);
      if (row === null) throw this.notFound(id);
      for (const table of ['run_state', 'tree_tiles', 'tree_state', 'checkpoints', 'steps', 'blobs'])
        stmt(db, `DELETE FROM ${table} WHERE journal = ?`).run(row.key);
      // A v3 journal's parts, index and part key (§4.3), keyed by id: a journal made again under the id starts without them.
      for (const table of ['parts', 'part_index', 'part_keys']) {
        if (db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?`).get(table) !== undefined)
          db.prepare(`DELETE FROM ${table} WHERE journal = ?`).run(id);
      }
      stmt(db, 'DELETE FROM journals WHERE key = ?').run(row.key);
    });
  }

  /** The file, its schema version, whether it could be written, the durability mode (and journal `journal`'s head): read only. */
  async health(journal?: string): Promise<StoreHealth> {
    return checkHealth(this.file, this.display, journal);
  }

  /** Closes the store's connections once its transactions have ended. Journals opened from it stop working. */
  async close(): Promise<void> {
    await this.ctx.db.close();
  }
}
