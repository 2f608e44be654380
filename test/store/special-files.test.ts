/**
 * Special files planted in a journal directory (issue 14 item 7; spec/FILE-STORE.md §3 "Opening files"): a
 * FIFO in place of head.json, journal.json, a blob or the waiting mark, and a blob that is a symbolic link to
 * /dev/zero. Before, a FIFO made verify, log, head, show, append and export block forever in open(2), and
 * /dev/zero drove verify past 6 GB. Each command runs as a real child process under a time limit, so a
 * regression fails (killed, no exit code) instead of hanging the suite.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, runNode, type Ran } from '../hardening/support.js';

const root = tempDir('stepchain-special-');
const base = join(root, 'base');
let blobPath = '';

beforeAll(async () => {
  const store = new FileStore(root, { fsync: 'none', blobThreshold: 1024 });
  const j = await store.create('base');
  await j.append({ input: 0 });
  await j.append({ input: 1, result: 'b'.repeat(3000) }); // step 1's result is a blob
  await j.append({ input: 2 });
  await j.close();
  const blobs = readdirSync(join(base, 'blobs', 'sha256'));
  expect(blobs).toHaveLength(1);
  blobPath = join('blobs', 'sha256', blobs[0]!);
});

const mkfifo = (p: string): void => {
  rmSync(p, { force: true });
  execFileSync('mkfifo', [p]);
};

type Expect = { code: number | number[]; says?: string };

/** Runs one CLI command with a time limit: a command that hangs is killed and has no exit code. */
function cli(args: string[], input?: string): Promise<Ran> {
  return runNode([CLI, ...args], { timeoutMs: 20_000, ...(input === undefined ? {} : { input }) });
}

const PLANTS: Array<[name: string, plant: (dir: string) => void, expected: Record<string, Expect>]> = [
  [
    'a FIFO as head.json',
    (d) => mkfifo(join(d, 'head.json')),
    {
      verify: { code: 1, says: 'head.json is a FIFO' },
      log: { code: 1, says: 'JOURNAL_INVALID' },
      head: { code: 0 },
      show: { code: 0 },
      export: { code: 0 },
      append: { code: 0 },
    },
  ],
  [
    'a FIFO as journal.json',
    (d) => mkfifo(join(d, 'journal.json')),
    {
      verify: { code: 1, says: 'FIFO' },
      log: { code: 2, says: 'JOURNAL_INVALID' },
      head: { code: 2, says: 'JOURNAL_INVALID' },
      show: { code: 2, says: 'JOURNAL_INVALID' },
      export: { code: 2, says: 'JOURNAL_INVALID' },
      append: { code: 2, says: 'JOURNAL_INVALID' },
    },
  ],
  [
    'a FIFO as a blob',
    (d) => mkfifo(join(d, blobPath)),
    {
      verify: { code: 1, says: 'BLOB_CORRUPT' },
      log: { code: [1, 2], says: 'BLOB_CORRUPT' },
      head: { code: 0 },
      show: { code: 2, says: 'BLOB_CORRUPT' },
      export: { code: 2, says: 'BLOB_CORRUPT' },
      append: { code: 0 },
    },
  ],
  [
    'a blob that is a symlink to /dev/zero',
    (d) => (unlinkSync(join(d, blobPath)), symlinkSync('/dev/zero', join(d, blobPath))),
    {
      verify: { code: 1, says: 'BLOB_CORRUPT' },
      log: { code: [1, 2], says: 'BLOB_CORRUPT' },
      head: { code: 0 },
      show: { code: 2, says: 'BLOB_CORRUPT' },
      export: { code: 2, says: 'BLOB_CORRUPT' },
      append: { code: 0 },
    },
  ],
  [
    'a FIFO as the waiting mark',
    (d) => mkfifo(join(d, 'journal.lock.waiting')),
    {
      verify: { code: 1, says: 'journal.lock.waiting is a FIFO' },
      log: { code: 1 },
      head: { code: 0 },
      show: { code: 0 },
      export: { code: 0 },
      append: { code: 0 },
    },
  ],
];

describe('special files planted in a journal directory: every command ends by itself, with a clear code', () => {
  test.each(PLANTS)('%s', async (name, plant, expected) => {
    const dir = join(root, name.replace(/\W+/g, '-'));
    cpSync(base, dir, { recursive: true });
    plant(dir);
    const read = await Promise.all([
      cli(['verify', dir]).then((r) => ['verify', r] as const),
      cli(['log', dir]).then((r) => ['log', r] as const),
      cli(['head', dir]).then((r) => ['head', r] as const),
      cli(['show', dir, '1']).then((r) => ['show', r] as const),
      cli(['export', dir, '-o', `${dir}.tar.gz`]).then((r) => ['export', r] as const),
    ]);
    // append last: a writer repairs what it may (it replaces a planted head.json).
    const ran = [...read, ['append', await cli(['append', dir], '{"input":"after"}')] as const];
    for (const [command, r] of ran) {
      const want = expected[command]!;
      expect(r.signal, `${command} did not end by itself within 20 s (${name})`).toBeNull();
      expect([want.code].flat(), `${command}: exit ${r.code}\n${r.stderr}`).toContain(r.code);
      if (want.says !== undefined) expect(r.stdout + r.stderr, command).toContain(want.says);
      expect(r.stderr, command).not.toMatch(/\n\s+at /);
    }
  });
});
