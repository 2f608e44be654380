/**
 * Many processes, one SQLite journal: real child processes, each with its own connections, running the
 * built store (dist/, which `npm test` builds) on one database file. Nothing lost, duplicated or forked;
 * a writer killed at any moment (SIGKILL: no chance to roll back) loses no acknowledged step and leaves
 * nothing half-written, and a writer stopped inside its transaction holds the journal only while it lives.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { rootOfLeaves, stepLeafHash, tileCountAt } from '../../src/proofs/index.js';
import type { StepRecord } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import { tempDir } from '../helpers/tmp.js';
import { killAndRetryRounds, runChild, runToEnd } from './helpers.js';

const root = tempDir('stepchain-sqlite-proc-');
let n = 0;
const stores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});
function store(options: ConstructorParameters<typeof SqliteStore>[1] = {}): SqliteStore {
  const s = new SqliteStore(`${root}/p${n++}.db`, options);
  stores.push(s);
  return s;
}

/** The tree the writers kept in their commits: its tile rows are the whole chain's, and its root the RFC 6962 root of the step hashes. */
async function expectTreeKept(s: SqliteStore, id: string, size: number): Promise<void> {
  const db = connect(s.file, { readonly: true });
  try {
    const state = db
      .prepare('SELECT t.size FROM tree_state t JOIN journals j ON j.key = t.journal WHERE j.id = ?')
      .all(id);
    expect(state).toEqual([{ size }]);
    const tiles = db
      .prepare(
        'SELECT count(*) AS n FROM tree_tiles t JOIN journals j ON j.key = t.journal WHERE j.id = ? GROUP BY tile_level ORDER BY tile_level',
      )
      .all(id) as Array<{ n: number }>;
    expect(tiles.map((r) => r.n)).toEqual([0, 1, 2].map((l) => tileCountAt(size, l)).filter((c) => c > 0));
  } finally {
    db.close();
  }
  const j = await s.open(id, { readOnly: true });
  const leaves: Uint8Array[] = [];
  for await (const l of j.lines()) leaves.push(stepLeafHash((JSON.parse(l.text) as { step_hash: string }).step_hash)!);
  expect(Buffer.from((await j.treeView()).root)).toEqual(Buffer.from(rootOfLeaves(leaves)));
}

async function steps(s: SqliteStore, id: string): Promise<StepRecord[]> {
  const j = await s.open(id, { readOnly: true });
  const out: StepRecord[] = [];
  for await (const r of j.read()) out.push(r);
  return out;
}

describe('many processes append to one SQLite journal', () => {
  test('8 processes × 50 awaited appends through their own connections: 400 steps, one chain, each exactly once, one tree', async () => {
    const s = store();
    await s.create('shared');
    await Promise.all(
      Array.from({ length: 8 }, (_, p) => runToEnd('sqlite-appender.mjs', [s.file, 'shared', `p${p}`, '50'])),
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
    // Each writer's own steps keep their order: its appends were awaited one after the other.
    for (let p = 0; p < 8; p++) {
      const mine = all
        .filter((r) => (r.input as { writer: string }).writer === `p${p}`)
        .map((r) => (r.input as { i: number }).i);
      expect(mine).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
  }, 300_000);
});

describe('a writer killed', () => {
  test("SIGKILL at random moments, 8 times: every acknowledged step present, the journal verifies, retries duplicate nothing, the tree is the chain's", async () => {
    const s = store({ blobThreshold: 4096 });
    await s.create('crashy');
    const { acked, recovered } = await killAndRetryRounds(
      8,
      (round) => runChild('sqlite-kill-loop.mjs', [s.file, 'crashy', String(round)]),
      (readOnly) => s.open('crashy', { readOnly }),
    );
    const final = await (await s.open('crashy', { readOnly: true })).verify();
    expect(final.ok).toBe(true);
    const ids = (await steps(s, 'crashy')).map((r) => r.step_id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(acked.size).toBe(final.steps);
    await expectTreeKept(s, 'crashy', final.steps);
    console.info(
      `8 SIGKILL rounds on SQLite: ${acked.size} acknowledged steps, ${recovered} committed-but-unacknowledged steps returned to their retry`,
    );
  }, 300_000);

  test('mid-transaction (a line and a blob inserted, head moved, no COMMIT): it holds the journal while alive, and its kill leaves nothing', async () => {
    const s = store({ lockTimeoutMs: 300 });
    const j = await s.create('j');
    await j.append({ input: 'committed' });
    const holder = runChild('sqlite-hold.mjs', [s.file, 'j']);
    await holder.waitFor((l) => l.startsWith('holding '), 60_000);
    // Serialized by SQLite's write lock: another writer waits, and gives up after lockTimeoutMs.
    expect(await j.append({ input: 'blocked' }).catch((e: { code?: string }) => e.code)).toBe('LOCK_TIMEOUT');
    // Readers never wait and never see the uncommitted rows (WAL).
    expect(await j.head()).toMatchObject({ seq: 0 });
    expect((await j.verify()).ok).toBe(true);
    holder.proc.kill('SIGKILL');
    await holder.exited;
    const r = await j.append({ input: 'after' });
    expect(r.seq).toBe(1);
    const report = await j.verify();
    expect(report).toMatchObject({ ok: true, steps: 2 });
    expect((await steps(s, 'j')).map((x) => x.input)).toEqual(['committed', 'after']);
    const db = connect(s.file, { readonly: true });
    try {
      expect(db.prepare('SELECT count(*) AS n FROM blobs').get()).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  }, 120_000);
});
