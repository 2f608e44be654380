/**
 * Streaming line access to bucket files (spec/FORMAT.md §4.4, spec/FILE-STORE.md §5): forward from an offset, split by the
 * shared LineSplitter, and the last whole line read backwards. Memory is bounded by the longest line plus
 * one chunk, never by the file.
 */
import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { LineSplitter, type SplitLine } from '../../chain/lines.js';
import { openRegular } from './fsutil.js';

const CHUNK = 64 * 1024;

/** A line of a bucket file; `bytes` is a Buffer view (zero-copy). */
export interface RawLine extends SplitLine {
  bytes: Buffer;
}

/** The splitter's lines are views into the Buffers it was fed, except those it joined: those are wrapped, not copied. */
function asBuffers(lines: SplitLine[]): RawLine[] {
  for (const l of lines)
    if (!Buffer.isBuffer(l.bytes)) l.bytes = Buffer.from(l.bytes.buffer, l.bytes.byteOffset, l.bytes.length);
  return lines as RawLine[];
}

/**
 * Opens a bucket for reading: a regular file only, opened without blocking, so a FIFO, a device (say
 * /dev/zero behind a symbolic link) or a directory planted under a bucket's name fails with ENOTREGULAR
 * instead of hanging or spinning every reader and writer (test/hardening/faults.test.ts, "special files
 * planted as buckets").
 */
export async function openBucket(path: string): Promise<FileHandle> {
  return (await openRegular(path)).handle;
}

/**
 * Lines of `path` from byte `start` to the end of the file as it is while being read. A line longer than
 * `maxBytes` is not buffered (a hostile file cannot exhaust memory): it comes back with `tooLong` set.
 */
export async function* readLines(
  path: string,
  start = 0,
  maxBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<RawLine> {
  for await (const batch of readLineBatches(path, start, maxBytes)) yield* batch;
}

export interface ReadOptions {
  /** Bytes per read (default 64 KiB). */
  chunkBytes?: number;
  /**
   * Read every chunk into one buffer: a batch's lines are then valid only until the next batch is asked
   * for. For a consumer that is done with each batch by then (the verifier: it checks or copies every
   * line at once); it spares a fresh buffer per read and the garbage collector's work on them.
   */
  reuse?: boolean;
  /** Read no byte at or past this offset (default: to the end of the file as it is while being read). */
  end?: number;
  /**
   * Read on the calling thread (readSync), then yield to the event loop once before the lines go to the caller,
   * so that what arrived meanwhile (a worker's answers) is taken in between. For a caller whose other threads
   * keep every core busy (verify with its default threads): a read handed to libuv's pool there waited for a
   * core, a median of 1 ms and a 99th percentile of 11 ms for 256 KiB, while the caller idled and the workers
   * ran out of batches; on the calling thread the same read takes about 80 µs (bench/RESULTS.md). Without the
   * yield the caller took the workers' answers only when it had to wait for one: 27% slower.
   */
  sync?: boolean;
}

/**
 * `readLines` one read at a time: the lines a read completes come as one array, so a verifier awaits once
 * per read instead of once per line (bench/: journal verify 10–30% faster). Unless `reading.reuse`, every
 * read goes into a fresh buffer that is never reused, so a line may be a view into it and stays valid.
 *
 * The next read is asked for as soon as a read ends, before its lines go to the caller (with `reuse`, into the
 * other of two buffers: the caller's lines are views into one while the other fills). A read is a trip through
 * libuv's thread pool, whose thread must find a core; on a machine whose cores are all checking lines (verify
 * with its default threads) waiting for each read as the caller finished its lines cost `stepchain verify` of
 * 100 000 steps about 0.4 ms a read, a quarter of a second in all (bench/RESULTS.md).
 */
export async function* readLineBatches(
  path: string,
  start = 0,
  maxBytes = Number.POSITIVE_INFINITY,
  reading: ReadOptions = {},
): AsyncGenerator<RawLine[]> {
  const chunkBytes = reading.chunkBytes ?? CHUNK;
  const fh = await openBucket(path);
  const buffers = reading.reuse ? [spareBuffer(chunkBytes), spareBuffer(chunkBytes)] : null;
  let turn = 0;
  /** The read at `at`, into the buffer the caller does not hold; null past `reading.end`. */
  const readAt = (at: number): Promise<Buffer> | null => {
    const want = reading.end === undefined ? chunkBytes : Math.min(chunkBytes, reading.end - at);
    if (want <= 0) return null;
    const chunk = buffers === null ? Buffer.allocUnsafeSlow(chunkBytes) : buffers[(turn = 1 - turn)]!;
    const read =
      reading.sync === true
        ? readHere(fh, chunk, want, at)
        : fh.read(chunk, 0, want, at).then(({ bytesRead }) => chunk.subarray(0, bytesRead));
    // A read that fails is reported where it is awaited, after the lines read before it have gone to the caller;
    // until then it is marked handled, so that the process does not end on an unhandled rejection meanwhile.
    read.catch(() => undefined);
    return read;
  };
  let next: Promise<Buffer> | null = null;
  try {
    const splitter = new LineSplitter(maxBytes, start);
    let pos = start;
    next = readAt(pos);
    while (next !== null) {
      const piece = await next;
      next = null;
      if (piece.length === 0) break;
      pos += piece.length;
      next = readAt(pos);
      const batch = splitter.push(piece);
      if (batch.length > 0) yield asBuffers(batch);
    }
    const torn = splitter.end();
    if (torn !== null) yield asBuffers([torn]);
  } finally {
    // A caller that stops early leaves a read in flight: it ends (or fails, unread) before the file closes.
    await next?.catch(() => undefined);
    await fh.close();
    // The caller has done with the lines read into them (reuse's contract): the next bucket reads into the same.
    for (const b of buffers ?? []) if (spare.length < SPARE_MOST) spare.push(b);
  }
}

/**
 * Read buffers a reusing reader (ReadOptions.reuse) gives back when it ends, for the next: a journal of many small
 * buckets allocated two new 256 KiB buffers per bucket, and verify of 32 000 one-line buckets spent a third of
 * its time collecting them (27 s against 0.3 s for the same lines in one bucket: outsider I).
 */
const spare: Buffer[] = [];
const SPARE_MOST = 4;

function spareBuffer(bytes: number): Buffer {
  for (let i = spare.length - 1; i >= 0; i--) if (spare[i]!.length === bytes) return spare.splice(i, 1)[0]!;
  return Buffer.allocUnsafeSlow(bytes);
}

/** A read on this thread (ReadOptions.sync), answered after one turn of the event loop; its error, as a rejection. */
function readHere(fh: FileHandle, chunk: Buffer, want: number, at: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let got: number;
    try {
      got = readSync(fh.fd, chunk, 0, want, at);
    } catch (e) {
      reject(e);
      return;
    }
    setImmediate(() => resolve(chunk.subarray(0, got)));
  });
}

/** The last newline-terminated line of `path` and the file size, reading backwards; null line when none. */
export async function readLastLine(path: string): Promise<{ line: RawLine | null; size: number }> {
  const fh = await openBucket(path);
  try {
    const size = (await fh.stat()).size;
    const lastNl = await findNewlineBefore(fh, size);
    if (lastNl < 0) return { line: null, size };
    const prevNl = await findNewlineBefore(fh, lastNl);
    const start = prevNl + 1;
    const bytes = Buffer.allocUnsafe(lastNl - start);
    let got = 0;
    while (got < bytes.length) {
      const { bytesRead } = await fh.read(bytes, got, bytes.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { line: { bytes: bytes.subarray(0, got), terminated: true, start, end: lastNl + 1, tooLong: false }, size };
  } finally {
    await fh.close();
  }
}

/**
 * Where the line `back` lines before the file's last whole line starts (0: the last whole line itself),
 * reading backwards a chunk at a time: a tail read costs what it reads, not the bucket's length. With the
 * text of that line, to be checked by the caller (a reader must not trust a count of newlines alone); null
 * when the file holds fewer lines, or more than `maxBytes` would have to be read.
 */
export async function seekLinesBack(
  path: string,
  back: number,
  maxBytes: number,
): Promise<{ start: number; text: string } | null> {
  const fh = await openBucket(path);
  try {
    const size = (await fh.stat()).size;
    const lastNl = await findNewlineBefore(fh, size);
    if (lastNl < 0) return null;
    // Backwards from the last newline: the (back + 1)-th newline before it ends the line before the one wanted.
    const chunk = Buffer.allocUnsafe(CHUNK);
    let left = back + 1;
    let start = 0;
    let hi = lastNl;
    search: while (hi > 0) {
      if (size - hi > maxBytes) return null;
      const lo = Math.max(0, hi - CHUNK);
      const { bytesRead } = await fh.read(chunk, 0, hi - lo, lo);
      for (let j = bytesRead - 1; j >= 0; j--) {
        if (chunk[j] === 0x0a && --left === 0) {
          start = lo + j + 1;
          break search;
        }
      }
      hi = lo;
    }
    if (left > 1) return null; // fewer lines than asked for (reaching the start ends the first line's search)
    let end = start;
    while (end < lastNl) {
      const { bytesRead } = await fh.read(chunk, 0, Math.min(CHUNK, lastNl - end), end);
      const at = chunk.subarray(0, bytesRead).indexOf(0x0a);
      if (at >= 0)
        return end + at - start > maxBytes ? null : { start, text: await readText(fh, start, end + at - start) };
      end += bytesRead;
      if (bytesRead === 0) break;
    }
    return lastNl - start > maxBytes ? null : { start, text: await readText(fh, start, lastNl - start) };
  } finally {
    await fh.close();
  }
}

/**
 * The whole line that ends (with its newline) at byte `end` of `path`, read backwards; null when the byte
 * before `end` is not a newline, `end` is past the file, or the line is longer than `maxBytes`.
 */
export async function readLineEndingAt(path: string, end: number, maxBytes: number): Promise<string | null> {
  const fh = await openBucket(path);
  try {
    if (end <= 0 || end > (await fh.stat()).size) return null;
    const last = Buffer.alloc(1);
    await fh.read(last, 0, 1, end - 1);
    if (last[0] !== 0x0a) return null;
    const start = (await findNewlineBefore(fh, end - 1)) + 1;
    return end - 1 - start > maxBytes ? null : await readText(fh, start, end - 1 - start);
  } finally {
    await fh.close();
  }
}

async function readText(fh: FileHandle, start: number, length: number): Promise<string> {
  const bytes = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(bytes, got, length - got, start + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return bytes.subarray(0, got).toString('utf8');
}

async function findNewlineBefore(fh: FileHandle, end: number): Promise<number> {
  const chunk = Buffer.allocUnsafe(CHUNK);
  let hi = end;
  while (hi > 0) {
    const lo = Math.max(0, hi - CHUNK);
    const { bytesRead } = await fh.read(chunk, 0, hi - lo, lo);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (at >= 0) return lo + at;
    hi = lo;
  }
  return -1;
}
