/**
 * Effects of unknown outcome (spec/RUNS.md §5): what would repeat a pending effect is refused, a
 * resolution is an outcome record with meta.resolution, a retry names the effect it retries, idempotency
 * keys hold across the run, a run with pending effects does not complete silently, an ended run takes no
 * more records, and an outcome JSON cannot represent stands with markers. Each over the memory and file
 * stores; a second Run over the same journal stands for the process that resumes after a crash.
 */
import { describe, expect, test } from 'vitest';
import {
  FileStore,
  MemoryStore,
  RuntimeError,
  resumeRun,
  startRun,
  type Journal,
  type Store,
} from '../../src/index.js';
import { Run } from '../../src/runtime.js';
import { tempDir } from '../helpers/tmp.js';

const stores: Array<[string, () => Store]> = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(tempDir(), { fsync: 'none' })],
];

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RuntimeError) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'resolved';
}

/** A run whose process "died" inside charge_card: the effect begun by one Run, the next Run resuming it. */
async function crashed(
  store: Store,
  runId: string,
  extra: { idempotencyKey?: string } = {},
): Promise<{ resumed: Run; pendingId: string }> {
  const first = await startRun(store, { runId });
  const e = await first.beginTool({
    name: 'charge_card',
    args: { amount: '120.00', invoice: 'INV-9' },
    callId: 'call_1',
    ...extra,
  });
  // The process is gone: its Run is dropped without an outcome.
  const resumed = await resumeRun(store, runId);
  return { resumed, pendingId: e.id };
}

describe.each(stores)('effects of unknown outcome (%s store)', (_name, makeStore) => {
  test('the same call id, the same tool and arguments, or the same key as a pending effect is refused, naming it; nothing is written', async () => {
    const store = makeStore();
    const { resumed, pendingId } = await crashed(store, 'r-refuse', { idempotencyKey: 'INV-9-charge' });
    const head = (await resumed.journal.head())!.seq;
    expect(await code(resumed.beginTool({ name: 'charge_card', args: { amount: '999' }, callId: 'call_1' }))).toMatch(
      new RegExp(`^EFFECT_PENDING: .*${pendingId}.*call id "call_1"`),
    );
    expect(
      await code(
        resumed.beginTool({ name: 'charge_card', args: { invoice: 'INV-9', amount: '120.00' }, callId: 'call_2' }),
      ),
    ).toMatch(new RegExp(`^EFFECT_PENDING: .*${pendingId}`));
    expect(await code(resumed.beginTool({ name: 'other', args: {}, idempotencyKey: 'INV-9-charge' }))).toMatch(
      new RegExp(`^EFFECT_PENDING: .*${pendingId}.*INV-9-charge`),
    );
    expect((await resumed.journal.head())!.seq).toBe(head);
    // Other tools, and other arguments, go on.
    const other = await resumed.beginTool({ name: 'charge_card', args: { amount: '5.00', invoice: 'INV-10' } });
    await other.complete({ ok: true });
    await resumed.close();
  });

  test('two identical calls in flight in one Run are not a repeat: only an effect this Run did not begin is of unknown outcome', async () => {
    const run = await startRun(makeStore(), { runId: 'r-parallel' });
    const [a, b] = await Promise.all([
      run.beginTool({ name: 'weather', args: { city: 'Oslo' } }),
      run.beginTool({ name: 'weather', args: { city: 'Oslo' } }),
    ]);
    await Promise.all([a.complete(1), b.complete(2)]);
    expect((await run.effects()).map((e) => e.status)).toEqual(['completed', 'completed']);
    await run.close();
  });

  test.each([
    ['retry', { retry: true } as const, 'tool.failed', null],
    ['done', { done: true, result: { charge_id: 'ch_81' } } as const, 'tool.completed', { charge_id: 'ch_81' }],
    ['abandon', { abandon: true } as const, 'tool.failed', null],
    ['compensated', { compensated: true, compensation: 'refund-1' } as const, 'tool.failed', null],
  ])(
    'resolving as %s is an outcome record with meta.resolution; the journal verifies',
    async (decision, given, kind, result) => {
      const store = makeStore();
      const { resumed, pendingId } = await crashed(store, `r-${decision}`);
      const at = await resumed.resolveEffect(pendingId, given, {
        reason: 'checked the PSP dashboard',
        by: 'ops:alice',
      });
      const record = await resumed.journal.get(at.seq);
      expect(record).toMatchObject({
        kind,
        ref: pendingId,
        result,
        meta: { resolution: { decision, by: 'ops:alice', reason: 'checked the PSP dashboard' } },
      });
      if (kind === 'tool.failed')
        expect(record).toMatchObject({ error: { name: 'EffectResolved', message: expect.stringContaining(decision) } });
      if (decision === 'compensated')
        expect(record).toMatchObject({ meta: { resolution: { compensation: 'refund-1' } } });
      expect((await resumed.journal.verify()).ok).toBe(true);
      // Read back by another process: the effect has its outcome and the decision.
      const reader = await resumeRun(store, `r-${decision}`, { readOnly: true });
      const [effect] = await reader.effects();
      expect(effect).toMatchObject({
        id: pendingId,
        status: kind === 'tool.completed' ? 'completed' : 'failed',
        resolution: { decision, by: 'ops:alice' },
      });
      expect(await reader.pendingEffects()).toEqual([]);
      await reader.close();
      // A second decision is refused: the effect is no longer pending.
      expect(await code(resumed.resolveEffect(pendingId, { abandon: true }, { reason: 'again' }))).toMatch(
        /^EFFECT_NOT_PENDING/,
      );
      await resumed.close();
    },
  );

  test('after a retry decision the call begins again and its effect names the one it retries', async () => {
    const store = makeStore();
    const { resumed, pendingId } = await crashed(store, 'r-retry');
    await resumed.resolveEffect(pendingId, { retry: true }, { reason: 'PSP has no charge for INV-9' });
    const again = await resumed.beginTool({
      name: 'charge_card',
      args: { amount: '120.00', invoice: 'INV-9' },
      callId: 'call_1',
    });
    expect(await resumed.journal.get(again.seq)).toMatchObject({ kind: 'tool.started', meta: { retry_of: pendingId } });
    await again.complete({ charge_id: 'ch_82' });
    expect((await resumed.effects()).map((e) => [e.status, e.retryOf])).toEqual([
      ['failed', null],
      ['completed', pendingId],
    ]);
    expect((await resumed.journal.verify()).ok).toBe(true);
    await resumed.close();
  });

  test('a resolution needs a reason and exactly one decision', async () => {
    const { resumed, pendingId } = await crashed(makeStore(), 'r-bad');
    expect(await code(resumed.resolveEffect(pendingId, { retry: true }, { reason: ' ' }))).toMatch(
      /^RUN_OPTION_INVALID/,
    );
    expect(
      await code(resumed.resolveEffect(pendingId, { retry: true, abandon: true } as never, { reason: 'x' })),
    ).toMatch(/^RUN_OPTION_INVALID/);
    expect(await code(resumed.resolveEffect('no-such', { retry: true }, { reason: 'x' }))).toMatch(/^EFFECT_UNKNOWN/);
    await resumed.close();
  });

  test('an idempotency key whose effect completed returns that effect and its result, across processes; nothing is written', async () => {
    const store = makeStore();
    const first = await startRun(store, { runId: 'r-key' });
    const sent = await first.beginTool({ name: 'send_email', args: { to: 'a@b.example' }, idempotencyKey: 'mail-1' });
    await sent.complete({ message_id: 'm-1' });
    await first.close();
    const resumed = await resumeRun(store, 'r-key');
    const head = (await resumed.journal.head())!.seq;
    const again = await resumed.beginTool({
      name: 'send_email',
      args: { to: 'a@b.example', retry: 1 },
      idempotencyKey: 'mail-1',
    });
    expect(again).toMatchObject({ id: sent.id, seq: sent.seq, status: 'completed', result: { message_id: 'm-1' } });
    expect((await resumed.journal.head())!.seq).toBe(head);
    expect(await code(again.complete({}))).toMatch(/^EFFECT_ALREADY_ENDED/);
    // A key whose effect failed may begin again.
    const k2 = await resumed.beginTool({ name: 'send_email', args: { to: 'c@d.example' }, idempotencyKey: 'mail-2' });
    await k2.fail(new Error('SMTP 451'));
    expect(
      (await resumed.beginTool({ name: 'send_email', args: { to: 'c@d.example' }, idempotencyKey: 'mail-2' })).status,
    ).toBe('started');
    await resumed.close();
  });

  test('the checks read nothing the Run has already read: no journal read per beginTool, at any length', async () => {
    const store = makeStore();
    const run = await startRun(store, { runId: 'r-cost' });
    for (let i = 0; i < 200; i++)
      await (await run.beginTool({ name: 'lookup', args: { i }, idempotencyKey: `k-${i}` })).complete(i);
    let reads = 0;
    const journal = run.journal;
    const read = journal.read.bind(journal);
    (journal as { read: Journal['read'] }).read = (...a: Parameters<Journal['read']>) => {
      reads++;
      return read(...a);
    };
    expect((await run.beginTool({ name: 'lookup', args: { i: 0 }, idempotencyKey: 'k-0' })).status).toBe('completed');
    await (await run.beginTool({ name: 'lookup', args: { i: 999 }, idempotencyKey: 'k-999' })).complete(1);
    expect(reads).toBe(0);
    await run.close();
  });

  test('complete() refuses while effects are pending; leavePending records them as unresolved', async () => {
    const store = makeStore();
    const { resumed, pendingId } = await crashed(store, 'r-complete');
    expect(await code(resumed.complete('done'))).toMatch(new RegExp(`^EFFECT_PENDING: .*${pendingId}`));
    expect(await resumed.status()).toBe('running');
    const at = await resumed.complete('done', { leavePending: true });
    expect(await resumed.journal.get(at.seq)).toMatchObject({
      kind: 'run.completed',
      meta: { unresolved: [pendingId] },
    });
    await resumed.close();
  });

  test('a completed or failed run takes no more records (RUN_ENDED), in this process or another; a late decision is still recorded', async () => {
    const store = makeStore();
    for (const end of ['complete', 'fail'] as const) {
      const runId = `r-ended-${end}`;
      const run = await startRun(store, { runId });
      const e = await run.beginTool({ name: 't', args: {} });
      if (end === 'complete') await run.complete('x', { leavePending: true });
      else await run.fail(new Error('gave up'));
      const head = (await run.journal.head())!.seq;
      expect(await code(run.beginTool({ name: 't2', args: {} }))).toMatch(/^RUN_ENDED/);
      expect(await code(run.beginModel({ model: 'm' }))).toMatch(/^RUN_ENDED/);
      expect(await code(run.complete())).toMatch(/^RUN_ENDED/);
      expect(await code(run.fail(new Error('x')))).toMatch(/^RUN_ENDED/);
      expect(await code(e.complete(1))).toMatch(/^RUN_ENDED/);
      const other = await resumeRun(store, runId);
      expect(await code(other.beginTool({ name: 't3', args: {} }))).toMatch(/^RUN_ENDED/);
      expect((await run.journal.head())!.seq).toBe(head);
      await other.resolveEffect(e.id, { abandon: true }, { reason: 'the run ended without it' });
      await other.close();
      await run.close();
    }
  });

  test('a tool result JSON cannot represent stands: completed, with markers where the parts were, listed in meta.unrepresentable', async () => {
    const run = await startRun(makeStore(), { runId: 'r-values' });
    const response: Record<string, unknown> = { status: 200, body: { ok: true }, parse: () => 1, ratio: Number.NaN };
    response.self = response;
    class Headers {
      [Symbol.iterator](): Iterator<never> {
        return [][Symbol.iterator]();
      }
      readonly h = 1;
      readonly [Symbol.toStringTag] = 'Headers';
    }
    response.headers = new Headers();
    const e = await run.beginTool({ name: 'http', args: { url: 'https://x.example' } });
    const at = await e.complete(response);
    expect(await run.journal.get(at.seq)).toMatchObject({
      kind: 'tool.completed',
      result: {
        status: 200,
        body: { ok: true },
        parse: { unrepresentable: 'a function' },
        ratio: { unrepresentable: 'the number NaN' },
        self: { unrepresentable: expect.stringContaining('cycle') },
        headers: { unrepresentable: expect.stringContaining('Headers') },
      },
      meta: {
        unrepresentable: [
          { path: '/result/parse', what: 'a function' },
          { path: '/result/ratio', what: 'the number NaN' },
          { path: '/result/self', what: expect.stringContaining('cycle') },
          { path: '/result/headers', what: expect.stringContaining('Headers') },
        ],
      },
    });
    expect((await run.effects())[0]!.status).toBe('completed');
    // A thrown value is recorded the same way, and stays a failure.
    const thrown = Object.assign(new Error('boom'), { retry: () => 0 });
    const f = await run.beginTool({ name: 'http', args: { url: 'https://y.example' } });
    const failed = await f.fail(thrown);
    expect(await run.journal.get(failed.seq)).toMatchObject({
      kind: 'tool.failed',
      error: { name: 'Error', message: 'boom', retry: { unrepresentable: 'a function' } },
    });
    expect((await run.journal.verify()).ok).toBe(true);
    await run.close();
  });
});

describe('resumeRun fails closed', () => {
  test('a run whose journal was edited is refused (RUN_INVALID, naming the first problem), not resumed; verify: false reads it anyway', async () => {
    const { readdirSync, readFileSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = tempDir();
    const store = new FileStore(dir, { fsync: 'none' });
    const run = await startRun(store, { runId: 'r-tampered' });
    const e = await run.beginTool({ name: 'charge_card', args: { amount: '120.00' } });
    await e.complete({ status: 'declined' });
    await run.close();
    const segment = readdirSync(join(dir, 'r-tampered', 'buckets')).find((f) => f.endsWith('.jsonl'))!;
    const path = join(dir, 'r-tampered', 'buckets', segment);
    const text = readFileSync(path, 'utf8');
    expect(text).toContain('"declined"');
    // An outcome rewritten after the fact, so a resumed agent would read "succeeded".
    writeFileSync(path, text.replace('"declined"', '"succeeded"'));
    expect(await code(resumeRun(store, 'r-tampered'))).toMatch(
      /^RUN_INVALID: .*run "r-tampered" does not verify .*seq 2/,
    );
    const anyway = await resumeRun(store, 'r-tampered', { verify: false, readOnly: true });
    expect((await anyway.effects())[0]!.status).toBe('completed');
    await anyway.close();
  });
});
