/**
 * Many invocations of the built CLI (dist/cli/main.js) in ONE Node process (test/helpers/cli-batch-runner.mjs):
 * each runs the built entry afresh with its own argv, working directory and exit code, its stdout and stderr
 * captured byte for byte. A start of Node and of the CLI's verbs costs more than most of the checks the
 * attack tests make, and those tests run hundreds of them; a batch pays for one.
 *
 * `pty: true` starts the batch under `script`, so that stdout and stderr are a terminal (isTTY, columns, the
 * colour and progress decisions all real; TERM=xterm-256color, onlcr off). What the CLI writes is captured
 * before the terminal, as the bytes it sent. A batch is not a substitute for a real start: the files that use
 * it keep at least one real process per output path (test/attacks/cli-output.test.ts: every reading verb,
 * pipe and terminal), since only a real start exercises main.ts's start and the process's exit.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tempDir } from './tmp.js';

const RUNNER = fileURLToPath(new URL('./cli-batch-runner.mjs', import.meta.url));

export interface BatchCall {
  args: string[];
  cwd: string;
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

let made = 0;
let dir: string | undefined;

function sh(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs `calls` in one process, in order; throws if the batch itself did not finish. */
export function cliBatch(calls: readonly BatchCall[], options: { pty?: boolean } = {}): BatchOut[] {
  dir ??= tempDir('cli-batch-');
  const n = made++;
  const callsFile = join(dir, `calls-${n}.json`);
  const resultsFile = join(dir, `results-${n}.json`);
  writeFileSync(callsFile, JSON.stringify(calls));
  const env = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  const node = [process.execPath, RUNNER, callsFile, resultsFile];
  const r = options.pty
    ? spawnSync('script', ['-qec', `stty -onlcr; ${node.map(sh).join(' ')}`, '/dev/null'], {
        input: '',
        env: { ...env, TERM: 'xterm-256color' },
        timeout: 600_000,
      })
    : spawnSync(node[0]!, node.slice(1), { input: '', env, timeout: 600_000 });
  let results: BatchOut[];
  try {
    results = JSON.parse(readFileSync(resultsFile, 'utf8')) as BatchOut[];
  } catch {
    throw new Error(`the CLI batch ended without results (status ${r.status}, ${r.signal}):\n${r.stdout}\n${r.stderr}`);
  }
  if (results.length !== calls.length) throw new Error(`the CLI batch answered ${results.length} of ${calls.length}`);
  return results;
}
