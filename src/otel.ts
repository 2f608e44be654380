/**
 * stepchain/otel: OpenTelemetry GenAI traces recorded as run journals, and runs linked back to traces
 * (spec/OTEL.md). Node only. The receiver (`startReceiver`, the CLI's `stepchain collect`) takes OTLP/HTTP
 * exports; `StepchainSpanProcessor` records in-process from the OpenTelemetry JS SDK (an optional peer);
 * `backlinkAttributes` / `linkSpan` put a step's hash on a live span; `exportRun` sends a run as OTLP spans.
 */
export { startReceiver, type Receiver, type ReceiverOptions } from './otel/server.js';
export { SpanCollector, type CollectorOptions } from './otel/collector.js';
export { StepchainSpanProcessor, spanOfReadable, type ReadableSpanLike } from './otel/processor.js';
export { mapTrace, type MappedRun } from './otel/mapping.js';
export {
  OtlpError,
  spansOfJson,
  spansOfProtobuf,
  spansOfRequest,
  type OtelSpan,
  type SpanEvent,
  type SpanLink,
} from './otel/otlp.js';
export { backlinkAttributes, linkSpan, runAsOtlp, exportRun, tracesUrl } from './otel/export.js';
