/**
 * The proxy in front of a Streamable HTTP MCP server (spec/MCP.md §8): it listens on 127.0.0.1 and
 * forwards each request to the upstream, and each response back, body bytes unchanged — a JSON body whole,
 * an SSE stream event by event, each event passed on once what it says is recorded. Sessions are the
 * server's (`Mcp-Session-Id`): one run per session. Resumption (GET with `Last-Event-ID`) and session ends
 * (DELETE) are forwarded like any request; a response that arrives on a resumed stream ends its effect too.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Boundary, type Refusal } from './boundary.js';
import { errorLine, PARSE_ERROR, peek, unparseable } from './lines.js';
import type { ToolPolicy } from './policy.js';
import { message, SessionRecorder, type SessionOptions } from './session.js';

export interface HttpProxyOptions extends Omit<SessionOptions, 'command'> {
  /** The MCP endpoint of the server, e.g. https://example.com/mcp. */
  upstream: string;
  /** Default 0: a free port. The proxy listens on 127.0.0.1 only. */
  port?: number;
  policy?: ToolPolicy;
  /** The largest request body taken, in bytes (default 64 MiB). */
  maxBodyBytes?: number;
}

export interface RunningHttpProxy {
  /** The URL to give the client: the proxy's origin with the upstream's path. */
  url: string;
  /** Stops listening and ends every session's run (calls in flight stay pending). */
  close(): Promise<void>;
}

/** Headers that belong to one connection, not to the message (RFC 9110 §7.6.1), and the ones fetch sets itself. */
const HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
  'accept-encoding',
  'content-encoding',
]);

function requestHeaders(req: IncomingMessage): Headers {
  const h = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (HOP.has(name) || value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) h.append(name, v);
  }
  // The body is passed on as it comes: ask for it unencoded, so no one decodes and re-encodes it.
  h.set('accept-encoding', 'identity');
  return h;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
      } else parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

const LOCAL_HOST = /^(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;
const LOCAL_ORIGIN = /^https?:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?$/i;

/** The end of the first SSE event in `buf` (the index after its blank line), or -1. */
function eventEnd(buf: Buffer): number {
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (c === 0x0a && buf[i + 1] === 0x0a) return i + 2;
    if (c === 0x0d && buf[i + 1] === 0x0a && buf[i + 2] === 0x0d && buf[i + 3] === 0x0a) return i + 4;
  }
  return -1;
}

/** The data of one SSE event (its `data:` lines joined), as bytes to peek at. */
function eventData(event: Buffer): Buffer {
  const data = event
    .toString('utf8')
    .split(/\r\n|\r|\n/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5));
  return Buffer.from(data.join('\n'), 'utf8');
}

/**
 * Starts listening. Longer than 80 lines because the session table, the relay and the request handler
 * share this closure's state (the sessions, the stateless boundary, the upstream); split, each would
 * take all of it as arguments.
 */
export async function startHttpProxy(options: HttpProxyOptions): Promise<RunningHttpProxy> {
  const upstream = new URL(options.upstream);
  const log = options.log;
  const limit = options.maxBodyBytes ?? 64 * 1024 * 1024;
  const sessions = new Map<string, Boundary>();
  let stateless: Boundary | undefined;
  const newBoundary = (): Boundary =>
    new Boundary(
      new SessionRecorder({ ...options, command: ['--upstream', upstream.href] }),
      options.policy ?? {},
      log,
    );

  /** Passes the upstream's answer back, recording what its messages say before each leaves. */
  async function relay(answer: Response, res: ServerResponse, boundary: Boundary | undefined): Promise<void> {
    const headers: Record<string, string> = {};
    answer.headers.forEach((v, k) => {
      if (!HOP.has(k)) headers[k] = v;
    });
    res.writeHead(answer.status, answer.statusText, headers);
    const type = answer.headers.get('content-type') ?? '';
    if (answer.body === null) return void res.end();
    if (type.startsWith('text/event-stream')) {
      let buf = Buffer.alloc(0);
      for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) {
        buf = Buffer.concat([buf, chunk]);
        for (let end = eventEnd(buf); end !== -1; end = eventEnd(buf)) {
          const event = buf.subarray(0, end);
          buf = buf.subarray(end);
          if (boundary !== undefined) await boundary.fromServer(peek(eventData(event)));
          res.write(event);
        }
      }
      return void res.end(buf);
    }
    const body = Buffer.from(await answer.arrayBuffer());
    if (boundary !== undefined && type.startsWith('application/json')) await boundary.fromServer(peek(body));
    res.end(body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding (the MCP transport specification: servers on localhost validate Origin): a web page
    // the user visits could otherwise reach the proxy, and through it the upstream, with the user's network.
    const origin = req.headers.origin;
    if (!LOCAL_HOST.test(req.headers.host ?? '') || (origin !== undefined && !LOCAL_ORIGIN.test(origin))) {
      return void res
        .writeHead(403, { 'content-type': 'text/plain' })
        .end('stepchain mcp: only local clients may use this proxy (Host and Origin must be 127.0.0.1 or localhost)\n');
    }
    const target = new URL(req.url ?? '/', upstream.origin);
    const sid = req.headers['mcp-session-id'];
    const known = typeof sid === 'string' ? sessions.get(sid) : stateless;
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) abort.abort();
    });
    if (req.method !== 'POST') {
      const answer = await fetch(target, {
        method: req.method ?? 'GET',
        headers: requestHeaders(req),
        signal: abort.signal,
      });
      if (req.method === 'DELETE' && answer.ok && typeof sid === 'string' && known !== undefined) {
        sessions.delete(sid);
        known.closing(); // calls still waiting for an approval are not forwarded to a session that ended
        await known.session.finish({ code: 0, signal: null }, true);
      }
      return relay(answer, res, known);
    }
    const body = await readBody(req, limit);
    const unreadable = unparseable(body);
    if (unreadable !== null) {
      // Forwarded, a body the proxy could not parse went through unrecorded while the server's parser may find a
      // call in it (lines.ts unreadableLine; a body is JSON text, so a carriage return in it is whitespace).
      log(`a request body was not forwarded: ${unreadable}`);
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(errorLine(null, PARSE_ERROR, `stepchain mcp: the body was not forwarded: ${unreadable}`));
    }
    const messages = peek(body);
    const initializing = messages.some((m) => m.method === 'initialize');
    const boundary = initializing ? newBoundary() : (known ?? (stateless ??= newBoundary()));
    const refusals: Refusal[] = [];
    let admission = await boundary.fromClient(messages, (r) => refusals.push(r));
    if (admission.kind === 'held') admission = (await admission.approved) ? { kind: 'forward' } : { kind: 'drop' };
    if (admission.kind === 'drop') {
      const errors = refusals.map((r) => ({
        jsonrpc: '2.0',
        id: r.id,
        error: { code: r.code, message: `stepchain mcp: ${r.message}` },
      }));
      if (errors.length === 0) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify(Array.isArray(JSON.parse(body.toString('utf8'))) ? errors : errors[0]));
    }
    const answer = await fetch(target, { method: 'POST', headers: requestHeaders(req), body, signal: abort.signal });
    if (initializing) {
      const id = answer.headers.get('mcp-session-id');
      if (id !== null) sessions.set(id, boundary);
      else stateless = boundary;
    }
    return relay(answer, res, boundary);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (res.destroyed || (e as Error)?.name === 'AbortError') return void res.destroy(); // the client went away
      log(`${req.method} ${req.url}: ${message(e)}`);
      if (!res.headersSent)
        res
          .writeHead(502, { 'content-type': 'text/plain' })
          .end(`stepchain mcp: the upstream could not be reached: ${message(e)}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${upstream.pathname}${upstream.search}`,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      const open = [...sessions.values(), ...(stateless === undefined ? [] : [stateless])];
      sessions.clear();
      // Stopped by its operator: a session with nothing in flight ended well; one with calls in flight did not.
      for (const b of open) {
        b.closing();
        await b.session.finish({ code: null, signal: 'SIGTERM' }, true);
      }
    },
  };
}
