/**
 * Small file helpers: opening a file that may be hostile without hanging or exhausting memory, atomic
 * replace, directory fsync, existence checks. Every file a command reads in a journal directory is opened
 * through openRegular (spec/FILE-STORE.md §3): a co-tenant can plant a FIFO, a device or a directory under
 * any name there (test/store/special-files.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { lstat, open, rename, stat, unlink, type FileHandle } from 'node:fs/promises';
import { StoreError, ioError } from '../errors.js';
import { basename, dirname, join } from 'node:path';

/** Error codes of openRegular, beside the system's own (ENOENT, EACCES, …). */
export const NOT_REGULAR = 'ENOTREGULAR';
export const TOO_LARGE = 'ETOOLARGE';

/**
 * Opens `path` for reading, refusing anything but a regular file, and one larger than `maxBytes`. O_NONBLOCK
 * keeps the open itself from waiting on a FIFO with no writer (it would block forever, and with it a thread
 * of libuv's pool and the process's exit); fstat then refuses the FIFO, a device (/dev/zero behind a
 * symbolic link reads without end) or a directory with code ENOTREGULAR. The size is the caller's bound:
 * read no more than `size` bytes.
 */
export async function openRegular(
  path: string,
  maxBytes = Number.POSITIVE_INFINITY,
): Promise<{ handle: FileHandle; size: number }> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = await handle.stat();
    refuseIrregular(path, st, maxBytes);
    return { handle, size: st.size };
  } catch (e) {
    await handle.close();
    throw e;
  }
}

/** openRegular's refusals: anything but a regular file (ENOTREGULAR), or one over `maxBytes` (ETOOLARGE). */
function refuseIrregular(path: string, st: Stats, maxBytes: number): void {
  if (!st.isFile()) {
    const what = st.isFIFO()
      ? 'a FIFO'
      : st.isDirectory()
        ? 'a directory'
        : st.isCharacterDevice() || st.isBlockDevice()
          ? 'a device'
          : st.isSocket()
            ? 'a socket'
            : 'not a regular file';
    throw Object.assign(new Error(`${path} is ${what}, not a regular file`), { code: NOT_REGULAR, path });
  }
  if (st.size > maxBytes) {
    throw Object.assign(new Error(`${path} holds ${st.size} bytes, more than the ${maxBytes} such a file may hold`), {
      code: TOO_LARGE,
      path,
    });
  }
}

/**
 * The whole of a regular file of at most `maxBytes`, or its size alone where that is not `expected`: openRegular
 * and readExactly without the event loop, for the many small files a reader takes one after another (parts).
 * Through fs/promises each file cost four trips through libuv's pool (open, fstat, read, close), and `stepchain
 * log` of a 4 000-turn conversation waited on them about half of its time.
 */
export function readRegularSync(
  path: string,
  maxBytes = Number.POSITIVE_INFINITY,
  expected?: number,
): { bytes: Uint8Array } | { size: number } {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    refuseIrregular(path, st, maxBytes);
    if (expected !== undefined && st.size !== expected) return { size: st.size };
    const out = new Uint8Array(st.size);
    let got = 0;
    while (got < out.length) {
      const n = readSync(fd, out, got, out.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: got === out.length ? out : out.subarray(0, got) };
  } finally {
    closeSync(fd);
  }
}

/** Reads `size` bytes from the start of an open file (fewer if it shrank meanwhile; never more). */
export async function readExactly(handle: FileHandle, size: number, from = 0): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const { bytesRead } = await handle.read(out, got, size - got, from + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return out.subarray(0, got);
}

/** The whole of a regular file of at most `maxBytes` (openRegular's refusals apply). */
export async function readRegular(path: string, maxBytes: number): Promise<Buffer> {
  const { handle, size } = await openRegular(path, maxBytes);
  try {
    return await readExactly(handle, size);
  } finally {
    await handle.close();
  }
}

/** The system error code of `e` ('ENOENT', 'ENOTREGULAR', …), or its text when it has none. */
export function errorCode(e: unknown): string {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : String(e);
}

/** A sibling temporary name; leading dot, so no reader mistakes it for a bucket, blob or metadata file. */
export function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Replaces `path` with `data` atomically: temporary file, optional fsync, rename, optional directory
 * fsync. A reader sees the old file or the new one, never a mix.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { fsyncFile: boolean; fsyncDir: boolean },
): Promise<void> {
  const tmp = tempName(path);
  const fh = await open(tmp, 'wx');
  try {
    await fh.writeFile(data);
    if (options.fsyncFile) await fh.sync();
  } catch (e) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw e;
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
  if (options.fsyncDir) await fsyncDir(dirname(path));
}

export async function fsyncDir(dir: string): Promise<void> {
  // O_DIRECTORY: a FIFO planted under a directory's name fails here instead of blocking the open.
  const fh = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NONBLOCK);
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** File size, or null when it does not exist. */
export async function sizeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export function isNotFound(e: unknown): boolean {
  return (e as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The directories a writer creates files in must be the journal's own, not symbolic links planted to
 * redirect its writes elsewhere (test/hardening/faults.test.ts). Checked under the lock before anything is
 * written; a directory not there yet is fine (it is created).
 */
export async function assertOwnDirectories(dirs: readonly string[]): Promise<void> {
  for (const d of dirs) {
    let kind: 'directory' | 'symlink' | 'other';
    try {
      const st = await lstat(d);
      kind = st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
    } catch (e) {
      if (isNotFound(e)) continue;
      throw ioError('checking', d, e);
    }
    if (kind !== 'directory') {
      throw new StoreError(
        'JOURNAL_INVALID',
        `${d} is ${kind === 'symlink' ? 'a symbolic link' : 'not a directory'}; a writer writes only inside the journal's own directories`,
        {
          location: { file: d },
          hint: 'restore the journal directory from a backup, and check who else can write to it',
        },
      );
    }
  }
}

/** Copies the bytes of `path` from offset `from` to its end into `to`, a chunk at a time (a torn tail may be long). */
export async function copyFrom(path: string, from: number, to: FileHandle): Promise<void> {
  const { handle, size } = await openRegular(path);
  try {
    const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, size - from)));
    for (let pos = from; pos < size;) {
      const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.length, size - pos), pos);
      if (bytesRead === 0) break;
      let off = 0;
      while (off < bytesRead) off += (await to.write(chunk, off, bytesRead - off)).bytesWritten;
      pos += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
