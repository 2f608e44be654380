/**
 * The OTLP/HTTP trace receiver (spec/OTEL.md §4, the OTLP specification's "OTLP/HTTP"): `POST /v1/traces`
 * with a binary protobuf or JSON ExportTraceServiceRequest, gzip or not. A request is checked whole before
 * any of it is kept: a malformed one is answered 400 with a google.rpc.Status in the request's encoding and
 * changes nothing; an accepted one is answered 200 at once (writing happens after, never blocking the sender).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { SpanCollector, type CollectorOptions } from './collector.js';
import { OtlpError, spansOfJson, spansOfProtobuf } from './otlp.js';
import { encodeProtobufResponse, encodeProtobufStatus } from './proto.js';
import type { Store } from '../index.js';

export interface ReceiverOptions extends CollectorOptions {
  store: Store;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 4318 (OTLP/HTTP's port); 0 for a free one. */
  port?: number;
  /** When set, each request must carry `Authorization: Bearer <token>` (401 otherwise). */
  token?: string;
  /** The largest request body as sent (compressed or not), in bytes. Default 8 MiB. */
  maxBodyBytes?: number;
  /** The largest body once gunzipped, in bytes. Default 32 MiB. */
  maxInflatedBytes?: number;
}

export interface Receiver {
  /** http://host:port — give the exporter `${url}/v1/traces` (or `${url}` as OTEL_EXPORTER_OTLP_ENDPOINT). */
  readonly url: string;
  readonly collector: SpanCollector;
  /** Stops listening, answers what is in flight, writes every accepted span, then resolves. */
  close(): Promise<void>;
}

type Encoding = 'protobuf' | 'json';

/** OTLP/HTTP failure body: a Status in the request's encoding (code: gRPC's, INVALID_ARGUMENT = 3 …). */
function fail(
  res: ServerResponse,
  http: number,
  encoding: Encoding,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body =
    encoding === 'json'
      ? Buffer.from(JSON.stringify({ code, message }))
      : Buffer.from(encodeProtobufStatus(code, message));
  res.writeHead(http, {
    'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    'content-length': String(body.length),
    ...headers,
  });
  res.end(body);
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      req.resume();
      resolve('too-large');
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      if (!over) chunks.push(c);
    });
    req.on('end', () => resolve(over ? 'too-large' : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

interface Handling {
  collector: SpanCollector;
  maxBody: number;
  maxInflated: number;
  authorized: (header: string | undefined) => boolean;
}

/** One request to its answer (the module comment): nothing is kept from a request that fails. */
async function handle(req: IncomingMessage, res: ServerResponse, ctx: Handling): Promise<void> {
  const { collector, maxBody, maxInflated, authorized } = ctx;
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const encoding: Encoding = type === 'application/json' ? 'json' : 'protobuf';
  const path = (req.url ?? '').split('?')[0];
  if (path !== '/v1/traces') {
    fail(res, 404, encoding, 5, `${path ?? ''} is not served here: traces go to POST /v1/traces`);
    return;
  }
  if (req.method !== 'POST') {
    fail(res, 405, encoding, 12, 'only POST is accepted at /v1/traces', { allow: 'POST' });
    return;
  }
  if (!authorized(req.headers.authorization)) {
    req.resume();
    fail(res, 401, encoding, 16, 'a bearer token is required (Authorization: Bearer <token>)');
    return;
  }
  if (type !== 'application/json' && type !== 'application/x-protobuf') {
    req.resume();
    fail(
      res,
      415,
      encoding,
      3,
      `content-type ${JSON.stringify(type)} is not OTLP: send application/x-protobuf or application/json`,
    );
    return;
  }
  let body = await readBody(req, maxBody);
  if (body === 'too-large') {
    fail(res, 413, encoding, 8, `the request is over ${maxBody} bytes: export smaller batches`);
    return;
  }
  const contentEncoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (contentEncoding === 'gzip') {
    try {
      body = gunzipSync(body, { maxOutputLength: maxInflated });
    } catch (e) {
      const big = e instanceof RangeError || (e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
      if (big) fail(res, 413, encoding, 8, `the request inflates past ${maxInflated} bytes`);
      else fail(res, 400, encoding, 3, 'the gzip body does not inflate');
      return;
    }
  } else if (contentEncoding !== 'identity') {
    fail(res, 415, encoding, 3, `content-encoding ${JSON.stringify(contentEncoding)} is not supported: gzip or none`);
    return;
  }
  let spans;
  try {
    spans = encoding === 'json' ? spansOfJson(body) : spansOfProtobuf(body);
  } catch (e) {
    if (e instanceof OtlpError || e instanceof RangeError) {
      fail(res, 400, encoding, 3, e.message);
      return;
    }
    throw e;
  }
  if (!collector.hasRoomFor(spans.length)) {
    fail(res, 503, encoding, 14, 'the receiver holds as many spans as it may: retry later', {
      'retry-after': '5',
    });
    return;
  }
  collector.accept(spans);
  const ok = encoding === 'json' ? Buffer.from('{}') : Buffer.from(encodeProtobufResponse());
  res.writeHead(200, {
    'content-type': encoding === 'json' ? 'application/json' : 'application/x-protobuf',
    'content-length': String(ok.length),
  });
  res.end(ok);
}

export async function startReceiver(options: ReceiverOptions): Promise<Receiver> {
  const collector = new SpanCollector(options.store, options);
  const maxBody = options.maxBodyBytes ?? 8 * 1024 * 1024;
  const maxInflated = options.maxInflatedBytes ?? 32 * 1024 * 1024;
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  // Compared in constant time, so the answer's timing does not reveal how much of a guess was right.
  const authorized = (header: string | undefined): boolean => {
    if (expected === undefined) return true;
    const given = Buffer.from(header ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res, { collector, maxBody, maxInflated, authorized }).catch((e: unknown) => {
      options.log?.(`internal error: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) fail(res, 500, 'json', 13, 'internal error');
      else res.destroy();
    });
  });
  server.headersTimeout = 30_000;
  server.requestTimeout = 60_000;
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 4318, host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 4318);
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    collector,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await collector.close();
    },
  };
}
