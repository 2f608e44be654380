/**
 * Outsider 11 on the Postgres intake's first try (spec/POSTGRES.md §6.6 step 1), against the real server. The
 * statement that inserts a writer's rows also takes the head row FOR UPDATE SKIP LOCKED, to learn whether it is
 * free; the same statement deletes the rows this writer sequenced earlier. A role that can write the intake (the
 * threat model's) locked one of those rows and kept its transaction open: the statement waited for it while
 * holding the head row, and every writer of the journal, direct-path ones too, failed LOCK_TIMEOUT until the
 * role let go; the writer itself ignored its own contention timeout. Now the delete skips rows locked by others.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { describe, expect, test } from 'vitest';
import { postgresHarness } from '../helpers/postgres.js';

const h = await postgresHarness('pgo11', 3);
const step = (n: number) => ({ input: { n }, model: 'm', prompt: 'p', result: n });

describe('outsider 11: a held lock on an intake row', () => {
  test('blocks neither the writer whose row it is nor any other writer of the journal, direct or through the intake', async () => {
    const writer = h.store({ intake: true, lockTimeoutMs: 3000 });
    const schema = writer.tables.schema;
    const w = await writer.create('j');
    await w.append(step(0)); // sequenced by itself: its row stays, marked, until its next insert deletes it
    const marked = await h.admin.query(`SELECT id FROM "${schema}".intake WHERE result IS NOT NULL`);
    expect(marked.rows).toHaveLength(1);

    const attacker = new pg.Client({ connectionString: h.url });
    await attacker.connect();
    await attacker.query('BEGIN');
    await attacker.query(`SELECT id FROM "${schema}".intake FOR UPDATE`);
    try {
      const timed = async <T>(p: Promise<T>): Promise<{ value: T; ms: number }> => {
        const t0 = performance.now();
        const value = await p;
        return { value, ms: performance.now() - t0 };
      };
      const own = await timed(w.append(step(1)));
      expect(own.value.seq).toBe(1);
      const direct = await h.store({ schema, intake: false, lockTimeoutMs: 2000 }).open('j');
      const other = await h.store({ schema, intake: true, lockTimeoutMs: 2000 }).open('j');
      const [d, o] = await Promise.all([timed(direct.append(step(2))), timed(other.append(step(3)))]);
      expect([own.value.seq, d.value.seq, o.value.seq].sort()).toEqual([1, 2, 3]);
      // Each well inside the 2–3 s contention timeouts that the blocked build ran out (a loaded machine's margin).
      for (const x of [own, d, o]) expect(x.ms).toBeLessThan(1500);
    } finally {
      await attacker.query('ROLLBACK');
      await attacker.end();
    }
    const check = await w.verify();
    expect(check.ok).toBe(true);
    expect(check.steps).toBe(4);
  });
});

/**
 * Outsider 12 on the sequencer's call (§6.6 steps 2 and 3): any role that can connect may NOTIFY the channel, so
 * a flood of forged calls ("-0"), of "*", and of garbled payloads costs waiters tries, and nothing else: every
 * append resolves, each once, and the chain verifies.
 */
describe('outsider 12: forged and garbled NOTIFYs on the intake channel', () => {
  test('a flood of them while two writers append: every append resolves once, the chain verifies', async () => {
    const first = h.store({ intake: true, lockTimeoutMs: 20_000 });
    const schema = first.tables.schema;
    const a = await first.create('j');
    const b = await h.store({ schema, intake: true, lockTimeoutMs: 20_000 }).open('j');
    const key = (await h.admin.query<{ key: string }>(`SELECT key FROM "${schema}".journals`)).rows[0]!.key;
    const channel = `stepchain_intake_${createHash('sha256').update(schema).digest('hex').slice(0, 16)}`;
    const forged = [`${key} 1,-0`, `${key} *`, `${key} 9,-x`, `${key} -1e400`, `${key} ,,,-`, `x -0`, `${key} 1,-00`];
    const flooder = new pg.Client({ connectionString: h.url });
    await flooder.connect();
    let flooding = true;
    const flood = (async () => {
      for (let i = 0; flooding; i++)
        await flooder.query('SELECT pg_notify($1, $2)', [channel, forged[i % forged.length]]);
    })();
    try {
      const appends = await Promise.all(
        [a, b].map(async (j, w) => {
          const seqs: number[] = [];
          for (let i = 0; i < 20; i++) seqs.push((await j.append(step(100 * w + i))).seq);
          return seqs;
        }),
      );
      const seqs = appends.flat().sort((x, y) => x - y);
      expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i));
    } finally {
      flooding = false;
      await flood;
      await flooder.end();
    }
    const check = await a.verify();
    expect(check.ok).toBe(true);
    expect(check.steps).toBe(40);
  });
});
