/**
 * `stepchain mcp <location> --upstream URL` (spec/MCP.md §8) in front of the real SDK's Streamable HTTP
 * server, with the real SDK's Streamable HTTP client: JSON and SSE responses (progress streams), tool
 * errors, cancellation, the session's end (DELETE) ending its run; the journal verifies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { tempDir } from '../helpers/tmp.js';
import { runNode } from '../hardening/support.js';
import { CLI, NODE, readRun, waitForRunEnd } from './support.js';

const root = tempDir('stepchain-mcp-http-');
const HTTP_SERVER = new URL('./fixtures/http-server.mjs', import.meta.url).pathname;
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
});

/** Starts a process and resolves with the first match of `pattern` in its stdout or stderr. */
function startAndRead(args: string[], pattern: RegExp): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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

async function session(url: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'stepchain-http-client', version: '3.0.0' });
  await client.connect(transport);
  const results: unknown[] = [];
  results.push(await client.callTool({ name: 'echo', arguments: { text: 'over http' } }));
  results.push(await client.callTool({ name: 'add', arguments: { a: 20, b: 22 } }));
  results.push(await client.callTool({ name: 'fail', arguments: { why: 'http' } }));
  let progress = 0;
  results.push(
    await client.callTool({ name: 'slow', arguments: { steps: 3, delayMs: 1 } }, undefined, {
      onprogress: () => {
        progress++;
      },
    }),
  );
  const abort = new AbortController();
  await expect(
    client.callTool({ name: 'slow', arguments: { steps: 1000, delayMs: 20 } }, undefined, {
      signal: abort.signal,
      onprogress: () => abort.abort('stop'),
    }),
  ).rejects.toThrow();
  await transport.terminateSession();
  await client.close();
  return { results, progress };
}

test('a Streamable HTTP session through the proxy: every call recorded, the same answers as without it, the run ended by DELETE', async () => {
  const { match } = await startAndRead([HTTP_SERVER], /LISTENING (\d+)/);
  const upstream = `http://127.0.0.1:${match[1]}/mcp`;
  // A new path, with --upstream, is a store: every session the proxy serves is a run of its own.
  const store = join(root, 'http-runs');
  const proxy = await startAndRead(
    [CLI, 'mcp', store, '--fsync', 'none', '--label', 'via=http', '--upstream', upstream],
    /give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const through = await session(proxy.match[1]!);
  const direct = await session(upstream);
  expect(through.results).toEqual(direct.results);
  expect(through.progress).toBe(3);
  const runs = readdirSync(store).filter((n) => n.startsWith('mcp-'));
  expect(runs.length).toBe(1);
  const journal = join(store, runs[0]!);
  const run = await waitForRunEnd(journal);
  expect(run.status).toBe('completed');
  expect(run.identity.labels).toMatchObject({
    'mcp.client': 'stepchain-http-client',
    'mcp.server': 'stepchain-test-server',
    via: 'http',
  });
  expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
    ['echo', 'completed'],
    ['add', 'completed'],
    ['fail', 'failed'],
    ['slow', 'completed'],
    ['slow', 'failed'],
  ]);
  expect(run.effects[1]!.result).toMatchObject({ structuredContent: { sum: 42 } });
  expect(run.effects[4]!.error).toMatchObject({ name: 'McpCancelled' });
  proxy.child.kill('SIGTERM');
  await new Promise((resolve) => proxy.child.on('close', resolve));
  const verified = await runNode([CLI, 'verify', journal], { timeoutMs: 120_000 });
  expect(verified.code, verified.stderr).toBe(0);
}, 180_000);

test("over HTTP, the upstream dies mid-call and then the proxy is SIGKILLed mid-call: each call's effect is pending, the clients get errors, the journals verify", async () => {
  const store = join(root, 'http-crash');
  const readRunIn = async (sid: string[]) => {
    const runs = readdirSync(store).filter((n) => n.startsWith('mcp-') && !sid.includes(n));
    expect(runs.length).toBe(1);
    return runs[0]!;
  };
  // The upstream crashes while it runs the call.
  const first = await startAndRead([HTTP_SERVER], /LISTENING (\d+)/);
  const proxy = await startAndRead(
    [CLI, 'mcp', store, '--fsync', 'none', '--upstream', `http://127.0.0.1:${first.match[1]}/mcp`],
    /give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const a = new Client({ name: 'crash-client', version: '1' });
  await a.connect(new StreamableHTTPClientTransport(new URL(proxy.match[1]!)));
  await expect(a.callTool({ name: 'crash', arguments: { code: 3 } })).rejects.toThrow();
  const crashed = await readRunIn([]);
  // The proxy is killed while a call runs (the upstream, a new one, never answers it).
  const second = await startAndRead([HTTP_SERVER], /LISTENING (\d+)/);
  const killed = await startAndRead(
    [CLI, 'mcp', store, '--upstream', `http://127.0.0.1:${second.match[1]}/mcp`],
    /give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
  );
  const b = new Client({ name: 'kill-client', version: '1' });
  await b.connect(new StreamableHTTPClientTransport(new URL(killed.match[1]!)));
  const hanging = b.callTool({ name: 'hang', arguments: {} });
  await new Promise<void>((resolve) => {
    let err = '';
    second.child.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      if (err.includes('HANG STARTED')) resolve();
    });
  });
  killed.child.kill('SIGKILL');
  await expect(hanging).rejects.toThrow();
  const hung = await readRunIn([crashed]);
  proxy.child.kill('SIGTERM');
  await new Promise((resolve) => proxy.child.on('close', resolve));
  for (const [id, tool] of [
    [crashed, 'crash'],
    [hung, 'hang'],
  ] as const) {
    const run = await readRun(join(store, id));
    expect(
      run.effects.map((e) => [e.tool, e.status]),
      id,
    ).toEqual([[tool, 'started']]);
    const verified = await runNode([CLI, 'verify', join(store, id)], { timeoutMs: 120_000 });
    expect(verified.code, verified.stderr).toBe(0);
  }
  await a.close().catch(() => undefined);
  await b.close().catch(() => undefined);
}, 180_000);
