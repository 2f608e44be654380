/**
 * Outsider 8's attacks on the Postgres intake (spec/POSTGRES.md §6.6), against the run's real server: a role
 * that can INSERT into, or UPDATE, the intake table, and nothing else. Finding 1: a planted row with invalid or
 * non-canonical content was chained as it stood, and the journal failed verify for good. Finding 2: 1 100
 * planted rows that no sequencer marks (another version, expiring in a century) filled every sequencer's
 * window, and every intake writer timed out. Finding 3: a forged `result` got a waiting writer acknowledged
 * for a step never chained. Finding 4: an edited pending payload was chained under the victim's step_id, and
 * the victim, a real process paused with SIGSTOP while another process sequenced, was acknowledged for it.
 * Every attack here succeeded before the checks; each must now leave the journal valid and every honest
 * append either acknowledged for the very line it wrote or failed with a coded error.
 */
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { eraseValue } from '../../src/erase.js';
import { writerProfile } from '../../src/record/formats.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { runChild } from '../store/helpers.js';

const h = await postgresHarness('pgo8', 4);
const { admin } = h;

type Journal = Awaited<ReturnType<PostgresStore['create']>>;

/** A journal written through the intake, one step in (which makes the intake table), and its table's name. */
async function journalWithIntake(s: PostgresStore, id: string): Promise<{ j: Journal; key: number; table: string }> {
  const j = await s.create(id);
  await j.append({ input: 'a', model: 'm', prompt: 'p', result: 1, step_id: 's0' });
  return { j, key: (j as unknown as { key: number }).key, table: `"${s.tables.schema}".intake` };
}

async function stepIds(s: PostgresStore, key: number): Promise<string[]> {
  const r = await admin.query<{ step_id: string }>(
    `SELECT step_id FROM "${s.tables.schema}".steps WHERE journal = $1 ORDER BY seq`,
    [key],
  );
  return r.rows.map((x) => x.step_id);
}

/** The head row held by another transaction (as a long batch would), so every intake writer waits. */
async function holdHead(s: PostgresStore, key: number): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: h.url });
  await c.connect();
  await c.query('BEGIN');
  await c.query(`SELECT 1 FROM "${s.tables.schema}".journals WHERE key = $1 FOR UPDATE`, [key]);
  return c;
}

async function pendingRows(table: string, key: number): Promise<{ id: string; payload: string }[]> {
  for (;;) {
    const r = await admin.query<{ id: string; payload: string }>(
      `SELECT id, payload FROM ${table} WHERE journal = $1 AND result IS NULL ORDER BY id`,
      [key],
    );
    if (r.rows.length > 0) return r.rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const okTexts = { input: '"x"', model: '"m"', prompt: '"p"', tool_call: 'null', result: '1' };

describe('finding 1: a planted row is checked as a direct append checks its input', () => {
  const plants: [string, Record<string, unknown>, string][] = [
    ['a ts that is no RFC 3339 timestamp', { ts: 'yesterday' }, 'FIELD_INVALID'],
    ['a text that is not JSON', { texts: { ...okTexts, input: '{' } }, 'JOURNAL_CORRUPT'],
    ['non-canonical texts (1.0, " 1")', { texts: { ...okTexts, input: '1.0', result: ' 1' } }, 'JOURNAL_CORRUPT'],
    ['a text member that is no content field', { texts: { ...okTexts, extra: '1' } }, 'JOURNAL_CORRUPT'],
    ['a content field missing', { texts: { input: '"x"' } }, 'JOURNAL_CORRUPT'],
    ['valid texts under a key that is not theirs', {}, 'JOURNAL_CORRUPT'],
    ['a value nested 100 000 deep', { texts: { ...okTexts, input: '['.repeat(100_000) + ']'.repeat(100_000) } }, ''],
  ];
  test.each(plants)(
    '%s: marked failed with a coded error, not chained; the honest append after it is',
    async (_, plant, code) => {
      const s = h.store({ intake: true, lockTimeoutMs: 60_000 });
      const { j, key, table } = await journalWithIntake(s, 'planted');
      const step = { texts: okTexts, key: 'sha256:' + '00'.repeat(32), step_id: 'planted', ...plant };
      const { rows } = await admin.query<{ id: string }>(
        `INSERT INTO ${table} (journal, expires_at, payload) VALUES ($1, now() + interval '1 minute', $2) RETURNING id`,
        [key, JSON.stringify({ v: 1, steps: [step] })],
      );
      const r = await j.append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' });
      expect(r.seq).toBe(1);
      const report = await j.verify();
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ ok: true, steps: 2 });
      expect(await stepIds(s, key)).toEqual(['s0', 's1']);
      const marked = await admin.query<{ result: string }>(`SELECT result FROM ${table} WHERE id = $1`, [rows[0]!.id]);
      const outcome = JSON.parse(marked.rows[0]!.result) as { ok: boolean; code: string; message: string };
      expect(outcome.ok).toBe(false);
      if (code !== '') expect(outcome.code).toBe(code);
      else expect(outcome.code).toMatch(/^[A-Z_]+$/);
      expect(outcome.message).toContain(`intake row ${rows[0]!.id}`);
    },
    120_000,
  );
});

describe('finding 2: rows a sequencer cannot chain never fill its window', () => {
  test('1 100 rows of another version expiring in a century, 1 100 more under a false version prefix, and 1 100 of this version claiming a century: an honest append is chained', async () => {
    const s = h.store({ intake: true, lockTimeoutMs: 120_000 });
    const { j, key, table } = await journalWithIntake(s, 'starved');
    const plant = (expiry: string, payload: string): Promise<unknown> =>
      admin.query(
        `INSERT INTO ${table} (journal, expires_at, payload) SELECT $1, now() + interval '${expiry}', $2 FROM generate_series(1, 1100)`,
        [key, payload],
      );
    await plant('100 years', '{"v":2,"steps":[]}');
    await plant('30 minutes', '{"v":1,"v":2,"steps":[]}');
    await plant('100 years', JSON.stringify({ v: 1, steps: [] }));
    const r = await j.append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' });
    expect(r.seq).toBe(1);
    expect(await stepIds(s, key)).toEqual(['s0', 's1']);
    // A claim past the bound (an hour, the longest contention timeout) is swept by the sequencer.
    const far = await admin.query(
      `SELECT 1 FROM ${table} WHERE journal = $1 AND expires_at > now() + interval '2 hours'`,
      [key],
    );
    expect(far.rows).toEqual([]);
    // The rows under a false prefix were taken and marked, each with a coded error.
    const liars = await admin.query<{ result: string | null }>(
      `SELECT result FROM ${table} WHERE journal = $1 AND payload <> '' AND starts_with(payload, '{"v":1,"v":2')`,
      [key],
    );
    expect(liars.rows).toEqual([]);
    const marked = await admin.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE journal = $1 AND result LIKE '{"ok":false,"code":"JOURNAL_CORRUPT"%'`,
      [key],
    );
    expect(marked.rows[0]!.n).toBe(1100);
    expect((await j.verify()).ok).toBe(true);
  }, 240_000);
});

describe('finding 3: a forged result acknowledges nothing', () => {
  const forgeries: [string, (line0: string) => string][] = [
    [
      'a seq past the head, an invented hash',
      () =>
        JSON.stringify({
          ok: true,
          results: [
            { seq: 1, step_id: 's1', step_hash: 'sha256:' + 'ab'.repeat(32), prev_hash: 'sha256:' + 'cd'.repeat(32) },
          ],
        }),
    ],
    [
      "another step's line, named as this one",
      (line0) => {
        const l = JSON.parse(line0) as { seq: number; step_hash: string; prev_hash: string; ts: string };
        return JSON.stringify({
          ok: true,
          results: [{ seq: 0, step_id: 's1', step_hash: l.step_hash, prev_hash: l.prev_hash, ts: l.ts }],
        });
      },
    ],
    ['a result that is no outcome', () => 'not json'],
  ];
  test.each(forgeries)(
    '%s: the append fails with JOURNAL_CORRUPT, and nothing is chained',
    async (_, forge) => {
      const s = h.store({ intake: true, lockTimeoutMs: 60_000 });
      const { j, key, table } = await journalWithIntake(s, 'forged');
      const line0 = (
        await admin.query<{ line: string }>(
          `SELECT line FROM "${s.tables.schema}".steps WHERE journal = $1 AND seq = 0`,
          [key],
        )
      ).rows[0]!.line;
      const holder = await holdHead(s, key);
      const append = j.append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' }).then(
        (r) => ({ acked: r }),
        (e: { code?: string }) => ({ failed: e.code }),
      );
      const [row] = await pendingRows(table, key);
      await admin.query(`UPDATE ${table} SET result = $2, payload = '' WHERE id = $1`, [row!.id, forge(line0)]);
      const out = await append;
      await holder.query('ROLLBACK');
      await holder.end();
      expect(out).toEqual({ failed: 'JOURNAL_CORRUPT' });
      expect(await stepIds(s, key)).toEqual(['s0']);
      expect(await j.verify()).toMatchObject({ ok: true, steps: 1 });
    },
    120_000,
  );

  test('a step without a step_id, the result pointing at an earlier line of the same content: not acknowledged', async () => {
    const s = h.store({ intake: true, lockTimeoutMs: 60_000 });
    const { j, key, table } = await journalWithIntake(s, 'twin');
    const first = await j.append({ input: 'same' });
    const holder = await holdHead(s, key);
    const append = j.append({ input: 'same' }).then(
      (r) => ({ acked: r }),
      (e: { code?: string }) => ({ failed: e.code }),
    );
    const [row] = await pendingRows(table, key);
    await admin.query(`UPDATE ${table} SET result = $2, payload = '' WHERE id = $1`, [
      row!.id,
      JSON.stringify({ ok: true, results: [first] }),
    ]);
    const out = await append;
    await holder.query('ROLLBACK');
    await holder.end();
    expect(out).toEqual({ failed: 'JOURNAL_CORRUPT' });
    expect((await stepIds(s, key)).length).toBe(2);
  }, 120_000);
});

describe('finding 4: an edited pending payload, chained by another process', () => {
  const edits: [string, boolean, string[]][] = [
    ['texts edited, key left: the sequencer refuses the row', false, ['s0', 's2']],
    ['texts edited, key made again: chained, and the victim is not acknowledged for it', true, ['s0', 's1', 's2']],
  ];
  test.each(edits)(
    '%s',
    async (_, rekey, chain) => {
      const s = h.store({ intake: true, lockTimeoutMs: 120_000 });
      const { j, key, table } = await journalWithIntake(s, 'victim');
      const holder = await holdHead(s, key);
      const victim = runChild('pg-intake-victim.mjs', [s.tables.schema, 'victim']);
      try {
        const [row] = await pendingRows(table, key);
        victim.proc.kill('SIGSTOP'); // so that this process's writer sequences the victim's row
        const payload = JSON.parse(row!.payload) as { steps: { texts: Record<string, string>; key: string }[] };
        payload.steps[0]!.texts.result = '666';
        if (rekey)
          payload.steps[0]!.key = writerProfile((j as unknown as { genesis: unknown }).genesis).key(
            payload.steps[0]!.texts,
          );
        await admin.query(`UPDATE ${table} SET payload = $2 WHERE id = $1`, [row!.id, JSON.stringify(payload)]);
        await holder.query('ROLLBACK');
        await j.append({ input: 'c', model: 'm', prompt: 'p', result: 3, step_id: 's2' });
      } finally {
        victim.proc.kill('SIGCONT');
        await holder.end();
      }
      const { code } = await victim.exited;
      expect(code).toBe(0);
      expect(victim.lines).toEqual(['fail JOURNAL_CORRUPT']);
      expect(await stepIds(s, key)).toEqual(chain);
      expect((await j.verify()).ok).toBe(true);
    },
    180_000,
  );
});

describe('steps only a writer may mark never go through the intake', () => {
  test('an erasure (kind "erasure", which a sequencer refuses in a row as a caller\'s step) commits the direct way', async () => {
    const s = h.store({ intake: true, lockTimeoutMs: 60_000 });
    const j = await s.create('erased', { format: 'stepchain/v3' } as never);
    await j.append({ input: 'a', result: { email: 'ann@example.org' }, step_id: 's0' } as never);
    const drawn = async (): Promise<string | null> =>
      (
        await admin.query<{ n: string | null }>(
          `SELECT last_value::text AS n FROM pg_sequences WHERE schemaname = $1 AND sequencename LIKE 'intake%'`,
          [s.tables.schema],
        )
      ).rows[0]!.n;
    const before = await drawn();
    expect(before).not.toBeNull(); // the ordinary append went through the intake
    await eraseValue(s, 'erased', { seq: 0, path: '/result/email', reason: 'test' });
    expect(await drawn()).toBe(before);
    expect((await j.verify()).ok).toBe(true);
  }, 120_000);
});

describe("honest rows chained by another writer are confirmed in every format (the writer's seal again matches)", () => {
  test.each(['stepchain/v1', 'stepchain/v3'])(
    '%s: two stores, each with appends pending behind a held head row',
    async (format) => {
      const a = h.store({ intake: true, lockTimeoutMs: 60_000 });
      const b = h.track(
        new (a.constructor as new (o: Record<string, unknown>) => PostgresStore)({
          connectionString: h.url,
          schema: a.tables.schema,
          intake: true,
          lockTimeoutMs: 60_000,
        }),
      );
      const ja = await a.create('both', { format } as never);
      await ja.append({ input: 'first', step_id: 's0' });
      const jb = await b.open('both');
      const key = (ja as unknown as { key: number }).key;
      const holder = await holdHead(a, key);
      const appends = [
        ...Array.from({ length: 3 }, (_, i) => ja.append({ input: { by: 'a', i } })),
        ...Array.from({ length: 3 }, (_, i) => jb.append({ input: { by: 'b', i }, ts: '2026-11-28T05:00:00.000Z' })),
      ];
      // Both stores' rows pending: whichever store gets the head row chains the other's, which must confirm them.
      for (;;) {
        const n = await admin.query<{ a: number; b: number }>(
          `SELECT count(*) FILTER (WHERE position($2 in payload) > 0)::int AS a, count(*) FILTER (WHERE position($3 in payload) > 0)::int AS b FROM "${a.tables.schema}".intake WHERE journal = $1 AND result IS NULL`,
          [key, String.raw`\"by\":\"a\"`, String.raw`\"by\":\"b\"`],
        );
        if (n.rows[0]!.a > 0 && n.rows[0]!.b > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.query('ROLLBACK');
      await holder.end();
      const done = await Promise.all(appends);
      expect(new Set(done.map((r) => r.seq)).size).toBe(6);
      const report = await ja.verify();
      expect(report.problems).toEqual([]);
      expect(report).toMatchObject({ ok: true, steps: 7 });
      for (const r of done.slice(3)) expect(r.ts).toBe('2026-11-28T05:00:00.000Z');
    },
    120_000,
  );
});
