/**
 * A removed journal's directory between its rename and its deletion (spec/FILE-STORE.md §15): the rename is the
 * removal's commit point, and the deletion that follows may be cut short by a kill. Such a directory names no
 * journal, so any writer may delete it; until one does, the removed run's values stay on disk (an outsider's
 * finding: a prune killed there left them for good, with every later prune saying "removed 0 runs").
 */
import { randomBytes } from 'node:crypto';
import { lstat, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ioError } from '../errors.js';
import { fsyncDir, isNotFound } from './fsutil.js';

const REMOVING_PREFIX = '.removing-';
const REMOVING_RE = /^\.removing-[0-9a-f]{16}$/;

/** Deletes every removed journal's directory left under `root`; returns how many. One it cannot delete is left for the next call. */
export async function finishRemovals(root: string): Promise<number> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch (e) {
    if (isNotFound(e)) return 0;
    throw ioError('listing', root, e);
  }
  let finished = 0;
  for (const name of names) {
    if (!REMOVING_RE.test(name)) continue;
    try {
      // Only what a removal leaves: a directory (never a file or a link someone placed under that name).
      if (!(await lstat(join(root, name))).isDirectory()) continue;
      await rm(join(root, name), { recursive: true, force: true });
      finished++;
    } catch {
      // another remover's, or not deletable now: the next call tries again
    }
  }
  return finished;
}

/** How many removed journals' directories a cut-short removal left under `root` (what finishRemovals deletes); only reads. */
export async function unfinishedRemovals(root: string): Promise<number> {
  let n = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (REMOVING_RE.test(name) && (await lstat(join(root, name)).catch(() => null))?.isDirectory() === true) n++;
  }
  return n;
}

/**
 * Removes the journal directory `dir` under `root`: renamed to a hidden name (the commit point; `notFound` when
 * it is gone already), the root made durable when `durable`, then deleted, best effort.
 */
export async function removeDirectory(
  root: string,
  dir: string,
  durable: boolean,
  notFound: () => Error,
): Promise<void> {
  const doomed = join(root, `${REMOVING_PREFIX}${randomBytes(8).toString('hex')}`);
  try {
    await rename(dir, doomed);
  } catch (e) {
    if (isNotFound(e)) throw notFound();
    throw ioError('removing', dir, e);
  }
  if (durable) await fsyncDir(root);
  await rm(doomed, { recursive: true, force: true }).catch(() => {});
}
