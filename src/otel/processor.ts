/**
 * Recording in-process, without a server (spec/OTEL.md §6): a SpanProcessor for the OpenTelemetry JS SDK
 * (`@opentelemetry/sdk-trace-base` 2.x, an optional peer) that hands each ended span to the same collector
 * the receiver uses, so a run recorded this way is the run `stepchain collect` records from the same spans.
 * Typed structurally: nothing here imports the SDK, so the entry loads without it.
 */
import type { Store } from '../index.js';
import { SpanCollector, type CollectorOptions } from './collector.js';
import type { OtelSpan } from './otlp.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type HrTime = [number, number];

/** What the processor reads of the SDK's ReadableSpan (2.x). */
export interface ReadableSpanLike {
  name: string;
  kind: number;
  spanContext(): { traceId: string; spanId: string };
  parentSpanContext?: { spanId: string } | undefined;
  startTime: HrTime;
  endTime: HrTime;
  attributes: Record<string, unknown>;
  events: readonly { name: string; time: HrTime; attributes?: Record<string, unknown> }[];
  links: readonly { context: { traceId: string; spanId: string }; attributes?: Record<string, unknown> }[];
  status: { code: number; message?: string };
  resource: { attributes: Record<string, unknown> };
  instrumentationScope: { name: string; version?: string };
}

const nanos = (t: HrTime): string => (BigInt(t[0]) * 1_000_000_000n + BigInt(t[1])).toString();

/** An SDK attribute value as JSON (the SDK allows primitives and homogeneous arrays of them). */
function value(v: unknown): Json {
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number')
    return Number.isFinite(v) ? (Number.isInteger(v) && !Number.isSafeInteger(v) ? String(v) : v) : String(v);
  if (Array.isArray(v)) return v.map(value);
  return v === undefined || v === null ? null : String(v);
}

function attrs(a: Record<string, unknown> | undefined): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [k, v] of Object.entries(a ?? {})) if (v !== undefined) out[k] = value(v);
  return out;
}

/** The span as the receiver would have decoded it from an OTLP export. */
export function spanOfReadable(s: ReadableSpanLike): OtelSpan {
  const ctx = s.spanContext();
  return {
    trace_id: ctx.traceId,
    span_id: ctx.spanId,
    parent_span_id: s.parentSpanContext?.spanId ?? '',
    name: s.name,
    // The SDK's SpanKind starts at INTERNAL = 0; OTLP's at UNSPECIFIED = 0, INTERNAL = 1.
    kind: s.kind + 1,
    start_time_unix_nano: nanos(s.startTime),
    end_time_unix_nano: nanos(s.endTime),
    attributes: attrs(s.attributes),
    events: s.events.map((e) => ({ time_unix_nano: nanos(e.time), name: e.name, attributes: attrs(e.attributes) })),
    links: s.links.map((l) => ({
      trace_id: l.context.traceId,
      span_id: l.context.spanId,
      attributes: attrs(l.attributes),
    })),
    status: { code: s.status.code, message: s.status.message ?? '' },
    resource: attrs(s.resource.attributes),
    scope: { name: s.instrumentationScope.name, version: s.instrumentationScope.version ?? '' },
  };
}

/**
 * `new BasicTracerProvider({ spanProcessors: [new StepchainSpanProcessor(store)] })`: every ended span is
 * recorded; `forceFlush()` writes every trace held (settled or not), `shutdown()` too and stops.
 */
export class StepchainSpanProcessor {
  readonly collector: SpanCollector;

  constructor(store: Store, options: CollectorOptions = {}) {
    this.collector = new SpanCollector(store, options);
  }

  onStart(): void {}

  onEnd(span: ReadableSpanLike): void {
    // Never throws into the instrumented code: a span the collector cannot hold now is counted, not raised.
    try {
      if (this.collector.hasRoomFor(1)) this.collector.accept([spanOfReadable(span)]);
      else this.collector.failures++;
    } catch {
      this.collector.failures++;
    }
  }

  forceFlush(): Promise<void> {
    return this.collector.flush();
  }

  shutdown(): Promise<void> {
    return this.collector.close();
  }
}
