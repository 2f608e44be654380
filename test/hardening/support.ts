/**
 * Shared settings for the hardening battery (issue 8). The normal run (`npm test`) keeps the whole folder
 * within a few minutes on two cores; `npm run test:long` sets STEPCHAIN_LONG=1, which multiplies every
 * fuzz budget by LONG_FACTOR and stretches the soak.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { vi } from 'vitest';
import { asRun, cliServer } from '../helpers/cli-batch.js';

export const LONG = process.env.STEPCHAIN_LONG === '1';
export const LONG_FACTOR = 20;
/** Per-test time limit: the vitest default in the normal run; an hour per test in long mode. */
export const TEST_TIMEOUT = LONG ? 3_600_000 : 60_000;
if (LONG) vi.setConfig({ testTimeout: TEST_TIMEOUT, hookTimeout: 600_000 });

/** fast-check numRuns for a target: `normal` in the normal run, 20× in long mode. */
export function runs(normal: number): number {
  return LONG ? normal * LONG_FACTOR : normal;
}

export const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
export const CLI = DIST + 'cli/main.js';
export const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs node on a script to its end (killed with SIGKILL after timeoutMs, which the caller then sees). */
export function runNode(
  args: string[],
  options: {
    cwd?: string;
    input?: string;
    timeoutMs?: number;
    env?: Record<string, string>;
    uid?: number;
    gid?: number;
  } = {},
): Promise<Ran> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', (e) => (clearTimeout(timer), reject(e)));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

/**
 * runNode's counterpart for calls of the built CLI that check what a verb prints and decides, not how its
 * process starts or ends: each call (CLI arguments only) runs in one long-lived process of the CLI
 * (test/helpers/cli-batch.ts cliServer: the built entry afresh per call, stdio captured as from pipes), one
 * at a time in the order asked, so never for calls awaited together. `env` goes over process.env and
 * NO_COLOR=1, as runNode's does, for every call; a call that needs its own environment, node flags or a
 * signal starts a process with runNode. The answer has runNode's shape (`signal` always null; no time limit
 * of its own: the test's applies). Made at a file's top level, where the server's afterAll registers.
 */
export function cliInProcess(
  env: Record<string, string> = {},
): (args: string[], options?: { cwd?: string; input?: string }) => Promise<Ran> {
  const server = cliServer({ NO_COLOR: '1', ...env });
  return async (args, options = {}) => {
    const t0 = performance.now();
    const { input } = options;
    const out = await server.run({
      args,
      cwd: options.cwd ?? process.cwd(),
      ...(input === undefined ? {} : { input }),
    });
    return { ...asRun(out), signal: null, ms: performance.now() - t0 };
  };
}
