/**
 * The real OpenTelemetry JS SDK (sdk-trace-node 2.x) exporting through the real OTLP/HTTP exporters —
 * protobuf and JSON — to the real receiver on 127.0.0.1, and the same spans recorded in-process by the span
 * processor: the runs verify, carry what the GenAI spans said, and are the same whichever way they came.
 */
import { afterEach, describe, expect, test } from 'vitest';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startReceiver, StepchainSpanProcessor, type Receiver } from '../../src/otel.js';
import { contentOf, recordsOf, tempStore, traceAgent, type Rec } from './helpers.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** Records with the span ids and times taken out: what two recordings of the same agent must share. */
function shape(records: Rec[]): unknown[] {
  return records.map((r) => {
    const c = contentOf(r) as Record<string, unknown>;
    const meta = c.meta as { otel?: Record<string, unknown> } | undefined;
    const otel =
      meta?.otel === undefined
        ? undefined
        : {
            ...meta.otel,
            trace_id: 'T',
            span_id: 'S',
            parent_span_id: 'P',
            start_time_unix_nano: 'x',
            end_time_unix_nano: 'x',
            resource: undefined,
            scope: undefined,
            events: (meta.otel.events as { time_unix_nano: string }[] | undefined)?.map((e) => ({
              ...e,
              time_unix_nano: 'x',
            })),
          };
    return {
      ...c,
      step_id: String(c.step_id).replace(/^[0-9a-f]{16}/, 'S'),
      ref: typeof c.ref === 'string' ? c.ref.replace(/^[0-9a-f]{16}/, 'S') : c.ref,
      ts: 'x',
      meta: meta === undefined ? undefined : { ...meta, otel },
    };
  });
}

async function viaExporter(
  kind: 'protobuf' | 'json',
): Promise<{ records: Rec[]; verified: boolean; runs: string[]; runId: string }> {
  const { store } = tempStore();
  const receiver = await startReceiver({ store, port: 0, settleMs: 60_000 });
  receivers.push(receiver);
  const url = `${receiver.url}/v1/traces`;
  const exporter = kind === 'protobuf' ? new ProtoExporter({ url }) : new JsonExporter({ url });
  const provider = new NodeTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });
  const ids = traceAgent(provider.getTracer('sdk-test'));
  await provider.forceFlush();
  await provider.shutdown();
  await receiver.collector.flush();
  const runId = `otel-${ids.traceId}-${ids.spanId}`;
  return {
    records: await recordsOf(store, runId),
    verified: (await store.verify(runId)).ok,
    runs: await store.list(),
    runId,
  };
}

describe('the OTel JS SDK and its OTLP/HTTP exporters against stepchain collect', () => {
  test.each(['protobuf', 'json'] as const)(
    '%s: one agent invocation is one run that verifies, with its model calls and tool effect',
    async (kind) => {
      const { records, verified, runs, runId } = await viaExporter(kind);
      expect(runs).toEqual([runId]);
      expect(verified).toBe(true);
      expect(records.map((r) => r.kind)).toEqual([
        'run.started',
        'model.started',
        'model.completed',
        'tool.started',
        'tool.completed',
        'model.started',
        'model.completed',
        'run.completed',
      ]);
      const [, , asked, began, done, , , end] = records;
      expect(asked!.model).toEqual({ name: 'gpt-test', provider: 'openai' });
      expect(asked!.tool_call).toEqual([{ id: 'call-1', name: 'forecast', arguments: { city: 'Paris' } }]);
      expect((asked!.meta as Record<string, unknown>).usage).toEqual({ input_tokens: 10, output_tokens: 5 });
      // What the mapping does not read is kept: an attribute of the instrumentation's own, the span's events.
      const otel = (asked!.meta as { otel: { attributes: Record<string, unknown>; events: unknown[] } }).otel;
      expect(otel.attributes).toEqual({ 'custom.attr': 'kept' });
      expect(otel.events).toEqual([expect.objectContaining({ name: 'first-token', attributes: { 'latency.ms': 3 } })]);
      expect(began!.tool_call).toEqual({ name: 'forecast', arguments: { city: 'Paris' }, call_id: 'call-1' });
      expect(done!.result).toBe('sunny in Paris');
      expect(done!.ref).toBe(began!.step_id);
      expect(end!.result).toEqual([{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny in Paris.' }] }]);
    },
  );

  test('protobuf and JSON give the same records', async () => {
    const a = await viaExporter('protobuf');
    const b = await viaExporter('json');
    expect(shape(b.records)).toEqual(shape(a.records));
  });

  test('in-process: the span processor records the same run as the receiver, without a server', async () => {
    const viaReceiver = await viaExporter('protobuf');
    const { store } = tempStore();
    const processor = new StepchainSpanProcessor(store, { settleMs: 60_000 });
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const ids = traceAgent(provider.getTracer('sdk-test'));
    await provider.shutdown();
    const runId = `otel-${ids.traceId}-${ids.spanId}`;
    expect((await store.verify(runId)).ok).toBe(true);
    expect(shape(await recordsOf(store, runId))).toEqual(shape(viaReceiver.records));
  });

  test('a failed tool span is a failed effect with its error', async () => {
    const { store } = tempStore();
    const processor = new StepchainSpanProcessor(store);
    const provider = new NodeTracerProvider({ spanProcessors: [processor] });
    const ids = traceAgent(provider.getTracer('sdk-test'), { failTool: true });
    await provider.shutdown();
    const records = await recordsOf(store, `otel-${ids.traceId}-${ids.spanId}`);
    const failed = records.find((r) => r.kind === 'tool.failed')!;
    expect(failed.error).toEqual({ name: 'TimeoutError', message: 'the forecast service timed out' });
    expect(failed.result).toBeNull();
  });
});
