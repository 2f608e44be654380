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
