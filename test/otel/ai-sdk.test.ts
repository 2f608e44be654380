/**
 * Side by side: one Vercel AI SDK agent (its mock model, one tool) recorded twice — by the SDK's own
 * telemetry (`experimental_telemetry`, no stepchain adapter) exported over OTLP/HTTP to the receiver, and by
 * the ai-sdk adapter (stepchain/ai-sdk). Both runs verify, and their steps match: the same kinds in the same
 * order, the same tool calls asked for, the same tool effects with their arguments and results.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startRun } from '../../src/index.js';
import { recordTools, stepchainMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { startReceiver, type Receiver } from '../../src/otel.js';
import { recordsOf, tempStore, type Rec } from './helpers.js';

// The AI SDK parents its spans through the API's active context: a context manager, as any Node app with OTel has.
beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
afterAll(() => {
  context.disable();
});

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

function mockModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: [
      {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call-paris',
            toolName: 'weather',
            input: JSON.stringify({ city: 'Paris' }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: usage(10, 5),
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'Paris: 21C.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: usage(20, 4),
        warnings: [],
      },
    ],
  });
}

const tools = () => ({
  weather: tool({
    description: 'the weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }: { city: string }) => ({ city, celsius: 21 }),
  }),
});

/** What both recordings must agree on, record by record. */
function steps(records: Rec[]): unknown[] {
  return records.map((r) => {
    const call = r.tool_call as Record<string, unknown> | Record<string, unknown>[] | null;
    if (r.kind === 'tool.started' || r.kind === 'tool.completed') {
      const c = call as Record<string, unknown>;
      return {
        kind: r.kind,
        name: c.name,
        arguments: c.arguments,
        call_id: c.call_id,
        ...(r.kind === 'tool.completed' ? { result: r.result } : {}),
      };
    }
    if (r.kind === 'model.completed')
      return { kind: r.kind, asks: Array.isArray(call) ? call.map((c) => c.toolCallId ?? c.id) : [] };
    return { kind: r.kind };
  });
}

describe('the Vercel AI SDK: its own telemetry, recorded without an adapter, beside the adapter', () => {
  test('the same agent gives matching runs, both verified', async () => {
    // 1. The SDK's own telemetry, exported to the receiver.
    const telemetry = tempStore();
    const receiver = await startReceiver({ store: telemetry.store, port: 0, settleMs: 60_000 });
    receivers.push(receiver);
    const provider = new NodeTracerProvider({
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }))],
    });
    const viaTelemetry = await generateText({
      model: mockModel(),
      tools: tools(),
      stopWhen: stepCountIs(3),
      prompt: 'Weather in Paris?',
      experimental_telemetry: { isEnabled: true, functionId: 'weather-bot', tracer: provider.getTracer('ai') },
    });
    await provider.shutdown();
    await receiver.collector.flush();
    const [runId] = await telemetry.store.list();
    expect((await telemetry.store.verify(runId!)).ok).toBe(true);
    const fromSpans = await recordsOf(telemetry.store, runId!);

    // 2. The ai-sdk adapter, same agent.
    const adapter = tempStore();
    const run = await startRun(adapter.store, { runId: 'adapter', agent: 'weather-bot' });
    const viaAdapter = await generateText({
      model: wrapLanguageModel({ model: mockModel(), middleware: stepchainMiddleware(run) }),
      tools: recordTools(run, tools()),
      stopWhen: stepCountIs(3),
      prompt: 'Weather in Paris?',
    });
    await run.complete(viaAdapter.text);
    await run.close();
    expect((await adapter.store.verify('adapter')).ok).toBe(true);
    const fromAdapter = await recordsOf(adapter.store, 'adapter');

    expect(viaTelemetry.text).toBe(viaAdapter.text);
    expect(steps(fromSpans)).toEqual(steps(fromAdapter));
    expect(steps(fromSpans)).toEqual([
      { kind: 'run.started' },
      { kind: 'model.started' },
      { kind: 'model.completed', asks: ['call-paris'] },
      { kind: 'tool.started', name: 'weather', arguments: { city: 'Paris' }, call_id: 'call-paris' },
      {
        kind: 'tool.completed',
        name: 'weather',
        arguments: { city: 'Paris' },
        call_id: 'call-paris',
        result: { city: 'Paris', celsius: 21 },
      },
      { kind: 'model.started' },
      { kind: 'model.completed', asks: [] },
      { kind: 'run.completed' },
    ]);
    // The run's identity from the telemetry: the functionId is the agent.
    const genesis = (await telemetry.store.runs({})).find((r) => r.id === runId)!;
    expect(genesis.run?.agent).toBe('weather-bot');
    // The model's usage, as the adapter records it.
    expect((fromSpans[2]!.meta as { usage: unknown }).usage).toEqual({ input_tokens: 10, output_tokens: 5 });
  });
});
