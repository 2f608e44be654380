/**
 * What a writer checks on its first read of a journal's tail before it links a step to it (spec/FILE-STORE.md
 * §9 step 2, "What a writer checks"): each costs a few reads at the chain's end, never a read of the chain.
 */
import { MAX_LINE_BYTES, MAX_RECORD_DEPTH } from '../../canonical/limits.js';
import { bytesNestDeeper } from '../../canonical/depth.js';
import { checkLineBytes } from '../../chain/line.js';
import type { JournalFormat } from '../../record/profile.js';
import { StoreError } from '../errors.js';
import { sizeOf } from './fsutil.js';
import { bucketName, type JournalPaths } from './layout.js';
import { readLineEndingAt } from './lines.js';

/** A line read on the first read of the tail, kept to be checked whole once the read is done. */
export interface ReadLine {
  path: string;
  /** 1-based line number in its bucket. */
  line: number;
  seq: number;
  bytes: Uint8Array;
}

/**
 * The refusals a writer makes before it links a step (this file's checks and the pending-batch mark's): they
 * stop a write, never a read. Opening a journal (FileJournal.recover) takes the lock once to repair a torn
 * tail; when one of these refuses there, nothing was written, and readers go on to verify and report the
 * journal in their own terms (RUN_INVALID, THREAD_INVALID, verify's problems) while every writer refuses.
 */
const writerRefusals = new WeakSet<StoreError>();

/** Marks `e` as a writer's refusal (see writerRefusals) and returns it. */
export function writerRefusal(e: StoreError): StoreError {
  writerRefusals.add(e);
  return e;
}

/** Whether `e` is a writer's refusal to link to the chain as it stands. */
export const isWriterRefusal = (e: unknown): boolean => e instanceof StoreError && writerRefusals.has(e);

function corrupt(file: string, line: number, seq: number, why: string): StoreError {
  return writerRefusal(
    new StoreError(
      'JOURNAL_CORRUPT',
      `${file} line ${line} (seq ${seq}): ${why}; refusing to append to a broken chain`,
      { location: { file, line, seq }, hint: 'run verify on the journal to see every problem' },
    ),
  );
}

/** A line nested deeper than any verifier accepts, refused before JSON.parse (whose recursion it would overflow). */
export function refuseDeepLine(bytes: Uint8Array, file: string, line: number, seq: number): void {
  if (bytesNestDeeper(bytes, MAX_RECORD_DEPTH))
    throw corrupt(file, line, seq, `DEPTH_LIMIT: the line nests deeper than ${MAX_RECORD_DEPTH}`);
}

/**
 * The verifier's per-line check (FORMAT.md §6.3 steps 3–5: canonical form, the record profile's members and
 * version, the step hash recomputed) on the last lines the first read parsed: a writer never links a step to
 * a record whose hash does not match its content.
 */
export function checkLastLines(lines: readonly ReadLine[], format: JournalFormat): void {
  for (const l of lines) {
    const problem = checkLineBytes(l.bytes, format).problems[0];
    if (problem !== undefined) throw corrupt(l.path, l.line, l.seq, `${problem.code}: ${problem.message}`);
  }
}

/**
 * The last two buckets must join (FILE-STORE.md §5): the bucket before the last ends with the step just before
 * the last bucket's first seq. An empty bucket that is not the last, or a bucket named out of order (a layout
 * no crash leaves), would send range readers to a bucket that does not hold their start.
 */
export async function checkLastBuckets(paths: JournalPaths, buckets: readonly number[]): Promise<void> {
  if (buckets.length < 2) return;
  const last = buckets[buckets.length - 1]!;
  const before = paths.bucket(buckets[buckets.length - 2]!);
  const size = (await sizeOf(before)) ?? 0;
  const text = size === 0 ? null : await readLineEndingAt(before, size, MAX_LINE_BYTES);
  let seq: unknown = null;
  try {
    seq = text === null ? null : (JSON.parse(text) as { seq?: unknown }).seq;
  } catch {
    return; // an unreadable line: the tail read reports it where it reads it
  }
  if (seq === last - 1) return;
  throw writerRefusal(
    new StoreError(
      'JOURNAL_CORRUPT',
      seq === null
        ? `${before} holds no whole line, but bucket ${bucketName(last)} follows it: only the last bucket may be empty`
        : `bucket ${bucketName(last)} follows ${before}, whose last step is seq ${String(seq)}: buckets out of order`,
      {
        location: { file: paths.bucket(last), seq: last },
        hint: 'a bucket was planted or removed: run verify on the journal and restore the buckets from a backup',
      },
    ),
  );
}

/**
 * head.json names a step past the chain's end. In fsync 'always' the cache is written only after its lines
 * are durable, so steps acknowledged under that promise were removed: refused, the cache kept as evidence. In
 * 'batch' and 'none' an OS crash can lose the last lines and keep the cache, so the writer repairs it.
 */
export function refuseCacheAhead(paths: JournalPaths, cached: number, tail: number, durable: boolean): void {
  if (!durable || cached <= tail) return;
  throw writerRefusal(
    new StoreError(
      'JOURNAL_CORRUPT',
      `head.json names seq ${cached}, but the chain of ${paths.dir} ends at seq ${tail}: steps acknowledged as durable were removed`,
      {
        location: { file: paths.head, seq: cached },
        hint: 'restore the buckets from a backup; if the journal was last written with fsync batch or none and the machine crashed, move head.json aside to accept the loss',
      },
    ),
  );
}

/**
 * Whether a tail kept between holds of the lock still stands where it was read: the line of its bucket ending at
 * its known length is the step it knows (its seq and step_hash). Its bucket being the same file (inode) is not
 * enough: an erasure replaces a bucket by rename, and the file system may give a later replacement the inode an
 * earlier one freed, so a writer trusted a length from another layout and read from inside a line — a false
 * JOURNAL_CORRUPT ("not JSON") for appends beside concurrent erases (outsider J). Each hold pays one read of the
 * last line; a tail that does not hold is read afresh.
 */
export async function tailLineHolds(
  paths: JournalPaths,
  tail: { bucket: number; size: number; seq: number; hash: string | null },
): Promise<boolean> {
  if (tail.size === 0) return true; // a bucket not yet written: the last line is in the one before, not read from here
  if (tail.hash === null) return false;
  const line = await readLineEndingAt(paths.bucket(tail.bucket), tail.size, MAX_LINE_BYTES).catch(() => null);
  return line !== null && new RegExp(`"seq":${tail.seq}[,}]`).test(line) && line.includes(`"step_hash":"${tail.hash}"`);
}
