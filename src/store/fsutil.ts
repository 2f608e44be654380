/** Small durable-file helpers: atomic replace, directory fsync, existence checks. */
import { randomBytes } from 'node:crypto';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** A sibling temporary name; leading dot, so no reader mistakes it for a bucket, blob or metadata file. */
export function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/**
 * Replaces `path` with `data` atomically: temporary file, optional fsync, rename, optional directory
 * fsync. A reader sees the old file or the new one, never a mix.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, options: { fsyncFile: boolean; fsyncDir: boolean }): Promise<void> {
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
  const fh = await open(dir, 'r');
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
