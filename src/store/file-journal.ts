/**
 * A journal in a directory (spec/FORMAT.md §8): JSONL buckets, content-addressed blobs, a head cache,
 * all written under the journal lock. Appends from one process are group-committed: one write per bucket
 * and one fsync per batch. The writer keeps the lock across batches while appends keep coming, reads the
 * true tail whenever it takes the lock afresh (another process may have appended), and brings head.json
 * up to date before it lets the lock go (§8.9).
 */
import { constants } from 'node:fs';
import { lstat, open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { isDigest } from '../canonical/sha256.js';
import { formatTimestamp } from '../record/fields.js';
import { formatOf, genesisHash, writerProfile, type Genesis } from '../record/formats.js';
import type { StepInput } from '../record/input.js';
import type { StepRecord } from '../record/seal.js';
import type { ChainHead, SeqRange, StoredLine } from '../chain/source.js';
import { StoreError, ioError } from './errors.js';
import { NOT_REGULAR, fsyncDir, isNotFound, openRegular, readExactly, readRegular, sizeOf, sleep, writeFileAtomic } from './fsutil.js';
import { checkRange, assertSeq } from './ids.js';
import { BLOBS_DIR, BUCKETS_DIR, HEAD_FILE, MAX_HEAD_BYTES, blobFileName, bucketFirstSeq, bucketName, parseHead, serializeHead, type JournalMeta } from './layout.js';
import { readLastLine, readLines, type RawLine } from './lines.js';
import { HANDOFF_MS, acquireLock, readWaitingMark, sweepStaging, type HeldLock } from './lock.js';
import { prepareSteps, type BlobPayload, type PreparedStep } from './prepare.js';
import { blobSizeError, restoreRecord } from './restore.js';
import { IdempotencyWindow } from './idempotency.js';
import { placeLine } from './segments.js';
import { knownSteps, sequenceBatch, type Group } from './sequencer.js';
import type { FsyncMode } from './file-store.js';
import type { AppendResult, Journal, JournalConfig, JournalReport, JournalVerifyOptions, Lineage } from './types.js';
import { verifyJournalDir } from './verify-dir.js';

// Bucket files are opened for writing without following a symbolic link: another local user able to write
// in the journal directory could otherwise plant one and redirect a writer's lines into any file the writer
// may write (test/hardening/faults.test.ts, "symbolic links planted in the journal directory").
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
const REWRITE_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW;

export interface FileJournalOptions {
  fsync: FsyncMode;
  lockTimeoutMs: number;
  staleMs: number;
  idempotencyWindow: number;
  batchSyncMs: number;
  lockHoldMs: number;
  lockLingerMs: number;
}

/** The lock while this writer holds it across commits (spec/FORMAT.md §8.9). */
interface Lease {
  lock: HeldLock;
  since: number;
  /** The open bucket's handle, kept between commits of one hold. */
  bucket: { first: number; handle: FileHandle } | null;
  /** Whether this hold wrote lines, so head.json must be brought up to date before release. */
  wrote: boolean;
  /** The waiting mark as last read: a different one means another writer has asked for the lock since. */
  waitingMark: string;
}

/** Where the committed chain ends, as last read under the lock. */
interface WriterTail {
  /** First seq of the bucket the next line goes to (if it fits). */
  bucket: number;
  /** Byte length of that bucket's whole lines. */
  size: number;
  seq: number;
  /** step_hash at `seq` (the genesis hash at -1); null only for a line counted but not parsed. */
  hash: string | null;
}

interface Pending extends Group {
  resolve: (results: AppendResult[]) => void;
  reject: (error: unknown) => void;
}

/** At most this many calls go into one group commit, bounding a batch's memory. */
const MAX_GROUPS_PER_BATCH = 4096;

export class FileJournal implements Journal {
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  private readonly bucketsDir: string;
  private readonly blobsDir: string;
  private tail: WriterTail | null = null;
  private readonly window: IdempotencyWindow;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private lease: Lease | null = null;
  /** Wakes a lingering drain when an append arrives or the journal closes. */
  private wake: (() => void) | null = null;
  private closed = false;
  private readonly dirty = new Set<string>();
  private dirtyDirs = new Set<string>();
  private syncTimer: NodeJS.Timeout | null = null;
  private syncing: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    readonly dir: string,
    meta: JournalMeta,
    private readonly options: FileJournalOptions,
    readonly readOnly: boolean,
  ) {
    this.genesis = meta.genesis;
    this.lineage = meta.lineage;
    this.config = meta.config;
    this.bucketsDir = join(dir, BUCKETS_DIR);
    this.blobsDir = join(dir, BLOBS_DIR);
    this.window = new IdempotencyWindow(options.idempotencyWindow);
  }

  // ---------------------------------------------------------------- appending

  append(step: StepInput): Promise<AppendResult> {
    return this.enqueue([step]).then((r) => r[0]!);
  }

  appendMany(steps: readonly StepInput[]): Promise<AppendResult[]> {
    if (!Array.isArray(steps)) return Promise.reject(new StoreError('OPTION_INVALID', 'appendMany takes an array of steps'));
    if (steps.length === 0) return Promise.resolve([]);
    return this.enqueue(steps);
  }

  private enqueue(steps: readonly StepInput[]): Promise<AppendResult[]> {
    if (this.closed) return Promise.reject(new StoreError('CLOSED', `journal ${this.id} is closed`, { hint: 'open it again' }));
    if (this.readOnly) {
      return Promise.reject(new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, { hint: 'open it without readOnly to append' }));
    }
    let prepared: PreparedStep[];
    try {
      prepared = prepareSteps(steps, this.config.blobThreshold, writerProfile(this.genesis));
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ steps: prepared, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.wake !== null) {
      this.wake();
      return;
    }
    if (this.flushing !== null) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  /**
   * Commits the queue in batches. The lock is kept between batches while appends keep coming (a caller
   * awaiting each append re-appends within microseconds), so a busy writer pays for the lock and the head
   * cache once per hold, not once per append; it is released after lockLingerMs without appends, and
   * after lockHoldMs if another writer has left its waiting mark meanwhile, when this writer pauses so that
   * one of the waiters gets it. Alone, a writer keeps the lock for as long as its appends keep coming.
   */
  private async drain(): Promise<void> {
    for (;;) {
      // Let every append issued in this turn of the event loop (and every caller just acknowledged) join.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.queue.length > 0) {
        if (this.lease !== null && Date.now() - this.lease.since >= this.options.lockHoldMs) {
          const mark = await readWaitingMark(this.dir);
          if (mark !== this.lease.waitingMark) {
            await this.releaseLease();
            await sleep(HANDOFF_MS);
          } else {
            this.lease.since = Date.now(); // nobody is waiting: keep the lock for another hold
          }
        }
        await this.commit(this.queue.splice(0, MAX_GROUPS_PER_BATCH));
        continue;
      }
      if (this.lease === null) return;
      if (!this.closed && (await this.appendArrives(this.options.lockLingerMs))) continue;
      await this.releaseLease();
      if (this.queue.length === 0) return;
    }
  }

  /** Resolves true as soon as an append is queued, false after `ms` without one (or on close). */
  private appendArrives(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => done(false), ms);
      const done = (arrived: boolean): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve(arrived);
      };
      this.wake = () => done(this.queue.length > 0);
    });
  }

  private async commit(batch: Pending[]): Promise<void> {
    let settle: () => void;
    try {
      if (this.lease === null) await this.acquireLease();
      const tail = this.tail!;
      if (tail.hash === null) {
        throw new StoreError('JOURNAL_CORRUPT', `the last step (seq ${tail.seq}) of ${this.dir} could not be read`, { hint: 'run verify on the journal' });
      }
      const seq = sequenceBatch(batch, { seq: tail.seq, hash: tail.hash }, await knownSteps(this.window, batch), formatTimestamp(new Date()));
      if (seq.lines.length > 0) {
        const blobs = new Map<string, BlobPayload>();
        for (const o of seq.outcomes) if (o.ok) for (const b of o.blobs) blobs.set(b.digest, b);
        await this.writeBlobs([...blobs.values()]);
        // Sequencing a large batch can keep the event loop from refreshing the lock: confirm it is still ours.
        const lost = await this.lease!.lock.confirm();
        if (lost !== null) {
          throw new StoreError('LOCK_COMPROMISED', `the lock on ${this.dir} was lost before writing (${lost.message}); nothing was written`, {
            hint: 'retry the append; the journal re-reads its tail under a fresh lock',
          });
        }
        this.lease!.wrote = true;
        await this.writeLines(seq.lines);
        this.window.committed(seq.entries);
      }
      settle = () => seq.outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.results) : batch[i]!.reject(o.error)));
    } catch (e) {
      // Whatever happened, the next batch re-reads the tail from disk under a fresh lock.
      this.tail = null;
      await this.releaseLease();
      settle = () => batch.forEach((p) => p.reject(e));
    }
    // The lines are as durable as the mode promises: acknowledge now, whether or not the lock is kept.
    settle();
  }

  /** Takes the lock and reads the true tail: another writer may have appended since this one last held it. */
  private async acquireLease(): Promise<void> {
    const lock = await acquireLock(this.dir, { timeoutMs: this.options.lockTimeoutMs, staleMs: this.options.staleMs });
    this.lease = { lock, since: Date.now(), bucket: null, wrote: false, waitingMark: '' };
    try {
      this.lease.waitingMark = await readWaitingMark(this.dir);
      await this.assertOwnDirectories();
      await this.syncTail();
    } catch (e) {
      await this.releaseLease();
      throw e;
    }
  }

  /** Brings the head cache up to the chain, then releases the lock (§8.7: before every release). */
  private async releaseLease(): Promise<void> {
    const lease = this.lease;
    if (lease === null) return;
    this.lease = null;
    await lease.bucket?.handle.close().catch(() => {});
    if (lease.wrote && this.tail !== null && lease.lock.lost === null) await this.writeHeadCache();
    await lease.lock.release();
  }

  /** Takes the lock once to repair a torn tail and a stale head cache and to load the idempotency window. */
  async recover(): Promise<void> {
    this.tail = null;
    await this.acquireLease();
    await sweepStaging(this.dir, this.options.staleMs);
    await this.releaseLease();
  }

  // --------------------------------------------------------- the tail, under the lock

  /**
   * The directories a writer creates files in must be the journal's own, not symbolic links planted to
   * redirect its writes elsewhere. Checked under the lock before anything is written.
   */
  private async assertOwnDirectories(): Promise<void> {
    for (const d of [this.bucketsDir, join(this.dir, 'blobs'), this.blobsDir]) {
      let kind: 'directory' | 'symlink' | 'other';
      try {
        const st = await lstat(d);
        kind = st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
      } catch (e) {
        if (isNotFound(e)) continue;
        throw ioError('checking', d, e);
      }
      if (kind !== 'directory') {
        throw new StoreError('JOURNAL_INVALID', `${d} is ${kind === 'symlink' ? 'a symbolic link' : 'not a directory'}; a writer writes only inside the journal's own directories`, {
          location: { file: d },
          hint: 'restore the journal directory from a backup, and check who else can write to it',
        });
      }
    }
  }

  private bucketPath(first: number): string {
    return join(this.bucketsDir, bucketName(first));
  }

  private async listBuckets(): Promise<number[]> {
    let names: string[];
    try {
      names = await readdir(this.bucketsDir);
    } catch (e) {
      throw ioError('listing', this.bucketsDir, e);
    }
    const seqs: number[] = [];
    for (const n of names) {
      const s = bucketFirstSeq(n);
      if (s !== null) seqs.push(s);
    }
    return seqs.sort((a, b) => a - b);
  }

  /** Reads the true tail under the lock; a system error on the way is an IO_ERROR naming the buckets. */
  private async syncTail(): Promise<void> {
    try {
      await this.readTail();
    } catch (e) {
      if (e instanceof StoreError) throw e;
      throw ioError('reading the tail of', this.bucketsDir, e);
    }
  }

  private async readTail(): Promise<void> {
    if (this.tail !== null) {
      await this.scanForward(0);
      return;
    }
    const buckets = await this.listBuckets();
    this.window.clear();
    if (buckets.length === 0) {
      this.tail = { bucket: 0, size: 0, seq: -1, hash: genesisHash(this.genesis) };
    } else {
      // Find the head from the last whole line, then start reading where the idempotency window begins.
      let head = buckets[buckets.length - 1]! - 1;
      for (let i = buckets.length - 1; i >= 0; i--) {
        const { line } = await readLastLine(this.bucketPath(buckets[i]!));
        if (line === null) continue;
        let seq: unknown;
        try {
          seq = (JSON.parse(line.bytes.toString('utf8')) as { seq?: unknown }).seq;
        } catch {
          seq = undefined;
        }
        head = typeof seq === 'number' && Number.isSafeInteger(seq) ? seq : buckets[i]! + (await this.countLines(buckets[i]!)) - 1;
        break;
      }
      const from = Math.max(0, head - this.window.size + 1);
      let start = 0;
      for (let i = 0; i < buckets.length; i++) if (buckets[i]! <= from) start = i;
      const first = buckets[start]!;
      this.tail = { bucket: first, size: 0, seq: first - 1, hash: first === 0 ? genesisHash(this.genesis) : null };
      await this.scanForward(from);
    }
    await this.repairHeadCache();
  }

  private async countLines(first: number): Promise<number> {
    let n = 0;
    for await (const l of readLines(this.bucketPath(first))) if (l.terminated) n++;
    return n;
  }

  /** Reads whole lines past the known tail, across buckets; quarantines a torn final line. */
  private async scanForward(parseFrom: number): Promise<void> {
    const tail = this.tail!;
    for (;;) {
      const path = this.bucketPath(tail.bucket);
      const size = await sizeOf(path).catch((e) => {
        throw ioError('reading', path, e);
      });
      if (size === null) {
        if (tail.size === 0 && tail.seq === tail.bucket - 1) return; // the next bucket is not created yet
        throw new StoreError('JOURNAL_CORRUPT', `bucket ${path} disappeared after seq ${tail.seq} was committed in it`, {
          location: { file: path, seq: tail.seq },
          hint: 'restore the bucket from a backup',
        });
      }
      if (size < tail.size) {
        throw new StoreError('JOURNAL_CORRUPT', `bucket ${path} shrank to ${size} bytes below its committed ${tail.size}`, {
          location: { file: path, seq: tail.seq },
          hint: 'committed steps were removed; restore the bucket from a backup',
        });
      }
      if (size > tail.size) {
        for await (const raw of readLines(path, tail.size, MAX_LINE_BYTES)) {
          if (!raw.terminated) {
            // Only the journal's final line can be a torn write; a later bucket means damage, not a crash.
            if (tail.seq + 1 !== tail.bucket && (await sizeOf(this.bucketPath(tail.seq + 1))) !== null) {
              throw new StoreError('JOURNAL_CORRUPT', `${path} ends inside a line, but bucket ${bucketName(tail.seq + 1)} follows it`, {
                location: { file: path, seq: tail.seq + 1 },
                hint: 'run verify on the journal and restore the bucket from a backup',
              });
            }
            await this.quarantine(path, raw.start);
            break;
          }
          this.absorb(raw, path, tail.seq + 1 >= parseFrom);
          tail.size = raw.end;
        }
      }
      const next = tail.seq + 1;
      if (next === tail.bucket || (await sizeOf(this.bucketPath(next))) === null) return;
      tail.bucket = next;
      tail.size = 0;
    }
  }

  private absorb(raw: RawLine, path: string, parse: boolean): void {
    const tail = this.tail!;
    const seq = tail.seq + 1;
    if (!parse) {
      tail.seq = seq;
      tail.hash = null;
      return;
    }
    const corrupt = (why: string): never => {
      throw new StoreError('JOURNAL_CORRUPT', `${path} line ${seq - tail.bucket + 1} (seq ${seq}): ${why}; refusing to append to a broken chain`, {
        location: { file: path, line: seq - tail.bucket + 1, seq },
        hint: 'run verify on the journal to see every problem',
      });
    };
    if (raw.tooLong) return corrupt(`the line is longer than ${MAX_LINE_BYTES} bytes`);
    let rec: StepRecord;
    try {
      rec = JSON.parse(raw.bytes.toString('utf8')) as StepRecord;
    } catch {
      return corrupt('not JSON');
    }
    if (rec === null || typeof rec !== 'object') return corrupt('not a JSON object');
    if (rec.seq !== seq) return corrupt(`seq is ${String(rec.seq)}`);
    if (!isDigest(rec.step_hash)) return corrupt('step_hash is not a digest');
    if (tail.hash !== null && rec.prev_hash !== tail.hash) return corrupt(`prev_hash does not link to seq ${tail.seq}`);
    tail.seq = seq;
    tail.hash = rec.step_hash;
    if (typeof rec.step_id === 'string') {
      this.window.add(rec.step_id, { seq, step_hash: rec.step_hash, prev_hash: rec.prev_hash, key: formatOf(this.genesis).select((n) => (rec as unknown as Record<string, unknown>)[n]).recordKey(rec as unknown as Record<string, unknown>), ts: rec.ts });
    }
  }

  /** Moves a torn final line (bytes from `from` to the end) into a quarantine file, then cuts it off. */
  private async quarantine(path: string, from: number): Promise<void> {
    try {
      const base = path.slice(path.lastIndexOf('/') + 1);
      const taken = new Set(await readdir(this.bucketsDir));
      let n = 1;
      while (taken.has(`${base}.quarantine-${n}`)) n++;
      const qpath = `${path}.quarantine-${n}`;
      const fh = await open(qpath, 'wx');
      try {
        await copyFrom(path, from, fh);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsyncDir(this.bucketsDir);
      const bh = await open(path, REWRITE_FLAGS);
      try {
        await bh.truncate(from);
        await bh.sync();
      } finally {
        await bh.close();
      }
    } catch (e) {
      throw ioError('quarantining the torn tail of', path, e);
    }
  }

  private async repairHeadCache(): Promise<void> {
    const tail = this.tail!;
    const path = join(this.dir, HEAD_FILE);
    let cached: { seq: number; step_hash: string } | null = null;
    let present = true;
    try {
      cached = parseHead((await readRegular(path, MAX_HEAD_BYTES)).toString('utf8'));
    } catch (e) {
      // Unreadable (a FIFO, too large, …) is stale like a wrong one: it is replaced below.
      present = !isNotFound(e);
    }
    if (tail.seq < 0) {
      if (present) await unlink(path).catch(() => {});
      return;
    }
    if (cached === null || cached.seq !== tail.seq || cached.step_hash !== tail.hash) await this.writeHeadCache();
  }

  // ---------------------------------------------------------------- writing

  private async writeBlobs(blobs: BlobPayload[]): Promise<void> {
    if (blobs.length === 0) return;
    const durable = this.options.fsync !== 'none';
    let created = false;
    for (const b of blobs) {
      const path = join(this.blobsDir, blobFileName(b.digest));
      try {
        if ((await sizeOf(path)) === b.bytes.length) continue; // stored once; verify checks its hash
        await writeFileAtomic(path, b.bytes, { fsyncFile: durable, fsyncDir: false });
        created = true;
      } catch (e) {
        throw ioError('writing blob', path, e);
      }
    }
    if (created && durable) await fsyncDir(this.blobsDir).catch((e) => {
      throw ioError('syncing', this.blobsDir, e);
    });
  }

  private async writeLines(lines: Array<{ seq: number; text: string; hash: string }>): Promise<void> {
    const tail = this.tail!;
    // Split into bucket segments: a line starts a new bucket when the current one is non-empty and the
    // line would take it past segmentBytes.
    // Each segment is encoded once, as a whole: one allocation per write rather than one per line.
    const segments: Array<{ first: number; texts: string[]; bytes: number }> = [];
    let cur = { first: tail.bucket, texts: [] as string[], bytes: 0 };
    let cursor = { first: tail.bucket, size: tail.size };
    for (const l of lines) {
      const bytes = Buffer.byteLength(l.text, 'utf8');
      cursor = placeLine(cursor, l.seq, bytes, this.config.segmentBytes);
      if (cursor.first !== cur.first) {
        if (cur.texts.length > 0) segments.push(cur);
        cur = { first: l.seq, texts: [], bytes: 0 };
      }
      cur.texts.push(l.text);
      cur.bytes += bytes;
    }
    segments.push(cur);

    const undo: Array<{ path: string; size: number; created: boolean }> = [];
    const always = this.options.fsync === 'always';
    const lease = this.lease!;
    let newBucket = false;
    try {
      for (const seg of segments) {
        const path = this.bucketPath(seg.first);
        // The open bucket's committed length is known from the tail; only an empty or new bucket is stat'ed.
        const before = seg.first === tail.bucket && tail.size > 0 ? tail.size : await sizeOf(path);
        undo.push({ path, size: before ?? 0, created: before === null });
        if (before === null) newBucket = true;
        if (lease.bucket?.first !== seg.first) {
          await lease.bucket?.handle.close().catch(() => {});
          lease.bucket = null; // stays null if the open below fails: no closed handle is kept
          lease.bucket = { first: seg.first, handle: await open(path, APPEND_FLAGS, 0o666) };
        }
        const fh = lease.bucket.handle;
        const data = Buffer.from(seg.texts.join(''), 'utf8');
        let off = 0;
        while (off < data.length) off += (await fh.write(data, off, data.length - off)).bytesWritten;
        if (always) await fh.sync();
        if (this.options.fsync === 'batch') this.dirty.add(path);
      }
      if (newBucket) {
        if (always) await fsyncDir(this.bucketsDir);
        else if (this.options.fsync === 'batch') this.dirtyDirs.add(this.bucketsDir);
      }
    } catch (e) {
      await lease.bucket?.handle.close().catch(() => {});
      lease.bucket = null;
      for (const u of undo.reverse()) {
        try {
          if (u.created) await unlink(u.path);
          else {
            const fh = await open(u.path, REWRITE_FLAGS);
            await fh.truncate(u.size).finally(() => fh.close());
          }
        } catch {
          // the next lock holder quarantines whatever remains
        }
      }
      throw ioError('appending to', undo[undo.length - 1]?.path ?? this.bucketsDir, e);
    }
    const last = segments[segments.length - 1]!;
    const lastLine = lines[lines.length - 1]!;
    this.tail = {
      bucket: last.first,
      size: (last.first === tail.bucket ? tail.size : 0) + last.bytes,
      seq: lastLine.seq,
      hash: lastLine.hash,
    };
    if (this.options.fsync === 'batch') this.scheduleSync();
  }

  private async writeHeadCache(): Promise<void> {
    const tail = this.tail!;
    if (tail.hash === null || tail.seq < 0) return;
    try {
      await writeFileAtomic(join(this.dir, HEAD_FILE), serializeHead({ seq: tail.seq, step_hash: tail.hash }), {
        fsyncFile: false,
        fsyncDir: this.options.fsync === 'always',
      });
    } catch {
      // The cache is only a cache: the chain is the truth, and the next open rewrites it.
    }
  }

  private scheduleSync(): void {
    if (this.syncTimer !== null) return;
    this.syncTimer = setTimeout(() => {
      this.syncTimer = null;
      this.syncing = this.syncing.then(() => this.flushDirty());
    }, this.options.batchSyncMs);
    this.syncTimer.unref();
  }

  /** fsyncs every bucket written since the last sync ('batch' mode). */
  async sync(): Promise<void> {
    if (this.syncTimer !== null) {
      clearTimeout(this.syncTimer);
      this.syncTimer = null;
    }
    this.syncing = this.syncing.then(() => this.flushDirty());
    await this.syncing;
  }

  private async flushDirty(): Promise<void> {
    const paths = [...this.dirty];
    const dirs = [...this.dirtyDirs];
    this.dirty.clear();
    this.dirtyDirs.clear();
    for (const p of paths) {
      try {
        const { handle: fh } = await openRegular(p);
        try {
          await fh.sync();
        } finally {
          await fh.close();
        }
      } catch {
        // a bucket that vanished has nothing left to sync
      }
    }
    for (const d of dirs) await fsyncDir(d).catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.letGo();
    await this.sync();
  }

  // ---------------------------------------------------------------- reading (no lock)

  async head(): Promise<ChainHead | null> {
    const buckets = await this.listBuckets();
    for (let i = buckets.length - 1; i >= 0; i--) {
      const path = this.bucketPath(buckets[i]!);
      const { line } = await readLastLine(path).catch((e) => {
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

  async *lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    const { from, to: wanted } = checkRange(range);
    // Bound the walk by the head as it is now, so a reader never chases concurrent appends.
    const head = await this.head();
    if (head === null) return;
    const to = Math.min(wanted ?? head.seq, head.seq);
    if (from > to) return;
    const buckets = await this.listBuckets();
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
        throw new StoreError('JOURNAL_CORRUPT', `bucket ${name} should start at seq ${seq}: steps are missing or repeated between buckets`, {
          location: { file: join(BUCKETS_DIR, name), seq: first },
          hint: 'run verify on the journal and restore the missing bucket from a backup',
        });
      }
      const lines = readLines(join(this.bucketsDir, name), 0, MAX_LINE_BYTES);
      for await (const raw of wrapIo(lines, join(this.bucketsDir, name))) {
        if (!raw.terminated) break;
        if (raw.tooLong && seq >= from) {
          throw new StoreError('JOURNAL_CORRUPT', `${join(BUCKETS_DIR, name)} seq ${seq}: the line is longer than ${MAX_LINE_BYTES} bytes`, {
            location: { file: join(BUCKETS_DIR, name), seq },
            hint: 'run verify on the journal to locate the damage',
          });
        }
        if (seq >= from) yield { segment: name, seq, text: raw.bytes.toString('utf8') };
        if (seq >= to) return;
        seq++;
      }
    }
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    for await (const l of this.lines(range)) {
      yield await restoreRecord(this.genesis, l.text, l.seq, join(BUCKETS_DIR, l.segment), (ref) => this.blob(ref.digest, ref.size));
    }
  }

  async get(seq: number): Promise<StepRecord | null> {
    assertSeq('seq', seq);
    for await (const r of this.read({ from: seq, to: seq })) return r;
    return null;
  }

  async blob(digest: string, size?: number): Promise<Uint8Array | null> {
    if (!isDigest(digest)) return null;
    const path = join(this.blobsDir, blobFileName(digest));
    let opened: { handle: FileHandle; size: number };
    try {
      opened = await openRegular(path);
    } catch (e) {
      if (isNotFound(e)) return null;
      if ((e as NodeJS.ErrnoException).code === NOT_REGULAR) {
        throw new StoreError('BLOB_CORRUPT', `blob ${digest}: ${(e as Error).message}`, { location: { file: path }, hint: 'restore blobs/sha256/ from a backup' });
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

  /** Commits what is queued and lets the lock go now instead of after lockLingerMs. */
  private async letGo(): Promise<void> {
    while (this.flushing !== null) {
      this.wake?.();
      await this.flushing;
    }
  }

  async verify(options: JournalVerifyOptions = {}): Promise<JournalReport> {
    // This writer's own lingering hold would show as a stale head.json; a verify sees it settled.
    await this.letGo();
    return verifyJournalDir(this.dir, { ...options, staleMs: this.options.staleMs });
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

/** Copies the bytes of `path` from offset `from` to its end into `to`, a chunk at a time (a torn tail may be long). */
async function copyFrom(path: string, from: number, to: FileHandle): Promise<void> {
  const { handle, size } = await openRegular(path);
  try {
    const chunk = Buffer.allocUnsafe(Math.min(1 << 20, Math.max(1, size - from)));
    for (let pos = from; pos < size; ) {
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
