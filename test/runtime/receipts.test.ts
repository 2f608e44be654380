/**
 * Receipts, diff and redaction on run journals (spec/FORMAT.md §11): they work as on v1 journals; a
 * receipt of a run with a pending effect says the effect's outcome is unknown; publish redacts an intent's
 * arguments like a step's.
 */
import { readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { exportReceipt, FileStore, startRun, verifyReceipt, type Journal } from '../../src/index.js';
import { diff } from '../../src/replay.js';
import { publish } from '../../src/publish.js';
import { tempDir } from '../helpers/tmp.js';

async function runWithPendingEffect(root: string, id: string, secret: string): Promise<Journal> {
  const store = new FileStore(root, { fsync: 'none' });
  const run = await startRun(store, {
    runId: id,
    conversationId: 'conv-1',
    agent: 'payer',
    labels: { environment: 'test' },
    input: { task: 'pay' },
  });
  const call = await run.beginModel({ model: 'm-1', prompt: [{ role: 'user', content: 'pay invoice 9' }] });
  await call.complete({
    result: { role: 'assistant' },
    toolCalls: [{ id: 'c1', name: 'http', arguments: { api_key: secret } }],
  });
  const done = await run.beginTool({
    name: 'http',
    args: { api_key: secret, url: 'https://pay.example/a' },
    callId: 'c1',
    id: 'lookup',
  });
  await done.complete({ status: 200 });
  await run.beginTool({
    name: 'http',
    args: { api_key: secret, url: 'https://pay.example/charge' },
    idempotencyKey: 'inv-9',
    id: 'charge',
  });
  return run.journal;
}

describe('receipts of run journals', () => {
  test("verify, prove the run identity, and say a pending effect's outcome is unknown", async () => {
    const root = tempDir();
    const journal = await runWithPendingEffect(root, 'run-r', 'sk-live-000000000000000000000000');
    const out = join(root, 'r.tar');
    const exported = await exportReceipt(journal, { out });
    const report = await verifyReceipt(await readFile(out), { expectHead: exported.head.step_hash });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.proves.join('\n')).toContain('run run-r (conversation conv-1; agent payer; labels environment=test)');
    const unknown = report.does_not_prove.filter((s) => s.includes('has no recorded outcome'));
    expect(unknown).toEqual([
      expect.stringContaining('tool effect charge (http, started at seq 5, idempotency key inv-9)'),
    ]);
    // A completed effect is not listed.
    expect(report.does_not_prove.join('\n')).not.toContain('effect lookup');
    await journal.close();
  });

  test('a partial receipt of a run journal is checked by the v2 profiles its genesis names, not as v1', async () => {
    const root = tempDir();
    const journal = await runWithPendingEffect(root, 'run-p', 'sk-live-111111111111111111111111');
    const out = join(root, 'p.tar');
    const exported = await exportReceipt(journal, { out, from: 2, to: 4 });
    const report = await verifyReceipt(await readFile(out), { expectHead: exported.head.step_hash });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.scope).toBe('partial');
    await journal.close();
  });

  test('a v1 receipt says nothing about runs', async () => {
    const root = tempDir();
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('plain');
    await j.append({ model: 'm', result: 1 });
    const out = join(root, 'p.tar');
    await exportReceipt(j, { out });
    const report = await verifyReceipt(await readFile(out));
    expect(report.ok).toBe(true);
    expect([...report.proves, ...report.does_not_prove].join('\n')).not.toMatch(/run |effect/);
    await j.close();
  });

  test('publish redacts the arguments of an intent as those of a step; the published receipt verifies', async () => {
    const root = tempDir();
    const secret = 'k-live-0123456789abcdef';
    const journal = await runWithPendingEffect(root, 'run-p', secret);
    const out = join(root, 'pub.tar');
    const result = await publish(journal, {
      policy: {
        rules: [
          { id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['http'] },
          { id: 'model-calls', paths: ['/tool_call/0/arguments/api_key'] },
        ],
      },
      optIn: true,
      out,
    });
    // The two intents (seq 3, 5) and the completed effect (seq 4) each had the key in tool_call.arguments; the model's request too.
    expect(result.redactions).toBe(4);
    const bytes = readFileSync(out);
    expect(bytes.includes(Buffer.from(secret))).toBe(false);
    const report = await verifyReceipt(await readFile(out));
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.does_not_prove.join('\n')).toContain('tool effect charge');
    await journal.close();
  });

  test('diff of two runs compares kinds and content; identical prefixes do not diverge', async () => {
    const root = tempDir();
    const a = await runWithPendingEffect(root, 'run-a', 'k1');
    const b = await runWithPendingEffect(root, 'run-b', 'k2');
    const report = await diff(a, b);
    expect(report.same).toBe(false);
    expect(report.fields).toEqual(expect.arrayContaining(['kind', 'ref', 'error', 'tool_call']));
    expect(report.divergences[0]).toMatchObject({ kind: 'changed', seq_a: 2, seq_b: 2 });
    await a.close();
    await b.close();
  });
});
