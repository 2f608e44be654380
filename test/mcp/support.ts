/** The proxy's tests' common parts: the real SDK client over stdio, the built CLI as the proxy, the test server. */
import { fileURLToPath } from 'node:url';
import { basename, dirname } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { FileStore } from '../../src/store/index.js';
import { resumeRun, type Effect } from '../../src/runtime/index.js';
import type { RunIdentity } from '../../src/record/v2.js';
import { CLI } from '../hardening/support.js';

export { CLI };
export const SERVER = fileURLToPath(new URL('./fixtures/server.mjs', import.meta.url));
export const TEE = fileURLToPath(new URL('./fixtures/tee.mjs', import.meta.url));
export const NODE = process.execPath;

/** The command line that runs the test server behind the proxy, recording into `journal`. */
export const proxied = (journal: string, flags: string[] = [], server: string[] = [NODE, SERVER]): string[] => [
  CLI,
  'mcp',
  journal,
  ...flags,
  '--',
  ...server,
];

export interface Session {
  client: Client;
  transport: StdioClientTransport;
  /** Everything the launched process wrote to standard error so far. */
  stderr(): string;
  /** Resolves when standard error holds `text`. */
  waitForStderr(text: string): Promise<void>;
}

/** Starts `node <args…>` as an MCP server and connects the SDK's client to it over stdio. */
export async function connect(args: string[], env: Record<string, string> = {}): Promise<Session> {
  const transport = new StdioClientTransport({
    command: NODE,
    args,
    stderr: 'pipe',
    env: { ...process.env, ...env } as Record<string, string>,
  });
  let err = '';
  const waiters: Array<() => void> = [];
  transport.stderr?.on('data', (c: Buffer) => {
    err += c.toString('utf8');
    for (const w of waiters.splice(0)) w();
  });
  const client = new Client({ name: 'stepchain-test-client', version: '0.0.1' });
  await client.connect(transport);
  const waitForStderr = async (text: string): Promise<void> => {
    while (!err.includes(text)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  return { client, transport, stderr: () => err, waitForStderr };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RunView {
  status: string;
  effects: Effect[];
  identity: RunIdentity;
  runId: string;
}

/** The run at a journal path as a reader sees it now. */
export async function readRun(path: string): Promise<RunView> {
  const run = await resumeRun(new FileStore(dirname(path), { fsync: 'none' }), basename(path), { readOnly: true });
  try {
    return { status: await run.status(), effects: await run.effects(), identity: run.identity, runId: run.runId };
  } finally {
    await run.close();
  }
}

/** Waits until the run at `path` has ended (the proxy writes run.completed or run.failed as it exits). No time limit but the test's. */
export async function waitForRunEnd(path: string): Promise<RunView> {
  for (;;) {
    try {
      const view = await readRun(path);
      if (view.status !== 'running') return view;
    } catch {
      // not created yet
    }
    await sleep(50);
  }
}
