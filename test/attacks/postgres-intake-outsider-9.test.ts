/**
 * Outsider 9's finding 1 on the Postgres intake (spec/POSTGRES.md §6.6), against the real server: a planted
 * row over the payload bound, built server-side (repeat), is refused by its size without its payload being
 * fetched. The attack's own row (about 600 MiB) killed the writer in the driver; a row just over the bound
 * shows the same path at a cost a test can pay (the server compresses it; the client never reads it).
 */
import { describe, expect, test } from 'vitest';
import { MAX_PAYLOAD_BYTES } from '../../src/store/postgres/intake.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { postgresHarness } from '../helpers/postgres.js';

const h = await postgresHarness('pgo9', 2);
const { admin } = h;

describe('finding 1: a row over the payload bound is refused unread', () => {
  test('a row of the bound plus one byte under the version prefix: marked JOURNAL_CORRUPT by its size; the honest append after it is chained', async () => {
    const s: PostgresStore = h.store({ intake: true, lockTimeoutMs: 60_000 });
    const j = await s.create('oversized');
    await j.append({ input: 'a', model: 'm', prompt: 'p', result: 1, step_id: 's0' });
    const key = (j as unknown as { key: number }).key;
    const table = `"${s.tables.schema}".intake`;
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
