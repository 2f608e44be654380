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

  test('--threads outside 1–64 is one usage error (exit 2), whatever is wrong with it', async () => {
    const dir = tempDir('stepchain-threads-');
    for (const t of ['0', 'x', '1.5', '65', '100000', '=-1']) {
      const r = await run([
        'verify',
        dir,
        t.startsWith('=') ? `--threads${t}` : '--threads',
        ...(t.startsWith('=') ? [] : [t]),
      ]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--threads takes a whole number from 1 to 64 (got "${t.replace(/^=/, '')}")`);
    }
  });

  test("parseArgs's own message is one line, not an escaped newline", async () => {
    const r = await run(['verify', tempDir('stepchain-threads-'), '--threads', '-1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/argument is ambiguous\. Did you forget .*\? To specify an option argument/);
    expect(r.stderr).not.toContain('\\n');
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

  test('a v3 run journal of 36 MB verifies in a 24 MB heap on 1 and 2 threads: no line is held after its check', async () => {
    // The approval ledger kept each call's id and the run notes each step_id as slices of their lines, which
    // held every line alive (a 100 000-step verify peaked at 290 MB on one thread): now copies.
    const dir = tempDir('stepchain-threads-heap-');
    const store = new FileStore(dir, { fsync: 'none' });
    const j = await store.create('big', { format: 'stepchain/v3' } as never);
    // Varied text in values below the part threshold (every line carries its own), ~4.5 KB a line.
    let x = 7;
    const text = (): string => {
      let t = '';
      while (t.length < 120) t += ((x = (x * 48271) % 2147483647) % 1e6).toString(36) + ' ';
      return t;
    };
    const members = (): Record<string, string> => Object.fromEntries([0, 1, 2, 3, 4, 5].map((k) => [`m${k}`, text()]));
    for (let at = 0; at < 10_000; at += 1000)
      await j.appendMany(
        Array.from({ length: 1000 }, (_, n) => ({
          input: members(),
          prompt: text() + text() + text() + text() + text(),
          tool_call: { id: `call-${at + n}`, name: 'search', arguments: { q: text() + text() + text() } },
          result: members(),
          meta: members(),
        })),
      );
    await j.close();
    let bytes = 0;
    for (const f of readdirSync(join(dir, 'big', 'buckets')))
      bytes += readFileSync(join(dir, 'big', 'buckets', f)).length;
    expect(bytes).toBeGreaterThan(36e6);
    for (const threads of ['1', '2']) {
      const r = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          ['--max-old-space-size=24', CLI, 'verify', join(dir, 'big'), '--threads', threads],
          { env: { ...process.env, NO_COLOR: '1' } },
          (error, _stdout, stderr) =>
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr }),
        ),
      );
      expect(r.stderr, `--threads ${threads}`).not.toContain('heap out of memory');
      expect(r.code, `--threads ${threads}: ${r.stderr.slice(0, 400)}`).toBe(0);
    }
  });
});
