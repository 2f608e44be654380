/**
 * The Postgres store's parts (spec/PARTS.md §7): table `<schema>.parts (journal, address, bytes, size)`
 * with primary key `(journal, address)`, and the writer's private index `<schema>.part_index (journal, key,
 * address)`. Created on first use (`IF NOT EXISTS`, under the migration's advisory lock), so a schema
 * written before parts existed needs no migration to read. A part is committed by its own statement before
 * any line that references it.
 */
import { StoreError } from '../errors.js';
import type { PartPayload, PartStore } from '../parts.js';
import { ADDRESS_RE, keyOfHex, newKeyHex } from '../parts.js';
import type { DbPool } from './driver.js';
import { translate } from './errors.js';
import { tablesIn, underMigrationLock } from './schema.js';

export class PostgresPartStore implements PartStore {
  private ready: Promise<void> | null = null;
  private seen = false;
  private readonly parts: string;
  private readonly index: string;
  private readonly keys: string;
  private readonly schema: string;
  private readonly schemaName: string;

  private readonly pool: DbPool;

  /**
   * `pool`: the store's pool; `schema`: its schema name (checked as the store checks it); `journal`: the
   * journal's id; `display`: the server as errors name it (a driver's error becomes a coded one, errors.ts).
   */
  constructor(
    pool: DbPool,
    schema: string,
    private readonly journal: string,
    private readonly display = 'the Postgres server',
  ) {
    this.pool = translating(pool, display, `reading or writing the parts of journal ${journal}`);
    const t = tablesIn(schema);
    this.schemaName = t.schema;
    this.schema = `"${t.schema}"`;
    this.parts = `${this.schema}.parts`;
    this.index = `${this.schema}.part_index`;
    this.keys = `${this.schema}.part_keys`;
  }

  /**
   * The part tables, created once per schema: concurrent CREATE TABLE IF NOT EXISTS from several sessions
   * race on the catalogs (a unique violation in pg_type), so they are created in one transaction under the
   * advisory lock the schema's migration takes (schema.ts), after a look that finds them in place without it.
   */
  private init(): Promise<void> {
    this.ready ??= (async () => {
      if (await this.present()) return;
      await underMigrationLock(this.pool, this.schemaName, async (client) => {
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.parts} (journal text NOT NULL, address text NOT NULL, bytes bytea NOT NULL, size integer NOT NULL, PRIMARY KEY (journal, address))`,
        );
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${this.index} (journal text NOT NULL, key text NOT NULL, address text NOT NULL, PRIMARY KEY (journal, key))`,
        );
        await client.query(`CREATE TABLE IF NOT EXISTS ${this.keys} (journal text PRIMARY KEY, key text NOT NULL)`);
      });
    })().catch((e: unknown) => {
      this.ready = null; // the next call tries again
      throw translate(e, this.display, `creating the part tables of ${this.schema}`);
    });
    return this.ready;
  }

  /** Whether the three part tables exist (a look, no write; once true, kept: nothing drops them). */
  private async present(): Promise<boolean> {
    if (this.seen) return true;
    const { rows } = await this.pool.query<{ n: string }>(
      'SELECT count(to_regclass(t)) AS n FROM unnest($1::text[]) AS t',
      [[this.parts, this.index, this.keys]],
    );
    this.seen = Number(rows[0]?.n) === 3;
    return this.seen;
  }

  async get(address: string, size?: number): Promise<Uint8Array | { size: number } | null> {
    if (!(await this.present())) return null; // no part tables yet: no parts, and a reader creates nothing
    const want = size ?? null;
    const { rows } = await this.pool.query<{ size: number; bytes: Buffer | null }>(
      `SELECT size, CASE WHEN $3::integer IS NULL OR size = $3::integer THEN bytes END AS bytes FROM ${this.parts} WHERE journal = $1 AND address = $2`,
      [this.journal, address, want],
    );
    const row = rows[0];
    if (row === undefined) return null;
    if (row.bytes === null) return { size: row.size };
    return new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
  }

  async has(address: string): Promise<boolean> {
    if (!(await this.present())) return false; // no part tables yet: no parts, and a reader creates nothing
    const { rows } = await this.pool.query(`SELECT 1 FROM ${this.parts} WHERE journal = $1 AND address = $2`, [
      this.journal,
      address,
    ]);
    return rows.length > 0;
  }

  async put(parts: readonly PartPayload[]): Promise<void> {
    await this.init();
    for (const p of parts) {
      if (!ADDRESS_RE.test(p.address))
        throw new StoreError('OPTION_INVALID', `${JSON.stringify(p.address)} is not a part address`);
      await this.pool.query(
        `INSERT INTO ${this.parts} (journal, address, bytes, size) VALUES ($1, $2, $3, $4) ON CONFLICT (journal, address) DO NOTHING`,
        [this.journal, p.address, Buffer.from(p.bytes.buffer, p.bytes.byteOffset, p.bytes.byteLength), p.bytes.length],
      );
      if (p.indexKey === '') continue; // a copied part: no index entry
      await this.pool.query(
        `INSERT INTO ${this.index} (journal, key, address) VALUES ($1, $2, $3) ON CONFLICT (journal, key) DO UPDATE SET address = EXCLUDED.address`,
        [this.journal, p.indexKey, p.address],
      );
    }
  }

  async lookup(indexKey: string): Promise<string | null> {
    if (!(await this.present())) return null; // no part tables yet: no parts, and a reader creates nothing
    const { rows } = await this.pool.query<{ address: string }>(
      `SELECT address FROM ${this.index} WHERE journal = $1 AND key = $2`,
      [this.journal, indexKey],
    );
    return rows[0]?.address ?? null;
  }

  async delete(address: string): Promise<void> {
    await this.init();
    await this.pool.query(`DELETE FROM ${this.parts} WHERE journal = $1 AND address = $2`, [this.journal, address]);
    await this.pool.query(`DELETE FROM ${this.index} WHERE journal = $1 AND address = $2`, [this.journal, address]);
  }

  async key(): Promise<Uint8Array> {
    await this.init();
    await this.pool.query(`INSERT INTO ${this.keys} (journal, key) VALUES ($1, $2) ON CONFLICT (journal) DO NOTHING`, [
      this.journal,
      newKeyHex(),
    ]);
    const { rows } = await this.pool.query<{ key: string }>(`SELECT key FROM ${this.keys} WHERE journal = $1`, [
      this.journal,
    ]);
    const key = keyOfHex(rows[0]?.key ?? '');
    if (key === null)
      throw new StoreError('JOURNAL_INVALID', `the part key of journal ${this.journal} is not 64 lowercase hex digits`);
    return key;
  }

  async *list(): AsyncIterable<string> {
    if (!(await this.present())) return; // no part tables yet: no parts, and a reader creates nothing
    const { rows } = await this.pool.query<{ address: string }>(
      `SELECT address FROM ${this.parts} WHERE journal = $1 ORDER BY address`,
      [this.journal],
    );
    for (const r of rows) yield r.address;
  }
}

/** `pool` whose every failure is a coded StoreError naming the server and what was being done. */
function translating(pool: DbPool, display: string, doing: string): DbPool {
  const coded = (e: unknown): never => {
    throw translate(e, display, doing);
  };
  return {
    connect: () => pool.connect().catch(coded),
    query: <Row>(text: string, values?: readonly unknown[]) => pool.query<Row>(text, values).catch(coded),
    end: () => pool.end(),
    on: (event, listener) => pool.on(event, listener),
  };
}
