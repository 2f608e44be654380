/**
 * An OTLP ExportTraceServiceRequest — decoded from protobuf (proto.ts) or parsed from OTLP/JSON — checked
 * and turned into spans (spec/OTEL.md §4): ids as lowercase hex, times as decimal nanosecond strings,
 * attribute values as JSON a journal can hold. Every defect is an OtlpError naming where it is; nothing
 * here throws anything else on hostile input, and nothing is kept from a request that has one.
 */
import { utf8OrBadByte } from '../bytes.js';
import { inexactNumber, numberAt } from '../format.js';
import { decodeProtobufRequest } from './proto.js';

export class OtlpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpError';
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface SpanEvent {
  time_unix_nano: string;
  name: string;
  attributes: Record<string, Json>;
}
export interface SpanLink {
  trace_id: string;
  span_id: string;
  attributes: Record<string, Json>;
}

/** One span, as the receiver and the in-process processor hand it to the mapping. */
export interface OtelSpan {
  trace_id: string;
  span_id: string;
  /** "" for a root span. */
  parent_span_id: string;
  name: string;
  kind: number;
  start_time_unix_nano: string;
  end_time_unix_nano: string;
  attributes: Record<string, Json>;
  events: SpanEvent[];
  links: SpanLink[];
  status: { code: number; message: string };
  resource: Record<string, Json>;
  scope: { name: string; version: string };
}

/** How deep an attribute value may nest (arrays and key-value lists); deeper is refused, never truncated. */
export const MAX_ATTRIBUTE_DEPTH = 32;
const HEX = /^[0-9a-f]*$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array);

/** A member by its lowerCamelCase name or its proto field name (the OTLP/JSON mapping accepts both). */
function member(o: Record<string, unknown>, camel: string): unknown {
  if (o[camel] !== undefined && o[camel] !== null) return o[camel];
  const snake = camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
  return o[snake] ?? undefined;
}

function list(o: Record<string, unknown>, name: string, where: string): unknown[] {
  const v = member(o, name);
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw new OtlpError(`${where}.${name}: expected a list, got ${typeof v}`);
  return v;
}

function text(o: Record<string, unknown>, name: string, where: string): string {
  const v = member(o, name);
  if (v === undefined) return '';
  if (typeof v !== 'string') throw new OtlpError(`${where}.${name}: expected a string, got ${typeof v}`);
  if (LONE_SURROGATE.test(v))
    throw new OtlpError(`${where}.${name}: a string with a lone surrogate (not Unicode text)`);
  return v;
}

function toHex(bytes: Uint8Array | number[]): string {
  let out = '';
  for (const b of bytes) out += (b & 0xff).toString(16).padStart(2, '0');
  return out;
}

/** An id: hex in OTLP/JSON (case-insensitive), bytes in protobuf; `bytes` long, or empty where allowed. */
function id(o: Record<string, unknown>, name: string, bytes: number, where: string, optional: boolean): string {
  const v = member(o, name);
  let hex: string;
  if (v === undefined) hex = '';
  else if (typeof v === 'string') hex = v.toLowerCase();
  else if (v instanceof Uint8Array || (Array.isArray(v) && v.every((b) => typeof b === 'number'))) hex = toHex(v);
  else throw new OtlpError(`${where}.${name}: expected ${bytes} bytes as hex, got ${typeof v}`);
  if (hex === '' && optional) return '';
  if (!HEX.test(hex) || hex.length !== bytes * 2 || /^0+$/.test(hex))
    throw new OtlpError(
      `${where}.${name}: ${JSON.stringify(hex.slice(0, 80))} is not a valid ${bytes}-byte id (hex, not all zero)`,
    );
  return hex;
}

/** A fixed64 time: a decimal string or a safe integer in JSON; "0" when absent. */
function nanos(o: Record<string, unknown>, name: string, where: string): string {
  const v = member(o, name);
  if (v === undefined) return '0';
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === 'string' && /^(0|[1-9][0-9]{0,19})$/.test(v) && BigInt(v) < 2n ** 64n) return v;
  throw new OtlpError(`${where}.${name}: expected an unsigned 64-bit integer, got ${JSON.stringify(v).slice(0, 40)}`);
}

function enumValue(o: Record<string, unknown>, name: string, where: string, names: readonly string[]): number {
  const v = member(o, name);
  if (v === undefined) return 0;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 2 ** 31) return v;
  if (typeof v === 'string' && names.includes(v)) return names.indexOf(v);
  throw new OtlpError(`${where}.${name}: expected an enum number, got ${JSON.stringify(v).slice(0, 40)}`);
}

const SPAN_KINDS = [
  'SPAN_KIND_UNSPECIFIED',
  'SPAN_KIND_INTERNAL',
  'SPAN_KIND_SERVER',
  'SPAN_KIND_CLIENT',
  'SPAN_KIND_PRODUCER',
  'SPAN_KIND_CONSUMER',
];
const STATUS_CODES = ['STATUS_CODE_UNSET', 'STATUS_CODE_OK', 'STATUS_CODE_ERROR'];

/** An AnyValue as JSON: an int64 beyond ±(2^53−1) and a non-finite double become strings, bytes {"bytes": base64}. */
function anyValue(v: unknown, where: string, depth: number): Json {
  if (depth > MAX_ATTRIBUTE_DEPTH) throw new OtlpError(`${where}: nested deeper than ${MAX_ATTRIBUTE_DEPTH} levels`);
  if (v === undefined || v === null) return null;
  if (!isObject(v))
    throw new OtlpError(`${where}: expected an AnyValue object, got ${Array.isArray(v) ? 'a list' : typeof v}`);
  const s = member(v, 'stringValue');
  if (s !== undefined) {
    if (typeof s !== 'string') throw new OtlpError(`${where}.stringValue: expected a string, got ${typeof s}`);
    if (LONE_SURROGATE.test(s))
      throw new OtlpError(`${where}.stringValue: a string with a lone surrogate (not Unicode text)`);
    return s;
  }
  const b = member(v, 'boolValue');
  if (b !== undefined) {
    if (typeof b !== 'boolean') throw new OtlpError(`${where}.boolValue: expected a boolean, got ${typeof b}`);
    return b;
  }
  const i = member(v, 'intValue');
  if (i !== undefined) {
    if (typeof i === 'number' && Number.isSafeInteger(i)) return i;
    if (
      typeof i === 'string' &&
      /^-?(0|[1-9][0-9]{0,18})$/.test(i) &&
      BigInt(i) >= -(2n ** 63n) &&
      BigInt(i) < 2n ** 63n
    )
      return Number.isSafeInteger(Number(i)) ? Number(i) : i;
    throw new OtlpError(`${where}.intValue: expected a 64-bit integer, got ${JSON.stringify(i).slice(0, 40)}`);
  }
  const d = member(v, 'doubleValue');
  if (d !== undefined) {
    if (typeof d === 'number') return Number.isFinite(d) ? d : String(d);
    if (d === 'NaN' || d === 'Infinity' || d === '-Infinity') return d;
    throw new OtlpError(`${where}.doubleValue: expected a number, got ${typeof d}`);
  }
  const a = member(v, 'arrayValue');
  if (a !== undefined) {
    if (!isObject(a)) throw new OtlpError(`${where}.arrayValue: expected an object`);
    return list(a, 'values', `${where}.arrayValue`).map((e, k) =>
      anyValue(e, `${where}.arrayValue.values[${k}]`, depth + 1),
    );
  }
  const kvl = member(v, 'kvlistValue');
  if (kvl !== undefined) {
    if (!isObject(kvl)) throw new OtlpError(`${where}.kvlistValue: expected an object`);
    return attributes(list(kvl, 'values', `${where}.kvlistValue`), `${where}.kvlistValue`, depth + 1);
  }
  const by = member(v, 'bytesValue');
  if (by !== undefined) {
    if (typeof by === 'string' && /^[A-Za-z0-9+/_-]*={0,2}$/.test(by)) return { bytes: by };
    if (by instanceof Uint8Array || Array.isArray(by)) return { bytes: Buffer.from(by as number[]).toString('base64') };
    throw new OtlpError(`${where}.bytesValue: expected base64`);
  }
  return null;
}

function attributes(kvs: unknown[], where: string, depth = 0): Record<string, Json> {
  const out: Record<string, Json> = {};
  kvs.forEach((kv, k) => {
    const at = `${where}.attributes[${k}]`;
    if (!isObject(kv)) throw new OtlpError(`${at}: expected a KeyValue object`);
    const key = text(kv, 'key', at);
    // The OTLP data model: keys are unique; a repeated key keeps its last value (as the SDKs' setAttribute does).
    out[key] = anyValue(member(kv, 'value'), `${at}.value`, depth + 1);
  });
  return out;
}

function span(s: unknown, where: string, resource: Record<string, Json>, scope: OtelSpan['scope']): OtelSpan {
  if (!isObject(s)) throw new OtlpError(`${where}: expected a Span object`);
  const status = member(s, 'status');
  if (status !== undefined && !isObject(status)) throw new OtlpError(`${where}.status: expected an object`);
  const st = status ?? {};
  return {
    trace_id: id(s, 'traceId', 16, where, false),
    span_id: id(s, 'spanId', 8, where, false),
    parent_span_id: id(s, 'parentSpanId', 8, where, true),
    name: text(s, 'name', where),
    kind: enumValue(s, 'kind', where, SPAN_KINDS),
    start_time_unix_nano: nanos(s, 'startTimeUnixNano', where),
    end_time_unix_nano: nanos(s, 'endTimeUnixNano', where),
    attributes: attributes(list(s, 'attributes', where), where),
    events: list(s, 'events', where).map((e, k) => {
      const at = `${where}.events[${k}]`;
      if (!isObject(e)) throw new OtlpError(`${at}: expected an Event object`);
      return {
        time_unix_nano: nanos(e, 'timeUnixNano', at),
        name: text(e, 'name', at),
        attributes: attributes(list(e, 'attributes', at), at),
      };
    }),
    links: list(s, 'links', where).map((l, k) => {
      const at = `${where}.links[${k}]`;
      if (!isObject(l)) throw new OtlpError(`${at}: expected a Link object`);
      return {
        trace_id: id(l, 'traceId', 16, at, false),
        span_id: id(l, 'spanId', 8, at, false),
        attributes: attributes(list(l, 'attributes', at), at),
      };
    }),
    status: {
      code: enumValue(st, 'code', `${where}.status`, STATUS_CODES),
      message: text(st, 'message', `${where}.status`),
    },
    resource,
    scope,
  };
}

/** The spans of a request, given as plain objects (from JSON.parse or the protobuf decoder). */
export function spansOfRequest(request: unknown): OtelSpan[] {
  if (!isObject(request)) throw new OtlpError('the request body is not an ExportTraceServiceRequest object');
  const out: OtelSpan[] = [];
  list(request, 'resourceSpans', 'request').forEach((rs, r) => {
    const where = `resourceSpans[${r}]`;
    if (!isObject(rs)) throw new OtlpError(`${where}: expected a ResourceSpans object`);
    const res = member(rs, 'resource');
    if (res !== undefined && !isObject(res)) throw new OtlpError(`${where}.resource: expected an object`);
    const resource = attributes(list(res ?? {}, 'attributes', `${where}.resource`), `${where}.resource`);
    list(rs, 'scopeSpans', where).forEach((ss, c) => {
      const at = `${where}.scopeSpans[${c}]`;
      if (!isObject(ss)) throw new OtlpError(`${at}: expected a ScopeSpans object`);
      const sc = member(ss, 'scope');
      if (sc !== undefined && !isObject(sc)) throw new OtlpError(`${at}.scope: expected an object`);
      const scopeObject = sc ?? {};
      const scope = {
        name: text(scopeObject, 'name', `${at}.scope`),
        version: text(scopeObject, 'version', `${at}.scope`),
      };
      list(ss, 'spans', at).forEach((s, k) => out.push(span(s, `${at}.spans[${k}]`, resource, scope)));
    });
  });
  return out;
}

/** A protobuf body's spans; a wire defect (truncated, wrong wire type, nesting past the stack) is an OtlpError. */
export function spansOfProtobuf(bytes: Uint8Array): OtelSpan[] {
  let request: unknown;
  try {
    request = decodeProtobufRequest(bytes);
  } catch (e) {
    throw new OtlpError(
      `the protobuf body is not an ExportTraceServiceRequest: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  return spansOfRequest(request);
}

/**
 * An OTLP/JSON body's spans, from its bytes or its text. Refused (OtlpError), never recorded otherwise: bytes that
 * are not UTF-8 (decoded with replacement, a run would hold U+FFFD where the sender's character was) and a number
 * the journal would store as another (an int64 sent as a JSON number past 2^53, which OTLP/JSON sends as a
 * string: JSON.parse rounds 9007199254740993 to …992, and the run would say the span held …992).
 */
export function spansOfJson(body: string | Uint8Array): OtelSpan[] {
  const text = typeof body === 'string' ? body : utf8OrBadByte(body);
  if (typeof text === 'number')
    throw new OtlpError(
      `the JSON body is not UTF-8: byte ${text} (0x${body[text]!.toString(16).padStart(2, '0')}) starts no UTF-8 character; OTLP/JSON is UTF-8 text`,
    );
  let request: unknown;
  try {
    request = JSON.parse(text);
  } catch (e) {
    throw new OtlpError(`the JSON body does not parse: ${e instanceof Error ? e.message : String(e)}`);
  }
  const inexact = inexactNumber(text);
  if (inexact !== -1) {
    const literal = numberAt(text, inexact).slice(0, 40);
    throw new OtlpError(
      `the JSON body holds the number ${literal} (character ${inexact}), which would be recorded as ${String(Number(literal))}, another number: send an int64 as a string, as OTLP/JSON does`,
    );
  }
  return spansOfRequest(request);
}
