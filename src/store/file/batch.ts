/**
 * A batch being streamed into a journal (spec/FILE-STORE.md §18): its lines are written chunk by chunk under
 * the lock, so memory stays bounded whatever its size, and it is committed all at once by removing the
 * *pending-batch mark* `.batch-pending.json`, written before its first line: the tail the batch started
 * from ({bucket, size, seq, step_hash}). While the mark exists the batch's lines are not committed: readers
 * bound the chain at the mark's seq, and the next writer to take the lock — the batch's writer having
 * failed or died — cuts every bucket back to the mark (removing buckets the batch created) before anything
 * else. So a refused step, a write error or a crash anywhere in the batch leaves none of it.
 */
import { writerRefusal } from './tail-checks.js';
import { readdir, unlink } from 'node:fs/promises';
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { isDigest } from '../../canonical/sha256.js';
import { isObject } from '../../canonical/json.js';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import { StoreError, ioError } from '../errors.js';
import { fsyncDir, isNotFound, readRegular, sizeOf, writeFileAtomic } from './fsutil.js';
import {
  HEAD_FILE,
  MAX_HEAD_BYTES,
  MAX_RUN_STATE_BYTES,
  RUN_STATE_FILE,
  bucketFirstSeq,
  parseHead,
  type JournalPaths,
} from './layout.js';
import { readLineEndingAt, readLines } from './lines.js';

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
 * Refuses (JOURNAL_CORRUPT) a mark that no writer can have written, before any byte is cut (§18, "What a
 * writer checks before it cuts back"): the line ending at the mark's size must be the step it names (or, at
 * a bucket's start, the previous bucket's last line, or the genesis hash), the first line past it must be
 * the next seq linked to it, and no acknowledged fact — head.json, the saved run state, both written only
 * after a commit — may name a seq past it. Costs a few reads of the chain's tail, whatever its length.
 */
export async function checkPending(paths: JournalPaths, mark: PendingBatch, genesisHash: string): Promise<void> {
  const refuse = (why: string): never => {
    throw writerRefusal(
      new StoreError(
        'JOURNAL_CORRUPT',
        `the pending-batch mark ${pendingPath(paths.dir)} (seq ${mark.seq}, bucket ${mark.bucket}, size ${mark.size}) ${why}: no writer wrote it, and cutting back to it would remove committed steps`,
        {
          location: { file: pendingPath(paths.dir), seq: mark.seq },
          hint: 'if no writer is streaming a batch into this journal, move .batch-pending.json aside, then run verify',
        },
      ),
    );
  };
  const names = (await readdir(paths.buckets)).map(bucketFirstSeq).filter((n): n is number => n !== null);
  const ends = await stepEnding(paths, mark, names, genesisHash);
  if (ends === null) return refuse('does not end at a whole line of the chain');
  if (ends.seq !== mark.seq || ends.step_hash !== mark.step_hash)
    return refuse(`names a step the chain does not hold there (the line there is seq ${String(ends.seq)})`);
  const next = await lineAfter(paths, mark, names);
  if (next !== null && (next.seq !== mark.seq + 1 || next.prev_hash !== mark.step_hash))
    return refuse(
      `is followed by a line that is not the batch's first step (seq ${String(next.seq)}, linked elsewhere)`,
    );
  const head = await readRegular(join(paths.dir, HEAD_FILE), MAX_HEAD_BYTES).catch(() => null);
  const cached = head === null ? null : parseHead(head.toString('utf8'));
  if (cached !== null && cached.seq > mark.seq)
    return refuse(`starts before seq ${cached.seq}, which head.json names as committed`);
  const saved = await savedStateSeq(paths.dir);
  if (saved !== null && saved > mark.seq)
    return refuse(`starts before seq ${saved}, which the saved run state ${RUN_STATE_FILE} folds as committed`);
}

/** The seq a saved run state (§19) is anchored at: saved only after its steps were acknowledged. */
async function savedStateSeq(dir: string): Promise<number | null> {
  const bytes = await readRegular(join(dir, RUN_STATE_FILE), MAX_RUN_STATE_BYTES).catch(() => null);
  const state = fieldsOf(bytes === null ? null : bytes.toString('utf8'));
  return typeof state?.seq === 'number' && Number.isSafeInteger(state.seq) ? state.seq : null;
}

interface LineFields {
  seq?: unknown;
  step_hash?: unknown;
  prev_hash?: unknown;
}

function fieldsOf(text: string | null): LineFields | null {
  if (text === null) return null;
  try {
    const v: unknown = JSON.parse(text);
    return isObject(v) ? v : null;
  } catch {
    return null;
  }
}

/** The seq and step hash of the step the mark's position ends, or null when no whole line ends there. */
async function stepEnding(
  paths: JournalPaths,
  mark: PendingBatch,
  names: number[],
  genesisHash: string,
): Promise<LineFields | null> {
  if (mark.size > 0) return fieldsOf(await readLineEndingAt(paths.bucket(mark.bucket), mark.size, MAX_LINE_BYTES));
  if (mark.seq !== mark.bucket - 1) return null;
  if (mark.seq === -1) return { seq: -1, step_hash: genesisHash };
  const before = names.filter((n) => n < mark.bucket).sort((a, b) => b - a)[0];
  if (before === undefined) return null;
  const path = paths.bucket(before);
  const size = await sizeOf(path);
  return size === null ? null : fieldsOf(await readLineEndingAt(path, size, MAX_LINE_BYTES));
}

/** The first whole line written after the mark's position (in its bucket, or the next bucket), or null. */
async function lineAfter(paths: JournalPaths, mark: PendingBatch, names: number[]): Promise<LineFields | null> {
  const size = (await sizeOf(paths.bucket(mark.bucket))) ?? 0;
  const later = names.filter((n) => n > mark.bucket).sort((a, b) => a - b)[0];
  const [path, from] =
    size > mark.size
      ? [paths.bucket(mark.bucket), mark.size]
      : later !== undefined
        ? [paths.bucket(later), 0]
        : [null, 0];
  if (path === null) return null;
  for await (const raw of readLines(path, from, MAX_LINE_BYTES)) {
    if (!raw.terminated) return null; // a torn first line: the batch's writer died in its first write
    return fieldsOf(raw.tooLong ? null : raw.bytes.toString('utf8')) ?? { seq: null };
  }
  return later !== undefined && later !== mark.seq + 1 ? { seq: later } : null;
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
