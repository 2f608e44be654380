/**
 * One store's database file (spec/SQLITE.md §6): a writer connection and a reader connection, opened on
 * first use. Writes are transactions begun with BEGIN IMMEDIATE, so a writer takes SQLite's write lock
 * before it reads the head row and never has to upgrade a read lock (which fails, SQLITE_BUSY, under
 * contention); within the process they are queued, so one connection never starts a second transaction;
 * between processes, a BEGIN that finds the lock taken is retried with a growing pause (1 ms to 50 ms,
 * SQLite's own busy handler's steps) until the lock timeout, on the event loop instead of the driver's
 * blocking busy wait, so the process keeps serving its other work meanwhile. Reads go through the reader
 * connection outside any transaction: in WAL mode each statement sees the last committed state and never
 * waits for a writer.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { StoreError } from '../errors.js';
import { connect, type Connection } from './driver.js';
import { StepchainError } from '../../errors.js';
import { cannotWrite, isBusy, sqliteCode, translate } from './errors.js';
import { APPLICATION_ID, installedVersion, migrate, SQLITE_SCHEMA_VERSION, tooNew } from './schema.js';

/** PRAGMA synchronous for each durability mode (spec/SQLITE.md §9). */
export const SYNCHRONOUS = { always: 'FULL', batch: 'NORMAL', none: 'OFF' } as const;
export type SqliteDurability = keyof typeof SYNCHRONOUS;

const PAUSES_MS = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50];

/**
 * A turn of the event loop (a macrotask). The driver is synchronous, so a transaction's work and every promise
 * around it run without one: a loop of small streamed batches, or one long batch, kept this process's timers and
 * I/O waiting for as long as it ran (8 s of back-to-back `appendStream` calls, and a 100 ms timer never fired;
 * outsider J).
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class SqliteFile {
  private writerConn: Connection | null = null;
  private readerConn: Connection | null = null;
  /** The tail of the queue of write transactions in this process. */
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(
    /** The database file, absolute. */
    readonly file: string,
    private readonly lockTimeoutMs: number,
    private readonly durability: SqliteDurability,
  ) {}

  private open(): void {
    if (this.closed)
      throw new StoreError('CLOSED', `the store for ${this.file} is closed`, { hint: 'make a new SqliteStore' });
  }

  /** Whether `other` names this database file (the same path, or a link to it: the same device and inode). */
  isFile(other: string): boolean {
    if (other === this.file) return true;
    try {
      const [a, b] = [statSync(this.file), statSync(other)];
      return a.dev === b.dev && a.ino === b.ino;
    } catch {
      return false;
    }
  }

  /** The writer connection: the file created if absent, WAL, the durability mode, and the schema migrated (once). */
  private writer(): Connection {
    if (this.writerConn !== null) return this.writerConn;
    let db: Connection | null = null;
    try {
      // The first writer creates the file and, as the file store creates its root, the folder it sits in:
      // SQLite itself refuses a path whose folder is missing.
      mkdirSync(dirname(this.file), { recursive: true });
      // Opening waits (blocking) for another process's migration or WAL recovery, once per store.
      db = connect(this.file, { timeout: this.lockTimeoutMs });
      db.pragma('journal_mode = WAL');
      db.pragma(`synchronous = ${SYNCHRONOUS[this.durability]}`);
      db.pragma('foreign_keys = ON');
      // Freed and moved cell space is overwritten with zeros, not left in the pages: a row an erasure
      // rewrote (spec/ERASURE.md §6.1), or a copy a page rearrangement left behind, is then nowhere in the file.
      db.pragma('secure_delete = ON');
      const version = installedVersion(db);
      if (version !== null && version > SQLITE_SCHEMA_VERSION) throw tooNew(version, this.file);
      if (version !== SQLITE_SCHEMA_VERSION) {
        db.exec('BEGIN IMMEDIATE');
        try {
          migrate(db, this.file);
          db.pragma(`application_id = ${APPLICATION_ID}`);
          db.exec('COMMIT');
        } catch (e) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw e;
        }
      }
      // From here on a taken lock is waited for by write(), on the event loop.
      db.pragma('busy_timeout = 0');
    } catch (e) {
      db?.close();
      throw translate(e, this.file, 'opening the database for writing');
    }
    this.writerConn = db;
    return db;
  }

  /**
   * The reader connection, or null while the file holds no store (readers never create or migrate it; the
   * absence is not remembered: a writer may create it). query_only: nothing can write through it.
   */
  reader(): Connection | null {
    this.open();
    if (this.readerConn !== null) return this.readerConn;
    if (!existsSync(this.file)) return null;
    let db: Connection | null = null;
    try {
      db = connect(this.file, { fileMustExist: true, timeout: this.lockTimeoutMs });
      db.pragma('query_only = ON');
      const version = installedVersion(db);
      if (version === null) {
        db.close();
        return null;
      }
      if (version > SQLITE_SCHEMA_VERSION) throw tooNew(version, this.file);
    } catch (e) {
      db?.close();
      throw translate(e, this.file, 'opening the database');
    }
    this.readerConn = db;
    return db;
  }

  /** Runs `fn` on the reader connection (null: no store in the file yet); a driver error becomes a coded StoreError. */
  read<T>(doing: string, fn: (db: Connection) => T): T | null {
    try {
      const db = this.reader();
      return db === null ? null : fn(db);
    } catch (e) {
      throw translate(e, this.file, doing);
    }
  }

  /**
   * Runs `fn` in a write transaction (BEGIN IMMEDIATE … COMMIT) after the ones queued before it in this
   * process; ROLLBACK when it throws. An append resolves only after COMMIT returned. With `committing`, the
   * COMMIT is what it calls `commit` for, so that it can wrap it (a fork: in its parent's hold).
   */
  write<T>(
    doing: string,
    fn: (db: Connection) => Promise<T> | T,
    committing?: (commit: () => void) => Promise<void>,
  ): Promise<T> {
    return this.queued(() => this.transaction(doing, fn, committing));
  }

  /** Runs `fn` after the work queued before it in this process, one piece at a time; CLOSED once the store is. */
  private queued<T>(fn: () => Promise<T> | T): Promise<T> {
    if (this.closed)
      return Promise.reject(
        new StoreError('CLOSED', `the store for ${this.file} is closed`, { hint: 'make a new SqliteStore' }),
      );
    const run = this.tail.then(fn);
    this.tail = run.catch(() => {});
    return run;
  }

  private async transaction<T>(
    doing: string,
    fn: (db: Connection) => Promise<T> | T,
    committing?: (commit: () => void) => Promise<void>,
  ): Promise<T> {
    // Each transaction after a turn of the event loop: what else this process has to do runs between them.
    await nextTurn();
    let db: Connection;
    try {
      db = this.writer();
      await this.begin(db);
    } catch (e) {
      throw translate(e, this.file, doing);
    }
    try {
      const out = await fn(db);
      if (committing === undefined) db.exec('COMMIT');
      else {
        await committing(() => db.exec('COMMIT'));
        if (db.inTransaction) throw new Error('the transaction was not committed');
      }
      return out;
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      // Only the driver's errors are the store's: one the caller's own input threw (a streamed batch's generator)
      // goes back as it is, as the file store gives it, not as SERVER_ERROR (outsider M).
      throw sqliteCode(e) === undefined && !(e instanceof StepchainError) ? e : translate(e, this.file, doing);
    }
  }

  /**
   * Runs `fn` holding the file's write lock (BEGIN IMMEDIATE, then ROLLBACK: nothing is written), after the
   * transactions queued before it in this process, so that no writer of any process commits meanwhile: a
   * copy's last look for erasure records and the moment it is put in place (spec/ERASURE.md §4.1). `fn` must
   * not write to this file itself (its transaction would queue behind the hold). A store opened to be read
   * (`separate`) holds the lock on a connection of its own, opened for the hold alone: the writer connection
   * would create or migrate what it finds. Where this process may only read the file (SQLITE_READONLY, or
   * it cannot open it for writing), `fn` runs without the lock.
   */
  holdingWrites<T>(doing: string, fn: () => Promise<T>, separate: boolean): Promise<T> {
    // Behind this process's own transactions, as long as the lock timeout at most: one that never ends (a
    // streamed batch of this store's still coming) would otherwise keep the hold waiting without end.
    let state: 'waiting' | 'started' | 'abandoned' = 'waiting';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (state !== 'waiting') return;
        state = 'abandoned';
        reject(
          new StoreError(
            'LOCK_TIMEOUT',
            `${this.file}: a transaction of this store still runs after ${this.lockTimeoutMs} ms (${doing})`,
            {
              hint: 'wait for its batch to end, or copy the journal through another store',
            },
          ),
        );
      }, this.lockTimeoutMs);
    });
    const held = this.queued(async () => {
      if (state === 'abandoned') return undefined as T;
      state = 'started';
      let db: Connection | null = null;
      try {
        db = separate ? connect(this.file, { fileMustExist: true, timeout: 0 }) : this.writer();
        await this.begin(db);
      } catch (e) {
        if (separate) db?.close();
        if (cannotWrite(e)) return fn();
        throw translate(e, this.file, doing);
      }
      try {
        return await fn();
      } finally {
        if (db.inTransaction) db.exec('ROLLBACK');
        if (separate) db.close();
      }
    });
    return Promise.race([held, late]).finally(() => clearTimeout(timer));
  }

  /**
   * After the queued transactions: checkpoints the WAL into the database file and truncates it to zero
   * bytes (PRAGMA wal_checkpoint(TRUNCATE)), so page images of rows an erasure overwrote leave the -wal file.
   * False when another connection's read kept part of it (the next checkpoint completes it).
   */
  truncateWal(): Promise<boolean> {
    return this.queued(() => {
      try {
        const rows = this.writer().pragma('wal_checkpoint(TRUNCATE)') as {
          busy: number;
          log: number;
          checkpointed: number;
        }[];
        return rows[0]?.busy === 0;
      } catch (e) {
        throw translate(e, this.file, 'checkpointing the WAL');
      }
    });
  }

  /** BEGIN IMMEDIATE, retried while another connection holds the write lock, until the lock timeout. */
  private async begin(db: Connection): Promise<void> {
    const deadline = Date.now() + this.lockTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        db.exec('BEGIN IMMEDIATE');
        return;
      } catch (e) {
        if (!isBusy(e) || Date.now() >= deadline) throw e;
      }
      await new Promise((r) => setTimeout(r, PAUSES_MS[Math.min(attempt, PAUSES_MS.length - 1)]));
    }
  }

  /** Closes both connections once the queued transactions have ended. The last connection to close checkpoints the WAL into the file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.tail;
    // The writer last: the last connection to close checkpoints the WAL into the file and removes it.
    this.readerConn?.close();
    this.writerConn?.close();
    this.writerConn = null;
    this.readerConn = null;
  }
}
