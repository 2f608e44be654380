/**
 * A fork, an export or a publication that meets an erase between its erasure record and its rewrite (spec/ERASURE.md §4).
 * A live erase carries out what it recorded milliseconds later, so the copy waits a moment and then copies
 * the journal as erased; only an erasure still pending after that wait — an interrupted erase — is refused
 * ERASURE_PENDING. Found in CI: `fork` racing `erase` as processes was refused with advice to resume an
 * erase that was not interrupted at all. The pending erasure is made by a real erase SIGKILLed after its
 * record (dist/); the "live" erase that finishes it is `resumeErasures`, started just after the copy.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import type { Journal, SeqRange } from '../../src/store/index.js';
import { resumeErasures } from '../../src/erase.js';
import { exportReceipt } from '../../src/index.js';
import { publish } from '../../src/publish.js';
import { tempDir } from '../helpers/tmp.js';

const CLI = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const EMAIL = 'lena.live@example.org';

/** A v3 journal of three steps whose erasure of seq 1's /result/email (seq 3) is recorded, not carried out. */
async function pendingErasure(): Promise<{ store: FileStore; id: string }> {
  const store = new FileStore(tempDir('stepchain-erase-live-'));
  const id = 'live';
  const j = await store.create(id, { format: 'stepchain/v3' } as never);
  for (const i of [0, 1, 2]) await j.append({ step_id: `s${i}`, result: { email: i === 1 ? EMAIL : `r${i}@x.org` } });
  await j.close();
  await interruptedErase(store, id);
  return { store, id };
}

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

/** `journal`, whose every read of lines runs `after` (awaited) once it has yielded its last line. */
function afterReads<J extends Journal>(journal: J, after: (range: SeqRange) => Promise<void>): J {
  return new Proxy(journal, {
    get(target, name, receiver) {
      if (name !== 'lines') return Reflect.get(target, name, receiver) as unknown;
      return (range: SeqRange = {}) =>
        (async function* () {
          yield* target.lines(range);
          await after(range);
        })();
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

  it('a publication judges pending erasures on the lines it read, not on a read before them', async () => {
    // The publisher checked the journal, then read it again to publish: an erase recorded in between (here, once
    // the first read is done) gave a publication of the erasure record beside the value in clear.
    const store = new FileStore(tempDir('stepchain-erase-live-'));
    const id = 'live';
    const j = await store.create(id, { format: 'stepchain/v3' } as never);
    for (const i of [0, 1, 2]) await j.append({ step_id: `s${i}`, result: { email: i === 1 ? EMAIL : `r${i}@x.org` } });
    let reads = 0;
    const racing = afterReads(j, async () => {
      if (reads++ === 0) await interruptedErase(store, id);
    });
    const out = join(store.root, 'p.tar');
    try {
      const published = await publish(racing, {
        policy: { rules: [{ id: 'models', paths: ['/model'] }] },
        optIn: true,
        out,
      });
      // What it read held no erasure: it publishes the journal as it was then, ending before the erasure record.
      expect(published.original_head.seq).toBe(2);
    } finally {
      await j.close();
    }
    expect(reads).toBe(1);
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
