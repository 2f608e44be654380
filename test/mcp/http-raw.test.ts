/**
 * The HTTP proxy passes body bytes unchanged both ways (spec/MCP.md §8): a hand-written upstream answers
 * with JSON and with an SSE stream that JSON.stringify would not write (spaces, escapes, 1.0, CRLF event
 * ends, comments, ids), and records the request bodies it got; the client's bytes reach it, and its bytes
 * reach the client, exactly. The call in each is still recorded from the parsed message.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, NODE, readRun } from './support.js';

const root = tempDir('stepchain-mcp-http-raw-');
const INIT_ANSWER =
  '{ "jsonrpc":"2.0", "id":"i-1", "result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"raw-http","version":"0"},"capabilities":{}} }';
const JSON_ANSWER =
  '{"jsonrpc" : "2.0", "id" : 7, "result": {"content": [{"type":"text","text":"caf\\u00e9 1.0"}], "n": 1.0}}';
const SSE_ANSWER =
  ': a comment\r\nid: e-1\r\nevent: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":8,"progress":1.0}}\r\n\r\n' +
  'id: e-2\ndata: {"jsonrpc":"2.0", "id":8,\ndata:  "result":{"content":[],"isError":true}}\n\n';

const received: string[] = [];
const upstream = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => {
    body += c;
  });
  req.on('end', () => {
    received.push(body);
    if (body.includes('"initialize"'))
      return void res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's-1' }).end(INIT_ANSWER);
    if (body.includes('"id": 7'))
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON_ANSWER);
    if (body.includes('"id": 8')) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // In two writes cut inside an event, so the proxy must join them before it reads the event.
      res.write(SSE_ANSWER.slice(0, 40));
      setTimeout(() => res.end(SSE_ANSWER.slice(40)), 20);
      return;
    }
    res.writeHead(202).end();
  });
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
afterAll(() => upstream.close());

test('JSON and SSE bodies pass byte for byte both ways, and the calls in them are recorded', async () => {
  const store = join(root, 'runs');
  const proxy = spawn(
    NODE,
    [
      CLI,
      'mcp',
      store,
      '--fsync',
      'none',
      '--upstream',
      `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let err = '';
  const url = await new Promise<string>((resolve) =>
    proxy.stderr!.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /give the client (\S+)/.exec(err);
      if (m) resolve(m[1]!);
    }),
  );
  const post = async (body: string, session = true) => {
    const r = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(session ? { 'mcp-session-id': 's-1' } : {}),
      },
    });
    return { type: r.headers.get('content-type'), body: await r.text() };
  };
  const sent = [
    '{ "jsonrpc": "2.0", "id": "i-1", "method": "initialize", "params": {"clientInfo":{"name":"raw","version":"1"},"protocolVersion":"2025-06-18","capabilities":{}} }',
    '{ "method": "tools/call", "jsonrpc": "2.0", "id": 7, "params": {"name":"j", "arguments": {"v": 1.50}} }',
    '{ "method": "tools/call", "jsonrpc": "2.0", "id": 8, "params": {"name":"s", "arguments": {"w": "\\u00e9"}, "_meta": {"progressToken": 8}} }',
  ];
  expect((await post(sent[0]!, false)).body).toBe(INIT_ANSWER);
  expect(await post(sent[1]!)).toEqual({ type: 'application/json', body: JSON_ANSWER });
  expect(await post(sent[2]!)).toEqual({ type: 'text/event-stream', body: SSE_ANSWER });
  // A call the journal could not hold as sent (…993 read as …992) is answered by the proxy, never sent upstream.
  const inexact = await post(
    '{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pay","arguments":{"account":9007199254740993}}}',
  );
  expect(JSON.parse(inexact.body)).toMatchObject({ id: 9, error: { code: -32010 } });
  expect((JSON.parse(inexact.body) as { error: { message: string } }).error.message).toContain(
    'holds the number 9007199254740993, which a JSON number (a double) reads as 9007199254740992',
  );
  expect(received).toEqual(sent);
  // A body the proxy cannot parse (NaN, which Python's MCP SDK reads) is answered, never sent upstream (outsider F).
  const nan = await fetch(url, {
    method: 'POST',
    body: '{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"pay","arguments":{"x":NaN}}}',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': 's-1',
    },
  });
  expect(nan.status).toBe(400);
  expect(await nan.json()).toMatchObject({ id: null, error: { code: -32700 } });
  expect(received).toEqual(sent);
  proxy.kill('SIGTERM');
  await new Promise((resolve) => proxy.on('close', resolve));
  const [runId] = readdirSync(store).filter((n) => n.startsWith('mcp-'));
  const run = await readRun(join(store, runId!));
  expect(run.status).toBe('completed');
  expect(run.effects.map((e) => [e.tool, e.status, e.args])).toEqual([
    ['j', 'completed', { v: 1.5 }],
    ['s', 'failed', { w: 'é' }],
  ]);
  expect(run.effects[0]!.result).toEqual({ content: [{ type: 'text', text: 'café 1.0' }], n: 1 });
  expect(run.effects[1]!.error).toMatchObject({ name: 'McpToolError', result: { content: [], isError: true } });
}, 180_000);
