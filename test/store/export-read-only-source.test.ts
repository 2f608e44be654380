/**
 * A receipt's last look for erasure records runs under the source's lock (FileJournal.holdingAppends). Taking
 * a writer's lease for it ran the writer's hooks on a journal opened read-only: its Merkle tree rebuilt and
 * written into the source (any format, erasure or not).
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import { exportReceipt } from '../../src/index.js';
import { tempDir } from '../helpers/tmp.js';

it('an export of a journal opened read-only writes nothing into it', async () => {
  const store = new FileStore(tempDir('review-ro-'));
  const j = await store.create('j', {} as never);
  for (let i = 0; i < 3; i++) await j.append({ step_id: `s${i}`, result: { i } });
  await j.close();
  const dir = join(store.root, 'j');
  rmSync(join(dir, 'tree'), { recursive: true, force: true });
  const before = readdirSync(dir).sort();
  const ro = await store.open('j', { readOnly: true });
  await exportReceipt(ro, { out: join(store.root, 'r.tar') });
  await ro.close();
  expect(readdirSync(dir).sort()).toEqual(before);
  expect(existsSync(join(dir, 'tree'))).toBe(false);
});
