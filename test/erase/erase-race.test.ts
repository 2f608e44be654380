/**
 * Two erases of nested units racing, as real processes (dist/), on every store (spec/ERASURE.md §4, §6.3):
 * `/result/customer/email` and `/result/customer`, each having checked the record before the other wrote
 * (both held at a test gate after their check, STEPCHAIN_TEST_ERASE_GATE), then let go one after the other
 * in both orders, and together. After every race the journal verifies, exactly one erase happened, and the
 * other was refused with ERASURE_TARGET_INVALID having written nothing — no erasure record left naming a
 * unit that exists nowhere (the old writer appended both records and left the member's naming a unit its
 * holder's erasure had removed: ERASURE_MISMATCH). The journals are built and verified in-process; only the
 * racing erases are processes of their own. And a resume removes a temporary bucket file only under the
 * journal lock: the old one removed a live erase's from under it (found by scripts/soak-erase-race.mjs).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { FileStore } from '../../src/store/file/store.js';
import { acquireLock, WAITING_NAME } from '../../src/store/file/lock.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { eraseValue, resumeErasures, type StuckErasure } from '../../src/erase.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const root = tempDir('stepchain-erase-race-');
const pg = await postgresHarness('eraserace', 2);
const pgPassword = decodeURIComponent(new URL(pg.url).password);

const CUSTOMER = { email: 'ivan.race@example.org', plan: 'pro' };
const INNER = '/result/customer/email';
const OUTER = '/result/customer';

type Store = FileStore | SqliteStore | PostgresStore;

interface Racer {
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  exited: boolean;
  gate: string;
}

/** An erase started now, held at its gate after its check until the test opens the gate. */
function racer(args: string[], gate: string): Racer {
  const r: Racer = { gate, exited: false, done: null as never };
  r.done = new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'erase', ...args, '--reason', 'GDPR Art. 17', '--json'],
      { cwd: root, env: { ...process.env, NO_COLOR: '1', PGPASSWORD: pgPassword, STEPCHAIN_TEST_ERASE_GATE: gate } },
      (error, stdout, stderr) => {
        r.exited = true;
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
  return r;
}

/** Waits until the racer has checked the record and stopped at its gate (or has exited: the test then sees why). */
async function atGate(r: Racer): Promise<void> {
  while (!existsSync(`${r.gate}.ready`) && !r.exited) await delay(10);
}

interface Backend {
  name: string;
  store(): Store;
  /** The CLI's location of journal `id` of `store`, and of the store itself. */
  location(store: Store, id: string): string;
  storeLocation(store: Store): string;
}

const pgLocation = (store: Store, id?: string): string => {
  const u = new URL(pg.url);
  u.password = '';
  u.searchParams.set('schema', (store as PostgresStore).tables.schema);
  if (id !== undefined) u.searchParams.set('journal', id);
  return u.toString();
};
const backends: Backend[] = [
  {
    name: 'file',
    store: () => new FileStore(mkdtempSync(join(root, 'f-'))),
    location: (s, id) => join((s as FileStore).root, id),
    storeLocation: (s) => (s as FileStore).root,
  },
  {
    name: 'sqlite',
    store: () => new SqliteStore(join(mkdtempSync(join(root, 's-')), 'store.db')),
    location: (s, id) => `sqlite:${(s as SqliteStore).file}?journal=${id}`,
    storeLocation: (s) => `sqlite:${(s as SqliteStore).file}`,
  },
  { name: 'postgres', store: () => pg.store(), location: pgLocation, storeLocation: (s) => pgLocation(s) },
];

type Order = 'inner first' | 'outer first' | 'together';

/**
 * One race on a fresh journal: the member's erase by --seq/--path, the object's by --seq/--path or, with
 * `acrossStore`, by --match-path on the store (the store-wide erase). Returns the two processes' outcomes.
 */
async function race(b: Backend, store: Store, id: string, order: Order, acrossStore: boolean) {
  const j = await store.create(id, { format: 'stepchain/v3' } as never);
  await j.append({ input: { q: 'who' }, result: { customer: CUSTOMER } } as never);
  await j.close();
  const at = b.location(store, id);
  const gates = mkdtempSync(join(root, 'g-'));
  const inner = racer([at, '--seq', '0', '--path', INNER], join(gates, 'inner'));
  const outer = racer(
    acrossStore
      ? [b.storeLocation(store), '--match-path', OUTER, '--value', JSON.stringify(CUSTOMER)]
      : [at, '--seq', '0', '--path', OUTER],
    join(gates, 'outer'),
  );
  await Promise.all([atGate(inner), atGate(outer)]);
  const open = (r: Racer): void => writeFileSync(r.gate, '');
  if (order === 'together') {
    open(inner);
    open(outer);
  } else {
    const [first, second] = order === 'inner first' ? [inner, outer] : [outer, inner];
    open(first);
    await first.done;
    open(second);
  }
  return { inner: await inner.done, outer: await outer.done };
}

describe.each(backends)(
  'two erases of nested units racing, on the $name store (real processes)',
  { timeout: 240_000 },
  (b) => {
    const store = b.store();
    const cases: Array<[Order, boolean]> = [
      ['inner first', false],
      ['outer first', false],
      ['together', b.name === 'file'],
    ];
    it.each(cases)(
      '%s (across the store: %s): one erase happens, the other is refused, the journal verifies',
      async (order, across) => {
        const id = `r-${order.replace(' ', '-')}`;
        const { inner, outer } = await race(b, store, id, order, across);
        const report = await store.verify(id);
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        // Nothing pending: neither erasure record names a unit it cannot erase.
        expect(report.warnings.map((w) => w.code)).not.toContain('ERASURE_PENDING');
        const stuck: StuckErasure[] = [];
        expect(await resumeErasures(store, id, stuck)).toEqual([]);
        expect(stuck).toEqual([]);
        const erased = report.warnings.filter((w) => w.code === 'VALUE_ERASED').map((w) => w.location.path);
        expect(erased).toHaveLength(1);
        // Exactly one erasure record: the refused erase wrote nothing.
        expect(report.head_seq).toBe(1);
        const [won, lost] = erased[0] === INNER ? [inner, outer] : [outer, inner];
        if (order !== 'together') expect(erased[0]).toBe(order === 'inner first' ? INNER : OUTER);
        expect(won.code).toBe(0);
        expect(lost.code).not.toBe(0);
        expect(lost.stdout + lost.stderr).toContain('ERASURE_TARGET_INVALID');
      },
    );
  },
);

describe('resume and a live rewrite of the file store', () => {
  it('removes a temporary bucket file only under the journal lock, never from under the erase writing it', async () => {
    const store = new FileStore(mkdtempSync(join(root, 't-')));
    const j = await store.create('t', { format: 'stepchain/v3' } as never);
    await j.append({ input: { q: 'who' }, result: { customer: CUSTOMER } } as never);
    await j.close();
    const dir = join(store.root, 't');
    // An erase in step 6: it holds the lock and has written its temporary bucket, not yet renamed it.
    const lock = await acquireLock(dir, { timeoutMs: 60_000, staleMs: 60_000 });
    const temp = join(dir, 'buckets', '.0000000000000000.jsonl.tmp-4242-live');
    writeFileSync(temp, 'sealed bytes being written\n');
    let finished = false;
    const resumed = resumeErasures(store, 't').finally(() => (finished = true));
    // The resume waits for the lock (its waiting mark appears) and has left the file alone meanwhile.
    while (!existsSync(join(dir, WAITING_NAME)) && !finished) await delay(5);
    expect(existsSync(temp)).toBe(true);
    await lock.release();
    expect(await resumed).toEqual([]);
    // Once it holds the lock, nobody is writing the file: it is a crash's leftover, removed.
    expect(existsSync(temp)).toBe(false);
  });
});

describe('a recorded erasure that cannot be carried out, nested with a new one', () => {
  it('one that lies about its unit blocks nothing; verify names it once the record is sealed', async () => {
    const store = new FileStore(mkdtempSync(join(root, 'l-')));
    const j = await store.create('l', { format: 'stepchain/v3' } as never);
    await j.append({ input: { q: 'who' }, result: { customer: CUSTOMER } } as never);
    // Appended by hand: an erasure of the member with a digest that is not the member's.
    const digest = `sha256:${'ab'.repeat(32)}`;
    await j.append({
      [ERASURE_WRITER]: true,
      step_id: `erasure:0:${'ab'.repeat(16)}`,
      kind: 'erasure',
      input: { target: 0, path: INNER, digest, reason: 'forged', by: null },
    } as never);
    await j.close();
    const stuck: StuckErasure[] = [];
    await resumeErasures(store, 'l', stuck);
    expect(stuck.map((s) => s.code)).toEqual(['ERASURE_MISMATCH']);
    const done = await eraseValue(store, 'l', { seq: 0, path: OUTER, reason: 'GDPR Art. 17' });
    expect(done.erasure.seq).toBe(2);
    const report = await store.verify('l');
    expect(report.problems.map((p) => [p.code, p.location.seq])).toEqual([['ERASURE_MISMATCH', 1]]);
  });
});
