/**
 * The MCP proxy's approval hook on approval records (spec/MCP.md §5.1, spec/APPROVALS.md) with the real
 * @modelcontextprotocol/sdk client and server, each a process of its own: a held call is recorded as
 * approval.requested; an approver decides from another process (`stepchain approve`) or the approval
 * command does; a denied call is answered with an MCP error and never reaches the server (the server's
 * input, as tee.mjs saw it, is checked); an approved call's effect names its request; the journal verifies.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FileStore } from '../../src/store/index.js';
import { resumeRun } from '../../src/runtime/index.js';
import { tempDir } from '../helpers/tmp.js';
import { runNode } from '../hardening/support.js';
import { CLI, NODE, SERVER, TEE, connect, proxied, type Session } from './support.js';

const root = tempDir('stepchain-mcp-approval-');
const T = 180_000;
const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 120_000 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const HTTP_SERVER = new URL('./fixtures/http-server.mjs', import.meta.url).pathname;
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
});

/** One approver key (PKCS#8 PEM, from keygen) for every test: a process start costs more than the tests' own work. */
let approverKey: Promise<string> | undefined;
const personKey = (): Promise<string> =>
  (approverKey ??= (async () => {
    const key = join(root, 'person.key');
    expect((await cli(['keygen', '-o', key])).code).toBe(0);
    return key;
  })());

/** Starts `node args…`; its output so far, and a wait for a pattern in it. */
function startNode(args: string[]) {
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  let seen = '';
  child.stdout!.on('data', (c: Buffer) => {
    seen += c.toString('utf8');
  });
  child.stderr!.on('data', (c: Buffer) => {
    seen += c.toString('utf8');
  });
  const waitFor = async (pattern: RegExp): Promise<RegExpExecArray> => {
    for (;;) {
      const m = pattern.exec(seen);
      if (m) return m;
      if (child.exitCode !== null) throw new Error(`exited (${child.exitCode}) before printing ${pattern}: ${seen}`);
      await sleep(50);
    }
  };
  return { child, waitFor, output: () => seen };
}

/** The call's error message, handled at once (a call's rejection that arrives before its assertion is not "unhandled"). */
const refusal = (call: Promise<unknown>): Promise<string> =>
  call.then(
    (r) => `answered: ${JSON.stringify(r)}`,
    (e: Error) => e.message,
  );

/** Waits until the proxy has named `n` requests waiting for approval; their ids, in order. */
async function waitingRequests(s: Session, n: number): Promise<string[]> {
  for (;;) {
    const ids = [...s.stderr().matchAll(/waits for approval until \S+: stepchain approve \S+ (\S+) --key/g)].map(
      (m) => m[1]!,
    );
    if (ids.length >= n) return ids;
    await sleep(50);
  }
}

interface Rec {
  seq: number;
  kind: string;
  ref: string | null;
  step_id: string;
  tool_call: { name: string } | null;
  meta?: { approval?: { request: string } };
}

/** The journal's records as stored (the proxy's run ends with run.completed or run.failed as it exits). */
async function recordsOf(journal: string): Promise<Rec[]> {
  const j = await new FileStore(dirname(journal), { fsync: 'none' }).open(basename(journal), { readOnly: true });
  try {
    const out: Rec[] = [];
    for await (const r of j.read()) out.push(r as unknown as Rec);
    return out;
  } finally {
    await j.close();
  }
}

/** Waits until the proxy has ended the run, then reads its records and its approvals. */
async function ended(journal: string) {
  for (;;) {
    const records = await recordsOf(journal);
    if (['run.completed', 'run.failed'].includes(records.at(-1)?.kind ?? '')) {
      const run = await resumeRun(new FileStore(dirname(journal), { fsync: 'none' }), basename(journal), {
        readOnly: true,
      });
      try {
        return { records, approvals: await run.approvals() };
      } finally {
        await run.close();
      }
    }
    await sleep(50);
  }
}
const kinds = (records: Rec[]) => records.map((r) => (r.tool_call === null ? r.kind : `${r.kind} ${r.tool_call.name}`));

describe('stepchain mcp --format v3: approvals as approval records', () => {
  test(
    'an approver in another process denies one call and grants the next: the denied call never reaches the server',
    async () => {
      const journal = join(root, 'out-of-band');
      const key = await personKey();
      const wire = join(root, 'server-1');
      // The approver's key pinned: their grant lets the call through (the next test: another key's does not).
      const s = await connect(
        proxied(
          journal,
          ['--fsync', 'none', '--format', 'v3', '--approve-tools', 'add', '--approver', `${key}.pub`],
          [NODE, TEE, wire, NODE, SERVER],
        ),
      );
      // A tool not named by --approve-tools goes through as before.
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'free' } })).content).toEqual([
        { type: 'text', text: 'free' },
      ]);

      const first = refusal(s.client.callTool({ name: 'add', arguments: { a: 40, b: 2 } }));
      const [denyId] = await waitingRequests(s, 1);
      const denied = await cli([
        'approve',
        journal,
        denyId!,
        '--key',
        key,
        '--deny',
        '--reason',
        'not on a Friday',
        '--name',
        'alice',
      ]);
      expect(denied.code, denied.stderr).toBe(0);
      expect(await first).toMatch(/-32011.*denied by alice .*not on a Friday/s);

      const second = s.client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      const [, grantId] = await waitingRequests(s, 2);
      const granted = await cli([
        'approve',
        journal,
        grantId!,
        '--key',
        key,
        '--approve',
        '--reason',
        'fine',
        '--name',
        'alice',
      ]);
      expect(granted.code, granted.stderr).toBe(0);
      expect((await second).structuredContent).toEqual({ sum: 5 });
      await s.client.close();
      const { records, approvals } = await ended(journal);

      const seen = readFileSync(`${wire}.in`, 'utf8');
      expect(seen).toContain('"a":2,"b":3');
      expect(seen).not.toContain('"a":40'); // the denied call never reached the server
      expect(approvals.map((a) => [a.id, a.call.name, a.status, a.approver?.name ?? null, a.reason])).toEqual([
        [denyId, 'add', 'denied', 'alice', 'not on a Friday'],
        [grantId, 'add', 'granted', 'alice', 'fine'],
      ]);
      expect(approvals[0]!.effect).toBeNull();
      // The denied add has no tool.started; the granted one's names its request.
      expect(kinds(records)).toEqual([
        'run.started',
        'tool.started echo',
        'tool.completed echo',
        'approval.requested',
        'approval.denied',
        'approval.requested',
        'approval.granted',
        'tool.started add',
        'tool.completed add',
        'run.completed',
      ]);
      const added = records.find((r) => r.kind === 'tool.started' && r.tool_call?.name === 'add')!;
      expect(added.meta?.approval?.request).toBe(grantId);
      expect(approvals[1]!.effect).toBe(added.step_id);
      const verified = await cli(['verify', journal, '--json']);
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    },
    T,
  );

  test(
    "--approve-with: the command signs with stepchain approve itself, or the proxy's --approver-key signs its verdict",
    async () => {
      const journal = join(root, 'command');
      const person = await personKey();
      const policyKey = join(root, 'policy.key'); // a raw 32-byte Ed25519 seed, the other form --approver-key takes
      writeFileSync(policyKey, new Uint8Array(32).fill(42));
      // echo: the command has a person sign the grant (stepchain approve, another process); anything else: exit 1.
      const approver = join(root, 'approver.mjs');
      writeFileSync(
        approver,
        `import { execFileSync } from 'node:child_process';
let text = '';
for await (const c of process.stdin) text += c;
const call = JSON.parse(text);
if (call.tool !== 'echo' || call.effect_id !== null) { console.log('only echo, says the policy'); process.exit(1); }
execFileSync(process.execPath, [${JSON.stringify(CLI)}, 'approve', call.approval.journal, call.approval.request, '--key', ${JSON.stringify(person)}, '--approve', '--name', 'bob'], { stdio: ['ignore', 'ignore', 'inherit'] });
console.log('bob signed');
`,
      );
      const wire = join(root, 'server-2');
      const s = await connect(
        proxied(
          journal,
          [
            '--fsync',
            'none',
            '--format',
            'v3',
            '--approve-with',
            `${NODE} ${approver}`,
            '--approver-key',
            policyKey,
            '--approver-name',
            'policy',
          ],
          [NODE, TEE, wire, NODE, SERVER],
        ),
      );
      expect((await s.client.callTool({ name: 'echo', arguments: { text: 'ok' } })).content).toEqual([
        { type: 'text', text: 'ok' },
      ]);
      await expect(s.client.callTool({ name: 'add', arguments: { a: 7, b: 7 } })).rejects.toThrow(
        /-32011.*denied by policy .*only echo, says the policy/s,
      );
      await s.client.close();
      const { records, approvals } = await ended(journal);

      expect(readFileSync(`${wire}.in`, 'utf8')).not.toContain('"a":7');
      expect(approvals.map((a) => [a.call.name, a.status, a.approver?.name ?? null])).toEqual([
        ['echo', 'granted', 'bob'],
        ['add', 'denied', 'policy'],
      ]);
      expect(approvals[0]!.approver!.keyid).not.toBe(approvals[1]!.approver!.keyid);
      expect(kinds(records)).toEqual([
        'run.started',
        'approval.requested',
        'approval.granted',
        'tool.started echo',
        'tool.completed echo',
        'approval.requested',
        'approval.denied',
        'run.completed',
      ]);
      expect(approvals[0]!.effect).toBe(records[3]!.step_id);
      expect((await cli(['verify', journal])).code).toBe(0);
    },
    T,
  );

  test(
    'a call cancelled while it waits is neither forwarded nor answered; one no one decides expires and is refused',
    async () => {
      const journal = join(root, 'expire');
      const wire = join(root, 'server-3');
      const client = join(root, 'client-3'); // what the proxy answered the client, as tee.mjs saw it
      const s = await connect([
        TEE,
        client,
        NODE,
        ...proxied(
          journal,
          ['--fsync', 'none', '--format', 'v3', '--approve-tools', 'add', '--approval-timeout', '1'],
          [NODE, TEE, wire, NODE, SERVER],
        ),
      ]);
      const abort = new AbortController();
      const cancelled = refusal(
        s.client.callTool({ name: 'add', arguments: { a: 11, b: 0 } }, undefined, { signal: abort.signal }),
      );
      await waitingRequests(s, 1);
      abort.abort('changed my mind');
      expect(await cancelled).toMatch(/changed my mind|abort/i);
      await expect(s.client.callTool({ name: 'add', arguments: { a: 12, b: 0 } })).rejects.toThrow(
        /-32011.*no decision before the request expired/s,
      );
      await s.client.close();
      const { records, approvals } = await ended(journal);
      expect(kinds(records)).toEqual(['run.started', 'approval.requested', 'approval.requested', 'run.completed']);
      expect(approvals.map((a) => a.status)).toEqual(['expired', 'expired']);
      const seen = readFileSync(`${wire}.in`, 'utf8');
      expect(seen).not.toContain('"a":11');
      expect(seen).not.toContain('"a":12');
      const sent = readFileSync(`${client}.in`, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"a":11'));
      expect(sent).toHaveLength(1);
      const id = (JSON.parse(sent[0]!) as { id: number }).id;
      const answered = readFileSync(`${client}.out`, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as { id?: unknown });
      expect(answered.some((m) => m.id === id)).toBe(false); // the cancelled call was not answered
      expect((await cli(['verify', journal])).code).toBe(0);
    },
    T,
  );

  test(
    'with --approver, a grant signed by any other key (an agent that can write the journal) is refused',
    async () => {
      const journal = join(root, 'pinned');
      const person = await personKey();
      const intruder = join(root, 'intruder.key');
      expect((await cli(['keygen', '-o', intruder])).code).toBe(0);
      const wire = join(root, 'server-4');
      const s = await connect(
        proxied(
          journal,
          ['--fsync', 'none', '--format', 'v3', '--approve-tools', 'add', '--approver', `${person}.pub`],
          [NODE, TEE, wire, NODE, SERVER],
        ),
      );
      const call = refusal(s.client.callTool({ name: 'add', arguments: { a: 66, b: 0 } }));
      const [id] = await waitingRequests(s, 1);
      const forged = await cli(['approve', journal, id!, '--key', intruder, '--approve', '--name', 'alice']);
      expect(forged.code, forged.stderr).toBe(0); // the journal takes any well-signed decision; the proxy does not
      expect(await call).toMatch(
        /-32011.*granted by key sha256:[0-9a-f]{64} \(calling itself alice\), which is not one of the proxy's approvers/s,
      );
      await s.client.close();
      const { records } = await ended(journal);
      expect(kinds(records)).toEqual(['run.started', 'approval.requested', 'approval.granted', 'run.completed']);
      expect(readFileSync(`${wire}.in`, 'utf8')).not.toContain('"a":66');
    },
    T,
  );

  test(
    'over Streamable HTTP (--upstream): the POST holding a held call is answered once an approver in another process decides',
    async () => {
      const server = startNode([HTTP_SERVER]);
      const upstream = `http://127.0.0.1:${(await server.waitFor(/LISTENING (\d+)/))[1]}/mcp`;
      const store = join(root, 'http-runs');
      const key = await personKey();
      const proxy = startNode([
        CLI,
        'mcp',
        store,
        '--fsync',
        'none',
        '--format',
        'v3',
        '--approve-tools',
        'add',
        '--upstream',
        upstream,
      ]);
      const url = (await proxy.waitFor(/give the client (http:\/\/127\.0\.0\.1:\d+\/mcp)/))[1]!;
      const transport = new StreamableHTTPClientTransport(new URL(url));
      const client = new Client({ name: 'stepchain-http-client', version: '3.0.0' });
      await client.connect(transport);
      const call = refusal(client.callTool({ name: 'add', arguments: { a: 5, b: 6 } }));
      const [, journal, id] = await proxy.waitFor(/stepchain approve (\S+) (\S+) --key/);
      const decided = await cli([
        'approve',
        journal!,
        id!,
        '--key',
        key,
        '--deny',
        '--reason',
        'not over http',
        '--name',
        'dave',
      ]);
      expect(decided.code, decided.stderr).toBe(0);
      expect(await call).toMatch(/-32011.*denied by dave .*not over http/s);
      await transport.terminateSession();
      await client.close();
      const { records, approvals } = await ended(journal!);
      expect(kinds(records)).toEqual(['run.started', 'approval.requested', 'approval.denied', 'run.completed']);
      expect(approvals.map((a) => [a.status, a.approver?.name])).toEqual([['denied', 'dave']]);
      proxy.child.kill('SIGTERM');
      server.child.kill('SIGTERM');
    },
    T,
  );

  test(
    'approval records need v3: the v3-only options are refused on a v2 run, before anything starts',
    async () => {
      const r = await cli(['mcp', join(root, 'v2'), '--format', 'v2', '--approve-tools', 'add', '--', NODE, SERVER]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/--approve-tools needs approval records, which need --format v3/);
    },
    T,
  );
});
