/**
 * A Postgres journal holds its appends while a fork, a receipt or a publication takes its last look for
 * erasure records and commits (ChainSource.holdingAppends, spec/ERASURE.md §4.1): an erase's record appended
 * from another connection must not commit in between. Without the hold, the fork's last look and its COMMIT
 * left that window open for every Postgres parent (outsider 12's race, found again in review).
 */
import { describe, expect, test } from 'vitest';
import { join } from 'node:path';
import { withAppendsHeld } from '../../src/chain/source.js';
import { exportReceipt } from '../../src/index.js';
import { eraseValue } from '../../src/erase/store.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { copyWhileAppending } from '../helpers/appending.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const pgHarness = await postgresHarness('pghold', 4);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('holding a Postgres journal’s appends', () => {
  // The last case: a hold four idle timeouts long (a slow rename) is not ended by the server (outsider 15).
  for (const [intake, idleTimeoutMs, holdMs] of [
    [false, undefined, 600],
    [true, undefined, 600],
    [false, 300, 1200],
  ] as const)
    test(`an append from another store${intake ? ' through the intake' : ''} commits only after the hold${idleTimeoutMs === undefined ? '' : ', one outlasting the idle timeout'}`, async () => {
      const schema = pgHarness.schemaName();
      const mine = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema, idleTimeoutMs }));
      const other = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema, intake }));
      const parent = await mine.create('parent', { format: 'stepchain/v3' } as never);
      await parent.append({ input: { n: 0 } });
      const writer = await other.open('parent');
      const order: string[] = [];
      let appended: Promise<unknown> = Promise.resolve();
      await withAppendsHeld(parent, async () => {
        appended = writer.append({ input: { n: 1 } }).then(() => order.push('appended'));
        await sleep(holdMs);
        order.push('hold ends');
      });
      await appended;
      expect(order).toEqual(['hold ends', 'appended']);
      expect((await parent.verify()).ok).toBe(true);
    });

  test('a journal opened read-only by a role that may only read it is not held, and the look still runs', async () => {
    const schema = pgHarness.schemaName();
    const store = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema }));
    await (await store.create('j', { format: 'stepchain/v3' } as never)).append({ input: { n: 0 } });
    const role = `reader_${schema}`;
    await pgHarness.admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'r'`);
    await pgHarness.admin.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
    await pgHarness.admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
    const u = new URL(pgHarness.url);
    u.username = role;
    u.password = 'r';
    const reader = pgHarness.track(new PostgresStore({ connectionString: u.toString(), schema }));
    const j = await reader.open('j', { readOnly: true });
    expect(await withAppendsHeld(j, () => Promise.resolve('looked'))).toBe('looked');
  });

  for (const intake of [false, true])
    test(`a receipt of a journal someone keeps appending to through the same handle is written${intake ? ' (intake)' : ''}, and appends go on`, async () => {
      const store = pgHarness.track(
        new PostgresStore({ connectionString: pgHarness.url, schema: pgHarness.schemaName(), intake }),
      );
      const journal = await store.create('busy', { format: 'stepchain/v3' } as never);
      const out = join(tempDir('stepchain-pghold-'), 'busy.tar');
      const [before, , after] = await copyWhileAppending(journal, () => exportReceipt(journal, { out }));
      expect(before).toBeGreaterThanOrEqual(20);
      expect(after).toBeGreaterThanOrEqual(20);
      expect((await journal.verify()).ok).toBe(true);
    });

  test('a fork through another store of the same database holds its parent by its own transaction', async () => {
    const schema = pgHarness.schemaName();
    const a = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema }));
    const b = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema }));
    const parent = await a.create('parent', { format: 'stepchain/v3' } as never);
    for (let i = 0; i < 3; i++) await parent.append({ input: { i } });
    let heldApart = false;
    const watched = new Proxy(parent, {
      get(target, key, receiver) {
        if (key === 'holdingAppends') heldApart = true;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const fork = await b.fork(watched, { fromStep: 2, to: 'f' });
    expect(heldApart).toBe(false);
    expect((await fork.head())?.seq).toBe(2);
    expect((await fork.verify()).ok).toBe(true);
  });

  // Outsider 16: each fork keeps its transaction's connection and needs a second for its parent's lines; with
  // as many forks as connections all waited for a second until the pool's timeout, and an agent's append failed.
  for (const max of [2, 3])
    test(`twelve concurrent forks, a receipt and another journal's appends on a pool of ${max} all go through`, async () => {
      const store = pgHarness.track(
        new PostgresStore({
          connectionString: pgHarness.url,
          schema: pgHarness.schemaName(),
          connection: { max, connectionTimeoutMillis: 4000 },
        }),
      );
      const parent = await store.create('parent', { format: 'stepchain/v3' } as never);
      await parent.appendMany(Array.from({ length: 40 }, (_, i) => ({ input: { i } })));
      const agent = await store.create('agent', { format: 'stepchain/v3' } as never);
      const out = join(tempDir('stepchain-pghold-'), 'parent.tar');
      const outcomes = await Promise.allSettled([
        ...Array.from({ length: 12 }, (_, i) => store.fork(parent, { fromStep: 20 + i, to: `f${i}` })),
        exportReceipt(parent, { out }),
        (async () => {
          for (let i = 0; i < 10; i++) await agent.append({ input: { i } });
        })(),
      ]);
      const failed = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
      expect(failed).toEqual([]);
      expect((await agent.head())?.seq).toBe(9);
      for (let i = 0; i < 12; i++) expect((await (await store.open(`f${i}`)).head())?.seq).toBe(20 + i);
    });

  // Outsider 17: erasure records appended to a journal two exports held waited in the server for its row lock,
  // each keeping a connection, while the holder waited for a second one: appends of another journal failed.
  test('exports and erasures of one journal beside another journal’s appends, on a pool of three: all go through', async () => {
    const store = pgHarness.track(
      new PostgresStore({
        connectionString: pgHarness.url,
        schema: pgHarness.schemaName(),
        // Long limits: on a loaded machine two exports and three erasures in turn took over 3 s with no one
        // stuck; a starved pool or a waiter stuck behind a hold still fails, at these limits, and the bound below.
        lockTimeoutMs: 20_000,
        connection: { max: 3, connectionTimeoutMillis: 20_000 },
      }),
    );
    const held = await store.create('held', { format: 'stepchain/v3' } as never);
    await held.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: { i }, result: { secret: `s${i}` } })));
    const agent = await store.create('agent', { format: 'stepchain/v3' } as never);
    const dir = tempDir('stepchain-pghold-');
    const started = Date.now();
    const outcomes = await Promise.allSettled([
      ...[0, 1].map((i) => exportReceipt(held, { out: join(dir, `x${i}.tar`) })),
      ...[0, 1, 2].map((seq) => eraseValue(store, 'held', { seq, path: '/result/secret', reason: 'r' })),
      (async () => {
        for (let i = 0; i < 5; i++) await agent.append({ input: { i } });
      })(),
    ]);
    // An export that met an erasure recorded while it was written is refused as the spec says, coded.
    const failed = outcomes.flatMap((o) =>
      o.status === 'rejected' && (o.reason as { code?: string }).code !== 'ERASURE_PENDING' ? [String(o.reason)] : [],
    );
    expect(failed).toEqual([]);
    expect(Date.now() - started).toBeLessThan(20_000);
    expect((await agent.head())?.seq).toBe(4);
    expect((await held.verify()).ok).toBe(true);
  });

  // Outsider H: a hold waited for its turn among the store's holds with its handle's queue paused, so the handle's
  // appends waited behind every hold queued before it (20 s on a pool of two with holds in loops).
  test("a hold waiting for its turn among the store's holds leaves its handle's appends going", async () => {
    const store = pgHarness.track(
      new PostgresStore({ connectionString: pgHarness.url, schema: pgHarness.schemaName(), connection: { max: 2 } }),
    );
    const a = await store.create('a', { format: 'stepchain/v3' } as never);
    const b = await store.create('b', { format: 'stepchain/v3' } as never);
    let release!: () => void;
    let bHeld!: () => void;
    const holdingB = b.holdingAppends(() => new Promise<void>((r) => (bHeld(), (release = r))));
    await new Promise<void>((r) => (bHeld = r)); // the pool of two allows one hold: b's
    let aRan = false;
    const holdingA = a.holdingAppends(async () => void (aRan = true)); // waits for b's to end
    const appended = await Promise.race([
      a.append({ input: 'while a hold of a waits its turn' }),
      new Promise<'stuck'>((r) => setTimeout(() => r('stuck'), 15_000)),
    ]);
    expect(appended).toMatchObject({ seq: 0 });
    expect(aRan).toBe(false);
    release();
    await Promise.all([holdingA, holdingB]);
    expect(aRan).toBe(true);
    expect((await a.verify()).ok).toBe(true);
  }, 30_000);

  test('a hold of a journal asked for again inside itself fails LOCK_TIMEOUT saying so, without waiting on the server', async () => {
    const store = pgHarness.track(
      new PostgresStore({ connectionString: pgHarness.url, schema: pgHarness.schemaName(), lockTimeoutMs: 500 }),
    );
    const j = await store.create('j', { format: 'stepchain/v3' } as never);
    await j.append({ input: 0 });
    const out = join(tempDir('stepchain-pghold-'), 'inner.tar');
    const e = await withAppendsHeld(j, () => exportReceipt(j, { out })).catch((err: unknown) => err);
    expect(e).toMatchObject({ code: 'LOCK_TIMEOUT' });
    expect(String((e as Error).message)).toMatch(/this process's own hold of the journal/);
  });

  // Outsider 18: each fork read the parent for erasure records to its end as it moved, and three forks of a
  // journal an agent kept appending to never caught up: they finished only when the agent stopped.
  test('forks of a journal an agent keeps appending to finish while it appends', async () => {
    // Room for what runs at once — three forks, each a hold and a look, and the agent's appends: with 4, the forks
    // held one connection each and queued for a second behind the agent, and on a machine as busy as its cores
    // one queued past the connection timeout (POOL_EXHAUSTED, busy fresh-clone run). A pool that small is
    // POOL_EXHAUSTED's own test, below.
    const store = pgHarness.track(
      new PostgresStore({ connectionString: pgHarness.url, schema: pgHarness.schemaName(), connection: { max: 8 } }),
    );
    const parent = await store.create('live', { format: 'stepchain/v3' } as never);
    for (let i = 0; i < 30; i++) await parent.append({ input: { i } });
    let stop = false;
    const agent = (async () => {
      for (let n = 0; !stop; n++) await parent.append({ input: n });
    })();
    const safety = setTimeout(() => (stop = true), 30_000);
    try {
      const forks = [0, 1, 2].map((k) => store.fork(parent, { fromStep: 3, to: `live-f${k}` }).then(() => stop));
      // Each fork resolves while the agent still appends (false: not stopped yet).
      expect(await Promise.all(forks)).toEqual([false, false, false]);
    } finally {
      stop = true;
      clearTimeout(safety);
      await agent;
    }
    expect((await (await store.open('live-f0')).verify()).ok).toBe(true);
  }, 60_000);

  test('a pool whose every connection stays in use is POOL_EXHAUSTED, not an unreachable server', async () => {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: pgHarness.url, max: 2, connectionTimeoutMillis: 300 });
    const store = new PostgresStore({ pool, schema: pgHarness.schemaName() });
    const journal = await store.create('j', { format: 'stepchain/v3' } as never);
    const taken = [await pool.connect(), await pool.connect()];
    try {
      const e = await journal.append({ input: 1 }).then(
        () => null,
        (err: unknown) => err as { code?: string; message?: string; hint?: string },
      );
      expect(e?.code).toBe('POOL_EXHAUSTED');
      expect(e?.message).toMatch(/this process's pool .* was not asked/);
    } finally {
      for (const c of taken) c.release();
      await store.close();
      await pool.end();
    }
  });

  test('a caller’s pool of one connection is refused: a hold and its look need two', async () => {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: pgHarness.url, max: 1 });
    try {
      expect(() => new PostgresStore({ pool, schema: pgHarness.schemaName() })).toThrow(/pool\.options\.max/);
    } finally {
      await pool.end();
    }
  });
});
