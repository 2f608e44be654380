/**
 * A batch being streamed into a journal (spec/FILE-STORE.md §18): its lines are written chunk by chunk under
 * the lock, so memory stays bounded whatever its size, and it is committed all at once by removing the
 * *pending-batch mark* `.batch-pending.json`, written before its first line: the tail the batch started
 * from ({bucket, size, seq, step_hash}). While the mark exists the batch's lines are not committed: readers
 * bound the chain at the mark's seq, and the next writer to take the lock — the batch's writer having
 * failed or died — cuts every bucket back to the mark (removing buckets the batch created) before anything
 * else. So a refused step, a write error or a crash anywhere in the batch leaves none of it.
 */
import { readdir, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { isDigest } from '../../canonical/sha256.js';
import { isObject } from '../../canonical/json.js';
import { ioError } from '../errors.js';
import { fsyncDir, isNotFound, readRegular, writeFileAtomic } from './fsutil.js';
import { bucketFirstSeq, type JournalPaths } from './layout.js';

export const PENDING_NAME = '.batch-pending.json';

export { STREAM_CHUNK, STREAM_MANY, type StreamedBatch } from '../stream.js';

/** Where the committed chain ended when the batch began. */
export interface PendingBatch {
  bucket: number;
  size: number;
  seq: number;
  step_hash: string;
}

export function pendingPath(dir: string): string {
  return join(dir, PENDING_NAME);
}

/** The mark, or null when no batch is pending. A mark that cannot be read is a pending batch of unknown start: an error. */
export async function readPending(dir: string): Promise<PendingBatch | null> {
  let text: string;
  try {
    text = (await readRegular(pendingPath(dir), 1024)).toString('utf8');
  } catch (e) {
    if (isNotFound(e)) return null;
    throw ioError('reading the pending-batch mark', pendingPath(dir), e);
  }
  let v: unknown = null;
  try {
    v = JSON.parse(text);
  } catch {
    v = null;
  }
  const int = (x: unknown, min: number): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= min;
  if (!isObject(v) || !int(v.bucket, 0) || !int(v.size, 0) || !int(v.seq, -1) || !isDigest(v.step_hash)) {
    throw ioError(
      'reading the pending-batch mark',
      pendingPath(dir),
      Object.assign(new Error('not a pending-batch mark'), { code: 'EINVAL' }),
    );
  }
  return { bucket: v.bucket, size: v.size, seq: v.seq, step_hash: v.step_hash };
}

export async function writePending(dir: string, mark: PendingBatch, durable: boolean): Promise<void> {
  const text =
    JSON.stringify({ bucket: mark.bucket, size: mark.size, seq: mark.seq, step_hash: mark.step_hash }) + '\n';
  await writeFileAtomic(pendingPath(dir), text, { fsyncFile: durable, fsyncDir: durable });
}

/** The commit point of a streamed batch (or the end of its rollback). */
export async function removePending(dir: string, durable: boolean): Promise<void> {
  await unlink(pendingPath(dir)).catch((e: unknown) => {
    if (!isNotFound(e)) throw ioError('removing the pending-batch mark', pendingPath(dir), e);
  });
  if (durable) await fsyncDir(dir);
}

/**
 * Under the lock: every bucket cut back to where the pending batch began — its start bucket truncated to
 * the mark's size, every bucket after it removed — then the mark removed. Idempotent: a writer killed while
 * rolling back leaves the mark, and the next one does it again.
 */
export async function rollBackPending(
  dir: string,
  paths: JournalPaths,
  mark: PendingBatch,
  durable: boolean,
): Promise<void> {
  try {
    for (const name of await readdir(paths.buckets)) {
      const first = bucketFirstSeq(name);
      if (first === null || first <= mark.bucket) continue;
      await unlink(join(paths.buckets, name)).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
    }
    try {
      const fh = await open(paths.bucket(mark.bucket), constants.O_RDWR | constants.O_NOFOLLOW);
      try {
        if ((await fh.stat()).size > mark.size) await fh.truncate(mark.size);
        if (durable) await fh.sync();
      } finally {
        await fh.close();
      }
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
    if (durable) await fsyncDir(paths.buckets);
  } catch (e) {
    throw ioError('rolling back the pending batch of', dir, e);
  }
  await removePending(dir, durable);
}
