/**
 * The journal lock (spec/FILE-STORE.md §8; issue 15 item 1, issue 14 item 7): the holder record, breaking a
 * lock whose holder is provably dead at once, waiting for staleness otherwise, never robbing a live holder,
 * and two waiters breaking one dead lock. Real processes, real files. Where a test shows that a writer did
 * not wait for staleness, stale is set far above the test's own time limits, so a regression fails with
 * LOCK_TIMEOUT or a killed child rather than by a wall-clock comparison.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, StoreError } from '../../src/store/index.js';
import {
  acquireLock,
  holderVerdict,
  inspectLock,
  ownHolder,
  parseHolder,
  serializeHolder,
  type HolderRecord,
} from '../../src/store/file/lock.js';
import { processStart } from '../../src/store/file/process.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, FIXTURES as HARDENING_FIXTURES, runNode } from '../hardening/support.js';
import { FIXTURES } from './helpers.js';

const root = tempDir('stepchain-lock-');
let n = 0;
async function fresh(
  options: ConstructorParameters<typeof FileStore>[1] = {},
): Promise<{ store: FileStore; id: string; dir: string }> {
  const id = `j${n++}`;
  const store = new FileStore(root, { fsync: 'none', ...options });
  await (await store.create(id)).close();
  return { store, id, dir: join(root, id) };
}

/** A pid that is certainly dead: a child that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', '']);
  return r.pid!;
}

/** Plants a lock by hand: `journal.lock/holder-<n>.json` with `record` (text or object), mtime `ageMs` in the past. */
function plantLock(dir: string, record: HolderRecord | string, ageMs = 0): string {
  const lock = join(dir, 'journal.lock');
  mkdirSync(lock);
  const name = `holder-${'ab'.repeat(16)}.json`;
  writeFileSync(join(lock, name), typeof record === 'string' ? record : serializeHolder(record));
  const t = new Date(Date.now() - ageMs);
  utimesSync(lock, t, t);
  return name;
}

async function appendError(store: FileStore, id: string): Promise<StoreError | null> {
  const j = await store.open(id).catch((e: unknown) => e);
  if (j instanceof Error) return j as StoreError;
  try {
    await (j as Awaited<ReturnType<FileStore['open']>>).append({ input: 'x' });
    return null;
  } catch (e) {
    return e as StoreError;
  } finally {
    await (j as Awaited<ReturnType<FileStore['open']>>).close();
  }
}

/** hold-lock.mjs in "stdin" mode: holds the lock until its standard input ends, then says "kept" or "lost …". */
function holder(dir: string, staleMs: number) {
  const proc = spawn(process.execPath, [FIXTURES + 'hold-lock.mjs', dir, 'stdin', String(staleMs)], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const until = (s: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (out.includes(s)) (clearInterval(timer), resolve());
        else if (proc.exitCode !== null || proc.signalCode !== null)
          (clearInterval(timer), reject(new Error(`holder ended before "${s}": ${out} ${err}`)));
      }, 5);
    });
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  return { proc, until, exited, out: () => out };
}

describe('the holder record', () => {
  test('the lock holds exactly one record: this process, its host identity and start', async () => {
    const { dir } = await fresh();
    const lock = await acquireLock(dir, { timeoutMs: 1000, staleMs: 10_000 });
    try {
      const entries = readdirSync(join(dir, 'journal.lock'));
      expect(entries).toEqual([lock.recordName]);
      expect(lock.recordName).toMatch(/^holder-[0-9a-f]{32}\.json$/);
      const text = readFileSync(join(dir, 'journal.lock', lock.recordName), 'utf8');
      const record = parseHolder(text)!;
      expect(record).toEqual(ownHolder());
      expect(record.pid).toBe(process.pid);
      if (process.platform === 'linux') {
        expect(record.host).toMatch(/^linux:[0-9a-f-]{36}:pid:\[\d+\]$/);
        expect(record.start).toBe(processStart(process.pid));
      }
      expect(readdirSync(dir).filter((e) => e.startsWith('.journal.lock.'))).toEqual([]); // the staging directory became the lock
    } finally {
      await lock.release();
    }
    expect(existsSync(join(dir, 'journal.lock'))).toBe(false);
  });

  const good = serializeHolder({ host: 'linux:x:pid:[1]', hostname: 'h', pid: 42, start: '7' });
  test.each([
    ['the canonical form', good, true],
    ['no newline', good.trimEnd(), false],
    ['whitespace', good.replace(':', ': '), false],
    ['an extra member', good.replace('{', '{"extra":1,'), false],
    ['a missing member', good.replace(',"start":"7"', ''), false],
    ['pid 0 (a process group to kill(2))', good.replace('"pid":42', '"pid":0'), false],
    ['a negative pid', good.replace('"pid":42', '"pid":-1'), false],
    ['a fractional pid', good.replace('"pid":42', '"pid":4.5'), false],
    ['start a number', good.replace('"start":"7"', '"start":7'), false],
    ['not JSON', '{"host"', false],
  ] as const)('parseHolder: %s', (_what, text, ok) => {
    expect(parseHolder(text) !== null).toBe(ok);
  });

  test('holderVerdict: alive, dead (pid gone, or reused with another start), unknown (another host, no host)', () => {
    const me = ownHolder();
    if (me.host === null) {
      expect(holderVerdict(me)).toBe('unknown'); // no host identity: nobody can be proved dead here
      return;
    }
    expect(holderVerdict(me)).toBe('alive');
    expect(holderVerdict({ ...me, pid: deadPid() })).toBe('dead');
    expect(holderVerdict({ ...me, start: `${me.start}1` })).toBe('dead'); // this pid, another process's start
    expect(holderVerdict({ ...me, host: 'linux:00000000-0000-0000-0000-000000000000:pid:[1]', pid: deadPid() })).toBe(
      'unknown',
    );
    expect(holderVerdict({ ...me, host: null, pid: deadPid() })).toBe('unknown');
  });
});

describe('breaking a lock', () => {
  test('a lock whose holder is provably dead is broken at once (stale 60 s, contention timeout 3 s)', async () => {
    const { store, id, dir } = await fresh({ staleMs: 60_000, lockTimeoutMs: 3000 });
    plantLock(dir, { ...ownHolder(), pid: deadPid() });
    expect(await appendError(store, id)).toBeNull();
    expect(existsSync(join(dir, 'journal.lock'))).toBe(false);
  });

  test('a holder this host cannot judge (another host, an unreadable record) is waited for until the lock is stale', async () => {
    const other: HolderRecord = {
      host: 'linux:00000000-0000-0000-0000-000000000000:pid:[1]',
      hostname: 'elsewhere',
      pid: deadPid(),
      start: '1',
    };
    for (const record of [other, serializeHolder(other).replace('}', ',"x":1}')]) {
      const { store, id, dir } = await fresh({ staleMs: 2000, lockTimeoutMs: 300 });
      const name = plantLock(dir, record);
      const err = await appendError(store, id);
      expect(err?.code).toBe('LOCK_TIMEOUT');
      expect(err?.message).toMatch(
        typeof record === 'string'
          ? /holder record cannot be read/
          : /pid \d+ on elsewhere, whose liveness this host cannot check/,
      );
      expect(readdirSync(join(dir, 'journal.lock'))).toEqual([name]); // not robbed
      const old = new Date(Date.now() - 3_600_000);
      utimesSync(join(dir, 'journal.lock'), old, old); // now stale
      expect(await appendError(store, id)).toBeNull();
    }
  });

  test('a FIFO as the holder record is an unknown holder: read without blocking, freed by staleness only', async () => {
    const { store, id, dir } = await fresh({ staleMs: 2000, lockTimeoutMs: 300 });
    const name = plantLock(dir, 'placeholder');
    const record = join(dir, 'journal.lock', name);
    spawnSync('rm', [record]);
    expect(spawnSync('mkfifo', [record]).status).toBe(0);
    expect((await appendError(store, id))?.code).toBe('LOCK_TIMEOUT');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, 'journal.lock'), old, old);
    expect(await appendError(store, id)).toBeNull();
  });

  test('a lock directory holding anything but one record is never broken, even stale: LOCK_TIMEOUT says to remove it by hand', async () => {
    const { store, id, dir } = await fresh({ staleMs: 2000, lockTimeoutMs: 300 });
    mkdirSync(join(dir, 'journal.lock'));
    writeFileSync(join(dir, 'journal.lock', 'junk'), 'x');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, 'journal.lock'), old, old);
    const err = await appendError(store, id);
    expect(err?.code).toBe('LOCK_TIMEOUT');
    expect(err?.message).toContain('"junk", not a holder record');
    expect(err?.message).toContain(`remove ${join(dir, 'journal.lock')}`);
  });

  test('an empty lock directory (the mkdir protocol of earlier writers, or a release half done) is free', async () => {
    const { store, id, dir } = await fresh({ staleMs: 60_000, lockTimeoutMs: 300 });
    mkdirSync(join(dir, 'journal.lock'));
    expect(await appendError(store, id)).toBeNull();
  });

  test('staging directories of writers killed while waiting are swept by the next writer; a live one is kept', async () => {
    const { store, id, dir } = await fresh();
    const dead = join(dir, `.journal.lock.${'cd'.repeat(16)}`);
    const live = join(dir, `.journal.lock.${'ef'.repeat(16)}`);
    mkdirSync(dead);
    writeFileSync(join(dead, `holder-${'cd'.repeat(16)}.json`), serializeHolder({ ...ownHolder(), pid: deadPid() }));
    mkdirSync(live);
    writeFileSync(join(live, `holder-${'ef'.repeat(16)}.json`), serializeHolder(ownHolder()));
    await (await store.open(id)).close();
    expect(existsSync(dead)).toBe(ownHolder().host === null); // swept where death can be proved
    expect(existsSync(live)).toBe(true);
  });

  test('processes that die holding the lock while others wait: mutual exclusion holds, and the waiters go on at once', async () => {
    // Stale 60 s: were dead locks freed by staleness, the survivors would wait past their 60 s contention
    // timeout and the children's 50 s limit.
    const { dir } = await fresh();
    const runs = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        runNode([FIXTURES + 'lock-race.mjs', dir, '25', i < 4 ? String(3 + i * 5) : '-1', '60000'], {
          timeoutMs: 50_000,
        }),
      ),
    );
    for (const [i, r] of runs.entries()) {
      expect(r.stdout, r.stderr).not.toContain('violation');
      if (i < 4) expect(r.signal, `child ${i} should have died holding the lock`).toBe('SIGKILL');
      else expect(r.stdout.trim(), `child ${i}: ${r.stderr}`).toBe('done 25');
    }
  }, 120_000);
});

describe('a live holder on this host is never robbed, stale or not', () => {
  test('a SIGSTOPped holder keeps its lock: the waiter times out, and the holder finds it still its own', async () => {
    const { store, id, dir } = await fresh({ staleMs: 60_000, lockTimeoutMs: 1500 });
    const h = holder(dir, 60_000);
    try {
      await h.until('locked');
      const before = readdirSync(join(dir, 'journal.lock'));
      h.proc.kill('SIGSTOP');
      const err = await appendError(store, id);
      expect(err?.code).toBe('LOCK_TIMEOUT');
      expect(err?.message).toContain(`pid ${h.proc.pid}`);
      expect(err?.message).toContain('which is running');
      expect(readdirSync(join(dir, 'journal.lock'))).toEqual(before);
      h.proc.kill('SIGCONT');
      h.proc.stdin.end();
      await h.until('kept');
    } finally {
      h.proc.kill('SIGCONT');
      h.proc.stdin.end();
      await h.exited;
    }
    expect(await appendError(store, id)).toBeNull();
  });

  test('stopped past stale, it keeps its lock: a waiter on its host fails LOCK_TIMEOUT naming it and how long it has held it, and the holder resumes still holding it', async () => {
    // Issue 34: stale 2 s, the waiter's contention timeout 4 s. Before, the waiter broke the lock of the
    // stopped (alive) holder once stale and appended; now a provably live holder is never robbed.
    const { store, id, dir } = await fresh({ staleMs: 2000, lockTimeoutMs: 4000 });
    const h = holder(dir, 2000);
    try {
      await h.until('locked');
      const before = readdirSync(join(dir, 'journal.lock'));
      h.proc.kill('SIGSTOP');
      const err = await appendError(store, id);
      expect(err?.code).toBe('LOCK_TIMEOUT');
      expect(err?.message).toContain(`pid ${h.proc.pid}`);
      expect(err?.message).toMatch(
        /which is running \(held for \d+\.\d s, last refreshed \d+\.\d s ago; it may be stopped or hung/,
      );
      expect(err?.hint).toContain(`stop pid ${h.proc.pid} if it is hung`);
      expect(readdirSync(join(dir, 'journal.lock'))).toEqual(before);
      h.proc.kill('SIGCONT');
      h.proc.stdin.end();
      await h.until('kept');
    } finally {
      h.proc.kill('SIGCONT');
      h.proc.stdin.end();
      await h.exited;
    }
    expect(await appendError(store, id)).toBeNull();
  });
});

describe('a writer SIGKILLed in the middle of `append --jsonl`', () => {
  test('the next append on this host takes the lock over at once (stale 60 s, its own time limit 20 s)', async () => {
    const { store, id, dir } = await fresh();
    const input = join(root, `${id}-steps.jsonl`);
    writeFileSync(input, Array.from({ length: 100_000 }, (_, i) => `{"input":{"i":${i}},"result":"ok"}\n`).join(''));
    const child = spawn(process.execPath, [CLI, 'append', dir, '--jsonl', '--file', input], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_c, s) => resolve(s)));
    // Kill it once it has held the lock for a while: the commit of the batch, not the short hold of its open.
    let seen = '';
    let since = 0;
    for (;;) {
      await new Promise((r) => setTimeout(r, 5));
      const state = await inspectLock(dir).catch(() => null);
      const name = state !== null && state.holder?.pid === child.pid ? state.recordName! : '';
      if (name !== '' && name === seen && Date.now() - since > 30) break;
      if (name !== seen) [seen, since] = [name, Date.now()];
      if (child.exitCode !== null) throw new Error('the append ended before it could be killed holding the lock');
    }
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(readdirSync(join(dir, 'journal.lock'))).toEqual([seen]); // the dead writer's lock is still there

    // verify says what is true of that lock, and never that a writer holds it
    const report = await store.verify(id);
    expect(report.ok, JSON.stringify(report.problems)).toBe(true);
    for (const w of report.warnings.filter((x) => x.code === 'HEAD_CACHE_STALE')) {
      expect(w.message).toContain('no longer running');
      expect(w.message).not.toMatch(/holds the lock now/);
    }

    const r = await runNode(
      [
        HARDENING_FIXTURES + 'appender.mjs',
        root,
        id,
        '3',
        '10',
        JSON.stringify({ staleMs: 60_000, lockTimeoutMs: 120_000 }),
      ],
      { timeoutMs: 20_000 },
    );
    expect(r.signal, `the next append waited: ${r.stdout}${r.stderr}`).toBeNull();
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('done 3');
    const after = await store.verify(id);
    expect(after.problems).toEqual([]);
    expect(after.ok).toBe(true);
  }, 60_000);
});

describe('what verify says about the lock', () => {
  test('a live holder: held by that pid, which rewrites head.json when it lets go', async () => {
    const { store, id, dir } = await fresh();
    const j = await store.open(id);
    await j.append({ input: 1 });
    await j.append({ input: 2 });
    await j.close();
    writeFileSync(join(dir, 'head.json'), readFileSync(join(dir, 'head.json'), 'utf8').replace('"seq":1', '"seq":0')); // stale
    const h = holder(dir, 10_000);
    try {
      await h.until('locked');
      const w = (await store.verify(id)).warnings.find((x) => x.code === 'HEAD_CACHE_STALE')!;
      expect(w.message).toContain(`held by pid ${h.proc.pid}`);
      expect(w.message).toContain('which is running');
    } finally {
      h.proc.stdin.end();
      await h.exited;
    }
  });
});
