/**
 * Many processes, one Postgres journal: real child processes, each with its own connections, running the
 * built store (dist/, which `npm test` builds) against the run's real server. Nothing lost, duplicated or
 * forked; a writer killed at any moment loses no acknowledged step and leaves nothing half-written.
 */
import { describe, expect, test } from 'vitest';
import { rootOfLeaves, stepLeafHash, tileCountAt } from '../../src/proofs/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import type { StepRecord } from '../../src/store/index.js';
import { killAndRetryRounds, runChild, runToEnd } from './helpers.js';
import { postgresHarness } from '../helpers/postgres.js';

const pgHarness = await postgresHarness('pgproc', 3);
const { admin } = pgHarness;
const store = (options: Record<string, unknown> = {}): PostgresStore => pgHarness.store(options);

/**
 * The tree the writers kept in their commits (spec/POSTGRES.md §4.1): its stored state and tile rows are
 * those of the whole chain, and its root is the RFC 6962 root of the chain's step hashes.
 */
async function expectTreeKept(s: PostgresStore, id: string, size: number): Promise<void> {
  const j = await s.open(id, { readOnly: true });
  const state = await admin.query(
    `SELECT size::float8 AS size FROM "${s.tables.schema}".tree_state WHERE journal = $1`,
    [j.key],
  );
  expect(state.rows).toEqual([{ size }]);
  const tiles = await admin.query(
    `SELECT count(*)::int AS n FROM "${s.tables.schema}".tree_tiles WHERE journal = $1 GROUP BY tile_level ORDER BY tile_level`,
    [j.key],
  );
  expect(tiles.rows.map((r: { n: number }) => r.n)).toEqual(
    [0, 1, 2].map((l) => tileCountAt(size, l)).filter((c) => c > 0),
  );
  const leaves: Uint8Array[] = [];
  for await (const l of j.lines()) leaves.push(stepLeafHash((JSON.parse(l.text) as { step_hash: string }).step_hash)!);
  expect(Buffer.from((await j.treeView()).root)).toEqual(Buffer.from(rootOfLeaves(leaves)));
}

async function steps(s: PostgresStore, id: string): Promise<StepRecord[]> {
  const j = await s.open(id, { readOnly: true });
  const out: StepRecord[] = [];
  for await (const r of j.read()) out.push(r);
  return out;
}

describe('many processes append to one Postgres journal', () => {
  test('8 processes × 50 awaited appends through separate connections: 400 steps, one chain, each exactly once, one tree', async () => {
    const s = store();
    await s.create('shared');
    await Promise.all(
      Array.from({ length: 8 }, (_, p) => runToEnd('pg-appender.mjs', [s.tables.schema, 'shared', `p${p}`, '50'])),
    );
    const j = await s.open('shared', { readOnly: true });
    const report = await j.verify();
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, steps: 400, head_seq: 399 });
    expect(await j.head()).toEqual({ seq: 399, step_hash: report.head });
    await expectTreeKept(s, 'shared', 400);
    const all = await steps(s, 'shared');
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 400 }, (_, i) => i));
    expect(new Set(all.map((r) => r.step_id)).size).toBe(400);
    const seen = new Set(
      all.map((r) => {
        const v = r.input as { writer: string; i: number };
        return `${v.writer}-${v.i}`;
      }),
    );
    for (let p = 0; p < 8; p++) for (let i = 0; i < 50; i++) expect(seen.has(`p${p}-${i}`)).toBe(true);
    // Each writer's own steps keep their order: its appends were awaited one after the other.
    for (let p = 0; p < 8; p++) {
      const mine = all
        .filter((r) => (r.input as { writer: string }).writer === `p${p}`)
        .map((r) => (r.input as { i: number }).i);
      expect(mine).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
  }, 120_000);
});

describe('group commit across processes: the intake (spec/POSTGRES.md §6.6)', () => {
  test('10 processes × 4 appenders, half through the intake and half with it off, on one journal: one chain, each step once, retries find their steps, no intake row left', async () => {
    const s = store();
    await s.create('mixed');
    await Promise.all(
      Array.from({ length: 10 }, (_, p) =>
        runToEnd('pg-appender.mjs', [s.tables.schema, 'mixed', `p${p}`, '40', p % 2 ? 'old' : 'intake', '4']),
      ),
    );
    const j = await s.open('mixed');
    const report = await j.verify();
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, steps: 400, head_seq: 399 });
    await expectTreeKept(s, 'mixed', 400);
    const all = await steps(s, 'mixed');
    expect(new Set(all.map((r) => r.step_id)).size).toBe(400);
    for (const r of all)
      expect(r.step_id).toBe(`${(r.input as { writer: string }).writer}-${(r.input as { i: number }).i}`);
    // The intake was used (its table exists) and every row is gone: each waiter took its outcome, each
    // sequencer deleted the rows it chained for itself when its store closed.
    const left = await admin.query(`SELECT count(*)::int AS n FROM "${s.tables.schema}".intake WHERE journal = $1`, [
      j.key,
    ]);
    expect(left.rows).toEqual([{ n: 0 }]);
    // A retry of any step, through the intake, is the step already chained (FILE-STORE.md §10).
    const retried = await Promise.all(
      [all[0]!, all[199]!, all[399]!].map((r) => j.append({ step_id: r.step_id, input: r.input as never })),
    );
    expect(retried.map((r) => r.seq)).toEqual([0, 199, 399]);
    expect(await j.head()).toMatchObject({ seq: 399 });
  }, 180_000);

  // Outsider 10: direct-path writers queue for the head row (FOR UPDATE) and keep it taken; an intake writer's
  // tries without queueing (SKIP LOCKED) found it taken almost every time, and beside three of them its appends
  // took seconds each, then failed LOCK_TIMEOUT at 4 s. After a wait that no NOTIFY ended, its try now queues
  // as theirs do (§6.6 step 3), so each append waits its turn among them.
  test('an intake writer beside three direct-path writers that keep the head row taken: every append resolves within its 6 s contention timeout', async () => {
    const s = store();
    await s.create('busy');
    const direct = Array.from({ length: 3 }, (_, p) =>
      runChild('pg-appender.mjs', [s.tables.schema, 'busy', `d${p}`, '1000000', 'old', '1']),
    );
    try {
      const j = await s.open('busy', { readOnly: true });
      // The direct writers are at it before the intake writer starts.
      for (let waited = 0; ((await j.head())?.seq ?? -1) < 30; waited += 20) {
        if (waited > 60_000) throw new Error(`the direct writers did not start: ${direct[0]!.stderr()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await runToEnd('pg-appender.mjs', [s.tables.schema, 'busy', 'intake', '15', 'intake', '1', '6000']);
    } finally {
      for (const d of direct) d.proc.kill('SIGKILL');
      await Promise.all(direct.map((d) => d.exited));
    }
    const report = await (await s.open('busy', { readOnly: true })).verify();
    expect(report.problems).toEqual([]);
    const ids = (await steps(s, 'busy')).map((r) => r.step_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => id!.startsWith('intake-')).sort()).toEqual(
      Array.from({ length: 15 }, (_, i) => `intake-${i}`).sort(),
    );
  }, 120_000);
});

describe('a writer killed', () => {
  test("SIGKILL at random moments, 8 times: every acknowledged step present, the journal verifies, retries duplicate nothing, the tree is the chain's", async () => {
    const s = store({ blobThreshold: 4096 });
    await s.create('crashy');
    const { acked, recovered } = await killAndRetryRounds(
      8,
      (round) => runChild('pg-kill-loop.mjs', [s.tables.schema, 'crashy', String(round)]),
      (readOnly) => s.open('crashy', { readOnly }),
    );
    const final = await (await s.open('crashy', { readOnly: true })).verify();
    expect(final.ok).toBe(true);
    const ids = (await steps(s, 'crashy')).map((r) => r.step_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(acked.size).toBe(final.steps);
    await expectTreeKept(s, 'crashy', final.steps);
    console.info(
      `8 SIGKILL rounds on Postgres: ${acked.size} acknowledged steps, ${recovered} committed-but-unacknowledged steps returned to their retry`,
    );
  }, 180_000);

  test('mid-transaction (lines inserted, head moved, no COMMIT): it holds the journal while alive, and its kill leaves nothing', async () => {
    const s = store({ lockTimeoutMs: 300 });
    const j = await s.create('j');
    await j.append({ input: 'committed' });
    const holder = runChild('pg-hold.mjs', [s.tables.schema, 'j', '60000']);
    await holder.waitFor((l) => l.startsWith('holding '));
    // Serialized by the head row's lock: another writer waits, and gives up after lockTimeoutMs.
    expect(await j.append({ input: 'blocked' }).catch((e: { code?: string }) => e.code)).toBe('LOCK_TIMEOUT');
    // Readers never wait and never see the uncommitted row.
    expect(await j.head()).toMatchObject({ seq: 0 });
    holder.proc.kill('SIGKILL');
    await holder.exited;
    const r = await j.append({ input: 'after' });
    expect(r.seq).toBe(1);
    const report = await j.verify();
    expect(report).toMatchObject({ ok: true, steps: 2 });
    expect((await steps(s, 'j')).map((x) => x.input)).toEqual(['committed', 'after']);
  }, 60_000);

  test('frozen mid-transaction: the server ends its idle transaction, so the journal is held no longer than idleTimeoutMs', async () => {
    const s = store({ lockTimeoutMs: 30_000 });
    const j = await s.create('j');
    await j.append({ input: 'committed' });
    const holder = runChild('pg-hold.mjs', [s.tables.schema, 'j', '1000']);
    await holder.waitFor((l) => l.startsWith('holding '));
    holder.proc.kill('SIGSTOP'); // a frozen VM: the process neither commits nor closes its socket
    try {
      const r = await j.append({ input: 'after the timeout' });
      expect(r.seq).toBe(1);
      expect((await j.verify()).ok).toBe(true);
    } finally {
      holder.proc.kill('SIGKILL');
      await holder.exited;
    }
  }, 60_000);
});
