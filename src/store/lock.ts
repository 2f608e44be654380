/**
 * The journal's advisory lock (spec/FORMAT.md §8): proper-lockfile's mkdir lock at
 * `<journal>/journal.lock`. The holder refreshes its mtime every stale/2 ms; a lock whose mtime is older
 * than `staleMs` belongs to a dead (or hung) process and is taken over. Contention is retried with
 * jittered backoff until `timeoutMs`, then LOCK_TIMEOUT names the lock file.
 */
import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { StoreError, ioError } from './errors.js';
import { sleep } from './fsutil.js';

export const LOCK_NAME = 'journal.lock';
/**
 * The waiting mark (spec/FORMAT.md §8.8): a writer that finds the lock held writes a fresh nonce here before
 * each retry, so a holder keeping the lock across commits learns that someone waits and hands it over,
 * and a writer alone never pauses for a hand-off nobody needs. A nonce rather than a timestamp, so that a
 * file system's coarse mtime cannot hide a waiter.
 */
export const WAITING_NAME = 'journal.lock.waiting';

/**
 * A waiting writer polls the lock at least this often (jittered by ±50%): a holder keeps the lock for up
 * to lockHoldMs at a stretch, so waiters poll briskly rather than back off past a hold's end.
 */
export const MAX_POLL_MS = 4;
/** How long a writer that gives the lock up after a full hold waits before taking it again: longer than any waiter's poll interval, so one of them takes it first. */
export const HANDOFF_MS = 8;

export interface LockOptions {
  timeoutMs: number;
  staleMs: number;
  /** Called if the lock is lost while held (its refresh failed for longer than staleMs). */
  onCompromised: (error: Error) => void;
}

export type Release = () => Promise<void>;

export async function acquireLock(dir: string, options: LockOptions): Promise<Release> {
  const lockPath = join(dir, LOCK_NAME);
  const deadline = Date.now() + options.timeoutMs;
  let delay = 1;
  for (;;) {
    try {
      const release = await lockfile.lock(dir, {
        lockfilePath: lockPath,
        realpath: false,
        stale: options.staleMs,
        retries: 0,
        onCompromised: options.onCompromised,
      });
      return async () => {
        try {
          await release();
        } catch {
          // ERELEASED after a compromise: the lock is no longer ours to remove.
        }
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ELOCKED') throw ioError('taking the lock', lockPath, e);
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StoreError('LOCK_TIMEOUT', `the journal lock ${lockPath} is still held by another writer after ${options.timeoutMs} ms`, {
          location: { file: lockPath },
          hint: `raise lockTimeoutMs, or if no writer is alive wait ${options.staleMs} ms for the lock to go stale`,
        });
      }
      await markWaiting(dir);
      // Jittered exponential backoff, capped low so that a waiter is polling when a hold ends (HANDOFF_MS).
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_POLL_MS);
    }
  }
}

/** Tells the holder that a writer is waiting. Best effort: a holder that misses a mark sees the next one. */
async function markWaiting(dir: string): Promise<void> {
  await writeFile(join(dir, WAITING_NAME), randomUUID()).catch(() => {});
}

/** The waiting mark's content now ('' if there is none); a holder compares it with the one it saw before. */
export async function readWaitingMark(dir: string): Promise<string> {
  try {
    return await readFile(join(dir, WAITING_NAME), 'utf8');
  } catch {
    return '';
  }
}
