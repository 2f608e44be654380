/**
 * The fault battery of the Postgres store (issue 34; spec/POSTGRES.md §6): the same invariants as the file
 * store's (test/faults/file-store.test.ts) — every acknowledged append present exactly once, every effect
 * with one outcome, the chain verifying, no process told it succeeded when it did not — under starved
 * writers, several processes ending the same effects, a writer's backend stopped (SIGSTOP) and resumed
 * while others append, and its connections killed (pg_terminate_backend) again and again, mid-transaction
 * or between. Backends are found by the writers' application_name in pg_stat_activity. Real processes, the
 * run's real server; no wall-clock assertion.
 */
import { describe, expect, test } from 'vitest';
import { postgresHarness } from '../helpers/postgres.js';
import { acksOf, drive, expectAcknowledgedOnce, sleep, until, type Driven } from './helpers.js';
import { endingTogether, starvedWriters } from './scenarios.js';

const pg = await postgresHarness('pgfault', 3);

/** The server pids of a writer's connections, and the states they are in. */
async function backends(app: string): Promise<Array<{ pid: number; state: string }>> {
  const r = await pg.admin.query<{ pid: number; state: string }>(
    `SELECT pid, coalesce(state, '') AS state FROM pg_stat_activity WHERE application_name = $1`,
    [app],
  );
  return r.rows;
}

function writer(
  schema: string,
  id: string,
  name: string,
  count: number,
  options: Record<string, unknown> = {},
): Driven {
  return drive('writer.mjs', [
    'pg',
    schema,
    id,
    name,
    String(count),
    JSON.stringify({ connection: { max: 2, application_name: `fault-${name}` }, lockTimeoutMs: 120_000, ...options }),
  ]);
}

describe('the Postgres store under faults (issue 34)', () => {
  test('starved: 3 niced writers × 12 appends beside busy processes — all acknowledged, each once', async () => {
    const s = pg.store();
    await starvedWriters('pg', s.tables.schema, s, 'starved', 3, 12, {});
  }, 120_000);

  test.each([
    [2, 10],
    [8, 3],
  ])(
    '%i processes ending the same %i effects, starved: one outcome each, the others refused',
    async (procs, effects) => {
      const s = pg.store();
      await endingTogether('pg', s.tables.schema, s, `ending-${procs}`, procs, effects);
    },
    120_000,
  );

  test("a writer's backend stopped (SIGSTOP) in its transaction, then resumed: the others wait, and every acknowledged append is there once", async () => {
    const s = pg.store();
    await s.create('stopped');
    const a = writer(s.tables.schema, 'stopped', 'a', 40);
    const b = writer(s.tables.schema, 'stopped', 'b', 20);
    await a.waitFor((l) => l.startsWith('ack '));
    // Catch a's backend inside its append transaction (between its statements), and stop it there.
    let stopped: number | null = null;
    while (stopped === null && a.proc.exitCode === null) {
      const inTx = (await backends('fault-a')).find((x) => x.state === 'idle in transaction' || x.state === 'active');
      if (inTx !== undefined) {
        process.kill(inTx.pid, 'SIGSTOP');
        stopped = inTx.pid;
      }
    }
    expect(stopped).not.toBeNull();
    await sleep(1500);
    process.kill(stopped!, 'SIGCONT');
    await Promise.all([a.exited, b.exited]);
    expect((await a.exited).code, a.stderr()).toBe(0);
    expect((await b.exited).code, b.stderr()).toBe(0);
    const acks = new Map([...acksOf(a), ...acksOf(b)]);
    expect(acks.size).toBe(60);
    expect(await expectAcknowledgedOnce(s, 'stopped', acks)).toHaveLength(60);
  }, 120_000);

  test("a writer's connections killed (pg_terminate_backend) over and over, mid-transaction or between: nothing acknowledged is lost or doubled", async () => {
    const s = pg.store();
    await s.create('terminated');
    const a = writer(s.tables.schema, 'terminated', 'a', 30);
    const b = writer(s.tables.schema, 'terminated', 'b', 15);
    await a.waitFor((l) => l.startsWith('ack '));
    let kills = 0;
    while (a.proc.exitCode === null && kills < 6) {
      const all = await backends('fault-a');
      const inTx = all.find((x) => x.state === 'idle in transaction' || x.state === 'active') ?? all[0];
      if (inTx !== undefined) {
        await pg.admin.query('SELECT pg_terminate_backend($1)', [inTx.pid]);
        kills++;
        await until(() => a.lines.length > 0); // a moment for the writer to notice and reconnect
        await sleep(20);
      }
    }
    await Promise.all([a.exited, b.exited]);
    expect((await a.exited).code, a.stderr()).toBe(0);
    expect((await b.exited).code, b.stderr()).toBe(0);
    // b never failed; a's failed tries were retried with the same step_id (a committed one comes back as it is).
    expect(b.lines.filter((l) => l.startsWith('fail '))).toEqual([]);
    const acks = new Map([...acksOf(a), ...acksOf(b)]);
    const ids = await expectAcknowledgedOnce(s, 'terminated', acks);
    expect(acks.size).toBeLessThanOrEqual(ids.length);
    expect(ids.filter((x) => x.startsWith('b-'))).toHaveLength(15);
  }, 120_000);
});
