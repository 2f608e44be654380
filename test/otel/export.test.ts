/**
 * Back-links (spec/OTEL.md §7): a step's hash put on a live span, and `stepchain otel-export` (the built
 * CLI) sending a recorded run as OTLP spans to a receiver — each span carrying the hashes of the records it
 * came from — and refusing a journal that does not verify. The receiver here is stepchain's own, into a
 * Postgres store (the suite's embedded server), so what arrived can be read back.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { openStore, startRun, type OpenedStore } from '../../src/index.js';
import { linkSpan, startReceiver } from '../../src/otel.js';
import { recordsOf, tempStore } from './helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const opened: OpenedStore[] = [];

/** The CLI as a child process, awaited without blocking this process (the receiver answering it lives here). */
function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8' }, (error, stdout, stderr) =>
      resolve({ status: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}
afterAll(async () => {
  await Promise.all(opened.map((o) => o.close()));
});

async function recordedRun() {
  const { dir, store } = tempStore();
  const run = await startRun(store, { runId: 'r1', agent: 'weather', conversationId: 'conv-9' });
  const model = await run.beginModel({
    model: { name: 'gpt-test', provider: 'openai' },
    prompt: [{ role: 'user', content: 'Paris?' }],
  });
  await model.complete({
    result: { text: '' },
    toolCalls: [{ id: 'call-1', name: 'forecast', arguments: { city: 'Paris' } }],
  });
  const effect = await run.beginTool({ name: 'forecast', args: { city: 'Paris' }, callId: 'call-1' });
  const done = await effect.complete('sunny');
  await run.complete('Sunny.');
  await run.close();
  return { dir, store, effectSeq: effect.seq, done };
}

describe('back-links', () => {
  test('linkSpan puts the step on the live span', async () => {
    const { done } = await recordedRun();
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const span = provider.getTracer('t').startSpan('execute_tool forecast');
    linkSpan(span, 'r1', done);
    span.end();
    expect(exporter.getFinishedSpans()[0]!.attributes).toEqual({
      'stepchain.journal_id': 'r1',
      'stepchain.seq': done.seq,
      'stepchain.step_id': done.step_id,
      'stepchain.step_hash': done.step_hash,
    });
    await provider.shutdown();
  });

  test('otel-export sends the run as spans carrying its step hashes; the receiver records them', async () => {
    const { dir, store } = await recordedRun();
    const original = await recordsOf(store, 'r1');
    const target = await openStore(`${inject('pgUrl')}?schema=otel_export_${process.pid}`);
    opened.push(target);
    const receiver = await startReceiver({ store: target.store, port: 0, settleMs: 60_000 });
    const sent = await cli(['otel-export', join(dir, 'r1'), '--endpoint', receiver.url, '--json']);
    expect(sent.status, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ ok: true, spans: 3 });
    await receiver.close();
    const [id] = await target.store.list();
    expect((await target.verify(id!)).ok).toBe(true);
    const received = await recordsOf(target.store, id!);
    expect(received.map((r) => r.kind)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'tool.started',
      'tool.completed',
      'run.completed',
    ]);
    const tool = received[4]!;
    const attrs = (tool.meta as { otel: { attributes: Record<string, unknown> } }).otel.attributes;
    const completed = original.find((r) => r.kind === 'tool.completed')!;
    const started = original.find((r) => r.kind === 'tool.started')!;
    expect(attrs['stepchain.step_hash']).toBe(completed.step_hash);
    expect(attrs['stepchain.start.step_hash']).toBe(started.step_hash);
    expect(attrs['stepchain.journal_id']).toBe('r1');
    expect(tool.result).toBe('sunny');
    expect(tool.tool_call).toEqual({ name: 'forecast', arguments: { city: 'Paris' }, call_id: 'call-1' });
    const genesis = (await target.store.runs({})).find((r) => r.id === id)!;
    expect(genesis.run).toMatchObject({ agent: 'weather', conversation_id: 'conv-9' });
  });

  test('otel-export refuses a journal that does not verify, and sends nothing', async () => {
    const { dir } = await recordedRun();
    const buckets = join(dir, 'r1', 'buckets');
    const file = join(buckets, readdirSync(buckets).sort()[0]!);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"sunny"', '"rainy"'));
    const { store } = tempStore();
    const receiver = await startReceiver({ store, port: 0 });
    const sent = await cli(['otel-export', join(dir, 'r1'), '--endpoint', receiver.url]);
    await receiver.close();
    expect(sent.status).not.toBe(0);
    expect(sent.stderr).toMatch(/does not verify/);
    expect(await store.list()).toEqual([]);
  });
});
