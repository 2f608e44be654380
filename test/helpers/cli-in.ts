/**
 * The built CLI (dist/cli/main.js) as a child process run in one directory with colour off, as the tests
 * that drive it like a person would use it: `run` resolves to the exit code, stdout and stderr (it never
 * rejects), `feed` the same with `input` on its stdin and `env` over the environment, `ok` also expects exit
 * 0, `append` writes `count` steps {input: {tag, i}} from `from` as a JSONL file and appends them with
 * `append --jsonl`. With `inProcess`, the calls that set no environment of their own (beyond `env`) run in one
 * process of the built CLI (test/helpers/cli-batch.ts cliServer: the built entry run afresh per call, stdio
 * captured as from pipes): for files that check what verbs print and decide, not how a process starts or
 * ends; the rest of the suite starts the CLI for real.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { asRun, cliServer } from './cli-batch.js';

export const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliIn {
  run(...args: string[]): Promise<Run>;
  feed(args: readonly string[], input?: string, env?: Record<string, string>): Promise<Run>;
  ok(...args: string[]): Promise<Run>;
  /** `feed` in a process of its own whatever `inProcess` says: for calls that must run at the same time. */
  started(args: readonly string[], input?: string): Promise<Run>;
  append(journal: string, from: number, count: number, tag?: string): Promise<void>;
}

/** `env` goes over process.env (and NO_COLOR=1) in every call; a call's own `env` over that. */
export function cliIn(dir: string, env: Record<string, string> = {}, options: { inProcess?: boolean } = {}): CliIn {
  const server = options.inProcess === true ? cliServer(env) : null;
  const feed = (args: readonly string[], input?: string, own: Record<string, string> = {}): Promise<Run> =>
    server !== null && Object.keys(own).length === 0
      ? server.run({ args: [...args], cwd: dir, ...(input === undefined ? {} : { input }) }).then(asRun)
      : spawned(args, input, own);
  const spawned = (args: readonly string[], input: string | undefined, own: Record<string, string>): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile(
        process.execPath,
        [CLI, ...args],
        { cwd: dir, env: { ...process.env, NO_COLOR: '1', ...env, ...own }, maxBuffer: 64 << 20 },
        (error, stdout, stderr) => {
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
        },
      );
      if (input !== undefined) child.stdin!.end(input);
    });
  const run = (...args: string[]): Promise<Run> => feed(args);
  const ok = async (...args: string[]): Promise<Run> => {
    const r = await run(...args);
    expect(r.code, `${args.join(' ')}\n${r.stderr}`).toBe(0);
    return r;
  };
  const append = async (journal: string, from: number, count: number, tag = 'run'): Promise<void> => {
    const file = join(dir, `steps-${journal.replace(/\//g, '-')}-${tag}-${from}.jsonl`);
    writeFileSync(
      file,
      Array.from({ length: count }, (_, i) => JSON.stringify({ input: { tag, i: from + i } })).join('\n') + '\n',
    );
    await ok('append', journal, '--jsonl', '--file', file);
  };
  const started = (args: readonly string[], input?: string): Promise<Run> => spawned(args, input, {});
  return { run, feed, ok, append, started };
}

/** The --json document on stdout. */
export const json = (r: Run): Record<string, any> => JSON.parse(r.stdout) as Record<string, any>;
/** The codes of the problems a `verify --json` report lists. */
export const codesOf = (r: Run): string[] => (json(r).report.problems as Array<{ code: string }>).map((p) => p.code);

/**
 * In the CLI's directory (keys log.key and w1.key made): the journal `j` of 40 steps tagged 'genuine',
 * its checkpoint a.checkpoint signed by log.key for agents.example.com, and a.w1, witness.example/w1's
 * cosignature of it (state in w1-state). Returns the log's and the witness's verifier keys.
 */
export async function witnessedJournal({ ok, append }: CliIn): Promise<{ logKey: string; w1: string }> {
  await ok('init', 'j');
  await append('j', 0, 40, 'genuine');
  const checkpoint = ['checkpoint', 'j', '--sign', 'log.key', '--authority', 'agents.example.com'];
  const logKey = json(await ok(...checkpoint, '-o', 'a.checkpoint', '--json')).vkey as string;
  const w1 = (await ok('witness', '--key', 'w1.key', '--name', 'witness.example/w1')).stdout.trim();
  const witness = ['witness', 'a.checkpoint', '--key', 'w1.key', '--name', 'witness.example/w1'];
  await ok(...witness, '--state', 'w1-state', '--log-key', logKey, '-o', 'a.w1');
  return { logKey, w1 };
}
