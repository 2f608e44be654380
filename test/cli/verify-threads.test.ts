/**
 * `stepchain verify --threads` (issue 25) on the built CLI, and the lazy verb table: a tampered journal
 * large enough to reach the workers gets the same --json report on any thread count, and a start loads
 * only the verb it runs (`--version` none).
 */
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runCli, type LazyVerb, type Verb } from '../../src/cli/cli.js';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { ...process.env, NO_COLOR: '1' }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

describe('stepchain verify --threads', () => {
  test('a tampered journal of several batches: the same --json report on 1, 2 and 3 threads', async () => {
    const dir = tempDir('stepchain-threads-');
    const store = new FileStore(dir, { fsync: 'none' });
    const j = await store.create('run');
    // About 600 KB of lines: several 128 KiB batches, so the workers run.
    await j.appendMany(
      Array.from({ length: 400 }, (_, i) => ({
        input: { i, text: 'y'.repeat(1400) },
        model: 'm',
        prompt: `p${i}`,
        tool_call: null,
        result: { i },
      })),
    );
    await j.close();
    const bucket = join(dir, 'run', 'buckets', readdirSync(join(dir, 'run', 'buckets'))[0]!);
    const lines = readFileSync(bucket, 'utf8').split(/(?<=\n)/);
    lines[250] = lines[250]!.replace('"p250"', '"pX50"');
    lines.splice(300, 1);
    writeFileSync(bucket, lines.join(''));
    const reports = await Promise.all(
      ['1', '2', '3'].map((t) => run(['verify', join(dir, 'run'), '--json', '--threads', t])),
    );
    for (const r of reports) expect(r.code).toBe(1);
    const docs = reports.map((r) => JSON.parse(r.stdout) as { report: { problems: Array<{ code: string }> } });
    expect(docs[0]!.report.problems.map((p) => p.code)).toEqual(['HASH_MISMATCH', 'SEQ_GAP', 'LINK_BROKEN']);
    expect(docs[1]).toEqual(docs[0]);
    expect(docs[2]).toEqual(docs[0]);
  });

  test('--threads 0 and --threads x are usage errors (exit 2)', async () => {
    const dir = tempDir('stepchain-threads-');
    for (const t of ['0', 'x']) {
      const r = await run(['verify', dir, '--threads', t]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--threads');
    }
  });
});

describe('verbs load when they run', () => {
  const verb = (name: string, loaded: string[]): LazyVerb => ({
    name,
    load: async (): Promise<Verb> => {
      loaded.push(name);
      return {
        name,
        summary: `the ${name} verb`,
        usage: '',
        options: {},
        args: { min: 0, max: 0, names: [] },
        examples: [[`stepchain ${name}`, 'runs it']],
        run: async () => 0,
      };
    },
  });

  test('--version loads no verb, a verb loads only itself, the main help loads them all', async () => {
    const loaded: string[] = [];
    const verbs = [verb('alpha', loaded), verb('beta', loaded)];
    expect(await runCli(['--version'], verbs)).toBe(0);
    expect(loaded).toEqual([]);
    expect(await runCli(['beta'], verbs)).toBe(0);
    expect(loaded).toEqual(['beta']);
    expect(await runCli(['--help'], verbs)).toBe(0);
    expect(loaded.sort()).toEqual(['alpha', 'beta', 'beta']);
  });
});
