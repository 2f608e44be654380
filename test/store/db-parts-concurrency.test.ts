/**
 * Parts of several stepchain/v3 journals written at once into one database store (spec/SQLITE.md §4.2,
 * POSTGRES.md §4.2): in SQLite, one store's journals appending concurrently in one process (their parts once
 * went through connections of their own, which waited on the store's writer with the event loop blocked:
 * SQLITE_BUSY); in Postgres, the first writes of v3 journals on several sessions into a fresh schema (their
 * part tables were created by racing CREATE TABLE IF NOT EXISTS: a unique violation in pg_type).
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { Store, StepInput } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { runChild } from './helpers.js';

const dir = tempDir('stepchain-db-parts-');
const pg = await postgresHarness('dbparts', 4);

/** A step whose result is large enough to become a part (over the 1 KiB threshold), distinct per journal and step. */
function step(journal: number, i: number): StepInput {
  return {
    input: { journal, i },
    result: { text: `journal ${journal} step ${i}: ` + `word${journal}-${i} `.repeat(150) },
  };
}

/** Every journal's steps read back exactly (their parts resolved) and verify without problems. */
async function expectIntact(store: Store, ids: string[], steps: number): Promise<void> {
  for (const [n, id] of ids.entries()) {
    const j = await store.open(id, { readOnly: true });
    const back: unknown[] = [];
    for await (const r of j.read()) back.push(r.result);
    expect(back).toEqual(Array.from({ length: steps }, (_, i) => step(n, i).result));
    expect((await j.verify()).problems).toEqual([]);
    await j.close();
  }
}

describe('SQLite: v3 journals of one store written at once in one process', () => {
  test('every journal is created and appended to (no SQLITE_BUSY), and every part is there', async () => {
    const store = new SqliteStore(join(dir, 'one.db'), { fsync: 'none', lockTimeoutMs: 60_000 });
    const workers = 4;
    const each = 6;
    // As an agent host does: runs started at once, each a journal of its own (created, appended to, closed),
    // so one journal's first part writes come while another journal's transaction holds the write lock.
    const ids = Array.from({ length: workers * each }, (_, n) => `run-${n}`);
    await Promise.all(
      Array.from({ length: workers }, async (_, w) => {
        for (let k = 0; k < each; k++) {
          const n = w * each + k;
          const j = await store.create(ids[n]!, { format: 'stepchain/v3' });
          await j.appendMany([step(n, 0), step(n, 1)]);
          await j.close();
        }
      }),
    );
    await expectIntact(store, ids, 2);
    await store.close();
  }, 240_000);
});

describe('Postgres: the first writes of v3 journals into a fresh schema, at once', () => {
  test('every journal stores its parts (no unique violation on the part tables), in each of several fresh schemas', async () => {
    const writers = 8;
    const ids = Array.from({ length: writers }, (_, n) => `w${n}`);
    for (let round = 0; round < 5; round++) {
      // Four stores (four pools) on one fresh schema: the journals' first part writes meet on sessions of all.
      const schema = pg.schemaName();
      const stores = [0, 1, 2, 3].map(() =>
        pg.track(new PostgresStore({ connectionString: pg.url, schema, connection: { max: writers } })),
      );
      const journals = [];
      for (const [n, id] of ids.entries()) journals.push(await stores[n % 4]!.create(id, { format: 'stepchain/v3' }));
      const outcomes = await Promise.allSettled(journals.map((j, n) => j.appendMany([step(n, 0), step(n, 1)])));
      expect(
        outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason)),
      ).toEqual([]);
      await Promise.all(journals.map((j) => j.close()));
      await expectIntact(stores[0]!, ids, 2);
    }
  }, 240_000);
});

describe.each([
  ['sqlite', () => new SqliteStore(join(dir, 'remove.db'), { fsync: 'none' })],
  ['postgres', () => pg.store()],
] as const)("remove takes a v3 journal's parts and part key with it: %s store", (_name, make) => {
  test('a journal made again under the id holds none of the old parts and has a new part key', async () => {
    const store = make();
    const old = await store.create('again', { format: 'stepchain/v3' });
    await old.append(step(0, 0));
    const oldParts: string[] = [];
    for await (const a of old.parts!.store.list()) oldParts.push(a);
    expect(oldParts.length).toBeGreaterThan(0);
    const oldKey = await old.parts!.store.key();
    await old.close();
    await store.remove('again');
    const fresh = await store.create('again', { format: 'stepchain/v3' });
    for (const a of oldParts) expect(await fresh.parts!.store.has(a)).toBe(false);
    expect(Buffer.from(await fresh.parts!.store.key()).equals(Buffer.from(oldKey))).toBe(false);
    await fresh.append(step(1, 0));
    await fresh.close();
    const j = await store.open('again', { readOnly: true });
    const back: unknown[] = [];
    for await (const r of j.read()) back.push(r.result);
    expect(back).toEqual([step(1, 0).result]);
    expect((await j.verify()).problems).toEqual([]);
    await j.close();
    if (store instanceof SqliteStore) await store.close();
  }, 120_000);
});

describe('a reader of a v3 journal creates no part tables', () => {
  const readEverything = async (store: Store): Promise<void> => {
    const j = await store.open('empty', { readOnly: true });
    for await (const _ of j.read()) void _;
    expect((await j.verify()).problems).toEqual([]);
    const parts = (
      j as unknown as {
        parts: {
          store: {
            list(): AsyncIterable<string>;
            get(a: string): Promise<unknown>;
            lookup(k: string): Promise<unknown>;
          };
        };
      }
    ).parts.store;
    for await (const _ of parts.list()) void _;
    expect(await parts.get(`sha256:${'0'.repeat(64)}`)).toBe(null);
    expect(await parts.lookup('0'.repeat(64))).toBe(null);
    await j.close();
  };

  test('sqlite', async () => {
    const file = join(dir, 'reader.db');
    const writer = new SqliteStore(file, { fsync: 'none' });
    await (await writer.create('empty', { format: 'stepchain/v3' })).close();
    await writer.close();
    const reader = new SqliteStore(file);
    await readEverything(reader);
    await reader.close();
    const db = connect(file, {});
    expect(db.prepare(`SELECT name FROM sqlite_schema WHERE name LIKE 'part%'`).all()).toEqual([]);
    db.close();
  });

  test('postgres', async () => {
    const schema = pg.schemaName();
    const writer = pg.track(new PostgresStore({ connectionString: pg.url, schema }));
    await (await writer.create('empty', { format: 'stepchain/v3' })).close();
    await readEverything(pg.track(new PostgresStore({ connectionString: pg.url, schema })));
    const { rows } = await pg.admin.query(`SELECT to_regclass('"${schema}".parts')::text AS t`);
    expect(rows[0].t).toBe(null);
  });
});

describe('a part write that failed is not referenced by a later append', () => {
  test('sqlite: the parts of an append refused at LOCK_TIMEOUT are made again by the next append of the same value', async () => {
    const store = new SqliteStore(join(dir, 'refused.db'), { fsync: 'none', lockTimeoutMs: 300 });
    const j = await store.create('j', { format: 'stepchain/v3' });
    await j.append({ input: 'first' }); // the part key is kept
    // Another process holds the write lock: the append's part write gives up (LOCK_TIMEOUT), nothing stored.
    const holder = runChild('sqlite-hold.mjs', [store.file, 'j']);
    await holder.waitFor((l) => l.startsWith('holding '), 60_000);
    expect(await j.append(step(0, 0)).catch((e: { code?: string }) => e.code)).toBe('LOCK_TIMEOUT');
    holder.proc.kill('SIGKILL');
    await holder.exited;
    // The same value again: its line must reference a part that is stored, not the one the writer made before.
    await j.append(step(0, 0));
    expect((await j.verify()).problems).toEqual([]);
    const back: unknown[] = [];
    for await (const r of j.read()) back.push(r.result);
    expect(back).toEqual([null, step(0, 0).result]);
    await j.close();
    await store.close();
  }, 120_000);
});
