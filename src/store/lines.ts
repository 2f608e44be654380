/**
 * Streaming line access to bucket files: forward from an offset, and the last whole line read backwards.
 * Memory is bounded by the longest line plus one chunk, never by the file.
 */
import type { FileHandle } from 'node:fs/promises';
import { openRegular } from './fsutil.js';

const CHUNK = 64 * 1024;
const EMPTY = Buffer.alloc(0);

export interface RawLine {
  /** The line without its newline. */
  bytes: Buffer;
  /** Whether a newline ended it; only a file's final line can lack one (a torn write). */
  terminated: boolean;
  /** Byte offset of the line's first byte. */
  start: number;
  /** Byte offset just past the newline (or past the last byte when unterminated). */
  end: number;
  /** True when the line was longer than `maxBytes`: `bytes` is then empty and only its length is known. */
  tooLong: boolean;
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
export async function* readLines(path: string, start = 0, maxBytes = Number.POSITIVE_INFINITY): AsyncGenerator<RawLine> {
  for await (const batch of readLineBatches(path, start, maxBytes)) yield* batch;
}

/**
 * `readLines` one read at a time: the lines a 64 KiB read completes come as one array, so a verifier
 * awaits once per read instead of once per line (bench/: journal verify 10–30% faster). Every read goes
 * into a fresh buffer that is never reused, so a line may be a view into it and stays valid.
 */
export async function* readLineBatches(path: string, start = 0, maxBytes = Number.POSITIVE_INFINITY): AsyncGenerator<RawLine[]> {
  const fh = await openBucket(path);
  try {
    let pos = start;
    let lineStart = start;
    let parts: Buffer[] = [];
    let held = 0;
    let tooLong = false;
    for (;;) {
      const chunk = Buffer.allocUnsafeSlow(CHUNK);
      const { bytesRead } = await fh.read(chunk, 0, CHUNK, pos);
      if (bytesRead === 0) break;
      const batch: RawLine[] = [];
      let from = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, from);
        if (nl < 0 || nl >= bytesRead) break;
        const piece = chunk.subarray(from, nl);
        const end = pos + nl + 1;
        if (tooLong || held + piece.length > maxBytes) {
          batch.push({ bytes: EMPTY, terminated: true, start: lineStart, end, tooLong: true });
        } else {
          const bytes = parts.length === 0 ? piece : Buffer.concat([...parts, piece]);
          batch.push({ bytes, terminated: true, start: lineStart, end, tooLong: false });
        }
        parts = [];
        held = 0;
        tooLong = false;
        lineStart = end;
        from = nl + 1;
      }
      if (from < bytesRead && !tooLong) {
        held += bytesRead - from;
        if (held > maxBytes) {
          tooLong = true;
          parts = [];
        } else parts.push(chunk.subarray(from, bytesRead));
      }
      pos += bytesRead;
      if (batch.length > 0) yield batch;
    }
    if (pos > lineStart) yield [{ bytes: tooLong ? EMPTY : Buffer.concat(parts), terminated: false, start: lineStart, end: pos, tooLong }];
  } finally {
    await fh.close();
  }
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

async function findNewlineBefore(fh: import('node:fs/promises').FileHandle, end: number): Promise<number> {
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
