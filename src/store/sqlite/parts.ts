/**
 * The SQLite store's parts (spec/PARTS.md §7, SQLITE.md §4.3): table `parts (journal, address, bytes)` with
 * primary key `(journal, address)`, the writer's private index `part_index (journal, key, address)` and the
 * part keys `part_keys (journal, key)`, in the store's database file. The tables are created on first write
 * (`IF NOT EXISTS`, inside that write's transaction), so a database written before parts existed needs no
 * migration to read.
 *
 * A journal's part store writes through the store's own writer connection and its queue of transactions
 * (SqliteFile.write), never through a connection of its own: better-sqlite3 is synchronous, so a second
 * connection of the same process waiting on SQLite's write lock would block the event loop while the writer
 * that holds the lock waits on that loop to commit (SQLITE_BUSY after the timeout). It reads through the
 * reader connection. Given a connection instead (a fork's or an erasure's transaction), it runs there.
 */
import { StoreError } from '../errors.js';
import type { PartPayload, PartStore } from '../parts.js';
import { partReferenceText } from '../rewrite.js';
import { ADDRESS_RE, keyOfHex, newKeyHex } from '../parts.js';
import { SqliteFile } from './db.js';
import type { Connection } from './driver.js';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS parts (journal TEXT NOT NULL, address TEXT NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (journal, address))`,
  `CREATE TABLE IF NOT EXISTS part_index (journal TEXT NOT NULL, key TEXT NOT NULL, address TEXT NOT NULL, PRIMARY KEY (journal, key))`,
  `CREATE TABLE IF NOT EXISTS part_keys (journal TEXT PRIMARY KEY, key TEXT NOT NULL)`,
];

/** Creates the part tables if absent (a write: the caller's transaction, or its own statement). */
function createTables(db: Connection): void {
  for (const sql of SCHEMA) db.exec(sql);
}

/** Whether the part tables exist (all three are created together). */
function hasTables(db: Connection): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'part_keys'`).get() !== undefined;
}

function readPart(
  db: Connection,
  journal: string,
  address: string,
  want: number | null,
): Uint8Array | { size: number } | null {
  const row = db
    .prepare(
      'SELECT length(bytes) AS size, CASE WHEN ? IS NULL OR length(bytes) = ? THEN bytes END AS bytes FROM parts WHERE journal = ? AND address = ?',
    )
    .get(want, want, journal, address) as { size: number; bytes: Buffer | null } | undefined;
  if (row === undefined) return null;
  if (row.bytes === null) return { size: row.size };
  return new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
}

function putParts(db: Connection, journal: string, parts: readonly PartPayload[]): void {
  for (const p of parts)
    if (!ADDRESS_RE.test(p.address))
      throw new StoreError('OPTION_INVALID', `${JSON.stringify(p.address)} is not a part address`);
  const file = db.prepare(
    'INSERT INTO parts (journal, address, bytes) VALUES (?, ?, ?) ON CONFLICT (journal, address) DO NOTHING',
  );
  const index = db.prepare(
    'INSERT INTO part_index (journal, key, address) VALUES (?, ?, ?) ON CONFLICT (journal, key) DO UPDATE SET address = excluded.address',
  );
  for (const p of parts) {
    file.run(journal, p.address, Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength));
    if (p.indexKey !== '') index.run(journal, p.indexKey, p.address); // '': a copied part, no index entry
  }
}

function deletePart(db: Connection, journal: string, address: string): void {
  db.prepare('DELETE FROM parts WHERE journal = ? AND address = ?').run(journal, address);
  db.prepare('DELETE FROM part_index WHERE journal = ? AND address = ?').run(journal, address);
}

function storedKey(db: Connection, journal: string): string | null {
  const row = db.prepare('SELECT key FROM part_keys WHERE journal = ?').get(journal) as { key: string } | undefined;
  return row?.key ?? null;
}

/** Draws and keeps the journal's key unless one is kept already (two writers asking at once get the same key). */
function ensureKey(db: Connection, journal: string): string {
  db.prepare('INSERT INTO part_keys (journal, key) VALUES (?, ?) ON CONFLICT (journal) DO NOTHING').run(
    journal,
    newKeyHex(),
  );
  return storedKey(db, journal)!;
}

export class SqlitePartStore implements PartStore {
  /** Whether the part tables are known to exist. */
  private created = false;

  /**
   * `on`: the store's file (writes queued on its writer connection, reads on its reader connection), or a
   * connection to run on (a transaction the caller holds, or a test's connection); `journal`: the id of the
   * journal whose parts these are.
   */
  constructor(
    private readonly on: SqliteFile | Connection,
    private readonly journal: string,
  ) {}

  /** Runs a read: on the reader connection, `absent` while the file or the part tables do not exist yet. */
  private read<T>(doing: string, absent: T, fn: (db: Connection) => T): T {
    const on = this.on;
    if (!(on instanceof SqliteFile)) return fn(this.given(on));
    return (
      on.read(`${doing} journal ${this.journal}`, (db) => {
        // Once seen, the tables stay: nothing drops them.
        if (!this.created && !(this.created = hasTables(db))) return absent;
        return fn(db);
      }) ?? absent
    );
  }

  /** Runs a write with the part tables present: a transaction queued on the store's writer, or on the given connection. */
  private write<T>(doing: string, fn: (db: Connection) => T): Promise<T> {
    const on = this.on;
    if (on instanceof SqliteFile) {
      return on.write(`${doing} journal ${this.journal}`, (db) => {
        createTables(db);
        return fn(db);
      });
    }
    const db = this.given(on);
    // In the caller's transaction (a fork, an erasure): an error throws here, at once, and the caller rolls back.
    if (db.inTransaction) return Promise.resolve(fn(db));
    db.exec('BEGIN IMMEDIATE');
    try {
      const out = fn(db);
      db.exec('COMMIT');
      return Promise.resolve(out);
    } catch (e) {
      if (db.inTransaction) db.exec('ROLLBACK');
      return Promise.reject(e);
    }
  }

  /** A given connection, the part tables created on first use. */
  private given(db: Connection): Connection {
    if (!this.created) {
      createTables(db);
      this.created = true;
    }
    return db;
  }

  /** Nothing to close: the connections are the store's or the caller's. */
  close(): void {}

  get(address: string, size?: number): Promise<Uint8Array | { size: number } | null> {
    return Promise.resolve(
      this.read(`reading part ${address} of`, null, (db) => readPart(db, this.journal, address, size ?? null)),
    );
  }

  has(address: string): Promise<boolean> {
    return Promise.resolve(
      this.read(
        `reading part ${address} of`,
        false,
        (db) =>
          db.prepare('SELECT 1 FROM parts WHERE journal = ? AND address = ?').get(this.journal, address) !== undefined,
      ),
    );
  }

  put(parts: readonly PartPayload[]): Promise<void> {
    if (parts.length === 0) return Promise.resolve();
    return this.write('storing parts of', (db) => putParts(db, this.journal, parts));
  }

  lookup(indexKey: string): Promise<string | null> {
    return Promise.resolve(
      this.read('reading the part index of', null, (db) => {
        const row = db
          .prepare('SELECT address FROM part_index WHERE journal = ? AND key = ?')
          .get(this.journal, indexKey) as { address: string } | undefined;
        return row?.address ?? null;
      }),
    );
  }

  delete(address: string): Promise<void> {
    return this.write(`deleting part ${address} of`, (db) => deletePart(db, this.journal, address));
  }

  async key(): Promise<Uint8Array> {
    // Read first: only a journal's first writer draws the key, in a write transaction.
    const hex =
      this.read('reading the part key of', null, (db) => storedKey(db, this.journal)) ??
      (await this.write('keeping the part key of', (db) => ensureKey(db, this.journal)));
    const key = keyOfHex(hex);
    if (key === null)
      throw new StoreError('JOURNAL_INVALID', `the part key of journal ${this.journal} is not 64 lowercase hex digits`);
    return key;
  }

  async *list(): AsyncIterable<string> {
    const rows = this.read(
      'listing the parts of',
      [] as { address: string }[],
      (db) =>
        db.prepare('SELECT address FROM parts WHERE journal = ? ORDER BY address').all(this.journal) as {
          address: string;
        }[],
    );
    for (const r of rows) yield r.address;
  }
}

/**
 * Deletes (`remove`) each part address an erased line named that is stored for the journal and that no line and
 * no other part references any more (ERASURE.md §4 step 7), one by one, in the rewrite's transaction; returns them.
 */
export function deleteUnreferencedParts(
  db: Connection,
  key: number,
  id: string,
  addresses: readonly string[],
  remove: (address: string) => void,
): string[] {
  const hasParts =
    db.prepare(`SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'parts'`).get() !== undefined;
  const out: string[] = [];
  for (const address of hasParts ? new Set(addresses) : []) {
    const needle = partReferenceText(address);
    const inLine = db.prepare('SELECT 1 FROM steps WHERE journal = ? AND instr(line, ?) > 0 LIMIT 1').get(key, needle);
    const inPart = db
      .prepare('SELECT 1 FROM parts WHERE journal = ? AND address <> ? AND instr(bytes, ?) > 0 LIMIT 1')
      .get(id, address, Buffer.from(needle, 'utf8'));
    if (inLine !== undefined || inPart !== undefined) continue;
    if (db.prepare('SELECT 1 FROM parts WHERE journal = ? AND address = ?').get(id, address) === undefined) continue;
    remove(address);
    out.push(address);
  }
  return out;
}
