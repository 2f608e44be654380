/**
 * The Postgres store on a real server (test/setup/postgres.ts): what the conformance suite cannot say
 * about it. The same steps give the same bytes as the file store; the schema is versioned and its
 * migration safe to run twice; servers that cannot be used give coded errors; damage written around the
 * store is found by verify and refused by writers; an unanswered COMMIT is resolved by looking.
 */
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { diff } from '../../src/diff/index.js';
import { verifyReceipt } from '../../src/receipt/index.js';
import { receiptBytes } from '../../src/receipt/node.js';
import { FileStore, StoreError, type Journal, type StepInput, type StoredLine } from '../../src/store/index.js';
import {
  PostgresStore,
  SCHEMA_VERSION,
  parsePostgresLocation,
  type DbClient,
  type DbPool,
} from '../../src/store/postgres/index.js';
import { tempDir } from '../helpers/tmp.js';
import { postgresHarness } from '../helpers/postgres.js';
import { all, code } from '../helpers/outcomes.js';

const pgHarness = await postgresHarness('pgtest', 4);
const { url, admin } = pgHarness;
const pgStore = (options: Record<string, unknown> = {}): PostgresStore => pgHarness.store(options);

/** A run with caller-fixed identities (step_id, ts), blobs, chat prompts and enough bytes to rotate buckets. */
function run(count: number): StepInput[] {
  return Array.from({ length: count }, (_, i) => ({
    step_id: `call-${i}`,
    ts: `2026-03-01T10:00:${String(i % 60).padStart(2, '0')}.${String(i).padStart(3, '0').slice(-3)}Z`,
    input: { task: 't-1', i, text: 'ünïcødé ✓ \u2028 "quoted"' },
    model: 'gpt-x',
    prompt: [{ role: 'user', content: `step ${i}` }],
    tool_call: i % 3 === 0 ? { name: 'search', args: { q: `q${i}`, n: -0 } } : null,
    result: i % 7 === 3 ? { page: 'p'.repeat(3000 + i) } : { hits: [i, i * 1.5, 1e21] },
    ...(i % 5 === 0 ? { meta: { agent: 'a', attempt: 1 } } : {}),
  }));
}

describe('identical bytes', () => {
  test('the same steps give the same lines, buckets, blobs, receipt and no diff in the file store and Postgres', async () => {
    const identity = {
      journalId: 'run-identity',
      createdAt: '2026-03-01T10:00:00.000Z',
      segmentBytes: 4096,
      blobThreshold: 2048,
    };
    const file = await new FileStore(tempDir(), { fsync: 'none' }).create('run', identity);
    const pgj = await pgStore().create('run', identity);
    const steps = run(40);
    // One path step by step, the other in batches: group commit must not change a byte.
    for (const s of steps) await file.append(s);
    await pgj.appendMany(steps.slice(0, 17));
    await Promise.all(steps.slice(17).map((s) => pgj.append(s)));
    const a = await all(file.lines());
    const b = await all(pgj.lines());
    expect(b).toEqual(a);
    expect(new Set(a.map((l: StoredLine) => l.segment)).size).toBeGreaterThan(3);
    const digests = [
      ...new Set(a.flatMap((l) => [...l.text.matchAll(/"digest":"(sha256:[0-9a-f]{64})"/g)].map((m) => m[1]!))),
    ];
    expect(digests.length).toBeGreaterThan(3);
    for (const d of digests) expect(Buffer.from((await pgj.blob(d))!)).toEqual(Buffer.from((await file.blob(d))!));
    const ra = await receiptBytes(file);
    const rb = await receiptBytes(pgj);
    expect(Buffer.from(rb).equals(Buffer.from(ra))).toBe(true);
    expect((await verifyReceipt(rb)).ok).toBe(true);
    const d = await diff(file, pgj, { envelope: true, all: true });
    expect(d.same).toBe(true);
    // A retry in Postgres returns the step the file store also has, byte for byte.
    expect(await pgj.append(steps[39]!)).toEqual(await file.append(steps[39]!));
    expect(await pgj.head()).toEqual(await file.head());
  });
});

describe('retries and long journals', () => {
  /** The real pool, counting the statements that look step_ids up. */
  function countingPool(real: DbPool): DbPool & { lookups: number } {
    const wrapper = {
      lookups: 0,
      connect: async (): Promise<DbClient> => {
        const client = await real.connect();
        return {
          query: (text: string, values?: readonly unknown[]) => {
            if (text.includes('step_id = ANY(')) wrapper.lookups++;
            return client.query(text, values as unknown[]);
          },
          release: (destroy?: Error | boolean) => client.release(destroy),
        } as DbClient;
      },
      query: real.query.bind(real),
      end: async () => {},
      on: real.on.bind(real),
    };
    return wrapper as DbPool & { lookups: number };
  }

  test('retried step_ids, in every character the id rule allows, are found with one statement per batch, and none without step_ids', async () => {
    const realPool = new pg.Pool({ connectionString: url, max: 3 });
    realPool.on('error', () => {});
    try {
      const pool = countingPool(realPool as unknown as DbPool);
      const j = await pgStore({ pool }).create('j');
      const ids = ['a.b', 'C:d', 'e_F-9', 'x'.repeat(100)];
      const first = await j.appendMany(ids.map((step_id, i) => ({ step_id, input: i })));
      pool.lookups = 0;
      const again = await j.appendMany([
        ...ids.map((step_id, i) => ({ step_id, input: i })),
        { step_id: 'new:one', input: 'new' },
      ]);
      expect(pool.lookups).toBe(1);
      expect(again.slice(0, 4)).toEqual(first);
      expect(again[4]).toMatchObject({ seq: 4, step_id: 'new:one' });
      expect(await code(j.append({ step_id: 'C:d', input: 'changed' }))).toBe('STEP_ID_CONFLICT');
      pool.lookups = 0;
      await Promise.all([j.append({ input: 'no id' }), j.appendMany([{ input: 1 }, { input: 2 }])]);
      expect(pool.lookups).toBe(0);
      expect((await j.verify()).ok).toBe(true);
    } finally {
      await realPool.end();
    }
  });

  test('verify reads a journal longer than a page across many buckets: the head row agrees, damage deep in it is located', async () => {
    const store = pgStore({ segmentBytes: 4096 });
    const j = await store.create('long');
    const steps = Array.from({ length: 2300 }, (_, i) => ({ input: { i, pad: 'p'.repeat(40) } }));
    await j.appendMany(steps.slice(0, 1200));
    await j.appendMany(steps.slice(1200));
    const report = await j.verify();
    expect(report).toMatchObject({ ok: true, steps: 2300, head_seq: 2299, problems: [] });
    const lines = await all(j.lines());
    const at = lines[2100]!;
    const lineNo = lines.filter((l) => l.segment === at.segment && l.seq <= 2100).length;
    const key = Number(
      (await admin.query(`SELECT key FROM "${store.tables.schema}".journals WHERE id = 'long'`)).rows[0].key,
    );
    await admin.query(
      `UPDATE "${store.tables.schema}".steps SET line = replace(line, '"i":2100', '"i":2101') WHERE journal = $1 AND seq = 2100`,
      [key],
    );
    const damaged = await j.verify();
    expect(damaged.problems[0]).toMatchObject({
      code: 'HASH_MISMATCH',
      location: { seq: 2100, file: at.segment, line: lineNo },
    });
  });
});

describe('schema', () => {
  test('is created on first write, at SCHEMA_VERSION, once, by many writers at the same time', async () => {
    const schema = `pgtest_${process.pid}_race`;
    const racers = Array.from({ length: 6 }, () => pgStore({ schema }));
    await Promise.all(racers.map((s, i) => s.create(`j${i}`)));
    const rows = await admin.query(`SELECT version FROM "${schema}".migrations ORDER BY version`);
    expect(rows.rows).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => ({ version: i + 1 })));
    // A store started later finds it current and changes nothing.
    const later = pgStore({ schema });
    await later.create('later');
    expect((await admin.query(`SELECT count(*)::int AS n FROM "${schema}".migrations`)).rows[0].n).toBe(SCHEMA_VERSION);
    expect(await later.list()).toEqual(['j0', 'j1', 'j2', 'j3', 'j4', 'j5', 'later']);
  });

  test('readers never create it: an empty database is an empty store', async () => {
    const store = pgStore();
    expect(await store.list()).toEqual([]);
    expect(await code(store.open('j', { readOnly: true }))).toBe('JOURNAL_NOT_FOUND');
    expect(await code(store.verify('j'))).toBe('JOURNAL_NOT_FOUND');
    const health = await store.health('j');
    expect(health).toMatchObject({
      backend: 'postgres',
      reachable: true,
      writable: true,
      schema: { version: null, supported: SCHEMA_VERSION },
      journal: { found: false },
    });
    const exists = await admin.query('SELECT to_regnamespace($1) IS NOT NULL AS e', [store.tables.schema]);
    expect(exists.rows[0].e).toBe(false);
  });

  test('a schema from a newer stepchain is SCHEMA_TOO_NEW for readers and writers, and left untouched', async () => {
    const store = pgStore();
    const j = await store.create('j');
    await j.append({ input: 1 });
    await admin.query(
      `INSERT INTO "${store.tables.schema}".migrations (version, description) VALUES ($1, 'from the future')`,
      [SCHEMA_VERSION + 1],
    );
    const fresh = pgStore({ schema: store.tables.schema });
    for (const op of [
      () => fresh.list(),
      () => fresh.open('j'),
      () => fresh.open('j', { readOnly: true }),
      () => fresh.create('k'),
      () => fresh.verify('j'),
    ]) {
      expect(await code(op())).toBe('SCHEMA_TOO_NEW');
    }
    try {
      await fresh.open('j');
    } catch (e) {
      expect((e as Error).message).toMatch(
        new RegExp(`version ${SCHEMA_VERSION + 1}.*newer stepchain.*version ${SCHEMA_VERSION}`),
      );
    }
    const health = await fresh.health();
    expect(health.ok).toBe(false);
    expect(health.problems.map((p) => p.code)).toContain('SCHEMA_TOO_NEW');
    expect((await admin.query(`SELECT count(*)::int AS n FROM "${store.tables.schema}".steps`)).rows[0].n).toBe(1);
  });
});

describe('servers that cannot be used', () => {
  const parsed = new URL(url);
  test.each([
    [
      'a wrong password',
      () => {
        const u = new URL(url);
        u.password = 'wrong';
        return u.toString();
      },
      'AUTH_FAILED',
      /refused the login/,
    ],
    [
      'no server listening',
      () => {
        const u = new URL(url);
        u.port = '1';
        return u.toString();
      },
      'SERVER_UNREACHABLE',
      /could not be reached.*ECONNREFUSED/,
    ],
    [
      'a database that does not exist',
      () => {
        const u = new URL(url);
        u.pathname = '/no_such_db';
        return u.toString();
      },
      'SERVER_ERROR',
      /database does not exist/,
    ],
  ])('%s: a coded error that names the server and masks the password', async (_label, make, expected, message) => {
    const store = new PostgresStore({ connectionString: make(), connection: { connectionTimeoutMillis: 5000 } });
    pgHarness.track(store);
    for (const op of [() => store.list(), () => store.create('j'), () => store.open('j', { readOnly: true })]) {
      try {
        await op();
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(StoreError);
        expect((e as StoreError).code).toBe(expected);
        expect((e as Error).message).toMatch(message);
        expect((e as Error).message).toContain(`${parsed.hostname}`);
        expect((e as Error).message).not.toContain(parsed.password);
      }
    }
    const health = await store.health();
    expect(health).toMatchObject({ ok: false, reachable: false });
    expect(health.problems[0]!.code).toBe(expected);
  });

  test('a missing password (none in the URI, none in the environment) is AUTH_FAILED with the way to give one', async () => {
    const u = new URL(url);
    u.password = '';
    const saved = process.env.PGPASSWORD;
    delete process.env.PGPASSWORD;
    const saveFile = process.env.PGPASSFILE;
    process.env.PGPASSFILE = '/nonexistent/pgpass';
    try {
      const store = new PostgresStore(u.toString());
      pgHarness.track(store);
      const e = await store.list().catch((x: unknown) => x as StoreError);
      expect((e as StoreError).code).toBe('AUTH_FAILED');
      expect((e as Error).message).toContain('PGPASSWORD');
    } finally {
      if (saved !== undefined) process.env.PGPASSWORD = saved;
      if (saveFile === undefined) delete process.env.PGPASSFILE;
      else process.env.PGPASSFILE = saveFile;
    }
  });

  test('PGPASSWORD supplies the password the location leaves out', async () => {
    const u = new URL(url);
    const password = u.password;
    u.password = '';
    const saved = process.env.PGPASSWORD;
    process.env.PGPASSWORD = password;
    try {
      const store = pgStore({ connectionString: u.toString() });
      await store.create('j');
      expect(await store.list()).toEqual(['j']);
    } finally {
      if (saved === undefined) delete process.env.PGPASSWORD;
      else process.env.PGPASSWORD = saved;
    }
  });
});

describe('locations', () => {
  test.each([
    [
      'postgres://ann@db.example:5433/agents?journal=run-42',
      {
        journal: 'run-42',
        schema: undefined,
        display: 'postgres://ann@db.example:5433/agents?journal=run-42',
        hasPassword: false,
      },
    ],
    [
      'postgresql://ann:s3cret@db/agents?journal=r&schema=team_a&sslmode=require',
      {
        journal: 'r',
        schema: 'team_a',
        display: 'postgresql://ann:***@db/agents?journal=r&schema=team_a',
        hasPassword: true,
      },
    ],
    ['postgres:///agents', { journal: undefined, schema: undefined, hasPassword: false }],
  ])('%s', (text, expected) => {
    const loc = parsePostgresLocation(text);
    expect(loc).toMatchObject(expected);
    expect(loc.connectionString).not.toMatch(/journal=|schema=/);
    if (text.includes('sslmode')) expect(loc.connectionString).toContain('sslmode=require');
  });

  test.each([
    ['not postgres', '/var/lib/journal'],
    ['two journals', 'postgres://h/db?journal=a&journal=b'],
    ['unparsable', 'postgres://a:b:c@[::1/x'],
  ])('refuses %s with OPTION_INVALID, never echoing a password', (_l, text) => {
    try {
      parsePostgresLocation(text);
      expect.unreachable();
    } catch (e) {
      expect((e as StoreError).code).toBe('OPTION_INVALID');
      expect((e as Error).message).not.toContain(':b:c');
    }
  });

  test('a store URI that names a journal is refused: journals are named in create() and open()', () => {
    expect(() => new PostgresStore(`${url}?journal=x`)).toThrow(/OPTION_INVALID/);
    expect(() => new PostgresStore({ connectionString: url, schema: 'Bad-Name' })).toThrow(/OPTION_INVALID/);
  });
});

describe('damage written around the store', () => {
  async function damaged(): Promise<{ store: PostgresStore; j: Journal; schema: string; key: number }> {
    const store = pgStore({ blobThreshold: 1024 });
    const j = await store.create('j');
    for (let i = 0; i < 6; i++) await j.append({ input: i, result: i === 2 ? 'b'.repeat(2000) : null });
    const schema = store.tables.schema;
    const key = (await admin.query(`SELECT key FROM "${schema}".journals WHERE id = 'j'`)).rows[0].key as string;
    return { store, j, schema, key: Number(key) };
  }

  test('an edited line is HASH_MISMATCH at its seq and bucket', async () => {
    const { j, schema, key } = await damaged();
    await admin.query(
      `UPDATE "${schema}".steps SET line = replace(line, '"input":3', '"input":4') WHERE journal = $1 AND seq = 3`,
      [key],
    );
    const report = await j.verify();
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({
      code: 'HASH_MISMATCH',
      location: { seq: 3, file: '0000000000000000.jsonl', line: 4 },
    });
  });

  test('a removed blob is BLOB_MISSING; a changed one BLOB_CORRUPT', async () => {
    const { j, schema, key } = await damaged();
    await admin.query(`UPDATE "${schema}".blobs SET bytes = convert_to('"x"', 'UTF8') WHERE journal = $1`, [key]);
    expect((await j.verify()).problems.map((p) => p.code)).toEqual(['BLOB_CORRUPT']);
    await admin.query(`DELETE FROM "${schema}".blobs WHERE journal = $1`, [key]);
    const report = await j.verify();
    expect(report.problems).toEqual([
      expect.objectContaining({ code: 'BLOB_MISSING', location: expect.objectContaining({ seq: 2, field: 'result' }) }),
    ]);
    expect(await code(j.get(2))).toBe('BLOB_MISSING');
  });

  test('a deleted row is found; a row past the head row is found by verify and refused by writers', async () => {
    const { j, schema, key } = await damaged();
    await admin.query(
      `INSERT INTO "${schema}".steps (journal, seq, bucket, step_id, line) SELECT journal, 6, bucket, 'planted', line FROM "${schema}".steps WHERE journal = $1 AND seq = 5`,
      [key],
    );
    expect((await j.verify()).problems.map((p) => p.code)).toEqual(['JOURNAL_INVALID']);
    expect(await code(j.append({ input: 'next' }))).toBe('JOURNAL_CORRUPT');
    await admin.query(`DELETE FROM "${schema}".steps WHERE journal = $1 AND seq IN (4, 6)`, [key]);
    const report = await j.verify();
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => p.code)).toContain('SEQ_GAP');
    expect(await code(all(j.lines()))).toBe('JOURNAL_CORRUPT');
  });

  test("a row whose line is another seq's is JOURNAL_INVALID at that row, beside the chain's own problems", async () => {
    const { j, schema, key } = await damaged();
    // Swap the lines of rows 3 and 4 (each row keeps its own step_id and bucket).
    await admin.query(
      `UPDATE "${schema}".steps s SET line = o.line FROM "${schema}".steps o WHERE s.journal = $1 AND o.journal = $1 AND ((s.seq = 3 AND o.seq = 4) OR (s.seq = 4 AND o.seq = 3))`,
      [key],
    );
    const report = await j.verify();
    expect(report.ok).toBe(false);
    const mine = report.problems.filter((p) => p.code === 'JOURNAL_INVALID');
    expect(mine.map((p) => p.message)).toEqual([
      'the row with seq 3 holds the step with seq 4',
      'the row with seq 4 holds the step with seq 3',
    ]);
    expect(mine[0]!.location).toMatchObject({ file: '0000000000000000.jsonl', line: 4, field: 'seq' });
    expect(report.problems.length).toBeGreaterThan(2);
  });

  test('metadata that is not what a writer stores is JOURNAL_INVALID in verify, and refused by open', async () => {
    const { store, schema, key } = await damaged();
    await admin.query(
      `UPDATE "${schema}".journals SET meta = replace(meta, '"lineage":null', '"lineage":null,"x":1') WHERE key = $1`,
      [key],
    );
    const report = await store.verify('j');
    expect(report).toMatchObject({ ok: false, problems: [{ code: 'JOURNAL_INVALID', location: { field: 'meta' } }] });
    expect(await code(store.open('j'))).toBe('JOURNAL_INVALID');
  });
});

describe('an unanswered COMMIT', () => {
  /** The real pool, except that the answer to COMMIT is lost (after or instead of sending it). */
  function losingPool(real: DbPool, mode: 'after' | 'before'): DbPool & { armed: boolean } {
    const wrapper = {
      armed: false,
      connect: async (): Promise<DbClient> => {
        const client = await real.connect();
        return {
          query: async (text: string, values?: readonly unknown[]) => {
            if (wrapper.armed && text === 'COMMIT') {
              wrapper.armed = false;
              if (mode === 'after') await client.query(text);
              else await client.query('ROLLBACK');
              throw Object.assign(new Error('Connection terminated unexpectedly'), {});
            }
            return client.query(text, values as unknown[]);
          },
          release: (destroy?: Error | boolean) => client.release(destroy),
        } as DbClient;
      },
      query: real.query.bind(real),
      end: async () => {},
      on: real.on.bind(real),
    };
    return wrapper as DbPool & { armed: boolean };
  }

  test.each([
    ['committed: the append resolves with its step', 'after' as const, true],
    ['not committed: the append fails SERVER_UNREACHABLE and nothing was written', 'before' as const, false],
  ])('%s', async (_label, mode, committed) => {
    const realPool = new pg.Pool({ connectionString: url, max: 3 });
    realPool.on('error', () => {});
    try {
      const pool = losingPool(realPool as unknown as DbPool, mode);
      const store = new PostgresStore({ pool, schema: pgHarness.schemaName() });
      const j = await store.create('j');
      await j.append({ input: 'before' });
      pool.armed = true;
      const outcome = await j.append({ input: 'in doubt' }).then(
        (r) => r,
        (e: unknown) => e as StoreError,
      );
      if (committed) {
        expect(outcome).toMatchObject({ seq: 1 });
        expect((await j.get(1))!.input).toBe('in doubt');
      } else {
        expect((outcome as StoreError).code).toBe('SERVER_UNREACHABLE');
        expect(await j.head()).toMatchObject({ seq: 0 });
      }
      expect((await j.verify()).ok).toBe(true);
    } finally {
      await realPool.end();
    }
  });
});
