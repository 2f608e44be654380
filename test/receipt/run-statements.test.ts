/**
 * What a receipt of a run journal (stepchain/v2, spec/FORMAT.md §11) proves and does not prove
 * (spec/RECEIPT.md §8): a complete receipt proves the run's identity, which the genesis carries and every
 * step hash depends on; a tool effect or a model request started in the range without an outcome in it is
 * named as unknown; a v1 receipt says nothing about runs. The runs are written by the runtime into a memory
 * store and exported in memory, so the sentences are checked whole. Written from surviving mutants of
 * src/receipt/verify.ts and describe.ts (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { receiptBytes, verifyReceipt, type ReceiptReport } from '../../src/receipt/index.js';
import { startRun, type StartRunOptions } from '../../src/runtime/index.js';
import { MemoryStore } from '../../src/store/memory.js';
import { makeFixture } from './fixture.js';

const UNKNOWN = 'has no recorded outcome';
const identityOf = (r: ReceiptReport) => r.proves.filter((s) => s.startsWith('The steps belong to run '));
const unknownOf = (r: ReceiptReport) => r.does_not_prove.filter((s) => s.includes(UNKNOWN));

/**
 * A run with, in order: seq 1 a model request that completes (seq 2) asking for two tool calls; seq 3 the
 * tool effect "lookup" that completes (seq 4); seq 5 the effect "charge" (idempotency key inv-9), and
 * seq 6 the effect "notify" (no key), both left pending; seq 7 a model request "m-late" left pending.
 */
async function pendingRun(
  options: StartRunOptions,
): Promise<{ bytes: (range?: { from?: number; to?: number }) => Promise<Uint8Array> }> {
  const store = new MemoryStore();
  const run = await startRun(store, { input: { task: 'pay' }, ...options });
  const call = await run.beginModel({
    model: 'm-1',
    prompt: [{ role: 'user', content: 'pay invoice 9' }],
    id: 'm-first',
  });
  await call.complete({
    result: { role: 'assistant' },
    toolCalls: [
      { id: 'c1', name: 'http', arguments: { url: 'a' } },
      { id: 'c2', name: 'http', arguments: { url: 'b' } },
    ],
  });
  const done = await run.beginTool({
    name: 'http',
    args: { url: 'https://pay.example/a' },
    callId: 'c1',
    id: 'lookup',
  });
  await done.complete({ status: 200 });
  await run.beginTool({
    name: 'http',
    args: { url: 'https://pay.example/charge' },
    callId: 'c2',
    idempotencyKey: 'inv-9',
    id: 'charge',
  });
  await run.beginTool({ name: 'mail', args: { to: 'ops' }, id: 'notify' });
  await run.beginModel({ model: 'm-1', prompt: [{ role: 'user', content: 'again' }], id: 'm-late' });
  return { bytes: (range = {}) => receiptBytes(run.journal, range) };
}

describe('receipts of run journals (§8, FORMAT §11)', () => {
  test('a complete receipt proves the run identity, with each member the genesis names, after the chain statements', async () => {
    const run = await pendingRun({
      runId: 'run-a',
      conversationId: 'conv-1',
      parentRunId: 'orchestrator-7',
      agent: 'payer',
      labels: { env: 'test', team: 'ops' },
    });
    const r = await verifyReceipt(await run.bytes());
    expect(r.ok).toBe(true);
    expect(r.proves).toHaveLength(3);
    expect(r.proves[2]).toBe(
      "The steps belong to run run-a (conversation conv-1; parent run orchestrator-7; agent payer; labels env=test, team=ops): the run's identity is in the genesis, which every step hash depends on.",
    );
  });

  test.each([
    [
      'no member',
      {},
      "The steps belong to run run-b: the run's identity is in the genesis, which every step hash depends on.",
    ],
    [
      'the conversation only',
      { conversationId: 'c-9' },
      "The steps belong to run run-b (conversation c-9): the run's identity is in the genesis, which every step hash depends on.",
    ],
    [
      'the parent run only',
      { parentRunId: 'p-1' },
      "The steps belong to run run-b (parent run p-1): the run's identity is in the genesis, which every step hash depends on.",
    ],
    [
      'the agent only',
      { agent: 'solo' },
      "The steps belong to run run-b (agent solo): the run's identity is in the genesis, which every step hash depends on.",
    ],
    [
      'one label only',
      { labels: { k: 'v' } },
      "The steps belong to run run-b (labels k=v): the run's identity is in the genesis, which every step hash depends on.",
    ],
  ])('the identity with %s names exactly what the genesis holds', async (_what, identity, sentence) => {
    const r = await verifyReceipt(await (await pendingRun({ runId: 'run-b', ...identity })).bytes());
    expect(identityOf(r)).toEqual([sentence]);
  });

  test('each effect and model request started without an outcome is named, in the order they started, before the last statement; completed ones are not', async () => {
    const r = await verifyReceipt(await (await pendingRun({ runId: 'run-c' })).bytes());
    expect(r.ok).toBe(true);
    expect(unknownOf(r)).toEqual([
      'The outcome of tool effect charge (http, started at seq 5, idempotency key inv-9): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
      'The outcome of tool effect notify (mail, started at seq 6): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
      'The outcome of model request m-late (started at seq 7): it has no recorded outcome in this receipt.',
    ]);
    expect(r.does_not_prove.at(-1)).toMatch(/^That the recorded content and timestamps are true/);
    expect(r.does_not_prove.slice(-4, -1)).toEqual(unknownOf(r));
  });

  test('a partial receipt proves no run identity (nothing in the range links to the genesis), and reads the effects the range holds', async () => {
    const run = await pendingRun({ runId: 'run-d', agent: 'payer' });
    const r = await verifyReceipt(await run.bytes({ from: 3, to: 6 }));
    expect(r.ok).toBe(true);
    expect(r.scope).toBe('partial');
    expect(identityOf(r)).toEqual([]);
    // lookup (3) has its outcome (4) in the range; m-late (7) lies past it.
    expect(unknownOf(r)).toEqual([
      'The outcome of tool effect charge (http, started at seq 5, idempotency key inv-9): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
      'The outcome of tool effect notify (mail, started at seq 6): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
    ]);
  });

  test('an outcome outside the range leaves its effect unknown in a receipt that stops before it', async () => {
    const run = await pendingRun({ runId: 'run-e' });
    const r = await verifyReceipt(await run.bytes({ from: 0, to: 3 }));
    expect(r.ok).toBe(true);
    expect(unknownOf(r)).toEqual([
      'The outcome of tool effect lookup (http, started at seq 3): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
    ]);
  });

  test('an effect whose start names no tool is an "unnamed tool" (the chain does not check tool_call\'s shape; the run reader reads its tool as null, RUNS.md §2 step 1)', async () => {
    const store = new MemoryStore();
    const run = await startRun(store, { runId: 'run-f' });
    await run.journal.append({
      kind: 'tool.started',
      step_id: 'bare',
      input: null,
      model: null,
      prompt: null,
      tool_call: null,
      result: null,
    } as never);
    const r = await verifyReceipt(await receiptBytes(run.journal));
    expect(r.ok).toBe(true);
    expect(unknownOf(r)).toEqual([
      'The outcome of tool effect bare (unnamed tool, started at seq 1): it has no recorded outcome in this receipt, so whether the tool ran, and what it did, is unknown.',
    ]);
  });

  test('a v1 receipt says nothing about runs', async () => {
    const r = await verifyReceipt(await receiptBytes(makeFixture({ steps: 3 })));
    expect(r.ok).toBe(true);
    expect(identityOf(r)).toEqual([]);
    expect(unknownOf(r)).toEqual([]);
  });
});
