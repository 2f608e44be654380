/**
 * The journal lock (spec/FILE-STORE.md §8), every rule of it in this one file, in the order of the spec:
 * the holder record, acquiring, when a waiter may break a lock (its holder provably dead, or the lock
 * stale), holding and refreshing it, releasing it, and breaking it.
 *
 * The lock is the directory `journal.lock` holding exactly one file, the holder record
 * `holder-<instance>.json`: who holds it (host, pid, process start). A writer prepares the directory with
 * its record under a hidden name and renames it into place, so the lock never exists without its record.
 * A waiter on the same host breaks a lock whose holder is provably dead at once — no waiting for staleness
 * after a crash — and never one whose holder is provably alive, however long it has not refreshed the lock
 * (stopped, starved, its event loop blocked): a live writer is never replaced behind its back. Staleness
 * (`staleMs` without a refresh) frees only a lock whose holder's liveness this host cannot check. Each
 * acquisition's record has its own name, so breaking and releasing remove only the instance they mean:
 * two writers breaking one dead lock cannot remove the lock a third has just taken.
 *
 * Longer than 400 lines because every rule of §8 stays in this one file, read top to bottom as the spec
 * is; the operating-system probing the holder record relies on is process.ts.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, rename, rm, rmdir, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { canonicalJson } from '../../canonical/jcs.js';
import { StoreError, ioError } from '../errors.js';
import { errorCode, isNotFound, readRegular, sleep } from './fsutil.js';
import { hostIdentity, processStart, processStat, safeHostname } from './process.js';

export const LOCK_NAME = 'journal.lock';
/**
 * The waiting mark (§8 step 2): a writer that finds the lock held writes a fresh nonce here before each
 * retry, so a holder keeping the lock across commits learns that someone waits and hands it over, and a
 * writer alone never pauses for a hand-off nobody needs. A nonce rather than a timestamp, so that a file
 * system's coarse mtime cannot hide a waiter.
 */
export const WAITING_NAME = 'journal.lock.waiting';
/** A writer's lock in preparation: `.journal.lock.<instance>`, hidden from readers by its leading dot. */
export const STAGING_PREFIX = `.${LOCK_NAME}.`;
/** A holder record's file name inside the lock directory; the instance is 32 random hex digits. */
const RECORD_RE = /^holder-([0-9a-f]{32})\.json$/;
/** A holder record is a few dozen bytes; a larger file is not one (and is never read whole). */
export const MAX_RECORD_BYTES = 1024;

/**
 * A waiting writer polls the lock at least this often (jittered by ±50%): a holder keeps the lock for up
 * to lockHoldMs at a stretch, so waiters poll briskly rather than back off past a hold's end.
 */
export const MAX_POLL_MS = 4;
/** How long a writer that gives the lock up after a full hold waits before taking it again: longer than any waiter's poll interval, so one of them takes it first. */
export const HANDOFF_MS = 8;
/** A waiter reads the holder record at most this often: a poll is one rename(2), an inspection several reads. */
export const INSPECT_MS = 25;

// ---------------------------------------------------------------- the holder record (§8)

export interface HolderRecord {
  /**
   * Names the process table `pid` belongs to: two writers with equal non-null `host` see the same processes
   * under the same pids. Null when the writer cannot name it; then nobody can prove the holder dead.
   */
  host: string | null;
  /** The host's name, for people; never used to decide anything. */
  hostname: string;
  pid: number;
  /** Identifies the process's start: the same for the same process, different for a later one reusing the pid. */
  start: string | null;
}

let own: HolderRecord | undefined;

/** This process's holder record. On Linux: boot id and pid namespace, and the start time from /proc. */
export function ownHolder(): HolderRecord {
  own ??= { host: hostIdentity(), hostname: safeHostname(), pid: process.pid, start: processStart(process.pid) };
  return own;
}

export function serializeHolder(h: HolderRecord): string {
  return canonicalJson({ host: h.host, hostname: h.hostname, pid: h.pid, start: h.start }) + '\n';
}

/** A holder record from its bytes, or null for anything that is not exactly one (JCS and a newline). */
export function parseHolder(text: string): HolderRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const r = v as Record<string, unknown>;
  if (Object.keys(r).sort().join() !== 'host,hostname,pid,start') return null;
  const strOrNull = (x: unknown, max: number): x is string | null =>
    x === null || (typeof x === 'string' && x.length <= max);
  if (!strOrNull(r.host, 200) || typeof r.hostname !== 'string' || r.hostname.length > 255 || !strOrNull(r.start, 64))
    return null;
  // pid 0 and negative pids name process groups to kill(2): never a holder.
  if (typeof r.pid !== 'number' || !Number.isSafeInteger(r.pid) || r.pid < 1 || r.pid > 2 ** 31 - 1) return null;
  const h: HolderRecord = { host: r.host, hostname: r.hostname, pid: r.pid, start: r.start };
  return serializeHolder(h) === text ? h : null;
}

export type HolderVerdict = 'alive' | 'dead' | 'unknown';

/**
 * Whether a holder is provably dead or provably alive (§8). Only on the same host (equal, non-null
 * `host`), where pids mean the same processes. Dead: the pid is gone, it now belongs to a process with
 * another start, or it is a zombie (exited, not yet reaped). Alive: the pid's process has the record's start
 * and is not a zombie — stopped or starved, it is still the holder. Everything else — another host, no host,
 * a start that cannot be read on either side — is unknown, and only staleness frees that lock.
 */
export function holderVerdict(h: HolderRecord): HolderVerdict {
  const me = ownHolder();
  if (h.host === null || me.host === null || h.host !== me.host) return 'unknown';
  try {
    process.kill(h.pid, 0);
  } catch (e) {
    if (errorCode(e) === 'ESRCH') return 'dead';
    // EPERM: a process of another user has that pid; it exists.
  }
  const now = processStat(h.pid);
  if (now === null) return 'unknown'; // e.g. /proc mounted with hidepid: the pid exists, its start is hidden
  if (h.start !== null && now.start !== h.start) return 'dead';
  if ((now.state === 'Z' || now.state === 'X') && now.threads <= 1) return 'dead'; // exited, not yet reaped
  // Without the record's start, the process running under the pid may be a later one that reused it.
  return h.start === null ? 'unknown' : 'alive';
}

// ---------------------------------------------------------------- inspecting a held lock

export interface LockState {
  /** The holder record, or null when the lock holds none, several, or one that cannot be read. */
  holder: HolderRecord | null;
  /** The name of the lock's one holder record file, when it holds exactly one entry of that form. */
  recordName: string | null;
  /** Entries that are not a single holder record; a lock holding any is never broken. */
  foreign: string[];
  /** Milliseconds since the holder last refreshed the lock (its mtime). */
  ageMs: number;
  /** Milliseconds since the holder took the lock (its record's mtime), when known. */
  heldMs: number | null;
  verdict: HolderVerdict;
}

/** Reads the lock without changing anything; null when it is not held. */
export async function inspectLock(dir: string): Promise<LockState | null> {
  const lockPath = join(dir, LOCK_NAME);
  let names: string[];
  let mtime: number;
  try {
    // The listing first, then the mtime: the mtime is then that of the instance listed or of a later one.
    // Read the other way round, a stale instance's mtime could be paired with the record of a fresh lock
    // renamed in between, and a waiter would break that fresh lock.
    names = await readdir(lockPath);
    mtime = (await stat(lockPath)).mtimeMs;
  } catch (e) {
    if (isNotFound(e)) return null;
    if (errorCode(e) === 'ENOTDIR')
      return { holder: null, recordName: null, foreign: [LOCK_NAME], ageMs: 0, heldMs: null, verdict: 'unknown' };
    throw e;
  }
  // An empty lock is being released or broken: it is free, and the next rename(2) replaces it.
  if (names.length === 0) return null;
  const ageMs = Math.max(0, Date.now() - mtime);
  const recordName = names.length === 1 && RECORD_RE.test(names[0]!) ? names[0]! : null;
  if (recordName === null)
    return { holder: null, recordName: null, foreign: names.slice(0, 8), ageMs, heldMs: null, verdict: 'unknown' };
  let holder: HolderRecord | null = null;
  let heldMs: number | null = null;
  try {
    holder = parseHolder((await readRegular(join(lockPath, recordName), MAX_RECORD_BYTES)).toString('utf8'));
    if (holder !== null) heldMs = Math.max(0, Date.now() - (await stat(join(lockPath, recordName))).mtimeMs);
  } catch {
    // gone (released meanwhile), unreadable, a FIFO or too large: an unknown holder, freed by staleness
  }
  return {
    holder,
    recordName,
    foreign: [],
    ageMs,
    heldMs,
    verdict: holder === null ? 'unknown' : holderVerdict(holder),
  };
}

/**
 * Whether a waiter may break the lock now (§8 step 2): one record, and a holder provably dead, or one whose
 * liveness cannot be checked whose lock is stale. A provably alive holder's lock is never broken.
 */
export function mayBreak(state: LockState, staleMs: number): boolean {
  return (
    state.recordName !== null && (state.verdict === 'dead' || (state.verdict === 'unknown' && state.ageMs > staleMs))
  );
}

/** Who holds the lock, in words, for messages. */
export function describeHolder(state: LockState, staleMs: number): string {
  const age = `last refreshed ${(state.ageMs / 1000).toFixed(1)} s ago`;
  if (state.foreign.length > 0)
    return `the lock directory holds ${state.foreign.map((n) => JSON.stringify(n)).join(', ')}, not a holder record`;
  const h = state.holder;
  if (h === null) return `its holder record cannot be read (${age})`;
  const who = `pid ${h.pid}${h.hostname ? ` on ${h.hostname}` : ''}`;
  if (state.verdict === 'dead') return `${who}, which is no longer running`;
  const held = state.heldMs === null ? '' : `held for ${(state.heldMs / 1000).toFixed(1)} s, `;
  if (state.verdict === 'alive')
    return `${who}, which is running (${held}${age}${state.ageMs > staleMs ? '; it may be stopped or hung, and a live holder is never robbed' : ''})`;
  return `${who}, whose liveness this host cannot check (${held}${age})`;
}

// ---------------------------------------------------------------- acquiring (§8 steps 1–2)

export interface LockOptions {
  timeoutMs: number;
  staleMs: number;
}

/**
 * Takes the lock, or fails with LOCK_TIMEOUT after `timeoutMs`. The staging directory holds this writer's
 * record from the start; every attempt is one rename(2) of it onto `journal.lock`, which succeeds when the
 * lock is absent or empty and fails when another holder's record is in it.
 */
export async function acquireLock(dir: string, options: LockOptions): Promise<HeldLock> {
  const lockPath = join(dir, LOCK_NAME);
  const instance = randomBytes(16).toString('hex');
  const staging = join(dir, STAGING_PREFIX + instance);
  const recordName = `holder-${instance}.json`;
  try {
    await mkdir(staging);
    await writeFile(join(staging, recordName), serializeHolder(ownHolder()), { flag: 'wx' });
  } catch (e) {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    throw ioError('preparing the lock in', staging, e);
  }
  const started = Date.now();
  const deadline = started + options.timeoutMs;
  let touched = started;
  let delay = 1;
  let nextInspect = 0;
  let contended = false;
  let seen: LockState | null = null;
  try {
    for (;;) {
      // The lock's mtime is its last refresh: keep the staging directory's fresh, so that a lock just
      // renamed into place is never taken for stale by another waiter.
      if (Date.now() - touched > options.staleMs / 4) {
        const now = new Date();
        await utimes(staging, now, now);
        touched = now.getTime();
      }
      try {
        await rename(staging, lockPath);
        // The record's mtime says since when the lock is held (a waiter's LOCK_TIMEOUT names it); written
        // before the wait, it is set again after one.
        if (contended) await utimes(join(lockPath, recordName), new Date(), new Date()).catch(() => {});
        return new HeldLock(lockPath, recordName, options.staleMs, touched);
      } catch (e) {
        const code = errorCode(e);
        if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw ioError('taking the lock', lockPath, e);
      }
      contended = true;
      if (Date.now() >= nextInspect) {
        nextInspect = Date.now() + INSPECT_MS;
        seen = await inspectLock(dir).catch(() => null);
        if (seen !== null && mayBreak(seen, options.staleMs)) {
          await breakLock(lockPath, seen.recordName!);
          if (Date.now() < deadline) continue;
        }
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new StoreError(
          'LOCK_TIMEOUT',
          `the journal lock ${lockPath} is still held after ${Date.now() - started} ms${seen === null ? '' : ` by ${describeHolder(seen, options.staleMs)}`}`,
          {
            location: { file: lockPath },
            hint:
              seen !== null && seen.foreign.length > 0
                ? `no writer made that; if no writer is running, remove ${lockPath}`
                : seen?.verdict === 'alive'
                  ? `that process is alive, so its lock is never broken: wait for it (raise lockTimeoutMs), or stop pid ${seen.holder!.pid} if it is hung`
                  : `raise lockTimeoutMs; a holder whose liveness cannot be checked loses the lock once it stops refreshing it for staleMs (${options.staleMs} ms)`,
          },
        );
      }
      await markWaiting(dir);
      // Jittered exponential backoff, capped low so that a waiter is polling when a hold ends (HANDOFF_MS).
      await sleep(Math.min(left, delay * (0.5 + Math.random())));
      delay = Math.min(delay * 2, MAX_POLL_MS);
    }
  } catch (e) {
    await rm(staging, { recursive: true, force: true }).catch(() => {});
    throw e;
  }
}

// ---------------------------------------------------------------- holding and releasing (§8 steps 3–4)

/** A held lock: refreshed every staleMs/2 until released; `lost` once it has been broken or not refreshed for staleMs. */
export class HeldLock {
  private readonly recordPath: string;
  private lastRefresh: number;
  private timer: NodeJS.Timeout | null = null;
  private released = false;
  private refreshing: Promise<void> | null = null;
  /** Why the lock is no longer this writer's; null while it is. */
  lost: Error | null = null;

  constructor(
    private readonly lockPath: string,
    readonly recordName: string,
    private readonly staleMs: number,
    refreshedAt: number,
  ) {
    this.recordPath = join(lockPath, recordName);
    this.lastRefresh = refreshedAt;
    this.schedule(staleMs / 2);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.refresh().then(() => {
        if (!this.released && this.lost === null)
          this.schedule(
            Date.now() - this.lastRefresh < this.staleMs / 2 ? this.staleMs / 2 : Math.min(1000, this.staleMs / 4),
          );
      });
    }, ms);
    this.timer.unref();
  }

  /** Sets the lock's mtime to now, then checks the record is still ours: gone means the lock was broken. */
  private refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        if (this.released || this.lost !== null) return;
        const now = new Date();
        await utimes(this.lockPath, now, now);
        await stat(this.recordPath);
        this.lastRefresh = now.getTime();
      } catch (e) {
        if (this.released) return;
        if (isNotFound(e))
          this.lost = new Error(`${this.recordPath} is gone: another writer broke the lock (${errorCode(e)})`);
        else if (Date.now() - this.lastRefresh > this.staleMs)
          this.lost = new Error(`the lock could not be refreshed for ${this.staleMs} ms (${errorCode(e)})`);
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /**
   * Before writing lines (§8 step 3): a lock not refreshed for staleMs/2 — the event loop was busy, or the
   * process stopped — is refreshed and checked first. Resolves to why it was lost, or null while it is held.
   */
  async confirm(): Promise<Error | null> {
    if (this.lost === null && Date.now() - this.lastRefresh > this.staleMs / 2) await this.refresh();
    return this.lost;
  }

  /** Removes the lock if it is still this writer's: its own record first, then the directory. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.refreshing;
    try {
      await unlink(this.recordPath);
    } catch {
      return; // gone: the lock was broken and is no longer ours to remove
    }
    // Not empty or absent: another writer has renamed its lock over the empty one already.
    await rmdir(this.lockPath).catch(() => {});
  }
}

// ---------------------------------------------------------------- breaking (§8 step 5)

/**
 * Breaks the lock instance whose record is `recordName`: only one unlink of that name can succeed, so of
 * two writers breaking the same lock one goes on; rmdir then removes the directory only while it is
 * empty, never a lock another writer has renamed over it meanwhile.
 */
async function breakLock(lockPath: string, recordName: string): Promise<void> {
  try {
    await unlink(join(lockPath, recordName));
  } catch (e) {
    if (isNotFound(e)) return; // released or broken meanwhile
    throw ioError('breaking the lock', lockPath, e);
  }
  try {
    await rmdir(lockPath);
  } catch (e) {
    const code = errorCode(e);
    if (code !== 'ENOENT' && code !== 'ENOTEMPTY' && code !== 'EEXIST') throw ioError('breaking the lock', lockPath, e);
  }
}

/**
 * Removes staging directories that writers killed while waiting for the lock left behind: those whose
 * record names a provably dead process, or (a writer killed between mkdir and writing its record) none and
 * older than `staleMs`. Called under the lock; best effort.
 */
export async function sweepStaging(dir: string, staleMs: number): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(STAGING_PREFIX)) continue;
    const path = join(dir, name);
    try {
      const inside = await readdir(path);
      let dead: boolean;
      if (inside.length === 1 && RECORD_RE.test(inside[0]!)) {
        const h = parseHolder((await readRegular(join(path, inside[0]!), MAX_RECORD_BYTES)).toString('utf8'));
        dead = h !== null && holderVerdict(h) === 'dead';
      } else {
        dead = inside.length === 0 && Date.now() - (await stat(path)).mtimeMs > staleMs;
      }
      if (dead) await rm(path, { recursive: true, force: true });
    } catch {
      // not ours to judge: leave it
    }
  }
}

// ---------------------------------------------------------------- the waiting mark

/**
 * Tells the holder that a writer is waiting. Best effort: a holder that misses a mark sees the next one.
 * Opened without following a link and without blocking, so a FIFO or a link planted under the mark's name
 * neither hangs the waiter nor redirects its write.
 */
async function markWaiting(dir: string): Promise<void> {
  let fh: import('node:fs/promises').FileHandle | undefined;
  try {
    fh = await open(
      join(dir, WAITING_NAME),
      constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o666,
    );
    if ((await fh.stat()).isFile()) await fh.write(randomUUID());
  } catch {
    // a holder that misses this mark sees the next one
  } finally {
    await fh?.close().catch(() => {});
  }
}

/** The waiting mark's content now ('' if there is none); a holder compares it with the one it saw before. */
export async function readWaitingMark(dir: string): Promise<string> {
  try {
    return (await readRegular(join(dir, WAITING_NAME), 64)).toString('utf8');
  } catch {
    return '';
  }
}
