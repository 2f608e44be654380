/**
 * Nothing changes on the wire over Streamable HTTP (issue 44; spec/MCP.md §2, §8), with the real SDK on
 * both ends: the SDK's client (its requests and the bodies it gets, captured by the fetch it is given) and
 * the SDK's server (the bodies it reads and writes, captured by the test server) see the same bytes
 * through the proxy as without it — JSON and SSE answers, progress, a tool error, binary content. (The
 * SDK writes what JSON.stringify writes, so a proxy that re-serialized would pass this one: http-raw.test.ts
 * sends the bytes it would change.) And a stream cut mid-call is resumed through the proxy with
 * Last-Event-ID (the server keeping an event store): the client gets the rest and the result, and the
 * call's effect ends once, completed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, NODE, waitForRunEnd } from './support.js';

const root = tempDir('stepchain-mcp-http-wire-');
const HTTP_SERVER = new URL('./fixtures/http-server.mjs', import.meta.url).pathname;
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
});

function startAndRead(
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  started.push(child);
  let seen = '';
  return new Promise((resolve, reject) => {
    const look = (c: Buffer) => {
      seen += c.toString('utf8');
      const m = pattern.exec(seen);
      if (m) resolve({ child, match: m });
    };
    child.stdout!.on('data', look);
    child.stderr!.on('data', look);
    child.on('close', (code) => reject(new Error(`exited (${code}) before printing ${pattern}: ${seen}`)));
  });
}

/** A test server capturing the bodies it reads and writes into `file`. */
async function server(file: string): Promise<string> {
  const { match } = await startAndRead([HTTP_SERVER], /LISTENING (\d+)/, { MCP_CAPTURE: file });
  return `http://127.0.0.1:${match[1]}/mcp`;
}

/** One session of the SDK's client at `url`; the POST bodies it sent and the response bodies it got, in order. */
async function session(url: string): Promise<{ sent: string[]; got: string[] }> {
  const sent: string[] = [];
  const got: string[] = [];
  const reads: Promise<void>[] = [];
  const capturing = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const post = init?.method === 'POST';
    if (post) sent.push(String(init?.body));
    const r = await fetch(input, init);
    if (post) {
      const i = got.push('') - 1;
      reads.push(
        r
          .clone()
          .text()
          .then((t) => {
            got[i] = t;
          }),
      );
    }
    return r;
  };
  const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: capturing });
  const client = new Client({ name: 'stepchain-wire-client', version: '1.0.0' });
  await client.connect(transport);
  await client.listTools();
  await client.callTool({ name: 'echo', arguments: { text: 'caf\u00e9 \u{1F600} "quoted" \\ back' } });
  await client.callTool({ name: 'add', arguments: { a: 0.5, b: 1e-7 } });
  await client.callTool({ name: 'fail', arguments: { why: 'wire' } });
  await client.callTool({ name: 'slow', arguments: { steps: 3, delayMs: 1 } }, undefined, {
    onprogress: () => undefined,
  });
  await client.callTool({ name: 'image', arguments: { size: 3000 } });
  await transport.terminateSession();
  await client.close();
  await Promise.all(reads);
  return { sent, got };
}

const captured = (file: string): { in: string[]; out: string[] } => {
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { in?: string; out?: string });
  return {
    in: lines.flatMap((l) => (l.in === undefined ? [] : [l.in])),
    out: lines.flatMap((l) => (l.out === undefined ? [] : [l.out])),
  };
};

test('the SDK client and the SDK server see the same bytes through the proxy as without it', async () => {
  const directFile = join(root, 'direct.jsonl');
  const proxiedFile = join(root, 'proxied.jsonl');
  const direct = await session(await server(directFile));
  const upstream = await server(proxiedFile);
  const store = join(root, 'runs');
  const proxy = await startAndRead(
    [CLI, 'mcp', store, '--fsync', 'none', '--upstream', upstream],
    /give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const through = await session(proxy.match[1]!);

  // Through the proxy: what the client sent is what the server read, what the server wrote is what the client got.
  const atServer = captured(proxiedFile);
  expect(atServer.in).toEqual(through.sent);
  expect(atServer.out).toEqual(through.got);
  // And the same as without it, on both ends.
  expect(through.sent).toEqual(direct.sent);
  expect(through.got).toEqual(direct.got);
  expect(atServer).toEqual(captured(directFile));
  expect(through.got.some((b) => b.startsWith('event: message'))).toBe(true);

  // The session was recorded all the same.
  const run = await waitForRunEnd(
    join(
      store,
      readdirSync(store).find((n) => n.startsWith('mcp-'))!,
    ),
  );
  expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
    ['echo', 'completed'],
    ['add', 'completed'],
    ['fail', 'failed'],
    ['slow', 'completed'],
    ['image', 'completed'],
  ]);
  proxy.child.kill('SIGTERM');
  await new Promise((resolve) => proxy.child.on('close', resolve));
}, 180_000);

test('a stream cut mid-call is resumed through the proxy (Last-Event-ID): the client gets the result, the effect ends once, completed', async () => {
  const { match } = await startAndRead([HTTP_SERVER], /LISTENING (\d+)/, { MCP_RESUMABLE: '1' });
  const store = join(root, 'resumed');
  const proxy = await startAndRead(
    [CLI, 'mcp', store, '--fsync', 'none', '--upstream', `http://127.0.0.1:${match[1]}/mcp`],
    /give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const resumedWith: string[] = [];
  let cut = false;
  // The network, as the client sees it: the tools/call's event stream breaks after its first progress event.
  const flaky = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    const lastEventId = new Headers(init?.headers).get('last-event-id');
    if (lastEventId !== null) resumedWith.push(lastEventId);
    const r = await fetch(input, init);
    if (cut || init?.method !== 'POST' || !String(init.body).includes('"tools/call"') || r.body === null) return r;
    cut = true;
    const reader = r.body.getReader();
    let seen = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        controller.enqueue(value);
        seen += new TextDecoder().decode(value);
        if (seen.includes('notifications/progress')) {
          await reader.cancel();
          controller.error(new TypeError('network connection lost'));
        }
      },
    });
    return new Response(body, { status: r.status, headers: r.headers });
  };
  const transport = new StreamableHTTPClientTransport(new URL(proxy.match[1]!), {
    fetch: flaky,
    reconnectionOptions: {
      initialReconnectionDelay: 10,
      maxReconnectionDelay: 100,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 5,
    },
  });
  const client = new Client({ name: 'stepchain-resume-client', version: '1.0.0' });
  await client.connect(transport);
  let progress = 0;
  const result = await client.callTool({ name: 'slow', arguments: { steps: 5, delayMs: 100 } }, undefined, {
    onprogress: () => {
      progress++;
    },
  });
  expect(result).toEqual({ content: [{ type: 'text', text: 'done after 5 steps' }] });
  expect(cut).toBe(true);
  expect(resumedWith.length).toBeGreaterThan(0);
  expect(progress).toBe(5);
  await transport.terminateSession();
  await client.close();
  const run = await waitForRunEnd(
    join(
      store,
      readdirSync(store).find((n) => n.startsWith('mcp-'))!,
    ),
  );
  expect(run.effects.map((e) => [e.tool, e.status, e.result])).toEqual([
    ['slow', 'completed', { content: [{ type: 'text', text: 'done after 5 steps' }] }],
  ]);
  proxy.child.kill('SIGTERM');
  await new Promise((resolve) => proxy.child.on('close', resolve));
}, 180_000);
