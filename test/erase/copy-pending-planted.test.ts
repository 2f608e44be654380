/**
 * copyJournal's `erasures_pending` means what pending means for fork, export and publish (ERASURE.md §4.1): an
 * erasure the target can carry out. A replayed copy of a completed erasure record (its unit already erased) and
 * a planted one (another digest) are never carried out; the copy reported them pending for good.
 */
import { expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import { copyJournal } from '../../src/store/copy.js';
import { ERASURE_WRITER } from '../../src/store/prepare.js';
import { eraseValue, resumeErasures } from '../../src/erase.js';
import type { Store } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const PATH = '/result/email';
const complete = { completeErasures: (s: Store, id: string) => resumeErasures(s, id) };

async function replayed(): Promise<FileStore> {
  const store = new FileStore(tempDir('review-copy-'));
  const j = await store.create('j', { format: 'stepchain/v3' } as never);
  await j.append({ step_id: 's0', result: { email: 'a@b.org' } });
  await j.close();
  const done = await eraseValue(store, 'j', { seq: 0, path: PATH, reason: 'r', by: null });
  const k = await store.open('j');
  await k.append({
    [ERASURE_WRITER]: true,
    step_id: 'erasure:0:replayed',
    kind: 'erasure',
    input: { target: 0, path: PATH, digest: done.digest, reason: 'r', by: null },
  } as never);
  await k.append({ step_id: 'after', result: { ok: true } });
  await k.close();
  return store;
}

it('a copy of a journal with a replayed erasure record holds nothing pending', async () => {
  const store = await replayed();
  const src = await store.open('j', { readOnly: true });
  const into = new FileStore(tempDir('review-copy-'));
  const r = await copyJournal(src, into, 'c');
  await src.close();
  expect(r.erasures_pending).toBe(false);
});

it('a copy of a journal with a planted wrong-digest erasure record holds nothing it can carry out', async () => {
  const store = new FileStore(tempDir('review-copy-'));
  const j = await store.create('j', { format: 'stepchain/v3' } as never);
  await j.append({ step_id: 's0', result: { email: 'a@b.org' } });
  await j.append({
    [ERASURE_WRITER]: true,
    step_id: 'erasure:0:planted',
    kind: 'erasure',
    input: { target: 0, path: PATH, digest: 'sha256:' + '0'.repeat(64), reason: 'x', by: null },
  } as never);
  await j.close();
  const src = await store.open('j', { readOnly: true });
  const into = new FileStore(tempDir('review-copy-'));
  const r = await copyJournal(src, into, 'c');
  const into2 = new FileStore(tempDir('review-copy-'));
  const r2 = await copyJournal(src, into2, 'c', complete);
  await src.close();
  expect(r2.erasures_pending).toBe(false);
  expect(r.erasures_pending).toBe(false);
});
