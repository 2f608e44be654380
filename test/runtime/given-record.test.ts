/**
 * A record given whole (Run.record, and through it `stepchain append` on a run journal) keeps the rules a
 * run's writer keeps between records (spec/RUNS.md §1, §5), as beginTool, endTool and complete do. An
 * outsider's finding: the CLI's append wrote a second outcome, a repeat of a pending effect, run.completed with
 * effects pending, and records after the run's end, each with exit 0.
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, MemoryStore, startRun } from '../../src/index.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const code = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'no error',
    (e: unknown) => (e as { code?: unknown }).code,
  );

const pay = (a: number) => ({ name: 'pay', arguments: { a } });

describe('Run.record keeps the run rules', () => {
  test('outcomes: one per started record of its kind, never for an id never begun', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const started = await run.record({ kind: 'tool.started', tool_call: pay(1) });
    await run.record({ kind: 'tool.completed', ref: started.step_id, tool_call: pay(1), result: { ok: true } });
    expect(
      await code(
        run.record({ kind: 'tool.completed', ref: started.step_id, tool_call: pay(1), result: { ok: false } }),
      ),
    ).toBe('EFFECT_ALREADY_ENDED');
    expect(await code(run.record({ kind: 'tool.failed', ref: 'nobody', error: { name: 'E', message: 'x' } }))).toBe(
      'EFFECT_UNKNOWN',
    );
    const model = await run.record({ kind: 'model.started', model: 'm' });
    // The id of a model request is no tool effect's.
    expect(await code(run.record({ kind: 'tool.completed', ref: model.step_id, result: null }))).toBe('EFFECT_UNKNOWN');
    await run.record({ kind: 'model.completed', ref: model.step_id, result: 'hi' });
    expect(
      await code(run.record({ kind: 'model.failed', ref: model.step_id, error: { name: 'E', message: 'x' } })),
    ).toBe('EFFECT_ALREADY_ENDED');
    expect((await run.effects()).map((e) => e.status)).toEqual(['completed']);
  });

  test('a start that repeats a pending effect (intent, call id, key) or takes an id of the run is refused', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const first = await run.record({
      kind: 'tool.started',
      tool_call: { ...pay(2), call_id: 'c1', idempotency_key: 'k1' },
    });
    expect(await code(run.record({ kind: 'tool.started', tool_call: pay(2) }))).toBe('EFFECT_PENDING');
    expect(await code(run.record({ kind: 'tool.started', tool_call: { ...pay(3), call_id: 'c1' } }))).toBe(
      'EFFECT_PENDING',
    );
    expect(await code(run.record({ kind: 'tool.started', tool_call: { ...pay(4), idempotency_key: 'k1' } }))).toBe(
      'EFFECT_PENDING',
    );
    expect(await code(run.record({ kind: 'tool.started', step_id: first.step_id, tool_call: pay(5) }))).toBe(
      'EFFECT_PENDING',
    );
    expect(await code(run.record({ kind: 'model.started', step_id: first.step_id }))).toBe('EFFECT_PENDING');
    // The very start re-sent (its acknowledgement lost) is the store's idempotent answer, not a refusal.
    const again = await run.record({
      kind: 'tool.started',
      step_id: first.step_id,
      tool_call: { ...pay(2), call_id: 'c1', idempotency_key: 'k1' },
    });
    expect(again.seq).toBe(first.seq);
    await run.record({ kind: 'tool.completed', ref: first.step_id, tool_call: pay(2), result: 1 });
    expect(await code(run.record({ kind: 'tool.started', step_id: first.step_id, tool_call: pay(6) }))).toBe(
      'STEP_ID_CONFLICT',
    );
    // Once it completed, the same intent is a new effect.
    await run.record({ kind: 'tool.started', tool_call: pay(2) });
  });

  test('run.completed waits for pending effects unless it lists them; after the end only a resolution is taken', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const e = await run.record({ kind: 'tool.started', tool_call: pay(7) });
    expect(await code(run.record({ kind: 'run.completed', result: 'done' }))).toBe('EFFECT_PENDING');
    await run.record({ kind: 'run.completed', result: 'done', meta: { unresolved: [e.step_id] } });
    expect(await code(run.record({ kind: 'tool.started', tool_call: pay(8) }))).toBe('RUN_ENDED');
    expect(await code(run.record({ kind: 'step', input: 'more' }))).toBe('RUN_ENDED');
    await run.record({
      kind: 'tool.failed',
      ref: e.step_id,
      error: { name: 'EffectResolved', message: 'abandoned' },
      meta: { resolution: { decision: 'abandon', by: 'ops', reason: 'checked with the bank' } },
    });
    expect((await run.pendingEffects()).length).toBe(0);
  });
});

describe('what outsider C found in the first version of these rules', () => {
  test('meta.unresolved must list exactly the pending effects; an invalid resolution does not pass the end', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const e = await run.record({ kind: 'tool.started', tool_call: pay(1) });
    for (const unresolved of [[], ['not-an-effect'], e.step_id, {}, null, [e.step_id, e.step_id], [e.step_id, 'x']])
      expect(
        await code(run.record({ kind: 'run.completed', result: 'x', meta: { unresolved } as never })),
        JSON.stringify(unresolved),
      ).toBe('EFFECT_PENDING');
    await run.record({ kind: 'run.completed', result: 'x', meta: { unresolved: [e.step_id] } });
    const resolution = (decision: string, by: string, reason: string) => ({ resolution: { decision, by, reason } });
    for (const [kind, meta] of [
      ['tool.failed', resolution('abandon', '', '')],
      ['tool.failed', resolution('abandon', 'ops', '')],
      ['tool.failed', resolution('done', 'ops', 'checked')],
      ['tool.completed', resolution('retry', 'ops', 'checked')],
    ] as const)
      expect(
        await code(run.record({ kind, ref: e.step_id, error: { name: 'EffectResolved', message: 'x' }, meta })),
        JSON.stringify([kind, meta]),
      ).toBe('RUN_ENDED');
    await run.record({
      kind: 'tool.completed',
      ref: e.step_id,
      result: 'paid',
      meta: resolution('done', 'ops', 'bank'),
    });
  });

  test('the very record re-sent after a lost acknowledgement is answered with the step it is, whatever the rules say now', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const start = { kind: 'tool.started', step_id: 's1', tool_call: pay(1) };
    const first = await run.record(start);
    expect((await run.record(start)).seq).toBe(first.seq); // pending: a repeat of its intent, but the same record
    const end = { kind: 'tool.completed', step_id: 'o1', ref: 's1', tool_call: pay(1), result: 1 };
    const ended = await run.record(end);
    expect((await run.record(end)).seq).toBe(ended.seq);
    expect((await run.record(start)).seq).toBe(first.seq);
    const done = { kind: 'run.completed', step_id: 'done', result: 'ok' };
    const completed = await run.record(done);
    expect((await run.record(done)).seq).toBe(completed.seq);
    // Not the same record: refused as before.
    expect(await code(run.record({ ...end, result: 2 }))).toBe('RUN_ENDED');
    expect((await run.journal.head())!.seq).toBe(completed.seq);
  });
});

describe('what outsider D found', () => {
  test('a start under the id of an effect that completed with the same intent: EFFECT_EXISTS, as effect begin --id', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const start = { kind: 'tool.started', step_id: 'x1', tool_call: pay(1) };
    await run.record(start);
    await run.record({ kind: 'tool.completed', ref: 'x1', tool_call: pay(1), result: 'ok' });
    // Not a re-send (another ts): the effect it names, not a conflict.
    expect(await code(run.record({ ...start, ts: '2026-01-01T00:00:00.000Z' }))).toBe('EFFECT_EXISTS');
    expect(await code(run.record({ ...start, tool_call: pay(2) }))).toBe('STEP_ID_CONFLICT');
  });

  test('after the end, a resolution that is not well formed is told what a resolution needs', async () => {
    const run = await startRun(new MemoryStore(), { runId: 'r' });
    const e = await run.record({ kind: 'tool.started', tool_call: pay(1) });
    await run.record({ kind: 'run.completed', result: 'x', meta: { unresolved: [e.step_id] } });
    const bad = run.record({
      kind: 'tool.failed',
      ref: e.step_id,
      error: { name: 'EffectResolved', message: 'x' },
      meta: { resolution: { decision: 'abandon', by: 'ops', reason: '' } },
    });
    await expect(bad).rejects.toThrow(/needs a decision .*, a non-empty by and a non-empty reason/);
    await expect(run.record({ kind: 'step', input: 'x' })).rejects.toThrow(
      /nothing more is appended to it \(asked: step\)/,
    );
  });
});

describe('stepchain append on a run journal (outsider B)', () => {
  const dir = tempDir('stepchain-append-rules-');
  const { run, feed, ok } = cliIn(dir);
  const digest = (journal: string): string =>
    readdirSync(join(dir, journal), { recursive: true })
      .map(String)
      .filter((f) => f.startsWith('buckets/'))
      .sort()
      .map((f) => {
        try {
          return readFileSync(join(dir, journal, f), 'latin1');
        } catch {
          return '';
        }
      })
      .join('\n');

  test('the four records the outsider appended are refused, each naming its rule, and nothing is written', async () => {
    await ok('init', 'r', '--run');
    const id = (await ok('effect', 'begin', 'r', '--tool', 'pay', '--args', '{"a":1}')).stdout.trim();
    await ok('effect', 'end', 'r', id, '--result', '{"ok":true}');
    const line = (o: object): string => JSON.stringify(o);
    let before = digest('r');
    const second = await feed(
      ['append', 'r'],
      line({ kind: 'tool.completed', ref: id, tool_call: pay(1), result: {} }),
    );
    expect(second.code).toBe(2);
    expect(second.stderr).toContain('EFFECT_ALREADY_ENDED');
    expect(digest('r')).toBe(before);
    expect((await feed(['append', 'r'], line({ kind: 'tool.started', tool_call: pay(2) }))).code).toBe(0);
    before = digest('r');
    const repeat = await feed(['append', 'r'], line({ kind: 'tool.started', tool_call: pay(2) }));
    expect(repeat.code).toBe(2);
    expect(repeat.stderr).toContain('EFFECT_PENDING');
    const complete = await feed(['append', 'r'], line({ kind: 'run.completed', result: 'done' }));
    expect(complete.code).toBe(2);
    expect(complete.stderr).toMatch(/EFFECT_PENDING: run r has 1 effect of unknown outcome/);
    expect(digest('r')).toBe(before);
    // Plain steps still go in, and `effect list` sees what append wrote.
    expect((await feed(['append', 'r'], line({ input: 'a note' }))).code).toBe(0);
    expect(JSON.parse((await run('effect', 'list', 'r', '--pending', '--json')).stdout)).toMatchObject({ pending: 1 });
  });

  test('re-sending what was committed, alone or as a batch, or a record twice in one batch, adds nothing and exits 0', async () => {
    await ok('init', 'again', '--run');
    const lines = (...o: object[]): string => o.map((x) => JSON.stringify(x)).join('\n') + '\n';
    const batch = lines(
      { kind: 'tool.started', step_id: 'e1', tool_call: pay(1) },
      { kind: 'tool.completed', step_id: 'd1', ref: 'e1', tool_call: pay(1), result: 1 },
      { kind: 'tool.started', step_id: 'e2', tool_call: { name: 't', arguments: {} } },
    );
    expect((await feed(['append', 'again', '--jsonl'], batch)).code).toBe(0);
    const before = digest('again');
    const resent = await feed(['append', 'again', '--jsonl'], batch);
    expect(resent.code, resent.stderr).toBe(0);
    const alone = await feed(
      ['append', 'again'],
      lines({ kind: 'tool.started', step_id: 'e2', tool_call: { name: 't', arguments: {} } }),
    );
    expect(alone.code, alone.stderr).toBe(0);
    expect(digest('again')).toBe(before);
    const twice = lines(
      { kind: 'tool.completed', step_id: 'd2', ref: 'e2', result: 2 },
      { kind: 'tool.completed', step_id: 'd2', ref: 'e2', result: 2 },
    );
    const r = await feed(['append', 'again', '--jsonl', '--json'], twice);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ steps: 2, appended: [{ step_id: 'd2' }] });
    // A repeat of the pending intent under a new id is still refused, and names the tool.
    await ok('init', 'named', '--run');
    await feed(
      ['append', 'named'],
      lines({ kind: 'tool.started', step_id: 'p1', tool_call: { name: 't', arguments: {} } }),
    );
    const repeat = await feed(
      ['append', 'named'],
      lines({ kind: 'tool.started', step_id: 'p1', tool_call: { name: 't', arguments: { x: 1 } } }),
    );
    expect(repeat.code).toBe(2);
    expect(repeat.stderr).toMatch(/EFFECT_PENDING: run named: "t" would repeat effect p1/);
  });

  test('--jsonl saves the run as it read it, so the next command folds only what came after (flat in the run)', async () => {
    await ok('init', 'saved', '--run');
    const lines = (n: number, from: number): string =>
      Array.from({ length: n }, (_, i) => JSON.stringify({ input: { i: from + i } })).join('\n') + '\n';
    expect((await feed(['append', 'saved', '--jsonl'], lines(50, 0))).code).toBe(0);
    expect((await feed(['append', 'saved', '--jsonl'], lines(1, 50))).code).toBe(0);
    // The second batch read the run to seq 50 (the genesis' run.started and the 50 before it) and saved it there.
    const saved = JSON.parse(readFileSync(join(dir, 'saved', '.run-state.json'), 'utf8')) as { seq: number };
    expect(saved.seq).toBe(50);
  });

  test('--jsonl: a batch is checked record by record, against the run and the batch before it, all or nothing', async () => {
    await ok('init', 'b', '--run');
    const lines = (...o: object[]): string => o.map((x) => JSON.stringify(x)).join('\n') + '\n';
    const good = await feed(
      ['append', 'b', '--jsonl'],
      lines(
        { kind: 'tool.started', step_id: 'e1', tool_call: pay(1) },
        { kind: 'tool.completed', ref: 'e1', tool_call: pay(1), result: 1 },
        { kind: 'tool.started', step_id: 'e2', tool_call: pay(1) },
      ),
    );
    expect(good.code, good.stderr).toBe(0);
    const before = digest('b');
    for (const [batch, expected] of [
      [lines({ input: 'x' }, { kind: 'tool.completed', ref: 'e1', result: 2 }), 'EFFECT_ALREADY_ENDED'],
      [lines({ kind: 'tool.started', tool_call: pay(1) }), 'EFFECT_PENDING'],
      [lines({ kind: 'tool.completed', ref: 'e9', result: 2 }), 'EFFECT_UNKNOWN'],
      [lines({ kind: 'run.completed', result: 'x' }), 'EFFECT_PENDING'],
      [
        lines(
          { kind: 'tool.completed', ref: 'e2', tool_call: pay(1), result: 1 },
          { kind: 'run.completed', result: 'x' },
          { input: 'after the end' },
        ),
        'RUN_ENDED',
      ],
    ] as const) {
      const r = await feed(['append', 'b', '--jsonl'], batch);
      expect(r.code, batch).toBe(2);
      expect(r.stderr, batch).toContain(expected);
      expect(r.stderr, batch).toMatch(/step \d of the batch \(kind /);
      expect(digest('b'), batch).toBe(before);
    }
  });
});

test('appendStream with `after` appends only after that seq: HEAD_MOVED and nothing written otherwise', async () => {
  const store = new FileStore(mkdtempSync(join(tmpdir(), 'stepchain-stream-after-')), { fsync: 'none' });
  const j = await store.create('j');
  await j.append({ input: 0 });
  expect(await code(j.appendStream([{ input: 1 }], { after: -1 }))).toBe('HEAD_MOVED');
  expect((await j.head())!.seq).toBe(0);
  expect((await j.appendStream([{ input: 1 }], { after: 0 })).last).toBe(1);
  await j.close();
});
