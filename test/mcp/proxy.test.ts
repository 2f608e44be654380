/**
 * `stepchain mcp` (spec/MCP.md) with the real @modelcontextprotocol/sdk client and server over stdio: every
 * tools/call recorded (text, structured, image, tool error, protocol error, progress, cancellation), the
 * journal verifying and exporting a receipt, the wire unchanged, and the pending effect a crash leaves.
 */
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { FileStore } from '../../src/store/index.js';
import { resumeRun } from '../../src/runtime/index.js';
import { tempDir } from '../helpers/tmp.js';
import { runNode } from '../hardening/support.js';
import { CLI, NODE, SERVER, TEE, connect, proxied, readRun, waitForRunEnd } from './support.js';

const root = tempDir('stepchain-mcp-');
const T = 180_000;

const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 120_000 });

/** The calls one session makes, in order; deterministic, so two sessions put the same bytes on the wire. */
async function exercise(client: Awaited<ReturnType<typeof connect>>['client']): Promise<{ progress: number }> {
  let progress = 0;
  expect((await client.callTool({ name: 'echo', arguments: { text: 'hello' } })).content).toEqual([
    { type: 'text', text: 'hello' },
  ]);
  expect((await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } })).structuredContent).toEqual({ sum: 5 });
  const image = await client.callTool({ name: 'image', arguments: { size: 100_000 } });
  expect((image.content as Array<{ type: string }>)[0]!.type).toBe('image');
  expect((await client.callTool({ name: 'fail', arguments: { why: 'testing' } })).isError).toBe(true);
  await client.callTool({ name: 'slow', arguments: { steps: 3, delayMs: 1 } }, undefined, {
    onprogress: () => {
      progress++;
    },
  });
  // An unknown tool: the SDK's server answers with an error (a result with isError, or a JSON-RPC error).
  await client.callTool({ name: 'nope', arguments: {} }).then(
    (r) => expect(r.isError).toBe(true),
    (e: Error) => expect(e.message).toMatch(/nope/),
  );
  return { progress };
}

describe('stepchain mcp: a session through the proxy', () => {
  test(
    "records every call, with the session as the run's identity; the journal verifies and exports a receipt",
    async () => {
      const journal = join(root, 'session-1');
      const s = await connect(proxied(journal, ['--label', 'user=alice']));
      const { progress } = await exercise(s.client);
      // The server sends 3; the SDK's client dispatches a notification a microtask later but a response at once,
      // so a progress notification that arrives in the same read as the call's response can find its handler
      // already gone (the proxy, forwarding in turn, makes that adjacency likelier). Byte identity of all three
      // on the wire is the wire tests' (http-wire, the stdio identity test below).
      expect(progress).toBeGreaterThanOrEqual(1);
      expect(progress).toBeLessThanOrEqual(3);
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.status).toBe('completed');
      expect(run.identity.agent).toBe('stepchain-test-client');
      expect(run.identity.labels).toMatchObject({
        'mcp.client': 'stepchain-test-client',
        'mcp.server': 'stepchain-test-server',
        'mcp.server_version': '1.2.3',
        user: 'alice',
      });
      const byTool = Object.fromEntries(run.effects.map((e) => [e.tool, e]));
      expect(run.effects.map((e) => e.tool)).toEqual(['echo', 'add', 'image', 'fail', 'slow', 'nope']);
      expect(byTool.echo).toMatchObject({
        status: 'completed',
        args: { text: 'hello' },
        result: { content: [{ type: 'text', text: 'hello' }] },
      });
      expect(byTool.add).toMatchObject({ status: 'completed', result: { structuredContent: { sum: 5 } } });
      expect(byTool.fail).toMatchObject({ status: 'failed', error: { name: 'McpToolError' } });
      expect(JSON.stringify(byTool.fail!.error)).toContain('failed on purpose: testing');
      expect(byTool.slow).toMatchObject({
        status: 'completed',
        result: { content: [{ type: 'text', text: 'done after 3 steps' }] },
      });
      expect(byTool.nope!.status).toBe('failed');
      // The image (about 133 KB of base64) is stored as a blob, and read back whole.
      expect((byTool.image!.result as { content: Array<{ data: string }> }).content[0]!.data.length).toBe(
        Math.ceil(100_000 / 3) * 4,
      );
      expect(readdirSync(join(journal, 'blobs'), { recursive: true }).length).toBeGreaterThan(0);

      const verified = await cli(['verify', journal]);
      expect(verified.code, verified.stderr).toBe(0);
      const receipt = join(root, 'session-1.receipt.tar.gz');
      const exported = await cli(['export', journal, '-o', receipt]);
      expect(exported.code, exported.stderr).toBe(0);
      const checked = await cli(['verify', receipt]);
      expect(checked.code, checked.stderr).toBe(0);
    },
    T,
  );

  test(
    'nothing changes on the wire: what the client and the server see is byte-identical, and the same as without the proxy',
    async () => {
      const journal = join(root, 'wire');
      const client = join(root, 'wire-client');
      const server = join(root, 'wire-server');
      const direct = join(root, 'wire-direct');
      const s = await connect([
        TEE,
        client,
        NODE,
        ...proxied(journal, ['--fsync', 'none'], [NODE, TEE, server, NODE, SERVER]),
      ]);
      await exercise(s.client);
      await s.client.close();
      await waitForRunEnd(journal);
      const d = await connect([TEE, direct, NODE, SERVER]);
      await exercise(d.client);
      await d.client.close();
      const bytes = (p: string) => readFileSync(p);
      for (const side of ['in', 'out']) {
        // The tees close their logs when their command exits: wait for the direct one's to be whole.
        expect(bytes(`${client}.${side}`).length).toBeGreaterThan(100);
        expect(
          bytes(`${server}.${side}`).equals(bytes(`${client}.${side}`)),
          `${side}: the proxy's two sides differ`,
        ).toBe(true);
      }
      for (;;) {
        if (bytes(`${direct}.out`).length >= bytes(`${client}.out`).length) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(bytes(`${direct}.in`).toString('utf8')).toBe(bytes(`${client}.in`).toString('utf8'));
      expect(bytes(`${direct}.out`).toString('utf8')).toBe(bytes(`${client}.out`).toString('utf8'));
    },
    T,
  );

  test(
    'a cancelled call is recorded as failed (McpCancelled), and the session goes on',
    async () => {
      const journal = join(root, 'cancel');
      const s = await connect(proxied(journal, ['--fsync', 'none']));
      const abort = new AbortController();
      const call = s.client.callTool({ name: 'slow', arguments: { steps: 1000, delayMs: 20 } }, undefined, {
        signal: abort.signal,
        onprogress: () => abort.abort('enough'),
      });
      await expect(call).rejects.toThrow();
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'after' } })).content).toEqual([
        { type: 'text', text: 'after' },
      ]);
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
        ['slow', 'failed'],
        ['echo', 'completed'],
      ]);
      expect(run.effects[0]!.error).toMatchObject({
        name: 'McpCancelled',
        message: 'the client cancelled the call: enough',
      });
    },
    T,
  );
});

describe('stepchain mcp: resources and prompts', () => {
  test(
    'resources/read and prompts/get are recorded as effects named by their method, their params as the arguments',
    async () => {
      const journal = join(root, 'reads');
      const s = await connect(proxied(journal, ['--fsync', 'none', '--allow', 'echo']));
      expect((await s.client.readResource({ uri: 'test://note' })).contents).toEqual([
        { uri: 'test://note', text: 'a note' },
      ]);
      expect((await s.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } })).messages[0]!.content).toEqual({
        type: 'text',
        text: 'Hello Ada',
      });
      await expect(s.client.readResource({ uri: 'test://missing' })).rejects.toThrow();
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects.map((e) => [e.tool, e.status, e.args])).toEqual([
        ['resources/read', 'completed', { uri: 'test://note' }],
        ['prompts/get', 'completed', { name: 'greet', arguments: { who: 'Ada' } }],
        ['resources/read', 'failed', { uri: 'test://missing' }],
      ]);
      expect(run.effects[0]!.result).toEqual({ contents: [{ uri: 'test://note', text: 'a note' }] });
    },
    T,
  );
});

describe('stepchain mcp: sampling', () => {
  test(
    "a server's sampling/createMessage is recorded as a model request (model.started, then model.completed with the client's answer), inside the tool call that made it",
    async () => {
      const journal = join(root, 'sampling');
      const transport = new StdioClientTransport({
        command: NODE,
        args: proxied(journal, ['--fsync', 'none']),
        stderr: 'pipe',
      });
      const client = new Client({ name: 'sampling-client', version: '1' }, { capabilities: { sampling: {} } });
      client.setRequestHandler(CreateMessageRequestSchema, async () => ({
        role: 'assistant',
        content: { type: 'text', text: '42' },
        model: 'test-model',
        stopReason: 'endTurn',
      }));
      await client.connect(transport);
      expect((await client.callTool({ name: 'ask', arguments: { question: 'the answer?' } })).content).toEqual([
        { type: 'text', text: 'the model said: 42' },
      ]);
      await client.close();
      await waitForRunEnd(journal);
      const run = await resumeRun(new FileStore(root, { fsync: 'none' }), 'sampling', { readOnly: true });
      const models = await run.modelCalls();
      const effects = await run.effects();
      await run.close();
      expect(effects.map((e) => [e.tool, e.status])).toEqual([['ask', 'completed']]);
      expect(models.map((m) => m.status)).toEqual(['completed']);
      expect(models[0]!.seq).toBeGreaterThan(effects[0]!.seq);
      expect(models[0]!.endSeq).toBeLessThan(effects[0]!.endSeq!);
      const log = await cli(['log', journal, '--json']);
      const steps = (
        JSON.parse(log.stdout) as {
          steps: Array<{ kind: string; prompt: unknown; result: unknown; meta?: { finish_reason?: string } }>;
        }
      ).steps;
      const done = steps.find((x) => x.kind === 'model.completed')!;
      expect(done.prompt).toEqual([{ role: 'user', content: { type: 'text', text: 'the answer?' } }]);
      expect(done.result).toMatchObject({ content: { type: 'text', text: '42' }, model: 'test-model' });
      expect(done.meta?.finish_reason).toBe('endTurn');
    },
    T,
  );
});

describe('stepchain mcp: crashes leave a pending effect', () => {
  test(
    'the server dies mid-call: the client gets an error, the effect is pending, the run failed, the journal verifies',
    async () => {
      const journal = join(root, 'server-crash');
      const s = await connect(proxied(journal, ['--fsync', 'none']));
      await s.client.callTool({ name: 'echo', arguments: { text: 'before' } });
      await expect(s.client.callTool({ name: 'crash', arguments: { code: 3 } })).rejects.toThrow();
      const run = await waitForRunEnd(journal);
      expect(run.status).toBe('failed');
      expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
        ['echo', 'completed'],
        ['crash', 'started'],
      ]);
      await s.client.close();
      const verified = await cli(['verify', journal]);
      expect(verified.code, verified.stderr).toBe(0);
    },
    T,
  );

  test(
    'the proxy is SIGKILLed mid-call: the journal verifies and the effect is pending',
    async () => {
      const journal = join(root, 'proxy-killed');
      const s = await connect(proxied(journal));
      const call = s.client.callTool({ name: 'hang', arguments: {} });
      await s.waitForStderr('HANG STARTED');
      process.kill(s.transport.pid!, 'SIGKILL');
      await expect(call).rejects.toThrow();
      await s.client.close();
      const run = await readRun(journal);
      expect(run.status).toBe('running');
      expect(run.effects.map((e) => [e.tool, e.status])).toEqual([['hang', 'started']]);
      const verified = await cli(['verify', journal]);
      expect(verified.code, verified.stderr).toBe(0);
      const pending = await cli(['effect', 'list', journal, '--pending', '--json']);
      expect(JSON.parse(pending.stdout).pending).toBe(1);
    },
    T,
  );
});

describe('stepchain mcp: a call that cannot be recorded is not forwarded', () => {
  test(
    'arguments the journal cannot hold (an integer beyond 2^53 - 1): the client gets -32010, the server never sees the call, the session goes on',
    async () => {
      const journal = join(root, 'unrecordable');
      const server = join(root, 'unrecordable-server');
      const s = await connect(proxied(journal, ['--fsync', 'none'], [NODE, TEE, server, NODE, SERVER]));
      const refused = await s.client.callTool({ name: 'echo', arguments: { text: 'big', n: 2 ** 53 } }).then(
        () => null,
        (e: { code?: number; message: string }) => e,
      );
      expect(refused?.code).toBe(-32010);
      expect(refused?.message).toMatch(
        /was not forwarded: it holds the integer 9007199254740992, past ±\(2\^53 − 1\), where a JSON number \(a double\) no longer holds every integer: send it as a string, so it cannot be recorded as sent/,
      );
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'small' } })).content).toEqual([
        { type: 'text', text: 'small' },
      ]);
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects.map((e) => e.args)).toEqual([{ text: 'small' }]);
      expect(readFileSync(`${server}.in`, 'utf8')).not.toContain('"text":"big"');
      expect(s.stderr()).toContain('could not record the tools/call request');
    },
    T,
  );
});

describe('stepchain mcp: publishing a session', () => {
  test(
    "a secret in a call's arguments is redacted at publication like any step's: the public receipt verifies and does not hold it",
    async () => {
      const journal = join(root, 'secret');
      const s = await connect(proxied(journal, ['--fsync', 'none']));
      await s.client.callTool({ name: 'echo', arguments: { text: 'hi', api_key: 'sk-live-0123456789abcdef' } });
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects[0]!.args).toEqual({ text: 'hi', api_key: 'sk-live-0123456789abcdef' });
      const policy = join(root, 'policy.json');
      writeFileSync(
        policy,
        JSON.stringify({ rules: [{ id: 'tool-secrets', paths: ['/tool_call/arguments/api_key'], tools: ['echo'] }] }),
      );
      const published = join(root, 'secret-public.tar');
      const p = await cli(['publish', journal, '--policy', policy, '--opt-in', '-o', published]);
      expect(p.code, p.stderr).toBe(0);
      expect(readFileSync(published).includes('sk-live-0123456789abcdef')).toBe(false);
      expect(readFileSync(published).includes('"text":"hi"')).toBe(true);
      const checked = await cli(['verify', published]);
      expect(checked.code, checked.stderr).toBe(0);
    },
    T,
  );
});

describe('stepchain mcp: the command line', () => {
  test(
    "what follows -- is the server's: its --version and --json are passed on, not obeyed; its output is forwarded; its exit status is the proxy's",
    async () => {
      const script = 'process.stdout.write(process.argv.slice(1).join(" ") + "\\n"); process.exitCode = 7';
      // (node's own `--` makes what follows the script's arguments.)
      const r = await cli(['mcp', join(root, 'argv'), '--', NODE, '-e', script, '--', '--version', '--json']);
      expect(r.stdout).toBe('--version --json\n');
      expect(r.code).toBe(7);
    },
    T,
  );

  test(
    'an existing journal is refused (a session is a run of its own), naming what to give instead',
    async () => {
      const journal = join(root, 'existing');
      expect((await cli(['init', journal, '--run'])).code).toBe(0);
      const r = await cli(['mcp', journal, '--', NODE, SERVER]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('is a journal already');
    },
    T,
  );
});

describe('stepchain mcp: policy at the boundary', () => {
  test(
    'a denied tool is answered with an error, recorded, and never reaches the server',
    async () => {
      const journal = join(root, 'deny');
      const server = join(root, 'deny-server');
      const s = await connect(
        proxied(journal, ['--fsync', 'none', '--deny', 'fail'], [NODE, TEE, server, NODE, SERVER]),
      );
      await expect(s.client.callTool({ name: 'fail', arguments: { why: 'x' } })).rejects.toThrow(
        /denied by the proxy's policy/,
      );
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'ok' } })).isError).toBeFalsy();
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
        ['fail', 'failed'],
        ['echo', 'completed'],
      ]);
      expect(run.effects[0]!.error).toMatchObject({ name: 'McpPolicyDenied', tool: 'fail' });
      expect(readFileSync(`${server}.in`, 'utf8')).not.toContain('"name":"fail"');
      expect(readFileSync(`${server}.in`, 'utf8')).toContain('"name":"echo"');
    },
    T,
  );

  test(
    '--approve-with holds each call until the command answers: approved calls go on with the approval recorded, the others are refused',
    async () => {
      const journal = join(root, 'approve');
      const approver = `grep -q '"tool":"echo"' && echo 'approved by the test' || { echo 'only echo may run'; exit 1; }`;
      // The v2 behaviour: the command's exit status is the approval (a v3 run needs a signed decision, MCP.md §5.1).
      const s = await connect(proxied(journal, ['--fsync', 'none', '--format', 'v2', '--approve-with', approver]));
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'yes' } })).content).toEqual([
        { type: 'text', text: 'yes' },
      ]);
      await expect(s.client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })).rejects.toThrow(/only echo may run/);
      await s.client.close();
      const run = await waitForRunEnd(journal);
      expect(run.effects.map((e) => [e.tool, e.status])).toEqual([
        ['echo', 'completed'],
        ['add', 'failed'],
      ]);
      expect(run.effects[0]!.summary).toBe('approved: approved by the test');
      expect(run.effects[1]!.error).toMatchObject({ name: 'McpApprovalDenied', message: 'only echo may run' });
    },
    T,
  );

  test(
    'an existing directory is a store: one run per session, named on standard error',
    async () => {
      const store = tempDir('stepchain-mcp-store-');
      for (let i = 0; i < 2; i++) {
        const s = await connect(proxied(store, ['--fsync', 'none']));
        await s.client.callTool({ name: 'echo', arguments: { text: `session ${i}` } });
        await s.waitForStderr('recording this session as run mcp-');
        const runId = /as run (mcp-[^\s]+)/.exec(s.stderr())![1]!;
        await s.client.close();
        const run = await waitForRunEnd(join(store, runId));
        expect(run.effects.map((e) => e.args)).toEqual([{ text: `session ${i}` }]);
      }
      expect(readdirSync(store).filter((n) => n.startsWith('mcp-')).length).toBe(2);
      expect(existsSync(join(store, 'journal.json'))).toBe(false);
    },
    T,
  );
});
