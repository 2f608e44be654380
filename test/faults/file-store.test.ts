/**
 * The fault battery of the file store (issue 34; spec/FILE-STORE.md §8, §9). Real processes, real files,
 * faults placed exactly where they hurt: writers starved of CPU (busy processes beside niced writers, stale
 * at its 2 s minimum), a lock holder stopped (SIGSTOP) or its event loop blocked past stale inside its commit
 * and then resumed, a holder SIGKILLed in the middle of writing its lines or after writing them, a holder
 * whose liveness a waiter cannot check robbed after staleness, and two and eight processes ending the same
 * effects. After each: every acknowledged append present exactly once, every effect with one outcome, the
 * chain verifying, and no process told it succeeded when it did not. The faults inside a commit come from
 * the writer's fault points (STEPCHAIN_TEST_FAULT, src/store/file/faults.ts). No wall-clock assertion: the
 * waits only give a waiter the chance to do wrong.
 */
import { readFileSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/index.js';
import { parseHolder, serializeHolder } from '../../src/store/file/lock.js';
import { tempDir } from '../helpers/tmp.js';
import { acksOf, drive, expectAcknowledgedOnce, failsOf, processState, sleep, until, type Driven } from './helpers.js';
import { endingTogether, starvedWriters } from './scenarios.js';

const root = tempDir('stepchain-faults-');
const store = new FileStore(root, { fsync: 'none' });

const STALE = { staleMs: 2000, lockTimeoutMs: 120_000 };

/** The file whose creation lets a writer blocked at its fault point go on. */
const release = join(root, 'release');

function writer(
  id: string,
  name: string,
  count: number,
  fault?: string,
  options: Record<string, unknown> = STALE,
): Driven {
  return drive(
    'writer.mjs',
    ['file', root, id, name, String(count), JSON.stringify(options)],
    fault === undefined ? {} : { STEPCHAIN_TEST_FAULT: fault, STEPCHAIN_TEST_FAULT_RELEASE: release },
  );
}

/** Resolves once the child has announced its fault and (for a stop) is stopped. */
async function atFault(c: Driven, stopped: boolean): Promise<void> {
  await until(() => c.stderr().includes('stepchain-fault '));
  if (stopped) await until(() => processState(c.proc.pid!) === 'T');
}

describe('the file store under faults (issue 34)', () => {
  test('starved: 3 niced writers × 15 appends beside busy processes, stale 2 s — all acknowledged, each once', async () => {
    await starvedWriters('file', root, store, 'starved', 3, 15, STALE);
  }, 120_000);

  test.each([
    [2, 12],
    [8, 4],
  ])(
    '%i processes ending the same %i effects, starved: one outcome each, the others refused',
    async (procs, effects) => {
      await endingTogether('file', root, store, `ending-${procs}`, procs, effects);
    },
    120_000,
  );

  // The two run at once (their own journals; only the blocked one waits for the release file): each spends
  // its time waiting past stale, which needs no CPU.
  test.concurrent.for<[string, string, boolean]>([
    ['stopped (SIGSTOP) past stale, then resumed', 'after-confirm:stop@3', true],
    ['its event loop blocked past stale, then let go', 'after-confirm:block@3', false],
  ])(
    'a holder %s inside its commit keeps its lock and completes its append; the waiter waits',
    { timeout: 60_000 },
    async ([_what, fault, stopped], { expect }) => {
      const id = `held-${stopped ? 'stop' : 'block'}`;
      await (await store.create(id)).close();
      const a = writer(id, 'a', 5, fault);
      await atFault(a, stopped);
      const b = writer(id, 'b', 3);
      await b.waitFor((l) => l.startsWith('pid '));
      await sleep(3000); // past stale: the waiter inspects the lock of a holder that has not refreshed it
      expect(acksOf(b).size).toBe(0); // it waited: the holder is alive on this host
      if (stopped) a.proc.kill('SIGCONT');
      else writeFileSync(release, '');
      await Promise.all([a.exited, b.exited]);
      expect(failsOf(a)).toEqual([]); // no LOCK_COMPROMISED: it was never robbed
      expect(failsOf(b)).toEqual([]);
      const acks = new Map([...acksOf(a), ...acksOf(b)]);
      expect(acks.size).toBe(8);
      expect(await expectAcknowledgedOnce(store, id, acks)).toHaveLength(8);
    },
  );

  test.each([
    ['in the middle of writing its lines (a torn line)', 'mid-write:kill@3'],
    ['after writing its line, before acknowledging it', 'after-write:kill@3'],
  ])(
    'a holder SIGKILLed %s: the next writer takes over at once, nothing acknowledged is lost',
    async (what, fault) => {
      const id = `killed-${fault.split(':')[0]}`;
      await (await store.create(id)).close();
      const a = writer(id, 'a', 5, fault);
      expect((await a.exited).signal).toBe('SIGKILL');
      expect([...acksOf(a).keys()]).toEqual(['a-0', 'a-1']);
      // stale 60 s: a writer waiting for staleness would outlast this test
      const b = writer(id, 'b', 3, undefined, { staleMs: 60_000, lockTimeoutMs: 120_000 });
      expect((await b.exited).code, b.stderr()).toBe(0);
      const acks = new Map([...acksOf(a), ...acksOf(b)]);
      expect(acks.size).toBe(5);
      const ids = await expectAcknowledgedOnce(store, id, acks);
      // The line cut short was never acknowledged, and is quarantined; the one written whole is in the chain.
      expect(ids).toEqual(
        what.startsWith('in the middle')
          ? ['a-0', 'a-1', 'b-0', 'b-1', 'b-2']
          : ['a-0', 'a-1', 'a-2', 'b-0', 'b-1', 'b-2'],
      );
      const quarantined = readdirSync(join(root, id, 'buckets')).filter((n) => n.includes('.quarantine-'));
      expect(quarantined).toHaveLength(what.startsWith('in the middle') ? 1 : 0);
    },
    60_000,
  );

  test('a holder whose liveness cannot be checked, robbed after staleness, never writes on its stale view: LOCK_COMPROMISED, nothing written, its retry lands', async () => {
    const id = 'robbed';
    await (await store.create(id)).close();
    const a = writer(id, 'a', 3, 'after-confirm:stop@2');
    await atFault(a, true);
    // As a waiter on another host sees it: the holder record names a host this one cannot check, and the
    // lock has not been refreshed for longer than stale.
    const lock = join(root, id, 'journal.lock');
    const [name] = readdirSync(lock);
    const record = parseHolder(readFileSync(join(lock, name!), 'utf8'))!;
    writeFileSync(
      join(lock, name!),
      serializeHolder({ ...record, host: 'linux:00000000-0000-0000-0000-000000000000:pid:[1]', hostname: 'elsewhere' }),
    );
    const old = new Date(Date.now() - 10_000);
    utimesSync(lock, old, old);
    const other = await new FileStore(root, { fsync: 'none', ...STALE }).open(id);
    const theirs = await other.append({ step_id: 'elsewhere-0', input: 'broke the stale lock' });
    await other.close();
    a.proc.kill('SIGCONT');
    expect((await a.exited).code, a.stderr()).toBe(0);
    // Its second append had been sequenced at seq 1 before the other writer's landed there: refused, not written.
    expect(failsOf(a)).toEqual(['a-1 LOCK_COMPROMISED']);
    const acks = new Map([...acksOf(a), ['elsewhere-0', theirs.seq]]);
    expect(acks.size).toBe(4);
    expect(await expectAcknowledgedOnce(store, id, acks)).toEqual(['a-0', 'elsewhere-0', 'a-1', 'a-2']);
  }, 60_000);
});
