/**
 * The intake's first try at the lock rides on the insert (spec/POSTGRES.md §6.6 step 1): the statement that
 * inserts a writer's rows also selects the head row FOR UPDATE SKIP LOCKED, and when another transaction
 * holds it, the writer goes to wait without beginning a transaction of its own to find the lock taken and
 * roll it back. Counted on the statements the store sends through a pool of the test's. And a sequencer's NOTIFY
 * calls the writer of the least row it left pending (§6.6 steps 2 and 3), so that a row that reached the intake
 * after the sequencer's selection does not wait out a whole wait when no other writer appends again.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { postgresHarness } from '../helpers/postgres.js';

const pgHarness = await postgresHarness('pgfirsttry', 4);

const pools: pg.Pool[] = [];
afterAll(async () => {
  for (const p of pools) await p.end();
});

/**
 * A pool of the test's whose every statement passes through `before` (its text), which may hold it back by
 * returning a promise; the pool is ended after the file's tests.
 */
function watchedPool(before: (text: string) => Promise<void> | void): pg.Pool {
  const pool = new pg.Pool({ connectionString: pgHarness.url, max: 3 });
  pools.push(pool);
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : ((args[0] as { text?: string } | undefined)?.text ?? '');
      const held = before(text);
      return held === undefined ? query(...args) : held.then(() => query(...args));
    };
  });
  return pool;
}

/** A pool whose every statement is written down, first words only. */
function countingPool(): { pool: pg.Pool; sent: string[] } {
  const sent: string[] = [];
  const pool = watchedPool((text) => {
    sent.push(text.trim().split(/\s+/).slice(0, 2).join(' '));
  });
  return { pool, sent };
}

describe('the intake’s first try at the lock', () => {
  test('an append that finds the head row taken begins and rolls back no transaction to learn it, and resolves once the holder lets go', async () => {
    const schema = pgHarness.schemaName();
    const { pool, sent } = countingPool();
    const store = pgHarness.track(new PostgresStore({ pool, schema, intake: true }));
    const journal = await store.create('j');
    await journal.append({ input: { n: 0 } }); // the intake table made, the pool's connections open

    await pgHarness.admin.query('BEGIN');
    await pgHarness.admin.query(`SELECT 1 FROM ${schema}.journals FOR UPDATE`);
    sent.length = 0;
    let resolved = false;
    const appended = journal.append({ input: { n: 1 } }).then((r) => {
      resolved = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    expect(resolved).toBe(false);
    await pgHarness.admin.query('COMMIT');
    const result = await appended;

    expect(result.seq).toBe(1);
    // One transaction: the try that queued for the lock once a wait had passed (§6.6 step 3), which sequenced.
    expect(sent.filter((s) => s.startsWith('BEGIN'))).toHaveLength(1);
    expect(sent).not.toContain('ROLLBACK');
    expect(sent.filter((s) => s === 'COMMIT')).toHaveLength(1);
    const check = await journal.verify();
    expect(check.ok).toBe(true);
    expect(check.steps).toBe(2);
  });

  test('an append that finds the head row free sequences at once: one transaction, committed', async () => {
    const schema = pgHarness.schemaName();
    const { pool, sent } = countingPool();
    const store = pgHarness.track(new PostgresStore({ pool, schema, intake: true }));
    const journal = await store.create('j');
    await journal.append({ input: { n: 0 } });
    sent.length = 0;
    expect((await journal.append({ input: { n: 1 } })).seq).toBe(1);
    expect(sent.filter((s) => s.startsWith('BEGIN'))).toHaveLength(1);
    expect(sent).not.toContain('ROLLBACK');
    expect(sent.filter((s) => s === 'COMMIT')).toHaveLength(1);
  });
});

describe('the sequencer’s call', () => {
  test('a row that reaches the intake while a sequencer holds the lock is named as the least left pending in its NOTIFY, and its writer resolves', async () => {
    const schema = pgHarness.schemaName();
    // The sequencer's pool holds its marking statement until the other writer's row is in the intake.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atMarks = new Promise<void>((r) => (reached = r));
    let holding = false;
    const pool = watchedPool((text) => {
      if (!holding || !text.trimStart().startsWith('WITH marked')) return;
      holding = false;
      reached();
      return gate;
    });
    const sequencer = pgHarness.track(new PostgresStore({ pool, schema, intake: true }));
    const a = await sequencer.create('j');
    await a.append({ input: { n: 0 } });
    const other = pgHarness.track(new PostgresStore({ connectionString: pgHarness.url, schema, intake: true }));
    const b = await other.open('j');
    await b.head();

    const listener = new pg.Client({ connectionString: pgHarness.url });
    await listener.connect();
    const channel = `stepchain_intake_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
    const notices: string[] = [];
    listener.on('notification', (n) => notices.push(n.payload ?? ''));
    await listener.query(`LISTEN ${channel}`);
    try {
      holding = true;
      const first = a.append({ input: { n: 1 } });
      await atMarks;
      const second = b.append({ input: { n: 2 } });
      // Pending: the sequencer's own row (its marks held) and, once the other writer's insert committed, that one.
      let late: string | undefined;
      while (late === undefined) {
        const r = await pgHarness.admin.query<{ id: string }>(
          `SELECT id FROM "${schema}".intake WHERE result IS NULL ORDER BY id`,
        );
        late = r.rows[1]?.id;
      }
      release();
      expect((await first).seq).toBe(1);
      expect((await second).seq).toBe(2);
      const key = (await pgHarness.admin.query<{ key: string }>(`SELECT key FROM "${schema}".journals`)).rows[0]!.key;
      // The first NOTIFY of the two: the sequencer chained its own row and left the late one pending.
      await expect.poll(() => notices.length).toBeGreaterThanOrEqual(2);
      expect(notices[0]).toMatch(new RegExp(`^${key} \\d+,-${late}$`));
      // The late row's writer, called, chained it and found nothing else pending.
      expect(notices[1]).toMatch(new RegExp(`^${key} ${late},-0$`));
    } finally {
      release();
      await listener.end();
    }
    expect((await a.verify()).steps).toBe(3);
  });
});
