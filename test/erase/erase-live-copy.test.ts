/**
 * A fork, an export or a publication that meets an erase between its erasure record and its rewrite (spec/ERASURE.md §4).
 * A live erase carries out what it recorded milliseconds later, so the copy waits a moment and then copies
 * the journal as erased; only an erasure still pending after that wait — an interrupted erase — is refused
 * ERASURE_PENDING. Found in CI: `fork` racing `erase` as processes was refused with advice to resume an
 * erase that was not interrupted at all. The pending erasure is made by a real erase SIGKILLed after its
 * record (dist/); the "live" erase that finishes it is `resumeErasures`, started just after the copy.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import type { Journal, SeqRange } from '../../src/store/index.js';
import { eraseMatching, eraseValue, resumeErasures } from '../../src/erase.js';
import { exportReceipt } from '../../src/index.js';
import { publish } from '../../src/publish.js';
import { tempDir } from '../helpers/tmp.js';
import { afterReads } from '../helpers/racing-reads.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EMAIL = 'lena.live@example.org';

/** A v3 journal of three steps, seq 1's /result/email holding EMAIL; left open. */
async function threeSteps(): Promise<{ store: FileStore; id: string; journal: Journal }> {
  const store = new FileStore(tempDir('stepchain-erase-live-'));
  const id = 'live';
  const journal = await store.create(id, { format: 'stepchain/v3' } as never);
  for (const i of [0, 1, 2])
    await journal.append({ step_id: `s${i}`, result: { email: i === 1 ? EMAIL : `r${i}@x.org` } });
  return { store, id, journal };
}

/** A v3 journal of three steps whose erasure of seq 1's /result/email (seq 3) is recorded, not carried out. */
async function pendingErasure(): Promise<{ store: FileStore; id: string }> {
  const { store, id, journal } = await threeSteps();
  await journal.close();
  await interruptedErase(store, id);
  return { store, id };
}

/** The whole erase of seq 1's /result/email, recorded and carried out. */
const liveErase = (store: FileStore, id: string) =>
  eraseValue(store, id, { seq: 1, path: '/result/email', reason: 'GDPR Art. 17' });

/** A real erase of seq 1's /result/email, SIGKILLed once it has appended its erasure record. */
async function interruptedErase(store: FileStore, id: string): Promise<void> {
  const killed = await new Promise<{ signal: string | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [CLI, 'erase', join(store.root, id), '--seq', '1', '--path', '/result/email', '--reason', 'GDPR Art. 17'],
      { env: { ...process.env, NO_COLOR: '1', STEPCHAIN_TEST_ERASE_FAULT: 'after-record' } },
      (error, _stdout, stderr) => resolve({ signal: error?.signal ?? null, stderr }),
    );
  });
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  expect(killed.stderr).toContain('stepchain-erase-fault after-record');
}

const codeOf = (e: unknown): unknown => (e as { code?: unknown }).code;

/** `journal`, whose first read of its head runs `after` (awaited) before answering. */
function afterFirstHead<J extends Journal>(journal: J, after: () => Promise<void>): J {
  let first = true;
  return new Proxy(journal, {
    get(target, name, receiver) {
      if (name !== 'head') return Reflect.get(target, name, receiver) as unknown;
      return async () => {
        const head = await target.head();
        if (first) {
          first = false;
          await after();
        }
        return head;
      };
    },
  });
}

/** The fork `fork` of `store` verifies, and none of its lines holds the e-mail address in clear. */
async function expectSealedFork(store: FileStore): Promise<void> {
  expect((await store.verify('fork')).ok).toBe(true);
  const buckets = join(store.root, 'fork', 'buckets');
  for (const name of readdirSync(buckets)) expect(readFileSync(join(buckets, name), 'utf8')).not.toContain(EMAIL);
}

describe('a copy that meets an erase between its record and its rewrite', () => {
  it('a fork waits for the erase and copies the value sealed', async () => {
    const { store, id } = await pendingErasure();
    const parent = await store.open(id);
    try {
      const [fork] = await Promise.all([
        store.fork(parent, { fromStep: 3, to: 'fork' }),
        delay(5).then(() => resumeErasures(store, id)),
      ]);
      expect((await fork.head())?.seq).toBe(3);
      await fork.close();
      await expectSealedFork(store);
    } finally {
      await parent.close();
    }
  });

  it('a fork whose erase completes between its copy and its check copies again, never keeping the value', async () => {
    // Found under load: the check re-read the parent, saw the erasure carried out, and let a copy stand that
    // held the value in clear. Here the erase completes exactly then: when the copy has read its last line.
    const { store, id } = await pendingErasure();
    const parent = await store.open(id);
    let copies = 0;
    const racing = afterReads(parent, async (range) => {
      if (range.to === 3 && copies++ === 0) await resumeErasures(store, id);
    });
    try {
      const fork = await store.fork(racing, { fromStep: 3, to: 'fork' });
      await fork.close();
      expect(copies).toBe(2);
      await expectSealedFork(store);
    } finally {
      await parent.close();
    }
  });

  it('an export waits for the erase and holds the value sealed', async () => {
    const { store, id } = await pendingErasure();
    const parent = await store.open(id);
    const out = join(store.root, 'r.tar.gz');
    try {
      await Promise.all([exportReceipt(parent, { out }), delay(5).then(() => resumeErasures(store, id))]);
    } finally {
      await parent.close();
    }
    expect(gunzipSync(readFileSync(out)).includes(Buffer.from(EMAIL))).toBe(false);
  });

  it('a publication waits for the erase and shows the value sealed', async () => {
    const { store, id } = await pendingErasure();
    const parent = await store.open(id);
    const out = join(store.root, 'p.tar');
    try {
      await Promise.all([
        publish(parent, { policy: { rules: [{ id: 'models', paths: ['/model'] }] }, optIn: true, out }),
        delay(5).then(() => resumeErasures(store, id)),
      ]);
    } finally {
      await parent.close();
    }
    expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
  });

  it('a publication judges pending erasures on the lines it read, and reads on past its head for them', async () => {
    // The publisher checked the journal, then read it again to publish: an erase recorded in between gave a
    // publication of the erasure record beside the value in clear. Then (outsider 11, #3) it read for erasure
    // records only up to the head it read at the start: an erase recorded past it, once the lines were read,
    // left the value in clear in a publication that exited 0. Here the erasure is recorded then, and carried
    // out once the publisher has read past its head: it publishes again, from the new head, the value sealed.
    const { store, id, journal } = await threeSteps();
    const reads: SeqRange[] = [];
    const racing = afterReads(journal, async (range) => {
      reads.push(range);
      if (reads.length === 1) await interruptedErase(store, id);
      if (reads.length === 2) await resumeErasures(store, id);
    });
    const out = join(store.root, 'p.tar');
    try {
      const published = await publish(racing, {
        policy: { rules: [{ id: 'models', paths: ['/model'] }] },
        optIn: true,
        out,
      });
      expect(published.original_head.seq).toBe(3);
    } finally {
      await journal.close();
    }
    expect(reads.slice(0, 2)).toEqual([{ from: 0, to: 2 }, { from: 3 }]);
    expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
  });

  it('a fork whose copy an erase records into past the head refuses to split it, never keeping the value', async () => {
    // Outsider 11, #3: the fork read erasure records only up to the head it read at the start; an erase that
    // recorded past it after the copy had read the target in clear (and rewrote the target then) gave a fork
    // from step 2 holding the value, exit 0. Read to the end, the record is seen; copied again, the prefix
    // holds the sealed target without its erasure record (ERASURE.md §6.5).
    const { store, id, journal } = await threeSteps();
    let reads = 0;
    const racing = afterReads(journal, async () => {
      reads++;
      if (reads === 1) await interruptedErase(store, id);
      if (reads === 2) await resumeErasures(store, id);
    });
    try {
      const refused = await store.fork(racing, { fromStep: 2, to: 'fork' }).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe('RANGE_SPLITS_ERASURE');
    } finally {
      await journal.close();
    }
    expect((await store.list()).sort()).toEqual([id]);
  });

  it('an export whose read an erase records into past the head waits for it and holds the value sealed', async () => {
    // The same race for a whole export: its check for pending erasures read only to the head it started from,
    // and its second pass read the target as the first did (the erase not yet carried out): the value in clear.
    const { store, id, journal } = await threeSteps();
    let reads = 0;
    const racing = afterReads(journal, async () => {
      reads++;
      if (reads === 1) await interruptedErase(store, id);
      if (reads === 2) await resumeErasures(store, id);
    });
    const out = join(store.root, 'r.tar');
    try {
      const exported = await exportReceipt(racing, { out });
      expect(exported.head.seq).toBe(3);
    } finally {
      await journal.close();
    }
    expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
  });

  it('a whole export or publication that reads a line erased past its head reads again to the new head', async () => {
    // Outsider 11, #1 and #2: an erase recorded and carried out between the head read and the line's read left
    // the range with an erased marker whose record lies past its end: a valid journal called invalid
    // (SOURCE_INVALID, CHAIN_INVALID ERASURE_UNRECORDED). The head moved: they read again, to the new one.
    const { store, id, journal } = await threeSteps();
    const erasing = afterFirstHead(journal, async () => void (await liveErase(store, id)));
    try {
      const out = join(store.root, 'r.tar');
      expect((await exportReceipt(erasing, { out })).head.seq).toBe(3);
      expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
    } finally {
      await journal.close();
    }
    const second = await threeSteps();
    const publishing = afterFirstHead(second.journal, async () => void (await liveErase(second.store, second.id)));
    try {
      const out = join(second.store.root, 'p.tar');
      const published = await publish(publishing, {
        policy: { rules: [{ id: 'models', paths: ['/model'] }] },
        optIn: true,
        out,
      });
      expect(published.original_head.seq).toBe(3);
      expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
    } finally {
      await second.journal.close();
    }
  });

  it('an export of a range that ends at the head it read, erased past it meanwhile, refuses to split the erasure', async () => {
    // Outsider 11, #2 with --to: the range asked for ends before the erasure record, so it splits the erasure
    // (ERASURE.md §6.5), which the exporter sees by reading on past it; it was CHAIN_INVALID on a valid journal.
    const { store, id, journal } = await threeSteps();
    const erasing = afterFirstHead(journal, async () => void (await liveErase(store, id)));
    try {
      const refused = await exportReceipt(erasing, { out: join(store.root, 'r.tar'), to: 2 }).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe('RANGE_SPLITS_ERASURE');
    } finally {
      await journal.close();
    }
  });

  it('a fork, an export or a publication an erase commits into after its check looks again before it is put in place', async () => {
    // Outsider 12, 1 and 3: the last read for erasure records came before the output was made durable and put in
    // place; an erase that committed in between (slowed fsyncs or rename) found, once done, a new fork or file
    // holding the value, exit 0. Here the erase runs to completion right after that read: each looks again just
    // before its rename, under the journal's lock (so no erase can commit between the two), does not put the
    // output in place, and makes it again from the journal as erased. (Outsider 13: withdrawing it after the
    // rename instead deleted what others had written there meanwhile.)
    const cases: [string, number, (j: Journal, root: string) => Promise<unknown>][] = [
      ['fork', 2, async (j) => store0!.fork(j, { fromStep: 2, to: 'fork' })],
      ['export', 4, async (j, root) => exportReceipt(j, { out: join(root, 'r.tar') })],
      [
        'publish',
        2,
        async (j, root) =>
          publish(j, {
            policy: { rules: [{ id: 'models', paths: ['/model'] }] },
            optIn: true,
            out: join(root, 'r.tar'),
          }),
      ],
    ];
    let store0: FileStore | null = null;
    for (const [what, lastCheck, copy] of cases) {
      const { store, id, journal } = await threeSteps();
      store0 = store;
      let reads = 0;
      const racing = afterReads(journal, async () => {
        if (++reads === lastCheck) await liveErase(store, id);
      });
      const outcome = await copy(racing, store.root).then(
        () => 'made',
        (e: unknown) => codeOf(e),
      );
      await journal.close();
      if (what === 'fork') {
        // Made again after the erasure, a fork from step 2 would end between seq 1 and its erasure record (§6.5).
        expect(outcome, what).toBe('RANGE_SPLITS_ERASURE');
        expect((await store.list()).sort(), what).toEqual([id]);
      } else {
        expect(outcome, what).toBe('made');
        const bytes = readFileSync(join(store.root, 'r.tar'));
        expect(bytes.includes(Buffer.from(EMAIL)), what).toBe(false);
        expect(bytes.includes(Buffer.from('"kind":"erasure"')), what).toBe(true);
      }
    }
  });

  it('an export refused by an erase that commits while it writes leaves the file at its path as it was', async () => {
    // Outsider 13, F2: the withdrawal after the rename deleted the output path, so a refused export destroyed the
    // receipt the user already had there.
    const { store, id, journal } = await threeSteps();
    const out = join(store.root, 'r.tar');
    writeFileSync(out, 'the receipt that was here');
    let reads = 0;
    const racing = afterReads(journal, async () => {
      if (++reads === 4) await liveErase(store, id);
    });
    try {
      const refused = await exportReceipt(racing, { out, to: 2 }).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe('RANGE_SPLITS_ERASURE');
    } finally {
      await journal.close();
    }
    expect(readFileSync(out, 'utf8')).toBe('the receipt that was here');
  });

  it('an export whose two passes an erase falls between reads again instead of refusing SOURCE_CHANGED', async () => {
    // Outsider 12, 6: a whole export racing a live erase failed "grew between the export's passes" 4 runs in 5.
    // Here the erase completes between the first pass's check past the head and the second pass.
    const { store, id, journal } = await threeSteps();
    let reads = 0;
    const racing = afterReads(journal, async () => {
      if (++reads === 2) await liveErase(store, id);
    });
    const out = join(store.root, 'r.tar');
    try {
      expect((await exportReceipt(racing, { out })).head.seq).toBe(3);
    } finally {
      await journal.close();
    }
    expect(readFileSync(out).includes(Buffer.from(EMAIL))).toBe(false);
  });

  it('an erase across a store searches the journals that appeared while it ran (a fork made meanwhile)', async () => {
    // Outsider 12, 2: a fork being made when `erase --match-path` listed the store was not searched, and
    // appeared afterwards holding the value; the erase had reported the store done.
    class ForkDuringListing extends FileStore {
      private listings = 0;
      override async list(): Promise<string[]> {
        const ids = await super.list();
        if (this.listings++ === 0) {
          const parent = await this.open('live');
          await (await this.fork(parent, { fromStep: 2, to: 'made-meanwhile' })).close();
          await parent.close();
        }
        return ids;
      }
    }
    const { store, id, journal } = await threeSteps();
    await journal.close();
    const racing = new ForkDuringListing(store.root);
    const report = await eraseMatching(racing, {
      matchPath: '/result/email',
      value: EMAIL,
      reason: 'GDPR Art. 17',
    });
    expect(report.journals_scanned).toBe(2);
    expect(report.erased.map((o) => o.journal).sort()).toEqual([id, 'made-meanwhile']);
    expect(report.failed).toEqual([]);
    for (const j of [id, 'made-meanwhile']) {
      expect((await store.verify(j)).ok).toBe(true);
      for (const name of readdirSync(join(store.root, j, 'buckets')))
        expect(readFileSync(join(store.root, j, 'buckets', name), 'utf8')).not.toContain(EMAIL);
    }
  });

  it('an erase that stays interrupted is refused ERASURE_PENDING after the wait, and nothing is left behind', async () => {
    const { store, id } = await pendingErasure();
    const parent = await store.open(id);
    try {
      const started = Date.now();
      const refused = await store.fork(parent, { fromStep: 3, to: 'fork' }).catch((e: unknown) => e);
      expect(codeOf(refused)).toBe('ERASURE_PENDING');
      expect(Date.now() - started).toBeGreaterThanOrEqual(1200);
      const exported = await exportReceipt(parent, { out: join(store.root, 'r.tar.gz') }).catch((e: unknown) => e);
      expect(codeOf(exported)).toBe('ERASURE_PENDING');
      const published = await publish(parent, {
        policy: { rules: [{ id: 'models', paths: ['/model'] }] },
        optIn: true,
        out: join(store.root, 'p.tar'),
      }).catch((e: unknown) => e);
      expect(codeOf(published)).toBe('ERASURE_PENDING');
    } finally {
      await parent.close();
    }
    expect((await store.list()).sort()).toEqual([id]);
    expect(readdirSync(store.root).filter((n) => n.startsWith('.staging'))).toEqual([]);
  });
});
