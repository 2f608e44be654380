/**
 * The OTLP trace messages (opentelemetry-proto v1: collector/trace/v1, trace/v1, common/v1, resource/v1) and
 * google.rpc.Status, as a protobufjs reflection schema: protobufjs does the wire decoding and encoding (a
 * well-kept decoder, used by the OpenTelemetry JS exporters' own generated code before 0.200), this file
 * only names the fields and their numbers as the .proto files give them (spec/OTEL.md §4).
 */
import protobuf from 'protobufjs/light.js';

const kv = (fields: Record<string, [type: string, id: number, rule?: 'repeated']>) => ({
  fields: Object.fromEntries(
    Object.entries(fields).map(([name, [type, id, rule]]) => [
      name,
      rule === undefined ? { type, id } : { type, id, rule },
    ]),
  ),
});

const SCHEMA = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: {
            value: {
              oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
            },
          },
          ...kv({
            stringValue: ['string', 1],
            boolValue: ['bool', 2],
            intValue: ['int64', 3],
            doubleValue: ['double', 4],
            arrayValue: ['ArrayValue', 5],
            kvlistValue: ['KeyValueList', 6],
            bytesValue: ['bytes', 7],
          }),
        },
        ArrayValue: kv({ values: ['AnyValue', 1, 'repeated'] }),
        KeyValueList: kv({ values: ['KeyValue', 1, 'repeated'] }),
        KeyValue: kv({ key: ['string', 1], value: ['AnyValue', 2] }),
        InstrumentationScope: kv({
          name: ['string', 1],
          version: ['string', 2],
          attributes: ['KeyValue', 3, 'repeated'],
          droppedAttributesCount: ['uint32', 4],
        }),
        Resource: kv({ attributes: ['KeyValue', 1, 'repeated'], droppedAttributesCount: ['uint32', 2] }),
        ResourceSpans: kv({
          resource: ['Resource', 1],
          scopeSpans: ['ScopeSpans', 2, 'repeated'],
          schemaUrl: ['string', 3],
        }),
        ScopeSpans: kv({
          scope: ['InstrumentationScope', 1],
          spans: ['Span', 2, 'repeated'],
          schemaUrl: ['string', 3],
        }),
        Span: kv({
          traceId: ['bytes', 1],
          spanId: ['bytes', 2],
          traceState: ['string', 3],
          parentSpanId: ['bytes', 4],
          flags: ['fixed32', 16],
          name: ['string', 5],
          kind: ['int32', 6],
          startTimeUnixNano: ['fixed64', 7],
          endTimeUnixNano: ['fixed64', 8],
          attributes: ['KeyValue', 9, 'repeated'],
          droppedAttributesCount: ['uint32', 10],
          events: ['Event', 11, 'repeated'],
          droppedEventsCount: ['uint32', 12],
          links: ['Link', 13, 'repeated'],
          droppedLinksCount: ['uint32', 14],
          status: ['Status', 15],
        }),
        Event: kv({
          timeUnixNano: ['fixed64', 1],
          name: ['string', 2],
          attributes: ['KeyValue', 3, 'repeated'],
          droppedAttributesCount: ['uint32', 4],
        }),
        Link: kv({
          traceId: ['bytes', 1],
          spanId: ['bytes', 2],
          traceState: ['string', 3],
          attributes: ['KeyValue', 4, 'repeated'],
          droppedAttributesCount: ['uint32', 5],
          flags: ['fixed32', 6],
        }),
        Status: kv({ message: ['string', 2], code: ['int32', 3] }),
        ExportTraceServiceRequest: kv({ resourceSpans: ['ResourceSpans', 1, 'repeated'] }),
        ExportTracePartialSuccess: kv({ rejectedSpans: ['int64', 1], errorMessage: ['string', 2] }),
        ExportTraceServiceResponse: kv({ partialSuccess: ['ExportTracePartialSuccess', 1] }),
        RpcStatus: kv({ code: ['int32', 1], message: ['string', 2] }),
      },
    },
  },
};

const root = protobuf.Root.fromJSON(SCHEMA);
export const ExportRequest = root.lookupType('otlp.ExportTraceServiceRequest');
const ExportResponse = root.lookupType('otlp.ExportTraceServiceResponse');
const RpcStatus = root.lookupType('otlp.RpcStatus');

/** The protobuf ExportTraceServiceRequest as plain objects: bytes as Uint8Array, 64-bit integers as decimal strings. */
export function decodeProtobufRequest(bytes: Uint8Array): unknown {
  const message = ExportRequest.decode(bytes);
  return ExportRequest.toObject(message, { longs: String, bytes: Array, defaults: false, oneofs: false });
}

/** Encodes a request given as plain objects (ids as Uint8Array, times as decimal strings): for `otel-export`. */
export function encodeProtobufRequest(request: unknown): Uint8Array {
  return ExportRequest.encode(ExportRequest.fromObject(request as Record<string, unknown>)).finish();
}

/** An empty ExportTraceServiceResponse, or one with partial_success. */
export function encodeProtobufResponse(rejected = 0, errorMessage = ''): Uint8Array {
  const body =
    rejected === 0 && errorMessage === '' ? {} : { partialSuccess: { rejectedSpans: rejected, errorMessage } };
  return ExportResponse.encode(ExportResponse.fromObject(body)).finish();
}

/** A google.rpc.Status (code and message; no details), the body of an OTLP/HTTP failure. */
export function encodeProtobufStatus(code: number, message: string): Uint8Array {
  return RpcStatus.encode(RpcStatus.fromObject({ code, message })).finish();
}
