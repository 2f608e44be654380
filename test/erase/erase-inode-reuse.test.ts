/**
 * A writer's kept tail when an erasure has replaced its bucket and the file system gave the replacement the inode
 * the writer last saw (spec/ERASURE.md §4, "How writers' tail checks treat it"): inode numbers are reused once
 * freed, and with erasures replacing a bucket again and again a writer found "the same file" and trusted a length
 * from another layout. It read from inside a line and refused its append, JOURNAL_CORRUPT "not JSON", on a journal
 * that verifies (outsider J: 1–3 of a few thousand appends beside concurrent erases). The reuse is made here on
 * purpose — the bucket's first inode kept by a hard link and given the erased content — and the writer must read
 * the tail afresh: its append lands after the last step, and the journal verifies.
 */
import { linkSync, readFileSync, renameSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { eraseValue } from '../../src/erase.js';
import { FileStore } from '../../src/store/file/store.js';
import { tempDir } from '../helpers/tmp.js';

test('a writer whose tail bucket was replaced under the inode it last saw reads the tail afresh, and appends', async () => {
  const root = tempDir('stepchain-inode-reuse-');
  const store = new FileStore(root, { fsync: 'none', lockLingerMs: 0 });
  const setup = await store.create('j', { format: 'stepchain/v3' });
  await setup.append({ input: { email: 'ivan.reuse@example.org' }, model: 'm', prompt: 'p', result: 'ok' });
  for (let i = 0; i < 5; i++) await setup.append({ input: { i }, result: i });
  await setup.close();

  const writer = await store.open('j');
  expect((await writer.append({ input: { before: true } })).seq).toBe(6);
  const bucket = join(root, 'j', 'buckets', '0000000000000000.jsonl');
  const seen = statSync(bucket).ino;
  linkSync(bucket, `${bucket}.keep`);

  await eraseValue(store, 'j', { seq: 0, path: '/input/email', reason: 'GDPR Art. 17' });
  const erased = readFileSync(bucket);
  expect(erased.toString()).not.toContain('ivan.reuse@example.org');
  // The replacement under the first inode: what a file system reusing a freed inode gives a later erasure.
  writeFileSync(`${bucket}.keep`, erased);
  renameSync(`${bucket}.keep`, bucket);
  expect(statSync(bucket).ino).toBe(seen);

  const after = await writer.append({ input: { after: true } });
  expect(after.seq).toBe(8); // after the erasure record at seq 7
  expect((await writer.verify()).ok).toBe(true);
  await writer.close();
});
