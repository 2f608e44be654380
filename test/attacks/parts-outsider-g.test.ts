/**
 * Outsider G (README, docs and spec/ only): something that cannot be a part's file planted where a journal's part
 * stands — a FIFO, a directory, a symbolic link looping on itself, its `parts/xx` folder replaced by a file. verify
 * failed whole (IO_ERROR, exit 2, no report: the chain's own findings lost with it). Now it reports PART_CORRUPT at
 * the record that references the part (seq, path, file) beside everything else, exit 1, as a planted blob is
 * BLOB_CORRUPT; a writer that meets one stops with a coded error instead of taking it for the part. (A FIFO stands in for
 * a device: tests never touch /dev.)
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';

const CLI = join(resolve(__dirname, '..', '..'), 'dist', 'cli', 'main.js');

function cli(cwd: string, args: string[], input?: string): { rc: number | null; out: string; err: string } {
  // A timeout only so that a hang fails the test: rc is then null.
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    timeout: 120_000,
    ...(input === undefined ? {} : { input }),
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { rc: r.status, out: r.stdout.toString('utf8'), err: r.stderr.toString('utf8') };
}

let d: string;
let partDir: string;
let partFile: string;
beforeAll(() => {
  d = tempDir('parts-outsider-g-');
  expect(cli(d, ['init', 'base']).rc).toBe(0);
  const steps = [
    { input: { q: 1 }, model: 'm', prompt: 'p', result: 'Z'.repeat(5000) },
    { input: { q: 2 }, model: 'm', prompt: 'p', result: 'r' },
  ];
  expect(cli(d, ['append', 'base', '--jsonl'], steps.map((s) => JSON.stringify(s)).join('\n') + '\n').rc).toBe(0);
  partDir = readdirSync(join(d, 'base', 'parts')).find((n) => /^[0-9a-f]{2}$/.test(n))!;
  partFile = readdirSync(join(d, 'base', 'parts', partDir))[0]!;
}, 120_000);

const plant: Record<string, (j: string) => void> = {
  'a FIFO': (j) => {
    const f = join(j, 'parts', partDir, partFile);
    rmSync(f);
    expect(spawnSync('mkfifo', [f]).status).toBe(0);
  },
  'a directory': (j) => {
    const f = join(j, 'parts', partDir, partFile);
    rmSync(f);
    mkdirSync(f);
  },
  'a symbolic link to itself': (j) => {
    const f = join(j, 'parts', partDir, partFile);
    rmSync(f);
    symlinkSync(f, f);
  },
  "a file in place of the part's folder": (j) => {
    rmSync(join(j, 'parts', partDir), { recursive: true });
    writeFileSync(join(j, 'parts', partDir), 'x');
  },
};

test.each(Object.keys(plant))(
  '%s where a part stands: PART_CORRUPT at its reference, a whole report, exit 1',
  (kind) => {
    const j = `j-${Object.keys(plant).indexOf(kind)}`;
    cpSync(join(d, 'base'), join(d, j), { recursive: true });
    plant[kind]!(join(d, j));
    for (const extra of [[], ['--deep'], ['--threads', '1']]) {
      const r = cli(d, ['verify', j, '--json', ...extra]);
      expect(r.rc).toBe(1);
      const { report } = JSON.parse(r.out) as {
        report: { ok: boolean; problems: { code: string; location: Record<string, unknown> }[] };
      };
      expect(report.ok).toBe(false);
      const part = report.problems.find((p) => p.code === 'PART_CORRUPT');
      expect(part?.location).toMatchObject({ seq: 0, path: '/result', file: `parts/${partDir}/${partFile}` });
      expect(r.err).not.toMatch(/IO_ERROR|at .*\.js:\d+/);
    }
    // A writer that needs the same part stops, coded, and writes nothing over what stands there.
    const again = JSON.stringify({ input: { q: 1 }, model: 'm', prompt: 'p', result: 'Z'.repeat(5000) });
    const w = cli(d, ['append', j, '--jsonl'], again + '\n');
    expect(w.rc).toBe(2);
    expect(w.err).toMatch(/error: (PART_CORRUPT|IO_ERROR): /);
  },
  120_000,
);
