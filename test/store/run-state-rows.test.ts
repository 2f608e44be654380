/**
 * The saved run state of the database stores (spec/SQLITE.md §4.2, spec/POSTGRES.md §4.2, issue 36): the
 * run_state row is written in each append's transaction, so it is the state at the head whoever appended;
 * a Run opened on the run reads no record to check an effect; listing runs reads status, pending count and
 * end time from the rows in one query and filters on status; a journal without a row (from before the
 * table, or a row removed behind the store's back) is folded from its records and gets its row back on its
 * next append.
 */
import { describe, expect, test } from 'vitest';
import {
  FileStore,
  MemoryStore,
  resumeRun,
  startRun,
  type Journal,
  type RunState,
  type Store,
} from '../../src/index.js';
import { Run } from '../../src/runtime.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { connect } from '../../src/store/sqlite/driver.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-run-state-rows-');
const pg = await postgresHarness('runstate', 4);
let n = 0;

interface Backend {
  name: string;
  make(options?: Record<string, unknown>): Store;
  /** The run_state row of journal `id`, read behind the store's back. */
  row(
    store: Store,
    id: string,
  ): Promise<{ seq: number; step_hash: string; status: string; pending: number; ended_at: string | null } | null>;
  /** Deletes every run_state row behind the store's back (as a store from before the table). */
  dropRows(store: Store): Promise<void>;
}

const sqliteFiles = new WeakMap<Store, string>();
const backends: Backend[] = [
  {
    name: 'SQLite',
    make: (options = {}) => {
      const file = `${root}/s${n++}.db`;
      const s = new SqliteStore(file, options);
      sqliteFiles.set(s, file);
      return s;
    },
    row: async (store, id) => {
      const db = connect(sqliteFiles.get(store)!, {});
      try {
        return (
          (db
            .prepare(
              'SELECT r.seq, r.step_hash, r.status, r.pending, r.ended_at FROM run_state r JOIN journals j ON j.key = r.journal WHERE j.id = ?',
            )
            .get(id) as never) ?? null
        );
      } finally {
        db.close();
      }
    },
    dropRows: async (store) => {
      const db = connect(sqliteFiles.get(store)!, {});
      db.prepare('DELETE FROM run_state').run();
      db.close();
    },
  },
  {
    name: 'Postgres',
    make: (options = {}) => pg.store(options),
    row: async (store, id) => {
      const s = `"${(store as PostgresStore).tables.schema}"`;
      const r = await pg.admin.query(
        `SELECT r.seq::float8 AS seq, r.step_hash, r.status, r.pending, r.ended_at FROM ${s}.run_state r JOIN ${s}.journals j ON j.key = r.journal WHERE j.id = $1`,
        [id],
      );
      return r.rows[0] ?? null;
    },
    dropRows: async (store) => {
      await pg.admin.query(`DELETE FROM "${(store as PostgresStore).tables.schema}".run_state`);
    },
  },
];

/** A state as plain data, to compare two folds. */
const plain = (s: RunState): unknown =>
  JSON.parse(
    JSON.stringify({
      ...s,
      effects: [...s.effects],
      models: [...s.models],
      requested: [...s.requested],
      byKey: [...s.byKey],
      byCallId: [...s.byCallId],
      byIntent: [...s.byIntent],
    }),
  );

/** The journal, with a count of the records its `read` yields. */
function counting(journal: Journal): { journal: Journal; read: () => number } {
  let read = 0;
  const wrapped = new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'read') {
        return async function* (range?: Parameters<Journal['read']>[0]) {
          for await (const r of target.read(range)) {
            read++;
            yield r;
          }
        };
      }
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { journal: wrapped, read: () => read };
}

const head = async (j: Journal) => (await j.get((await j.head())!.seq))!;

describe.each(backends)('$name: the run_state row', (b) => {
  test('is the state at the head after each append, and a Run opened on the run starts from it, reading no record', async () => {
    const store = b.make({ blobThreshold: 1024 });
    const run = await startRun(store, { runId: 'r' });
    // Arguments over the blob threshold: stored as a blob, folded as the value (the same intent as a Run's).
    const big = { invoice: 'INV-1', lines: 'x'.repeat(2000) };
    const e = await run.beginTool({ name: 'pay', args: big, idempotencyKey: 'INV-1' });
    await run.journal.appendMany(Array.from({ length: 40 }, (_, i) => ({ input: { i } })));
    const h = await head(run.journal);
    expect(await b.row(store, 'r')).toEqual({
      seq: h.seq,
      step_hash: h.step_hash,
      status: 'interrupted',
      pending: 1,
      ended_at: null,
    });
    await run.close();

    const { journal, read } = counting(await store.open('r'));
    const reopened = Run.of(journal);
    expect((await reopened.pendingEffects()).map((p) => p.id)).toEqual([e.id]);
    expect(read()).toBe(0);
    const full = await Run.of(await store.open('r', { readOnly: true }), { savedState: false }).refresh();
    expect(plain(await reopened.refresh())).toEqual(plain(full));
    // The naive repeat is refused from the row's index; the outcome repeats its start from the row's in-flight starts.
    await expect(reopened.beginTool({ name: 'pay', args: big })).rejects.toMatchObject({ code: 'EFFECT_PENDING' });
    await reopened.endTool(e.id, { result: { paid: true } });
    expect(await b.row(store, 'r')).toMatchObject({ status: 'running', pending: 0, ended_at: null });
    await reopened.complete();
    const ended = await head(journal);
    expect(await b.row(store, 'r')).toEqual({
      seq: ended.seq,
      step_hash: ended.step_hash,
      status: 'completed',
      pending: 0,
      ended_at: ended.ts,
    });
    await reopened.close();
    const after = await resumeRun(store, 'r', { readOnly: true });
    expect((await after.journal.verify()).ok).toBe(true);
    expect((await after.effects()).map((x) => [x.id, x.status, x.result])).toEqual([
      [e.id, 'completed', { paid: true }],
    ]);
    await after.close();
  }, 120_000);

  test('a stepchain/v3 run: the row folds its records with their parts in place, as a Run reading the journal does', async () => {
    const store = b.make();
    const run = await startRun(store, { runId: 'v3', format: 'stepchain/v3' });
    const big = { invoice: 'INV-3', pages: Array.from({ length: 40 }, (_, i) => 'page ' + String(i).repeat(400)) };
    const e = await run.beginTool({ name: 'pay', args: big, idempotencyKey: 'INV-3' });
    await run.journal.append({ input: { note: 'x'.repeat(20_000) } });
    await run.close();
    const { journal, read } = counting(await store.open('v3'));
    const reopened = Run.of(journal);
    expect((await reopened.pendingEffects()).map((p) => [p.id, p.args])).toEqual([[e.id, big]]);
    expect(read()).toBe(0);
    const full = await Run.of(await store.open('v3', { readOnly: true }), { savedState: false }).refresh();
    expect(plain(await reopened.refresh())).toEqual(plain(full));
    expect(await b.row(store, 'v3')).toMatchObject({ status: 'interrupted', pending: 1 });
    await reopened.close();
  }, 120_000);

  test("runs() reads each run's status, pending count and end time from the rows, and filters on status", async () => {
    const store = b.make();
    const done = await startRun(store, { runId: 'a-done', conversationId: 'c' });
    await done.complete();
    await done.close();
    const died = await startRun(store, { runId: 'b-died', conversationId: 'c' });
    await died.beginTool({ name: 'pay', args: { n: 1 } });
    await died.beginTool({ name: 'mail', args: { n: 2 } });
    await died.close();
    const failed = await startRun(store, { runId: 'c-failed', conversationId: 'c' });
    await failed.fail(new Error('boom'));
    await failed.close();
    const fresh = await startRun(store, { runId: 'd-fresh', conversationId: 'c' });
    await fresh.close();

    const doneAt = (await head(await store.open('a-done', { readOnly: true }))).ts;
    const listed = await store.runs({ conversationId: 'c' });
    expect(listed.map((r) => [r.id, r.progress])).toEqual([
      ['a-done', { status: 'completed', pending: 0, ended_at: doneAt }],
      ['b-died', { status: 'interrupted', pending: 2, ended_at: null }],
      ['c-failed', { status: 'failed', pending: 0, ended_at: expect.any(String) }],
      ['d-fresh', { status: expect.stringMatching(/^running$/), pending: 0, ended_at: null }],
    ]);
    expect((await store.runs({ status: 'interrupted' })).map((r) => r.id)).toEqual(['b-died']);
    expect((await store.runs({ status: 'completed', conversationId: 'c' })).map((r) => r.id)).toEqual(['a-done']);
    expect(await store.list({ status: 'failed' })).toEqual(['c-failed']);

    // Rows gone (a store from before the table): the same answers, folded from the records...
    await b.dropRows(store);
    expect((await store.runs({ conversationId: 'c' })).map((r) => [r.id, r.progress])).toEqual(
      listed.map((r) => [r.id, r.progress]),
    );
    expect((await store.runs({ status: 'interrupted' })).map((r) => r.id)).toEqual(['b-died']);
    expect(await b.row(store, 'b-died')).toBeNull();
    // ...and the next append folds the run once and writes its row back.
    const j = await store.open('b-died');
    await j.append({ input: 'later' });
    await j.close();
    const h = await head(await store.open('b-died', { readOnly: true }));
    expect(await b.row(store, 'b-died')).toEqual({
      seq: h.seq,
      step_hash: h.step_hash,
      status: 'interrupted',
      pending: 2,
      ended_at: null,
    });
  }, 120_000);
});

describe.each([
  ['file', () => new FileStore(`${root}/f${n++}`, { fsync: 'none' })],
  ['memory', () => new MemoryStore()],
] as const)('a %s store, which keeps no run state', (name, make) => {
  test('applies a status filter by folding each run, and lists progress only then (a file store: also from a current saved state)', async () => {
    const store: Store = make();
    const done = await startRun(store, { runId: 'a' });
    await done.complete();
    await done.close();
    const died = await startRun(store, { runId: 'b' });
    await died.beginTool({ name: 'pay', args: {} });
    await died.close();
    // A directory store lists each run's progress from its .run-state.json, saved by close (FILE-STORE.md §19).
    expect((await store.runs({})).map((r) => r.progress)).toEqual(
      name === 'file'
        ? [
            { status: 'completed', pending: 0, ended_at: expect.any(String) },
            { status: 'interrupted', pending: 1, ended_at: null },
          ]
        : [undefined, undefined],
    );
    expect((await store.runs({ status: 'interrupted' })).map((r) => [r.id, r.progress])).toEqual([
      ['b', { status: 'interrupted', pending: 1, ended_at: null }],
    ]);
    expect(await store.list({ status: 'completed' })).toEqual(['a']);
    expect(await store.list({ status: 'failed' })).toEqual([]);
  });

  test('a stepchain/v3 run read back by a new Run: its pending effect is seen, and the naive repeat refused (the run reader reads v3 records)', async () => {
    const store: Store = make();
    const run = await startRun(store, { runId: 'v3', format: 'stepchain/v3' });
    const e = await run.beginTool({ name: 'pay', args: { invoice: 'INV-9' } });
    await run.close();
    const again = await resumeRun(store, 'v3');
    expect((await again.pendingEffects()).map((p) => p.id)).toEqual([e.id]);
    await expect(again.beginTool({ name: 'pay', args: { invoice: 'INV-9' } })).rejects.toMatchObject({
      code: 'EFFECT_PENDING',
    });
    await again.close();
  });
});

describe("a directory store's listing from the saved run state (FILE-STORE.md §19)", () => {
  const dirOf = (root: string, id: string) => `${root}/${id}`;

  async function closedRun(root: string, id: string): Promise<void> {
    const run = await startRun(new FileStore(root, { fsync: 'none' }), { runId: id });
    await run.complete('ok');
    await run.close();
  }

  test('a state behind the chain is not used, even when head.json still names its step (a writer killed before rewriting the cache)', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const root = `${tempDir('stepchain-runs-saved-')}/runs`;
    const store = new FileStore(root, { fsync: 'none' });
    const run = await startRun(store, { runId: 'died' });
    await run.close();
    const cache = readFileSync(`${dirOf(root, 'died')}/head.json`, 'utf8');
    expect(JSON.parse(readFileSync(`${dirOf(root, 'died')}/.run-state.json`, 'utf8'))).toMatchObject({
      seq: 0,
      status: 'running',
    });
    // A later process begins an effect (a raw append: no state saved) and dies; the cache is put back as a
    // writer SIGKILLed between committing the line and rewriting head.json (§7) leaves it.
    const j = await store.open('died');
    await j.append({
      kind: 'tool.started',
      tool_call: { name: 'pay_invoice', arguments: { invoice: 'INV-1' } },
    } as never);
    await j.close();
    writeFileSync(`${dirOf(root, 'died')}/head.json`, cache);
    const [entry] = await store.runs({});
    expect(entry!.progress).toBeUndefined(); // not the saved "running": the chain's last step is past it
    expect((await store.runs({ status: 'interrupted' })).map((r) => [r.id, r.progress])).toEqual([
      ['died', { status: 'interrupted', pending: 1, ended_at: null }],
    ]);
  });

  test('a saved state of another run, another shape or another chain is ignored, and the run folded', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const root = `${tempDir('stepchain-runs-saved-')}/runs`;
    const store = new FileStore(root, { fsync: 'none' });
    const died = await startRun(store, { runId: 'died' });
    await died.beginTool({ name: 'pay_invoice', args: {} });
    await died.close();
    await closedRun(root, 'done');
    const file = `${dirOf(root, 'died')}/.run-state.json`;
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    // Each planted state claims the run completed with nothing pending; none of them may be believed.
    const planted = [
      { ...saved, status: 'completed', effects: [], run_id: 'done' },
      { ...saved, status: 'completed', effects: [], step_hash: `sha256:${'0'.repeat(64)}` },
      { ...saved, status: 'completed', effects: 'none' },
      readFileSync(`${dirOf(root, 'done')}/.run-state.json`, 'utf8'),
    ];
    for (const p of planted) {
      writeFileSync(file, typeof p === 'string' ? p : JSON.stringify(p));
      const entries = await store.runs({});
      expect(entries.map((e) => [e.id, e.progress?.status])).toEqual([
        ['died', undefined],
        ['done', 'completed'],
      ]);
      expect(await store.list({ status: 'interrupted' })).toEqual(['died']);
    }
  });

  test('stepchain runs on a directory lists the same status from a saved state and from folding', async () => {
    const { rmSync } = await import('node:fs');
    const { CLI, runNode } = await import('../hardening/support.js');
    const root = `${tempDir('stepchain-runs-saved-')}/runs`;
    const store = new FileStore(root, { fsync: 'none' });
    const died = await startRun(store, { runId: 'died' });
    await died.beginTool({ name: 'pay_invoice', args: {} });
    await died.close();
    await closedRun(root, 'done');
    const list = async () => {
      const r = await runNode([CLI, 'runs', root, '--json'], { timeoutMs: 60_000 });
      expect(r.code, r.stderr).toBe(0);
      return (
        JSON.parse(r.stdout) as {
          runs: Array<{ id: string; status: string; pending: number; ended_at: string | null }>;
        }
      ).runs.map((x) => [x.id, x.status, x.pending, x.ended_at === null]);
    };
    const fromSaved = await list();
    expect(fromSaved).toEqual([
      ['died', 'interrupted', 1, true],
      ['done', 'completed', 0, false],
    ]);
    for (const id of ['died', 'done']) rmSync(`${dirOf(root, id)}/.run-state.json`);
    expect(await list()).toEqual(fromSaved);
  }, 120_000);
});
