/**
 * Paths that are not regular files (a FIFO, a directory) given where the CLI reads or writes a file.
 * Writing: export, publish and page --force write a temporary file and rename it over the target, and
 * rename(2) replaces whatever node stands there (as root, `-o /dev/full` replaced the device with a file);
 * such a target is refused with OUTPUT_FAILED, exit 2, naming it, and nothing is written.
 * Reading: opening a FIFO with no writer waits for ever; each reader refuses it before opening, exit 2.
 * (A FIFO stands in for a device: tests never touch /dev.)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';

const CLI = join(resolve(__dirname, '..', '..'), 'dist', 'cli', 'main.js');

function cli(cwd: string, ...args: string[]): { rc: number | null; err: string } {
  // A generous timeout only so that a hang fails the test instead of the run: rc is then null.
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd,
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { rc: r.status, err: r.stderr.toString('utf8') };
}

let d: string;
beforeAll(() => {
  d = tempDir('non-regular-');
  expect(cli(d, 'init', 'j').rc).toBe(0);
  writeFileSync(join(d, 's.json'), '{"input":1}');
  writeFileSync(join(d, 'policy.json'), JSON.stringify({ rules: [{ id: 'inputs', paths: ['/input'] }] }));
  expect(cli(d, 'append', 'j', '--file', 's.json').rc).toBe(0);
  expect(cli(d, 'export', 'j', '-o', 'r.tar').rc).toBe(0);
  expect(cli(d, 'publish', 'j', '--policy', 'policy.json', '-o', 'p.tar', '--opt-in').rc).toBe(0);
  expect(spawnSync('mkfifo', [join(d, 'fifo')]).status).toBe(0);
  expect(spawnSync('mkdir', [join(d, 'dir')]).status).toBe(0);
}, 300_000);

const names = (): string[] => readdirSync(d).sort();

describe('a write through rename refuses a target that is not a regular file', () => {
  test.each([
    ['export -o FIFO', ['export', 'j', '-o', 'fifo'], 'fifo', 'a FIFO'],
    ['export -o directory', ['export', 'j', '-o', 'dir'], 'dir', 'a directory'],
    ['publish -o FIFO', ['publish', 'j', '--policy', 'policy.json', '-o', 'fifo', '--opt-in'], 'fifo', 'a FIFO'],
    ['page -o FIFO --force', ['page', '-o', 'fifo', '--force'], 'fifo', 'a FIFO'],
  ])(
    '%s',
    (_name, args, target, kind) => {
      const before = names();
      const r = cli(d, ...args);
      expect(r.rc).toBe(2);
      expect(r.err).toContain(`OUTPUT_FAILED: cannot write ${target}: it is ${kind}, not a regular file`);
      const st = statSync(join(d, target));
      expect(target === 'fifo' ? st.isFIFO() : st.isDirectory()).toBe(true);
      expect(names()).toEqual(before); // no temporary file left beside it
    },
    300_000,
  );

  test('a regular file is still replaced (export overwrites, as before)', () => {
    writeFileSync(join(d, 'old.tar'), 'old');
    expect(cli(d, 'export', 'j', '-o', 'old.tar').rc).toBe(0);
    expect(statSync(join(d, 'old.tar')).size).toBeGreaterThan(3);
  }, 300_000);
});

describe('a reader refuses a FIFO before opening it (it would wait for ever)', () => {
  test.each([
    ['verify FIFO', ['verify', 'fifo'], 'INPUT_UNREADABLE: cannot read fifo: it is a FIFO'],
    ['verify --proof FIFO', ['verify', 'r.tar', '--proof', 'fifo'], 'cannot read --proof fifo: it is a FIFO'],
    ['disclose --check FIFO', ['disclose', 'p.tar', '--check', 'fifo'], 'cannot read proof fifo: it is a FIFO'],
    ['disclose FIFO --check', ['disclose', 'fifo', '--check', 'p.tar'], 'cannot read receipt fifo: it is a FIFO'],
    [
      'witness --key FIFO',
      ['witness', '--key', 'fifo', '--name', 'w'],
      'cannot read key file fifo: it is not a regular file',
    ],
  ])(
    '%s',
    (_name, args, message) => {
      const r = cli(d, ...args);
      expect(r.rc).toBe(2);
      expect(r.err).toContain(message);
    },
    300_000,
  );
});
