/**
 * The proxy forwards the bytes that arrived, not a re-encoding of them: a client and a server that write
 * JSON the way JSON.stringify would not (spaces, \u escapes, 1.0, CRLF line ends) see each other's exact
 * bytes through `stepchain mcp`, and the call is still recorded from the parsed message.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, NODE, TEE, waitForRunEnd } from './support.js';

const root = tempDir('stepchain-mcp-raw-');
const RAW = new URL('./fixtures/raw-server.mjs', import.meta.url).pathname;

test('odd but valid JSON-RPC passes byte for byte both ways, and the call is recorded', async () => {
  const journal = join(root, 'raw');
  const server = join(root, 'raw-server');
  const sent = [
    '{ "jsonrpc": "2.0", "id": "init-1", "method": "initialize", "params": {"clientInfo": {"name":"raw-client","version":"9"}, "protocolVersion":"2025-06-18", "capabilities":{}} }\n',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n',
    '{ "method": "tools/call", "jsonrpc": "2.0", "id": 7, "params": {"name":"caf\\u00e9", "arguments": {"v": 1.50, "s": "\\/"}} }\n',
  ];
  const proxy = spawn(NODE, [CLI, 'mcp', journal, '--fsync', 'none', '--', NODE, TEE, server, NODE, RAW], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let received = Buffer.alloc(0);
  const answers = new Promise<void>((resolve) =>
    proxy.stdout.on('data', (c: Buffer) => {
      received = Buffer.concat([received, c]);
      if (received.toString('utf8').split('\n').length > 2) resolve();
    }),
  );
  for (const line of sent) proxy.stdin.write(line);
  await answers;
  proxy.stdin.end();
  await new Promise((resolve) => proxy.on('close', resolve));
  const run = await waitForRunEnd(journal);
  expect(readFileSync(`${server}.in`, 'utf8')).toBe(sent.join(''));
  expect(received.toString('utf8')).toBe(readFileSync(`${server}.out`, 'utf8'));
  expect(received.toString('utf8')).toContain('"n": 1.0, "big": 1e2}}\r\n');
  expect(run.identity.agent).toBe('raw-client');
  expect(run.effects.map((e) => [e.tool, e.status, e.args])).toEqual([['café', 'completed', { v: 1.5, s: '/' }]]);
  expect(run.effects[0]!.result).toEqual({ content: [{ type: 'text', text: 'café / 1.0' }], n: 1, big: 100 });
}, 180_000);

test('a call the proxy could not record as sent — a number a parse reads as another, bytes that are not UTF-8 — is refused, never forwarded', async () => {
  // Recorded (and put to an approver) as parsed, account …992 would stand for the …993 the server reads: the record
  // and the grant would name another call than the one run.
  const journal = join(root, 'inexact');
  const server = join(root, 'inexact-server');
  const init =
    '{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"clientInfo":{"name":"raw-client","version":"9"},"protocolVersion":"2025-06-18","capabilities":{}}}\n';
  const exact =
    '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pay","arguments":{"account":"9007199254740993"}}}\n';
  const refused: Buffer[] = [
    Buffer.from(
      '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"pay","arguments":{"account":9007199254740993}}}\n',
    ),
    Buffer.concat([
      Buffer.from('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pay","arguments":{"to":"caf'),
      Buffer.from([0xe9]),
      Buffer.from('"}}}\n'),
    ]),
    // APPROVALS.md §5 step 3's rule: 0.10000000000000001 is read as 0.1, where a tool reading decimals reads it as written.
    Buffer.from(
      '{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"pay","arguments":{"amount":0.10000000000000001}}}\n',
    ),
    // In a batch, the whole batch is refused (forwarding a part would mean re-encoding it).
    Buffer.from(
      '[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"pay","arguments":{"account":1}}},{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"pay","arguments":{"amount":0.1000000000000000000001}}}]\n',
    ),
  ];
  const proxy = spawn(NODE, [CLI, 'mcp', journal, '--fsync', 'none', '--', NODE, TEE, server, NODE, RAW], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let received = '';
  const answers = new Promise<void>((resolve) =>
    proxy.stdout.on('data', (c: Buffer) => {
      received += c.toString('utf8');
      if (received.split('\n').length > 7) resolve();
    }),
  );
  proxy.stdin.write(init);
  for (const line of refused) proxy.stdin.write(line);
  proxy.stdin.write(exact);
  await answers;
  proxy.stdin.end();
  await new Promise((resolve) => proxy.on('close', resolve));
  const run = await waitForRunEnd(journal);
  expect(readFileSync(`${server}.in`, 'utf8')).toBe(init + exact);
  const errors = received
    .split(/\r?\n/)
    .filter((l) => l.includes('"error"'))
    .map((l) => JSON.parse(l) as { id: number; error: { code: number; message: string } });
  expect(errors.map((e) => [e.id, e.error.code])).toEqual([
    [8, -32010],
    [9, -32010],
    [12, -32010],
    // The line holds the number: each call in it is refused for it.
    [10, -32010],
    [11, -32010],
  ]);
  expect(errors[0]!.error.message).toContain(
    'it holds the number 9007199254740993, which a JSON number (a double) reads as 9007199254740992: send it as a string',
  );
  expect(errors[1]!.error.message).toContain('(0xe9) starts no UTF-8 character');
  expect(run.effects.map((e) => [e.tool, e.status, e.args])).toEqual([
    ['pay', 'completed', { account: '9007199254740993' }],
  ]);
}, 180_000);

test('a line the proxy cannot read is answered with a parse error, never forwarded: a server may read a call in it (outsider F)', async () => {
  // Python's MCP SDK reads NaN and Infinity (pydantic) and takes a lone CR for a line end (universal newlines): each
  // line here ran a call there that the proxy, unable to parse it, had forwarded unrecorded past --deny.
  const journal = join(root, 'unreadable');
  const server = join(root, 'unreadable-server');
  const init =
    '{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"clientInfo":{"name":"raw-client","version":"9"},"protocolVersion":"2025-06-18","capabilities":{}}}\n';
  const call = (id: number, args: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_file","arguments":${args}}}`;
  const unreadable = [
    `${call(2, '{"path":"/nan","x":NaN}')}\n`,
    `${call(3, '{"path":"/inf","x":Infinity}')}\n`,
    `{"jsonrpc":"2.0","id":4,"method":"ping"}\r${call(5, '{"path":"/smuggled"}')}\n`,
    `{"jsonrpc":"2.0","id":6,"method":"tools/call",\r"params":{"name":"read_file","arguments":{}}}\n`,
  ];
  const readable = [`${call(7, '{"path":"/ok"}')}\r\n`, '\n'];
  const proxy = spawn(NODE, [CLI, 'mcp', journal, '--fsync', 'none', '--', NODE, TEE, server, NODE, RAW], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let received = '';
  let err = '';
  proxy.stderr.on('data', (c: Buffer) => void (err += c.toString('utf8')));
  const answers = new Promise<void>((resolve) =>
    proxy.stdout.on('data', (c: Buffer) => {
      received += c.toString('utf8');
      if (received.split('\n').length > 6) resolve();
    }),
  );
  proxy.stdin.write(init);
  for (const line of unreadable) proxy.stdin.write(line);
  for (const line of readable) proxy.stdin.write(line);
  await answers;
  proxy.stdin.end();
  await new Promise((resolve) => proxy.on('close', resolve));
  const run = await waitForRunEnd(journal);
  expect(readFileSync(`${server}.in`, 'utf8')).toBe(init + readable.join(''));
  const errors = received
    .split(/\r?\n/)
    .filter((l) => l.includes('"error"'))
    .map((l) => JSON.parse(l) as { id: null; error: { code: number; message: string } });
  expect(errors.map((e) => [e.id, e.error.code])).toEqual(unreadable.map(() => [null, -32700]));
  expect(errors[0]!.error.message).toContain('the line was not forwarded: it is not JSON');
  expect(errors[2]!.error.message).toContain('a carriage return at byte 40 that does not end the line');
  expect(err).toContain('a line from the client was not forwarded');
  expect(run.effects.map((e) => [e.tool, e.args])).toEqual([['delete_file', { path: '/ok' }]]);
}, 180_000);
