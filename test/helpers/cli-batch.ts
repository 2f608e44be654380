/**
 * Many invocations of the built CLI (dist/cli/main.js) in ONE Node process (test/helpers/cli-call.mjs, run by
 * cli-batch-runner.mjs for a batch known up front, by cli-serve.mjs for calls that come one by one): each
 * runs the built entry afresh with its own argv, working directory, stdin and exit code, its stdout and
 * stderr captured byte for byte. test/cli/human-output.test.ts's goldens pass unchanged through it. A start of Node and of the CLI's verbs costs more than most of the checks the
 * attack tests make, and those tests run hundreds of them; a batch pays for one.
 *
 * `pty: true` starts the batch under `script`, so that stdout and stderr are a terminal (isTTY, columns, the
 * colour and progress decisions all real; TERM=xterm-256color, onlcr off). What the CLI writes is captured
 * before the terminal, as the bytes it sent. A batch is not a substitute for a real start: the files that use
 * it keep at least one real process per output path (test/attacks/cli-output.test.ts: every reading verb,
 * pipe and terminal), since only a real start exercises main.ts's start and the process's exit.
 */
import { execFile, fork, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { tempDir } from './tmp.js';

const RUNNER = fileURLToPath(new URL('./cli-batch-runner.mjs', import.meta.url));
const SERVE = fileURLToPath(new URL('./cli-serve.mjs', import.meta.url));

export interface BatchCall {
  args: string[];
  cwd: string;
  /** What the call reads on stdin (UTF-8); an empty stream when absent. */
  input?: string;
  /** A directory whose snapshotOf (test/helpers/dir-snapshot.mjs) is taken right after the call. */
  snapshot?: string;
}

export interface BatchOut {
  rc: number;
  /** stdout, as latin1 (one char per byte). */
  out: string;
  /** stderr, as latin1. */
  err: string;
  /** Both, in the order written. */
  all: string;
  snapshot?: string;
}

function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

interface Started {
  command: string;
  args: string[];
  options: { input: string; env: NodeJS.ProcessEnv; timeout: number };
  results: string;
  count: number;
}

function start(calls: readonly BatchCall[], pty: boolean): Started {
  // A directory of its own: one kept for the worker's next files would be gone, removed when the file that
  // made it ended (test/helpers/tmp.ts).
  const dir = tempDir('cli-batch-');
  const callsFile = join(dir, 'calls.json');
  const results = join(dir, 'results.json');
  writeFileSync(callsFile, JSON.stringify(calls));
  const env = serverEnv({});
  const node = [process.execPath, RUNNER, callsFile, results];
  return pty
    ? {
        command: 'script',
        args: ['-qec', `stty -onlcr; ${node.map(sh).join(' ')}`, '/dev/null'],
        options: { input: '', env: { ...env, TERM: 'xterm-256color' }, timeout: 600_000 },
        results,
        count: calls.length,
      }
    : {
        command: node[0]!,
        args: node.slice(1),
        options: { input: '', env, timeout: 600_000 },
        results,
        count: calls.length,
      };
}

function finish(s: Started, ended: { status: number | null; signal: string | null; output: string }): BatchOut[] {
  let results: BatchOut[];
  try {
    results = JSON.parse(readFileSync(s.results, 'utf8')) as BatchOut[];
  } catch {
    throw new Error(`the CLI batch ended without results (status ${ended.status}, ${ended.signal}):\n${ended.output}`);
  }
  if (results.length !== s.count) throw new Error(`the CLI batch answered ${results.length} of ${s.count}`);
  return results;
}

/** Runs `calls` in one process, in order; throws if the batch itself did not finish. */
export function cliBatch(calls: readonly BatchCall[], options: { pty?: boolean } = {}): BatchOut[] {
  const s = start(calls, options.pty === true);
  const r = spawnSync(s.command, s.args, s.options);
  return finish(s, { status: r.status, signal: r.signal, output: `${r.stdout}\n${r.stderr}` });
}

/** cliBatch without blocking this process's event loop (a test that drives a browser meanwhile). */
export function cliBatchAsync(calls: readonly BatchCall[], options: { pty?: boolean } = {}): Promise<BatchOut[]> {
  const s = start(calls, options.pty === true);
  return new Promise((resolve, reject) => {
    const child = execFile(
      s.command,
      s.args,
      { env: s.options.env, timeout: s.options.timeout, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        try {
          resolve(finish(s, { status: child.exitCode, signal: child.signalCode, output: `${stdout}\n${stderr}` }));
        } catch (e) {
          reject(e instanceof Error && error ? new Error(`${e.message}\n${error.message}`) : e);
        }
      },
    );
    child.stdin!.end(s.options.input);
  });
}

/** A batch's answer as cli-in.ts's Run: exit code, and stdout and stderr decoded as UTF-8. */
export function asRun(o: BatchOut): { code: number; stdout: string; stderr: string } {
  const utf8 = (s: string): string => Buffer.from(s, 'latin1').toString('utf8');
  return { code: o.rc, stdout: utf8(o.out), stderr: utf8(o.err) };
}

/**
 * The environment of a CLI batch or server (cliBatch, cliServer, cli-sync.ts's syncCli): this process's, less the runner's own
 * colour settings, which are not the calls'; then what the caller sets (NO_COLOR included).
 */
export function serverEnv(extraEnv: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  return Object.assign(env, extraEnv);
}

export interface CliServer {
  /** Runs `call` after every call asked before it; resolves with its answer. */
  run(call: BatchCall): Promise<BatchOut>;
}

/**
 * One process of the built CLI that answers calls as they come (test/helpers/cli-serve.mjs), for a test whose
 * next arguments depend on the last answer: cliBatch's saving without knowing every call up front. Its stdout
 * and stderr are pipes, as a piped start's would be. `env` goes over process.env for every call. Stopped
 * after the file's tests.
 */
export function cliServer(extraEnv: Record<string, string> = {}): CliServer {
  const child = fork(SERVE, [], { stdio: ['pipe', 'pipe', 'pipe', 'ipc'], env: serverEnv(extraEnv) });
  child.stdin!.end(); // a call without input reads an ended stdin, as a started process given none would
  child.stdout!.resume();
  let errors = '';
  child.stderr!.on('data', (d: Buffer) => (errors += d.toString()));
  const pending = new Map<number, { resolve: (o: BatchOut) => void; reject: (e: Error) => void }>();
  let next = 0;
  child.on('message', (m: { id: number; result: BatchOut }) => {
    pending.get(m.id)?.resolve(m.result);
    pending.delete(m.id);
  });
  child.on('exit', (code, signal) => {
    for (const p of pending.values()) p.reject(new Error(`the CLI server ended (${code ?? signal}):\n${errors}`));
    pending.clear();
  });
  afterAll(() => {
    child.kill();
  });
  return {
    run: (call) =>
      new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        child.send({ id, call });
      }),
  };
}
