/**
 * The built CLI on store locations (spec/SQLITE.md §3): a location whose scheme stepchain does not know is
 * refused — exit 2, SCHEME_UNKNOWN naming the known schemes, nothing created — by every verb that takes one
 * (the old CLI took `s3://bucket/run-9` for a relative directory and created ./s3:/bucket/run-9); and the
 * journal verbs, `runs`, `copy` and `doctor` work on `sqlite:file.db?journal=<id>`. The calls run in one
 * process of the CLI of the file's own (cliInProcess, support.ts), but for the directory named with a colon,
 * which starts a real process: at least one real start here, its working directory its own.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { CLI, cliInProcess, runNode } from '../hardening/support.js';

const inProcess = cliInProcess();
const cli = (cwd: string, args: string[], input?: string) =>
  inProcess(args, { cwd, ...(input === undefined ? {} : { input }) });
const started = (cwd: string, args: string[]) => runNode([CLI, ...args], { cwd, timeoutMs: 60_000 });

describe('a location with a scheme stepchain does not know', () => {
  test.each([
    ['init', 's3://bucket/run-9'],
    ['init', 'S3://bucket/run-9'],
    ['init', 'gs://bucket/run'],
    ['init', 'file:///tmp/run'],
    ['init', 'https://example.com/run'],
    ['init', 'mysql://db/run?journal=x'],
    ['init', 'redis:run'],
    ['append', 's3://bucket/run-9'],
    ['verify', 's3://bucket/run-9'],
    ['doctor', 's3://bucket'],
    ['runs', 's3://bucket'],
  ])('%s %s: exit 2, SCHEME_UNKNOWN naming the known schemes, nothing created', async (verb, location) => {
    const cwd = tempDir();
    const r = await cli(cwd, [verb, location, '--json'], '{"input":1}');
    expect(r.code, r.stderr).toBe(2);
    const doc = JSON.parse(r.stdout) as { ok: boolean; error: { code: string; message: string } };
    expect(doc).toMatchObject({ ok: false, error: { code: 'SCHEME_UNKNOWN' } });
    for (const known of ['sqlite:', 'postgres://', 'memory:']) expect(doc.error.message).toContain(known);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(cwd)).toEqual([]);
  });

  test('a directory whose name holds a colon is still a directory when written with ./', async () => {
    const cwd = tempDir();
    const r = await started(cwd, ['init', './runs:2026/today']);
    expect(r.code, r.stderr).toBe(0);
    expect(readdirSync(cwd)).toEqual(['runs:2026']);
    expect(readdirSync(`${cwd}/runs:2026`)).toContain('today');
  });
});

describe('sqlite: locations', () => {
  test('init, append, log, verify, runs, copy to a directory and back, doctor', async () => {
    const cwd = tempDir();
    const at = 'sqlite:agents.db?journal=run-1';
    expect((await cli(cwd, ['init', at, '--agent', 'billing'])).code).toBe(0);
    expect((await cli(cwd, ['append', at], '{"input":"hello","result":"world"}')).code).toBe(0);
    expect((await cli(cwd, ['append', at, '--jsonl'], '{"input":1}\n{"input":2}\n')).code).toBe(0);
    const verified = await cli(cwd, ['verify', at, '--json']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, kind: 'journal', report: { steps: 4 } });
    const runs = await cli(cwd, ['runs', 'sqlite:agents.db', '--agent', 'billing', '--json']);
    expect(JSON.parse(runs.stdout).runs.map((r: { id: string }) => r.id)).toEqual(['run-1']);
    expect((await cli(cwd, ['copy', at, './run-1'])).code).toBe(0);
    expect((await cli(cwd, ['copy', './run-1', 'sqlite:other.db?journal=run-1'])).code).toBe(0);
    const a = await cli(cwd, ['verify', at, '--json']);
    const b = await cli(cwd, ['verify', 'sqlite:other.db?journal=run-1', '--json']);
    expect(JSON.parse(b.stdout).report.head).toBe(JSON.parse(a.stdout).report.head);
    const doctor = await cli(cwd, ['doctor', at, '--json']);
    expect(doctor.code).toBe(0);
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      ok: true,
      backend: 'sqlite',
      schema: { version: 2 },
      journal: { id: 'run-1', found: true, head: { seq: 3 } },
    });
    const missing = await cli(cwd, ['append', 'sqlite:agents.db'], '{"input":1}');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('names no journal');
    // The file store's run index beside the copied directory; each database alone (no -wal or -shm left behind).
    expect(readdirSync(cwd).sort()).toEqual(['.runs.jsonl', 'agents.db', 'other.db', 'run-1']);
  }, 120_000);
});
