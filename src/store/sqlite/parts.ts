/**
 * The SQLite store's parts (spec/PARTS.md §7): table `parts (journal, address, bytes)` with primary key
 * `(journal, address)`, and the writer's private index `part_index (journal, key, address)`, in the
 * store's database file. The tables are created on first use (`IF NOT EXISTS`), so a database written before
 * parts existed needs no migration to read. Statements run on the synchronous driver's connection.
 */
import { StoreError } from '../errors.js';
import type { PartPayload, PartStore } from '../parts.js';
import { ADDRESS_RE, keyOfHex, newKeyHex } from '../parts.js';
import type { Connection } from './driver.js';

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS parts (journal TEXT NOT NULL, address TEXT NOT NULL, bytes BLOB NOT NULL, PRIMARY KEY (journal, address))`,
  `CREATE TABLE IF NOT EXISTS part_index (journal TEXT NOT NULL, key TEXT NOT NULL, address TEXT NOT NULL, PRIMARY KEY (journal, key))`,
  `CREATE TABLE IF NOT EXISTS part_keys (journal TEXT PRIMARY KEY, key TEXT NOT NULL)`,
];

export class SqlitePartStore implements PartStore {
  private conn: Connection | null = null;

  /** `db`: a connection to the store's file, or how to open one on first use; `journal`: the id of the journal whose parts these are. */
  constructor(
    private readonly open: Connection | (() => Connection),
    private readonly journal: string,
  ) {}

  /** The connection, its tables created on first use. */
  private get db(): Connection {
    if (this.conn === null) {
      const c = typeof this.open === 'function' ? this.open() : this.open;
      // As the store's writer connection: what a page rearrangement moves or frees is zeroed (ERASURE.md §6.1).
      if (typeof this.open === 'function') c.pragma('secure_delete = ON');
      for (const sql of SCHEMA) c.exec(sql);
      this.conn = c;
    }
    return this.conn;
  }

  /** Closes a connection this store opened itself. */
  close(): void {
    if (this.conn !== null && typeof this.open === 'function') this.conn.close();
    this.conn = null;
  }

  get(address: string, size?: number): Promise<Uint8Array | { size: number } | null> {
    const want = size ?? null;
    const row = this.db
      .prepare('SELECT length(bytes) AS size, CASE WHEN ? IS NULL OR length(bytes) = ? THEN bytes END AS bytes FROM parts WHERE journal = ? AND address = ?')
      .get(want, want, this.journal, address) as { size: number; bytes: Buffer | null } | undefined;
    if (row === undefined) return Promise.resolve(null);
    if (row.bytes === null) return Promise.resolve({ size: row.size });
    return Promise.resolve(new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength));
  }

  has(address: string): Promise<boolean> {
    return Promise.resolve(this.db.prepare('SELECT 1 FROM parts WHERE journal = ? AND address = ?').get(this.journal, address) !== undefined);
  }

  put(parts: readonly PartPayload[]): Promise<void> {
    const file = this.db.prepare('INSERT INTO parts (journal, address, bytes) VALUES (?, ?, ?) ON CONFLICT (journal, address) DO NOTHING');
    const index = this.db.prepare('INSERT INTO part_index (journal, key, address) VALUES (?, ?, ?) ON CONFLICT (journal, key) DO UPDATE SET address = excluded.address');
    const own = !this.db.inTransaction;
    if (own) this.db.exec('BEGIN IMMEDIATE');
    try {
      for (const p of parts) {
        if (!ADDRESS_RE.test(p.address)) throw new StoreError('OPTION_INVALID', `${JSON.stringify(p.address)} is not a part address`);
        file.run(this.journal, p.address, Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength));
        if (p.indexKey !== '') index.run(this.journal, p.indexKey, p.address); // '': a copied part, no index entry
      }
      if (own) this.db.exec('COMMIT');
    } catch (e) {
      if (own && this.db.inTransaction) this.db.exec('ROLLBACK');
      throw e;
    }
    return Promise.resolve();
  }

  lookup(indexKey: string): Promise<string | null> {
    const row = this.db.prepare('SELECT address FROM part_index WHERE journal = ? AND key = ?').get(this.journal, indexKey) as { address: string } | undefined;
    return Promise.resolve(row?.address ?? null);
  }

  delete(address: string): Promise<void> {
    this.db.prepare('DELETE FROM parts WHERE journal = ? AND address = ?').run(this.journal, address);
    this.db.prepare('DELETE FROM part_index WHERE journal = ? AND address = ?').run(this.journal, address);
    return Promise.resolve();
  }

  key(): Promise<Uint8Array> {
    this.db.prepare('INSERT INTO part_keys (journal, key) VALUES (?, ?) ON CONFLICT (journal) DO NOTHING').run(this.journal, newKeyHex());
    const row = this.db.prepare('SELECT key FROM part_keys WHERE journal = ?').get(this.journal) as { key: string };
    const key = keyOfHex(row.key);
    if (key === null) return Promise.reject(new StoreError('JOURNAL_INVALID', `the part key of journal ${this.journal} is not 64 lowercase hex digits`));
    return Promise.resolve(key);
  }

  async *list(): AsyncIterable<string> {
    const rows = this.db.prepare('SELECT address FROM parts WHERE journal = ? ORDER BY address').all(this.journal) as Array<{ address: string }>;
    for (const r of rows) yield r.address;
  }
}
