/**
 * Faults with real processes and real files (issue 8): the disk fills mid-append, the journal directory is
 * read-only, a live process holds the lock past the timeout, a dead (SIGKILLed) process left its lock.
 * Each must end in a clear coded error or a recovery, with a journal that verifies and holds every step
 * that was acknowledged.
 *
 * The full disk is a real 2 MiB tmpfs and the read-only directory a read-only bind mount: this suite runs as
 * root, here and in CI. Where a mount cannot be set up the test that needs it fails, saying what could not
 * be mounted and why — it is never skipped, so a passing run always means the real fault was exercised.
 * The injected-ENOSPC case (a preload that makes the store's FileHandle writes land partly and fail, as a
 * full disk does) needs no mount and runs everywhere.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  existsSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { FileStore, StoreError, type Journal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, FIXTURES, runNode, type Ran } from './support.js';
import { spawn } from 'node:child_process';

const root = tempDir('stepchain-faults-');
const mounts: string[] = [];

afterAll(() => {
  // Unmount even when a test failed, innermost first; lazy (-l) so a straggling child cannot keep it busy.
  for (const m of mounts.reverse()) {
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  }
});

/** Mounts; null when done, else why not (mount's own message), for the test that needs it to fail with. */
function tryMount(args: string[], at: string): string | null {
  try {
    execFileSync('mount', args, { stdio: 'pipe' });
    mounts.push(at);
    return null;
  } catch (e) {
    const err = e as { stderr?: Buffer; message?: string };
    return `\`mount ${args.join(' ')}\` failed: ${(err.stderr?.toString() || err.message || String(e)).trim()}`;
  }
}

function mountTmpfs(dir: string, size: string): string | null {
  mkdirSync(dir, { recursive: true });
  return tryMount(['-t', 'tmpfs', '-o', `size=${size},mode=0755`, 'tmpfs', dir], dir);
}

/** Fails the calling test loudly when its mount could not be set up (a skipped fault test proves nothing). */
function requireMount(failure: string | null, what: string): void {
  if (failure !== null) {
    throw new Error(
      `this test needs ${what} and it could not be set up: ${failure}. Run the suite as root (as CI does) on a machine that allows mount(2); the test is not skipped, because a fault test that did not run proves nothing.`,
    );
  }
}

const acks = (r: Ran): Array<{ seq: number; id: string }> =>
  r.stdout
    .split('\n')
    .filter((l) => l.startsWith('ack '))
    .map((l) => {
      const [, seq, id] = l.split(' ');
      return { seq: Number(seq), id: id! };
    });

const errorOf = (r: Ran): { code: string | null; message: string } | null => {
  const line = r.stdout.split('\n').find((l) => l.startsWith('error '));
  return line ? (JSON.parse(line.slice(6)) as { code: string | null; message: string }) : null;
};

/** Opens read-only, verifies, and checks every acknowledged step is at its seq with its id. */
async function expectIntact(storeRoot: string, id: string, acked: Array<{ seq: number; id: string }>): Promise<number> {
  const j = await new FileStore(storeRoot).open(id, { readOnly: true });
  try {
    const report = await j.verify();
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    for (const a of acked) expect((await j.get(a.seq))?.step_id).toBe(a.id);
    return (await j.head())?.seq ?? -1;
  } finally {
    await j.close();
  }
}

function appender(
  storeRoot: string,
  id: string,
  count: number,
  pad: number,
  options: object = {},
  extra: { env?: Record<string, string>; preload?: string } = {},
): Promise<Ran> {
  return runNode(
    [
      ...(extra.preload ? ['--import', extra.preload] : []),
      FIXTURES + 'appender.mjs',
      storeRoot,
      id,
      String(count),
      String(pad),
      JSON.stringify(options),
    ],
    {
      timeoutMs: 60_000,
      ...(extra.env ? { env: extra.env } : {}),
    },
  );
}

describe('the disk fills mid-append', () => {
  const dir = join(root, 'tmpfs');
  const mountFailure = mountTmpfs(dir, '2m');

  test('on a real 2 MiB tmpfs: a clear IO_ERROR (ENOSPC), every acknowledged step kept, the journal verifies and resumes once space is freed', async () => {
    requireMount(mountFailure, `a 2 MiB tmpfs at ${dir}`);
    const store = new FileStore(dir);
    await (await store.create('full', { segmentBytes: 64 * 1024 })).close();
    // Ballast to free afterwards, so the writer can resume on the same file system.
    writeFileSync(join(dir, 'ballast'), Buffer.alloc(256 * 1024, 1));
    for (const fsync of ['always', 'none'] as const) {
      const r = await appender(dir, 'full', 0, 1500, { fsync });
      expect(r.code, r.stderr).toBe(3);
      const err = errorOf(r)!;
      expect(err.code).toBe('IO_ERROR');
      expect(err.message).toContain('ENOSPC');
      expect(r.stderr).toBe('');
      const acked = acks(r);
      if (fsync === 'always') expect(acked.length).toBeGreaterThan(100);
      await expectIntact(dir, 'full', acked);
    }
    rmSync(join(dir, 'ballast'));
    const after = await appender(dir, 'full', 5, 100);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    await expectIntact(dir, 'full', acks(after));
  });

  test('with an injected ENOSPC that lets the failing write land partly (works without mount rights)', async () => {
    const store = new FileStore(root);
    for (const budget of [20_000, 60_123, 150_001]) {
      const id = `inject-${budget}`;
      await (await store.create(id, { segmentBytes: 16 * 1024 })).close();
      const r = await appender(
        root,
        id,
        0,
        700,
        {},
        { preload: FIXTURES + 'enospc.mjs', env: { STEPCHAIN_ENOSPC_BUDGET: String(budget) } },
      );
      expect(r.code, r.stderr).toBe(3);
      const err = errorOf(r)!;
      expect(err.code).toBe('IO_ERROR');
      expect(err.message).toMatch(/ENOSPC/);
      const acked = acks(r);
      expect(acked.length).toBeGreaterThan(5);
      const headSeq = await expectIntact(root, id, acked);
      // Nothing unacknowledged was committed beyond what the failing call may have left fully written.
      expect(headSeq).toBeLessThanOrEqual(acked.at(-1)!.seq + 1);
      // A writer with space again repairs any torn tail and continues the same chain.
      const more = await appender(root, id, 3, 100);
      expect(more.code, more.stdout + more.stderr).toBe(0);
      await expectIntact(root, id, [...acked, ...acks(more)]);
    }
  });
});

describe('a read-only journal directory', () => {
  const src = join(root, 'rw');
  const ro = join(root, 'ro');
  mkdirSync(src, { recursive: true });
  mkdirSync(ro, { recursive: true });
  const mountFailure = tryMount(['--bind', src, ro], ro) ?? tryMount(['-o', 'remount,bind,ro', ro], ro);

  test('append fails with a clear coded error (library and CLI); verify, log and export still work', async () => {
    requireMount(mountFailure, `a read-only bind mount of ${src} at ${ro}`);
    const store = new FileStore(src);
    const j = await store.create('journal');
    for (let i = 0; i < 5; i++) await j.append({ input: i });
    const head = (await j.head())!;
    await j.close();
    expect(() => writeFileSync(join(ro, 'probe'), 'x')).toThrow(/EROFS/);

    // library: a coded StoreError naming the path, never an uncaught system error
    const err = await (async () => {
      const r = await new FileStore(ro).open('journal');
      try {
        await r.append({ input: 'nope' });
      } finally {
        await r.close();
      }
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect(['IO_ERROR', 'READ_ONLY']).toContain((err as StoreError).code);
    expect((err as Error).message).toMatch(/EROFS|read-only/i);

    // CLI: exit 2, one clear line, no stack trace
    const append = await runNode([CLI, 'append', join(ro, 'journal')], { input: '{"input":1}' });
    expect(append.code).toBe(2);
    expect(append.stderr).toMatch(/error:.*(EROFS|read-only)/i);
    expect(append.stderr).not.toMatch(/\n\s+at /);
    const verify = await runNode([CLI, 'verify', '--json', join(ro, 'journal'), '--head', head.step_hash]);
    expect(verify.code, verify.stderr).toBe(0);
    expect((JSON.parse(verify.stdout) as { ok: boolean }).ok).toBe(true);
    const log = await runNode([CLI, 'log', join(ro, 'journal')]);
    expect(log.code, log.stderr).toBe(0);
    const out = join(root, 'ro-export.tar.gz');
    const exp = await runNode([CLI, 'export', join(ro, 'journal'), '-o', out]);
    expect(exp.code, exp.stderr).toBe(0);
    expect(statSync(out).size).toBeGreaterThan(0);
  });
});

describe('the lock', () => {
  function holder(dir: string, mode: 'hold' | 'die') {
    const proc = spawn(process.execPath, [FIXTURES + 'lock-holder.mjs', dir, mode], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const locked = new Promise<void>((resolve, reject) => {
      proc.stdout.on('data', (c: Buffer) => (c.toString().includes('locked') ? resolve() : undefined));
      proc.on('exit', () => reject(new Error('lock holder exited before locking')));
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.on('exit', (_c, s) => resolve(s)));
    return { proc, locked, exited };
  }

  test('held by a live process past lockTimeoutMs: LOCK_TIMEOUT naming the lock file, nothing written', async () => {
    const store = new FileStore(root);
    const j: Journal = await store.create('locked-live');
    await j.append({ input: 'before' });
    await j.close();
    const h = holder(join(root, 'locked-live'), 'hold');
    try {
      await h.locked;
      const r = await appender(root, 'locked-live', 1, 10, { lockTimeoutMs: 1500, staleMs: 20_000 });
      expect(r.code).toBe(3);
      const err = errorOf(r)!;
      expect(err.code).toBe('LOCK_TIMEOUT');
      expect(err.message).toContain(join(root, 'locked-live', 'journal.lock'));
      // Order, not a stopwatch: the appender polled (its waiting mark is there) and gave up while the holder
      // still held the lock; it is not timed, so a loaded machine cannot make it flake.
      expect(existsSync(join(root, 'locked-live', 'journal.lock.waiting'))).toBe(true);
      expect(h.proc.exitCode).toBeNull();
      expect(h.proc.signalCode).toBeNull();
    } finally {
      h.proc.kill('SIGKILL');
      await h.exited;
    }
    expect(await expectIntact(root, 'locked-live', [])).toBe(0);
  });

  test('left by a SIGKILLed process: recovered once stale, and the appends go through', async () => {
    const store = new FileStore(root);
    await (await store.create('locked-dead')).close();
    const h = holder(join(root, 'locked-dead'), 'die');
    await h.locked.catch(() => {});
    expect(await h.exited).toBe('SIGKILL');
    expect(existsSync(join(root, 'locked-dead', 'journal.lock'))).toBe(true);
    const r = await appender(root, 'locked-dead', 3, 10, { staleMs: 2000, lockTimeoutMs: 15_000 });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(acks(r).length).toBe(3);
    await expectIntact(root, 'locked-dead', acks(r));
  });
});

describe('symbolic links planted in the journal directory', () => {
  // Regression (found by this battery): a co-tenant able to write in the journal directory replaced the
  // last bucket with a symlink to a file elsewhere, and the writer appended its lines to that file.
  test('a bucket file replaced by a symlink: the append fails with a coded error and writes nothing through it', async () => {
    const store = new FileStore(root, { fsync: 'none' });
    const j = await store.create('sym-bucket');
    for (let i = 0; i < 3; i++) await j.append({ input: i });
    await j.close();
    const buckets = join(root, 'sym-bucket', 'buckets');
    const name = readdirSync(buckets)[0]!;
    const outside = join(root, 'outside-target.jsonl');
    copyFileSync(join(buckets, name), outside);
    const before = readFileSync(outside);
    rmSync(join(buckets, name));
    symlinkSync(outside, join(buckets, name));
    const w = await store.open('sym-bucket');
    try {
      const err = await w.append({ input: 'redirected?' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('IO_ERROR');
      expect((err as StoreError).message).toContain('ELOOP');
    } finally {
      await w.close();
    }
    expect(readFileSync(outside).equals(before)).toBe(true);
  });

  test('a buckets or blobs directory replaced by a symlink: a writer refuses with JOURNAL_INVALID, readers still verify', async () => {
    for (const sub of ['buckets', 'blobs']) {
      const id = `sym-dir-${sub}`;
      const store = new FileStore(root, { fsync: 'none', blobThreshold: 1024 });
      const j = await store.create(id);
      await j.append({ input: 1, result: 'b'.repeat(3000) });
      await j.close();
      const elsewhere = join(root, `${id}-elsewhere`);
      renameSync(join(root, id, sub), elsewhere);
      symlinkSync(elsewhere, join(root, id, sub));
      const listing = () => readdirSync(elsewhere, { recursive: true }).map(String).sort();
      const before = listing();
      const err = await store.open(id).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreError);
      expect((err as StoreError).code).toBe('JOURNAL_INVALID');
      expect((err as StoreError).message).toContain('symbolic link');
      expect(listing()).toEqual(before);
      const r = await store.open(id, { readOnly: true });
      expect((await r.verify()).ok).toBe(true);
      await r.close();
    }
  });
});

describe('special files planted as buckets', () => {
  // Regression (found by this battery): a FIFO named as a bucket made every reader and writer of the
  // journal block forever in open(2) (the process could not even exit); /dev/zero behind a symbolic link made
  // verify spin forever; a directory made append throw a bare EISDIR instead of a coded error.
  test.each([
    ['a FIFO', (p: string) => execFileSync('mkfifo', [p])],
    ['a symlink to /dev/zero', (p: string) => symlinkSync('/dev/zero', p)],
    ['a directory', (p: string) => mkdirSync(p)],
  ] as const)(
    '%s: verify reports JOURNAL_INVALID, read and append fail with IO_ERROR, nothing hangs',
    async (what, plant) => {
      const id = `special-${what.replace(/\W+/g, '-')}`;
      const store = new FileStore(root, { fsync: 'none' });
      const j = await store.create(id);
      for (let i = 0; i < 3; i++) await j.append({ input: i });
      await j.close();
      // "Nothing hangs": the test's own timeout is the bound, not a stopwatch.
      plant(join(root, id, 'buckets', '0000000000000003.jsonl'));
      const r = await store.open(id, { readOnly: true });
      try {
        const report = await r.verify();
        expect(report.ok).toBe(false);
        expect(report.problems.map((p) => p.code)).toContain('JOURNAL_INVALID');
        expect(report.problems.map((p) => p.message).join()).toContain('ENOTREGULAR');
        const err = await (async () => {
          for await (const _ of r.read()) void _;
        })().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(StoreError);
        expect((err as StoreError).code).toBe('IO_ERROR');
      } finally {
        await r.close();
      }
      const w = await store.open(id).catch((e: unknown) => e);
      expect(w).toBeInstanceOf(StoreError);
      expect((w as StoreError).code).toBe('IO_ERROR');
      expect((w as StoreError).message).toContain('ENOTREGULAR');
    },
  );
});
