/** The agent runtime (spec/RUNS.md; its records spec/FORMAT.md §11) over the memory, file, Postgres and SQLite stores: runs, outcomes, the continuation point, listing. */
import { afterAll, describe, expect, inject, test } from 'vitest';
import {
  FileStore,
  MemoryStore,
  RuntimeError,
  resumeRun,
  startRun,
  type Journal,
  type StepRecord,
  type Store,
} from '../../src/index.js';
import { Run } from '../../src/runtime.js';
import { runState } from '../../src/runtime/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';

// Each Postgres store gets a schema of its own on the run's throwaway server (test/setup/postgres.ts).
const pgStores: PostgresStore[] = [];
const sqliteStores: SqliteStore[] = [];
let schemas = 0;
afterAll(async () => {
  await Promise.all([...pgStores, ...sqliteStores].map((s) => s.close()));
});

const stores: Array<[string, () => Store]> = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(tempDir(), { fsync: 'none' })],
  [
    'postgres',
    () => {
      const store = new PostgresStore({
        connectionString: inject('pgUrl'),
        schema: `runtime_${process.pid}_${schemas++}`,
        connection: { max: 4 },
      });
      pgStores.push(store);
      return store;
    },
  ],
  [
    'sqlite',
    () => {
      const store = new SqliteStore(`${tempDir()}/runs.db`, { fsync: 'none' });
      sqliteStores.push(store);
      return store;
    },
  ],
];

/** `journal` with its reads counted: read, head, get and lines. */
function counted(journal: Journal): { journal: Journal; reads: Record<string, number> } {
  const reads: Record<string, number> = { read: 0, head: 0, get: 0, lines: 0 };
  const proxy = new Proxy(journal, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (typeof key === 'string' && key in reads) reads[key]!++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { journal: proxy, reads };
}

async function records(journal: Journal): Promise<StepRecord[]> {
  const out: StepRecord[] = [];
  for await (const r of journal.read()) out.push(r);
  return out;
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(RuntimeError);
    return (e as RuntimeError).code;
  }
  return 'resolved';
}

describe.each(stores)('runs in the %s store', (_name, makeStore) => {
  test('the identity is in the genesis, covered by its hash; an explicit run id cannot be reused', async () => {
    const store = makeStore();
    const run = await startRun(store, {
      runId: 'r-1',
      conversationId: 'c-1',
      parentRunId: 'orch-1',
      agent: 'billing',
      labels: { user: 'u1', environment: 'test' },
      input: { task: 'pay' },
    });
    expect(run.journal.genesis).toEqual({
      format: 'stepchain/v3',
      journal_id: 'r-1',
      created_at: run.createdAt,
      run: {
        agent: 'billing',
        conversation_id: 'c-1',
        labels: { user: 'u1', environment: 'test' },
        parent_run_id: 'orch-1',
      },
    });
    expect(run.identity.conversation_id).toBe('c-1');
    expect(await code(startRun(store, { runId: 'r-1' }))).toBe('RUN_EXISTS');
    expect(await code(startRun(store, { runId: '../x' }))).toBe('RUN_OPTION_INVALID');
    expect(await code(startRun(store, { runId: 'r-2', labels: { 'bad/name': 'x' } }))).toBe('RUN_OPTION_INVALID');
    expect(await code(resumeRun(store, 'nope'))).toBe('RUN_NOT_FOUND');
    await store.create('plain-v1');
    expect(await code(resumeRun(store, 'plain-v1'))).toBe('NOT_A_RUN');
    expect((await run.journal.verify()).ok).toBe(true);
    await run.close();
  });

  test('an effect: intent, annotation, outcome; a second outcome and an unknown id are refused with codes', async () => {
    const store = makeStore();
    const run = await startRun(store, { runId: 'r-eff' });
    const effect = await run.beginTool({
      name: 'charge',
      args: { cents: 12000n, at: new Date(0) },
      idempotencyKey: 'inv-9',
      id: 'eff-1',
    });
    expect(effect.id).toBe('eff-1');
    await effect.annotate({ summary: 'charging card 4242' });
    expect(await run.pendingEffects()).toEqual([
      expect.objectContaining({
        id: 'eff-1',
        seq: 1,
        tool: 'charge',
        args: { cents: '12000', at: '1970-01-01T00:00:00.000Z' },
        idempotencyKey: 'inv-9',
        summary: 'charging card 4242',
        status: 'started',
      }),
    ]);
    const done = await effect.complete({ charge: 'ch_1' });
    expect(done.seq).toBe(3);
    expect(await code(effect.complete({ charge: 'ch_1' }))).toBe('EFFECT_ALREADY_ENDED');
    expect(await code(effect.fail(new Error('late')))).toBe('EFFECT_ALREADY_ENDED');
    expect(await code(run.endTool('never-begun', { result: 1 }))).toBe('EFFECT_UNKNOWN');
    // Two outcomes raced in one process: one wins, the other is refused.
    const e2 = await run.beginTool({ name: 'mail', args: {} });
    const results = await Promise.allSettled([e2.complete('a'), e2.complete('b')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const [effects] = [await run.effects()];
    expect(effects.map((e) => [e.id, e.status])).toEqual([
      ['eff-1', 'completed'],
      [e2.id, 'completed'],
    ]);
    expect(effects[0]!.durationMs).toBeGreaterThanOrEqual(0);
    // The completed record is a whole step: it repeats the intent's tool_call, with the result.
    const rec = await run.journal.get(3);
    expect(rec).toMatchObject({
      kind: 'tool.completed',
      ref: 'eff-1',
      tool_call: { name: 'charge', arguments: { cents: '12000' } },
      result: { charge: 'ch_1' },
      error: null,
    });
    expect((await run.journal.verify()).ok).toBe(true);
    await run.close();
  });

  test('a failed tool carries its error object; a failed run too', async () => {
    const store = makeStore();
    const run = await startRun(store, { runId: 'r-fail' });
    const effect = await run.beginTool({ name: 'pay', args: { a: 1 } });
    const err = Object.assign(new Error('card declined'), { code: 'card_declined' });
    await effect.fail(err);
    expect((await run.effects())[0]).toMatchObject({
      status: 'failed',
      error: { name: 'Error', message: 'card declined', code: 'card_declined' },
      result: null,
    });
    await run.fail(new TypeError('gave up'));
    expect(await run.status()).toBe('failed');
    expect(await run.journal.get(3)).toMatchObject({
      kind: 'run.failed',
      error: { name: 'TypeError', message: 'gave up' },
    });
    await run.close();
  });

  test('the continuation point waits for every tool call a model asked for, and for in-flight requests', async () => {
    const store = makeStore();
    const run = await startRun(store, { runId: 'r-cont' });
    expect((await run.continuationPoint()).seq).toBe(0);
    const call = await run.beginModel({ model: 'm', prompt: [{ role: 'user', content: 'pay two invoices' }] });
    expect((await run.continuationPoint()).seq).toBe(0);
    await call.complete({
      result: { role: 'assistant' },
      toolCalls: [
        { id: 'c1', name: 'pay', arguments: { inv: 1 } },
        { id: 'c2', name: 'pay', arguments: { inv: 2 } },
      ],
      usage: { tokens: 10n },
      finishReason: 'tool_calls',
    });
    expect((await run.continuationPoint()).seq).toBe(0);
    const t1 = await run.beginTool({ name: 'pay', args: { inv: 1 }, callId: 'c1' });
    await t1.complete('ok');
    expect((await run.continuationPoint()).seq).toBe(0);
    const t2 = await run.beginTool({ name: 'pay', args: { inv: 2 }, callId: 'c2' });
    await t2.fail(new Error('declined'));
    const point = await run.continuationPoint();
    expect(point.seq).toBe(6);
    expect(point.steps.map((s) => (s as { kind: string }).kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'tool.started',
      'tool.failed',
    ]);
    expect(await run.journal.get(2)).toMatchObject({ meta: { usage: { tokens: '10' }, finish_reason: 'tool_calls' } });
    // A fork at the continuation point is a valid run journal with the same identity.
    const fork = await store.fork(run.journal, { fromStep: point.seq!, to: 'r-cont-fork' });
    expect((await fork.verify()).ok).toBe(true);
    expect(fork.genesis).toEqual(run.journal.genesis);
    await fork.close();
    await run.close();
  });

  test('another process (another Run over the same journal) sees pending effects and may record their outcome once', async () => {
    const store = makeStore();
    const first = await startRun(store, { runId: 'r-two' });
    const effect = await first.beginTool({ name: 'mail', args: { to: 'a@b' }, id: 'mail-1' });
    // The same journal through a second handle (in the file store, a second open; in memory, the shared state).
    const second = await resumeRun(store, 'r-two');
    expect((await second.pendingEffects()).map((e) => e.id)).toEqual(['mail-1']);
    await second.endTool('mail-1', { result: 'sent' });
    expect(await code(effect.complete('sent again'))).toBe('EFFECT_ALREADY_ENDED');
    await first.close();
    await second.close();
  });

  test.each(['stepchain/v2', 'stepchain/v3'] as const)(
    "a Run folds its own records without reading the journal back, and its state is the journal's (%s)",
    async (format) => {
      const store = makeStore();
      const started = await startRun(store, { runId: 'r-own', format });
      const { journal, reads } = counted(started.journal);
      const run = Run.of(journal);
      await run.refresh();
      for (const k of Object.keys(reads)) reads[k] = 0;
      const call = await run.beginModel({ model: 'm', prompt: [{ role: 'user', content: 'pay' }] });
      await call.complete({
        result: 'calling pay',
        toolCalls: [{ id: 'c1', name: 'pay', arguments: { a: 1 } }],
        usage: { tokens: 3 },
      });
      const effect = await run.beginTool({ name: 'pay', args: { a: 1 }, callId: 'c1', idempotencyKey: 'k' });
      await effect.annotate({ summary: 'paying' });
      await effect.complete({ paid: true });
      const failing = await run.beginTool({ name: 'mail', args: {} });
      await failing.fail(new Error('smtp down'));
      const second = await run.beginModel({ model: 'm' });
      await second.fail(new Error('timeout'));
      await run.complete('done');
      // A v3 Run checks every effect against the run's approval records: one whose state came from the store's
      // saved state (not folded from seq 0) reads the chain once, at its first effect, to build that ledger.
      expect(reads).toEqual(
        format === 'stepchain/v3' && reads.read! > 0
          ? { read: 1, head: 1, get: 0, lines: 0 }
          : { read: 0, head: 0, get: 0, lines: 0 },
      );
      // What it folded is what a reader of the journal folds.
      const truth = runState(await records(started.journal));
      expect(await run.effects()).toEqual([...truth.effects.values()]);
      expect(await run.modelCalls()).toEqual([...truth.models.values()]);
      expect(await run.status()).toBe('completed');
      expect((await run.continuationPoint()).seq).toBe(truth.continuation);
      await run.close();
    },
  );

  test('a Run that has read nothing yet decides an outcome on the journal: an effect another handle began is found', async () => {
    const store = makeStore();
    const first = await startRun(store, { runId: 'r-late' });
    await first.beginTool({ name: 'mail', args: {}, id: 'mail-1' });
    const late = Run.of(await store.open('r-late'));
    expect((await late.endTool('mail-1', { result: 'sent' })).seq).toBe(2);
    expect(await code(late.endTool('mail-2', { result: 'x' }))).toBe('EFFECT_UNKNOWN');
    expect(await code(first.endTool('mail-1', { result: 'again' }))).toBe('EFFECT_ALREADY_ENDED');
    expect(runState(await records(first.journal)).anomalies).toEqual([]);
    await late.close();
    await first.close();
  });

  test('writes reach the journal in the order asked for, even when the first must first read what another writer appended', async () => {
    const store = makeStore();
    const run = await startRun(store, { runId: 'r-order' });
    const effect = await run.beginTool({ name: 'one', args: {} });
    // Another writer moves the head, so the outcome's first append is refused (HEAD_MOVED) and retried after a read.
    const other = await resumeRun(store, 'r-order');
    await other.journal.append({ input: 'from elsewhere' });
    // `two` is still in flight when the run completes: recorded as left unresolved (RUNS.md §5).
    const written = await Promise.all([
      effect.complete('first'),
      run.beginTool({ name: 'two', args: {} }),
      run.complete('done', { leavePending: true }),
    ]);
    expect(written.map((w) => w.seq)).toEqual([3, 4, 5]);
    expect((await records(run.journal)).map((r) => ('kind' in r ? r.kind : null))).toEqual([
      'run.started',
      'tool.started',
      'step',
      'tool.completed',
      'tool.started',
      'run.completed',
    ]);
    expect((await run.effects()).map((e) => [e.tool, e.status])).toEqual([
      ['one', 'completed'],
      ['two', 'started'],
    ]);
    await other.close();
    await run.close();
  });

  test('plain journal.append on a run journal writes kind "step"; a bad kind is refused before anything is written', async () => {
    const store = makeStore();
    // A v2 run journal's kinds are a closed list (a v3 journal admits kinds it does not know: FORMAT §14.8).
    const run = await startRun(store, { runId: 'r-plain', format: 'stepchain/v2' });
    const r = await run.journal.append({ input: 1, result: 2 });
    expect(await run.journal.get(r.seq)).toMatchObject({
      v: 2,
      kind: 'step',
      ref: null,
      error: null,
      input: 1,
      result: 2,
    });
    await expect(run.journal.append({ kind: 'tool.exploded' })).rejects.toThrow(/FIELD_INVALID.*kind must be one of/);
    await expect(run.journal.append({ kind: 'tool.completed', result: 1 })).rejects.toThrow(/FIELD_INVALID.*ref/);
    expect((await run.journal.head())!.seq).toBe(1);
    await run.close();
  });

  test('list(filter) returns matching runs in chronological order; list() still lists every journal', async () => {
    const store = makeStore();
    const made: string[] = [];
    // Created out of id order, and with created_at out of creation order.
    for (const [id, minute, conv, parent] of [
      ['z', 3, 'c1', 'p'],
      ['a', 1, 'c1', null],
      ['m', 2, 'c2', 'p'],
      ['b', 1, 'c1', 'p'],
    ] as const) {
      const run = await startRun(store, {
        runId: id,
        conversationId: conv,
        ...(parent ? { parentRunId: parent } : {}),
        createdAt: `2026-01-01T00:0${minute}:00.000Z`,
        labels: { env: id === 'z' ? 'prod' : 'dev' },
      });
      made.push(id);
      await run.close();
    }
    await store.create('v1-journal');
    expect(await store.list({ conversationId: 'c1' })).toEqual(['a', 'b', 'z']);
    expect(await store.list({ parentRunId: 'p' })).toEqual(['b', 'm', 'z']);
    expect(await store.list({ conversationId: 'c1', parentRunId: 'p' })).toEqual(['b', 'z']);
    expect(await store.list({ labels: { env: 'prod' } })).toEqual(['z']);
    expect(await store.list({})).toEqual(['a', 'b', 'm', 'z']);
    expect(await store.list()).toEqual(['a', 'b', 'm', 'v1-journal', 'z']);
    const entries = await store.runs({ conversationId: 'c2' });
    // A store that keeps run state (SQLite, Postgres) lists each run's progress beside its identity.
    expect(entries.map(({ progress, ...e }) => e)).toEqual([
      {
        id: 'm',
        run_id: 'm',
        created_at: '2026-01-01T00:02:00.000Z',
        run: { conversation_id: 'c2', labels: { env: 'dev' }, parent_run_id: 'p' },
        fork_of: null,
      },
    ]);
    expect(entries[0]!.progress === undefined || entries[0]!.progress.status === 'running').toBe(true);
  });
});

describe("the file store's run index", () => {
  test('a journal the index lacks (a crash before indexing, a store from before the index) is found and indexed', async () => {
    const { rmSync, readFileSync, existsSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = tempDir();
    const store = new FileStore(root, { fsync: 'none' });
    for (const id of ['r1', 'r2']) await (await startRun(store, { runId: id, conversationId: 'c' })).close();
    rmSync(join(root, '.runs.jsonl'));
    expect(await store.list({ conversationId: 'c' })).toEqual(['r1', 'r2']);
    expect(existsSync(join(root, '.runs.jsonl'))).toBe(true);
    // A torn last line is skipped, and its journal read from its metadata.
    const text = readFileSync(join(root, '.runs.jsonl'), 'utf8');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(root, '.runs.jsonl'), text.slice(0, text.length - 10));
    expect(await new FileStore(root).list({ conversationId: 'c' })).toEqual(['r1', 'r2']);
    // A journal removed from the store is not listed even though its line remains.
    rmSync(join(root, 'r1'), { recursive: true });
    expect(await store.list({})).toEqual(['r2']);
  });

  test('an index line whose members are not what an entry holds is skipped, and the journal read from its metadata', async () => {
    const { readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const root = tempDir();
    const store = new FileStore(root, { fsync: 'none' });
    for (const id of ['r1', 'r2']) await (await startRun(store, { runId: id, conversationId: 'c' })).close();
    const index = join(root, '.runs.jsonl');
    const text = readFileSync(index, 'utf8');
    expect(text).toContain('"conversation_id":"c"');
    // A hand edit: r1's conversation id a number, r2's run id a number. Neither may reach the listing.
    const lines = text.split('\n');
    const edited = lines.map((l) =>
      l.includes('"id":"r1"')
        ? l.replace('"conversation_id":"c"', '"conversation_id":7')
        : l.replace('"run_id":"r2"', '"run_id":2'),
    );
    expect(edited.join('\n')).not.toBe(text);
    writeFileSync(index, edited.join('\n'));
    const fresh = new FileStore(root);
    expect(await fresh.list({ conversationId: 'c' })).toEqual(['r1', 'r2']);
    expect((await fresh.runs({})).map((r) => [r.id, r.run_id, r.run.conversation_id])).toEqual([
      ['r1', 'r1', 'c'],
      ['r2', 'r2', 'c'],
    ]);
  });
});

describe('journal.append takes ts as a Date', () => {
  test('a valid Date is recorded as its ISO string; an invalid one is refused, saying it is a Date', async () => {
    const j = await new MemoryStore().create('j');
    const r = await j.append({ model: 'm', ts: new Date('2026-02-03T04:05:06.789Z') });
    expect((await j.get(r.seq))!.ts).toBe('2026-02-03T04:05:06.789Z');
    await expect(j.append({ ts: new Date('nope') })).rejects.toThrow(/FIELD_INVALID: ts is a Date that is invalid/);
  });
});
