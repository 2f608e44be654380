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
const INIT =
  '{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"clientInfo":{"name":"raw-client","version":"9"},"protocolVersion":"2025-06-18","capabilities":{}}}\n';

/**
 * `stepchain mcp` in front of the raw server: writes `lines` as the client, waits for more than `answers` lines
 * back, closes; what the client got, the proxy's standard error, what the server read and wrote, and the run.
 */
async function throughProxy(name: string, lines: readonly (string | Buffer)[], answers: number) {
  const journal = join(root, name);
  const server = join(root, `${name}-server`);
  const proxy = spawn(NODE, [CLI, 'mcp', journal, '--fsync', 'none', '--', NODE, TEE, server, NODE, RAW], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = Buffer.alloc(0);
  let err = '';
  proxy.stderr.on('data', (c: Buffer) => void (err += c.toString('utf8')));
  const answered = new Promise<void>((resolve) =>
    proxy.stdout.on('data', (c: Buffer) => {
      out = Buffer.concat([out, c]);
      if (out.toString('utf8').split('\n').length > answers) resolve();
    }),
  );
  for (const line of lines) proxy.stdin.write(line);
  await answered;
  proxy.stdin.end();
  await new Promise((resolve) => proxy.on('close', resolve));
  const received = out.toString('utf8');
  const errors = received
    .split(/\r?\n/)
    .filter((l) => l.includes('"error"'))
    .map((l) => JSON.parse(l) as { id: number | null; error: { code: number; message: string } });
  return {
    received,
    errors,
    err,
    serverIn: readFileSync(`${server}.in`, 'utf8'),
    serverOut: readFileSync(`${server}.out`, 'utf8'),
    run: await waitForRunEnd(journal),
  };
}

test('odd but valid JSON-RPC passes byte for byte both ways, and the call is recorded', async () => {
  const sent = [
    '{ "jsonrpc": "2.0", "id": "init-1", "method": "initialize", "params": {"clientInfo": {"name":"raw-client","version":"9"}, "protocolVersion":"2025-06-18", "capabilities":{}} }\n',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}\r\n',
    '{ "method": "tools/call", "jsonrpc": "2.0", "id": 7, "params": {"name":"caf\\u00e9", "arguments": {"v": 1.50, "s": "\\/"}} }\n',
  ];
  const { received, serverIn, serverOut, run } = await throughProxy('raw', sent, 2);
  expect(serverIn).toBe(sent.join(''));
  expect(received).toBe(serverOut);
  expect(received).toContain('"n": 1.0, "big": 1e2}}\r\n');
  expect(run.identity.agent).toBe('raw-client');
  expect(run.effects.map((e) => [e.tool, e.status, e.args])).toEqual([['café', 'completed', { v: 1.5, s: '/' }]]);
  expect(run.effects[0]!.result).toEqual({ content: [{ type: 'text', text: 'café / 1.0' }], n: 1, big: 100 });
}, 180_000);

test('a call the proxy could not record as sent — a number a parse reads as another, bytes that are not UTF-8 — is refused, never forwarded', async () => {
  // Recorded (and put to an approver) as parsed, account …992 would stand for the …993 the server reads: the record
  // and the grant would name another call than the one run.
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
  const { errors, serverIn, run } = await throughProxy('inexact', [INIT, ...refused, exact], 7);
  expect(serverIn).toBe(INIT + exact);
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
  const call = (id: number, args: string) =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_file","arguments":${args}}}`;
  const unreadable = [
    `${call(2, '{"path":"/nan","x":NaN}')}\n`,
    `${call(3, '{"path":"/inf","x":Infinity}')}\n`,
    `{"jsonrpc":"2.0","id":4,"method":"ping"}\r${call(5, '{"path":"/smuggled"}')}\n`,
    `{"jsonrpc":"2.0","id":6,"method":"tools/call",\r"params":{"name":"read_file","arguments":{}}}\n`,
  ];
  const readable = [`${call(7, '{"path":"/ok"}')}\r\n`, '\n'];
  const { errors, err, serverIn, run } = await throughProxy('unreadable', [INIT, ...unreadable, ...readable], 6);
  expect(serverIn).toBe(INIT + readable.join(''));
  expect(errors.map((e) => [e.id, e.error.code])).toEqual(unreadable.map(() => [null, -32700]));
  expect(errors[0]!.error.message).toContain('the line was not forwarded: it is not JSON');
  expect(errors[2]!.error.message).toContain('a carriage return at byte 40 that does not end the line');
  expect(err).toContain('a line from the client was not forwarded');
  expect(run.effects.map((e) => [e.tool, e.args])).toEqual([['delete_file', { path: '/ok' }]]);
}, 180_000);

test("a server's response the proxy could not record as sent is forwarded as it came, and its effect stays pending with a note saying why", async () => {
  const sent = [
    INIT,
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}\n',
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"latin","arguments":{}}}\n',
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fine","arguments":{}}}\n',
  ];
  const { received, serverOut, err, run } = await throughProxy('unrecordable-answers', sent, 4);
  expect(received).toBe(serverOut);
  expect(received).toContain('"account":9007199254740993}');
  expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
    ['big', 'started'],
    ['latin', 'started'],
    ['fine', 'completed'],
  ]);
  // Started, never ended (its outcome unknown to the journal), with a tool.updated summary saying why.
  const notes = run.effects.map((e) => e.summary);
  expect(notes[0]).toContain('cannot be recorded as sent: it holds the number 9007199254740993, which a JSON number');
  expect(notes[1]).toContain('cannot be recorded as sent: its byte');
  expect(run.effects.map((e) => e.result)).toEqual([null, null, expect.anything()]);
  expect(err).toMatch(/stays pending in the journal/);
}, 180_000);
