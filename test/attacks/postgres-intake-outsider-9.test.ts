/**
 * Outsider 9's finding 1 on the Postgres intake (spec/POSTGRES.md §6.6), against the real server: a planted
 * row over the payload bound, built server-side (repeat), is refused by its size without its payload being
 * fetched. The attack's own row (about 600 MiB) killed the writer in the driver; a row just over the bound
 * shows the same path at a cost a test can pay (the server compresses it; the client never reads it).
 * Finding 2: rows of another version, planted by the thousand, were read past by every sequencer pass; the
 * selection now reads a partial index of the chainable rows, which such rows never enter.
 */
import { describe, expect, test } from 'vitest';
import { chainableRowsSql, MAX_PAYLOAD_BYTES } from '../../src/store/postgres/intake.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { postgresHarness } from '../helpers/postgres.js';

const h = await postgresHarness('pgo9', 2);
const { admin } = h;

/** An intake store with one journal holding one step: the journal, its key and its store's intake table. */
async function journalWithIntake(id: string) {
  const s: PostgresStore = h.store({ intake: true, lockTimeoutMs: 60_000 });
  const j = await s.create(id);
  await j.append({ input: 'a', model: 'm', prompt: 'p', result: 1, step_id: 's0' });
  return { s, j, key: (j as unknown as { key: number }).key, table: `"${s.tables.schema}".intake` };
}

describe('finding 1: a row over the payload bound is refused unread', () => {
  test('a row of the bound plus one byte under the version prefix: marked JOURNAL_CORRUPT by its size; the honest append after it is chained', async () => {
    const { j, key, table } = await journalWithIntake('oversized');
    const prefix = '{"v":1,';
    const { rows } = await admin.query<{ id: string }>(
      `INSERT INTO ${table} (journal, expires_at, payload) VALUES ($1, now() + interval '50 minutes', $2 || repeat('x', $3)) RETURNING id`,
      [key, prefix, MAX_PAYLOAD_BYTES + 1 - prefix.length],
    );
    const r = await j.append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' });
    expect(r.seq).toBe(1);
    const marked = await admin.query<{ result: string; n: number }>(
      `SELECT result, octet_length(payload) AS n FROM ${table} WHERE id = $1`,
      [rows[0]!.id],
    );
    const outcome = JSON.parse(marked.rows[0]!.result) as { ok: boolean; code: string; message: string };
    expect(outcome).toMatchObject({ ok: false, code: 'JOURNAL_CORRUPT' });
    expect(outcome.message).toContain(`intake row ${rows[0]!.id}`);
    expect(outcome.message).toContain(`over ${MAX_PAYLOAD_BYTES} bytes`);
    expect(marked.rows[0]!.n).toBe(0);
    expect((await j.verify()).ok).toBe(true);
  }, 180_000);
});

describe('finding 2: rows of another version cost a sequencer pass nothing', () => {
  test("5 000 planted rows of version 2 expiring in 59 minutes: the selection's plan reads the partial index of chainable rows, never the table; the honest append goes through", async () => {
    const { j, key, table } = await journalWithIntake('other-version');
    await admin.query(
      `INSERT INTO ${table} (journal, expires_at, payload) SELECT $1, now() + interval '59 minutes', '{"v":2,"steps":[]}' FROM generate_series(1, 5000)`,
      [key],
    );
    await admin.query(`ANALYZE ${table}`);
    const plan = await admin.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN ${chainableRowsSql(table).replace('$1', String(key))}`,
    );
    const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
    expect(text).toContain('intake_chainable');
    expect(text).not.toContain('Seq Scan');
    const r = await j.append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' });
    expect(r.seq).toBe(1);
    const left = await admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM ${table} WHERE journal = $1 AND result IS NULL`,
      [key],
    );
    expect(Number(left.rows[0]!.n)).toBe(5000); // left for a writer of their version, as §6.6 says
    expect((await j.verify()).ok).toBe(true);
  }, 180_000);

  test('an intake table made before the two indexes gains them when a store opens it', async () => {
    const { s: first } = await journalWithIntake('old-table');
    const schema = `"${first.tables.schema}"`;
    await admin.query(`DROP INDEX ${schema}.intake_chainable, ${schema}.intake_expiry`);
    const again: PostgresStore = h.store({ intake: true, lockTimeoutMs: 60_000, schema: first.tables.schema });
    await (await again.open('old-table')).append({ input: 'b', model: 'm', prompt: 'p', result: 2, step_id: 's1' });
    const found = await admin.query<{ c: string | null; e: string | null }>(
      'SELECT to_regclass($1)::text AS c, to_regclass($2)::text AS e',
      [`${schema}.intake_chainable`, `${schema}.intake_expiry`],
    );
    expect(found.rows[0]).toEqual({
      c: `${first.tables.schema}.intake_chainable`,
      e: `${first.tables.schema}.intake_expiry`,
    });
  }, 180_000);
});
