/**
 * Reading a journal directory without the lock (spec/FILE-STORE.md §5, §6): the head from the last whole
 * line, stored lines in seq order bounded by the head as it is when the walk starts (a reader never chases
 * concurrent appends), and blobs, each refused before a byte is read when it cannot be the one named.
 */
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import { isDigest } from '../../canonical/sha256.js';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { StoreError, ioError } from '../errors.js';
import { checkRange } from '../ids.js';
import { blobSizeError } from '../restore.js';
import { NOT_REGULAR, isNotFound, openRegular, readExactly, readRegular, writeFileAtomic } from './fsutil.js';
import { BUCKETS_DIR, MAX_RUN_STATE_BYTES, RUN_STATE_FILE, bucketName, type JournalPaths } from './layout.js';
import type { RunStateCache } from '../types.js';
import { readLastLine, readLines, seekLinesBack } from './lines.js';
import { listBuckets } from './tail.js';
import { readPending } from './batch.js';

/**
 * The last committed step, read from the chain itself (not the head cache); null when empty. The last line
 * is read first and the pending-batch mark (batch.ts) after it: a line read while a batch was pending is
 * then either bounded by the mark or, the mark gone, committed.
 */
export async function readHead(paths: JournalPaths): Promise<ChainHead | null> {
  const last = await readLastHead(paths);
  const pending = await readPending(paths.dir);
  if (pending === null || last === null || last.seq <= pending.seq) return last;
  return pending.seq < 0 ? null : { seq: pending.seq, step_hash: pending.step_hash };
}

async function readLastHead(paths: JournalPaths): Promise<ChainHead | null> {
  const buckets = await listBuckets(paths);
  for (let i = buckets.length - 1; i >= 0; i--) {
    const path = paths.bucket(buckets[i]!);
    const { line } = await readLastLine(path).catch((e: unknown) => {
      throw ioError('reading', path, e);
    });
    if (line === null) continue;
    let rec: { seq?: unknown; step_hash?: unknown } | null;
    try {
      rec = JSON.parse(line.bytes.toString('utf8')) as typeof rec;
    } catch {
      rec = null;
    }
    // A line that parses to null, a number or a string is as much "not a step record" as one that does not parse.
    if (rec === null || typeof rec !== 'object' || typeof rec.seq !== 'number' || !isDigest(rec.step_hash)) {
      throw new StoreError('JOURNAL_CORRUPT', `the last line of ${path} is not a step record`, {
        location: { file: path },
        hint: 'run verify on the journal to locate the damage',
      });
    }
    return { seq: rec.seq, step_hash: rec.step_hash };
  }
  return null;
}

/** Stored lines in seq order, each labelled with its bucket's name; a gap between buckets is JOURNAL_CORRUPT. */
/** Reads backwards at most this much to find where a tail read starts (more: the bucket is read from its start). */
const TAIL_SEEK_BYTES = 4 * 1024 * 1024;

/**
 * The byte offset in the last bucket `path` where the line of seq `from` starts, found from the file's end:
 * the last whole line's seq says how many lines back it is (pending or torn lines after the head included).
 * Null — read from the bucket's start — when that line's own seq is not `from`, or it is too far back.
 */
async function tailStart(path: string, from: number, headSeq: number): Promise<number | null> {
  if (headSeq - from > 100_000) return null;
  try {
    const last = await seekLinesBack(path, 0, TAIL_SEEK_BYTES);
    const lastSeq = last === null ? null : seqOfLine(last.text);
    if (lastSeq === null || lastSeq < from) return null;
    const found = await seekLinesBack(path, lastSeq - from, TAIL_SEEK_BYTES);
    return found !== null && seqOfLine(found.text) === from ? found.start : null;
  } catch {
    return null;
  }
}

/** The seq member of a stored line (canonical JSON: `"seq":N` appears once at the top level), or null. */
function seqOfLine(text: string): number | null {
  try {
    const seq = (JSON.parse(text) as { seq?: unknown }).seq;
    return Number.isSafeInteger(seq) ? (seq as number) : null;
  } catch {
    return null;
  }
}

export async function* readStoredLines(paths: JournalPaths, range?: SeqRange): AsyncGenerator<StoredLine> {
  const { from, to: wanted } = checkRange(range);
  const head = await readHead(paths);
  if (head === null) return;
  const to = Math.min(wanted ?? head.seq, head.seq);
  if (from > to) return;
  const buckets = await listBuckets(paths);
  let start = 0;
  for (let i = 0; i < buckets.length; i++) if (buckets[i]! <= from) start = i;
  let seq = buckets[start] ?? 0;
  if (seq > from) {
    throw new StoreError('JOURNAL_CORRUPT', `no bucket holds seq ${from} (the first bucket starts at seq ${seq})`, {
      location: { seq: from },
      hint: 'run verify on the journal and restore the missing bucket from a backup',
    });
  }
  for (let i = start; i < buckets.length && buckets[i]! <= to; i++) {
    const first = buckets[i]!;
    const name = bucketName(first);
    if (first !== seq) {
      throw new StoreError(
        'JOURNAL_CORRUPT',
        `bucket ${name} should start at seq ${seq}: steps are missing or repeated between buckets`,
        {
          location: { file: join(BUCKETS_DIR, name), seq: first },
          hint: 'run verify on the journal and restore the missing bucket from a backup',
        },
      );
    }
    const path = paths.bucket(first);
    // A read near the end of the last bucket (a run reader catching up) starts where its first line is,
    // found from the end, instead of reading the bucket from its start; checked by that line's seq.
    const skip = i === buckets.length - 1 && from > seq ? await tailStart(path, from, head.seq) : null;
    if (skip !== null) seq = from;
    for await (const raw of wrapIo(readLines(path, skip ?? 0, MAX_LINE_BYTES), path)) {
      if (!raw.terminated) break;
      if (raw.tooLong && seq >= from) {
        throw new StoreError(
          'JOURNAL_CORRUPT',
          `${join(BUCKETS_DIR, name)} seq ${seq}: the line is longer than ${MAX_LINE_BYTES} bytes`,
          {
            location: { file: join(BUCKETS_DIR, name), seq },
            hint: 'run verify on the journal to locate the damage',
          },
        );
      }
      if (seq >= from) yield { segment: name, seq, text: raw.bytes.toString('utf8') };
      if (seq >= to) return;
      seq++;
    }
  }
}

/**
 * A blob's bytes, or null when the journal does not hold it. Given the reference's `size`, a stored blob of
 * another size is refused with BLOB_CORRUPT before any of it is read; a FIFO or device likewise.
 */
export async function readBlob(paths: JournalPaths, digest: string, size?: number): Promise<Uint8Array | null> {
  if (!isDigest(digest)) return null;
  const path = paths.blob(digest);
  let opened: { handle: FileHandle; size: number };
  try {
    opened = await openRegular(path);
  } catch (e) {
    if (isNotFound(e)) return null;
    if ((e as NodeJS.ErrnoException).code === NOT_REGULAR) {
      throw new StoreError('BLOB_CORRUPT', `blob ${digest}: ${(e as Error).message}`, {
        location: { file: path },
        hint: 'restore blobs/sha256/ from a backup',
      });
    }
    throw ioError('reading blob', path, e);
  }
  try {
    // Checked before reading: a reference says how many bytes its blob has, so no more are ever read.
    if (size !== undefined && opened.size !== size) throw blobSizeError(path, digest, opened.size, size);
    return new Uint8Array(await readExactly(opened.handle, opened.size));
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw ioError('reading blob', path, e);
  } finally {
    await opened.handle.close();
  }
}

/** `lines` with a system error on the way turned into an IO_ERROR naming `path`. */
async function* wrapIo<T>(lines: AsyncGenerator<T>, path: string): AsyncGenerator<T> {
  try {
    yield* lines;
  } catch (e) {
    if (e instanceof StoreError) throw e;
    throw ioError('reading', path, e);
  }
}

/** A journal's saved run state (§19), read as §3 says; written whole, without the lock (temporary file, rename). */
export function runStateFile(dir: string, readOnly: boolean): RunStateCache {
  const path = join(dir, RUN_STATE_FILE);
  const read = async (): Promise<string | null> => {
    try {
      return (await readRegular(path, MAX_RUN_STATE_BYTES)).toString('utf8');
    } catch {
      return null;
    }
  };
  if (readOnly) return { read };
  return { read, write: (text) => writeFileAtomic(path, text, { fsyncFile: false, fsyncDir: false }) };
}
