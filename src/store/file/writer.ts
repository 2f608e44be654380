/**
 * Writing committed bytes into a journal directory, under the lock (spec/FILE-STORE.md §5, §6, §12):
 * blobs first (atomically, each once), then the batch's lines, one write per bucket segment, rolled back
 * as a whole if any write fails; fsync as the durability mode says, deferred and batched in 'batch' mode.
 * The open bucket's handle is kept between the commits of one hold of the lock.
 *
 * No write on a stale view (§8.9 step 6): right before each write the bucket's length must still be the one
 * the lines were sequenced against, and right after it must have grown by exactly this write — otherwise
 * another writer appended (one that took the lock believing this writer gone: on another host, after
 * staleness) and the batch fails with LOCK_COMPROMISED instead of forking the chain unseen. A rollback cuts
 * back only bytes that are still provably this writer's own, never another writer's line.
 */
import { constants, fstatSync } from 'node:fs';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import { StoreError, ioError } from '../errors.js';
import { faultPlanned, faultPoint } from '../faults.js';
import type { BlobPayload } from '../prepare.js';
import { placeLine } from '../segments.js';
import { fsyncDir, openRegular, sizeOf, writeFileAtomic } from './fsutil.js';
import type { JournalPaths } from './layout.js';
import type { TailState } from './tail.js';

// Bucket files are opened for writing without following a symbolic link: another local user able to write
// in the journal directory could otherwise plant one and redirect a writer's lines into any file the writer
// may write (test/hardening/faults.test.ts, "symbolic links planted in the journal directory").
const APPEND_FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;
const REWRITE_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW;

/** `fsync` durability modes; see spec/FILE-STORE.md §12 for what each promises when append resolves. */
export type FsyncMode = 'always' | 'batch' | 'none';

/** A sealed line of a batch, with its newline. */
export interface CommittedLine {
  seq: number;
  text: string;
  hash: string;
}

export class BucketWriter {
  /** The open bucket's handle, kept between commits of one hold. */
  private bucket: { first: number; handle: FileHandle } | null = null;
  private readonly deferred: DeferredSync;
  /**
   * Encodes each batch's lines; its buffer is reused across the commits of one hold of the lock (they run
   * one at a time, and each awaits its writes) and let go with the lock, so an idle journal holds none.
   */
  private readonly encoder = new LineEncoder();

  constructor(
    private readonly paths: JournalPaths,
    private readonly segmentBytes: number,
    private readonly fsync: FsyncMode,
    batchSyncMs: number,
  ) {
    this.deferred = new DeferredSync(batchSyncMs);
  }

  /** Stores each blob once (content-addressed): written atomically, fsynced unless the mode is 'none'. */
  async writeBlobs(blobs: readonly BlobPayload[]): Promise<void> {
    if (blobs.length === 0) return;
    const durable = this.fsync !== 'none';
    let created = false;
    for (const b of blobs) {
      const path = this.paths.blob(b.digest);
      try {
        if ((await sizeOf(path)) === b.bytes.length) continue; // stored once; verify checks its hash
        await writeFileAtomic(path, b.bytes, { fsyncFile: durable, fsyncDir: false });
        created = true;
      } catch (e) {
        throw ioError('writing blob', path, e);
      }
    }
    if (created && durable)
      await fsyncDir(this.paths.blobs).catch((e: unknown) => {
        throw ioError('syncing', this.paths.blobs, e);
      });
  }

  /**
   * Appends a batch's lines after `tail`, rotating buckets by the shared rule; returns the tail after
   * them. All or nothing: on a failure every bucket is cut back (or removed) to where it was.
   */
  async writeLines(lines: readonly CommittedLine[], tail: TailState): Promise<TailState> {
    const { data, segments } = this.encoder.encode(lines, tail, this.segmentBytes);
    const undo: Undo[] = [];
    let newBucket = false;
    try {
      for (const seg of segments) {
        const path = this.paths.bucket(seg.first);
        // The open bucket's committed length is known from the tail; only an empty or new bucket is stat'ed.
        const before = seg.first === tail.bucket && tail.size > 0 ? tail.size : await sizeOf(path);
        const u: Undo = { path, size: before ?? 0, created: before === null, end: null };
        undo.push(u);
        if (before === null) newBucket = true;
        const bytes = data.subarray(seg.start, seg.end);
        await this.write(seg.first, path, bytes, u.size, lines.find((l) => l.seq >= seg.first)?.seq ?? seg.first);
        u.end = u.size + bytes.length;
      }
      if (newBucket) {
        if (this.fsync === 'always') await fsyncDir(this.paths.buckets);
        else if (this.fsync === 'batch') this.deferred.dirs.add(this.paths.buckets);
      }
    } catch (e) {
      await this.closeBucket();
      await rollBack(undo, e);
      if (e instanceof StoreError) throw e;
      throw ioError('appending to', undo[undo.length - 1]?.path ?? this.paths.buckets, e);
    }
    if (this.fsync === 'batch') this.deferred.schedule();
    const last = segments[segments.length - 1]!;
    const lastLine = lines[lines.length - 1]!;
    return {
      bucket: last.first,
      size: (last.first === tail.bucket ? tail.size : 0) + last.end - last.start,
      seq: lastLine.seq,
      hash: lastLine.hash,
    };
  }

  /**
   * One segment's bytes, through the kept handle of its bucket, which must be `expected` bytes long when
   * the write starts and `expected + data.length` when it ends (fstat: one system call, no thread-pool hop).
   */
  private async write(first: number, path: string, data: Buffer, expected: number, firstSeq: number): Promise<void> {
    if (this.bucket?.first !== first) {
      await this.closeHandle(); // stays null if the open below fails: no closed handle is kept
      this.bucket = { first, handle: await open(path, APPEND_FLAGS, 0o666) };
    }
    const fh = this.bucket.handle;
    faultPoint('after-confirm');
    const size = fstatSync(fh.fd).size;
    if (size !== expected) {
      throw new StoreError(
        'LOCK_COMPROMISED',
        `${path} is ${size} bytes, not the ${expected} this writer read under its lock: another writer appended meanwhile (it took the lock believing this writer gone); nothing of this batch was acknowledged, and none of it was written there`,
        {
          location: { file: path, seq: firstSeq },
          hint: 'retry the append; the journal re-reads its tail under a fresh lock',
        },
      );
    }
    let off = 0;
    // The fault battery's "killed mid-commit" needs a torn line: only then is the write split in two.
    if (faultPlanned('mid-write') && data.length > 1) {
      off += (await fh.write(data, 0, data.length >> 1)).bytesWritten;
      faultPoint('mid-write');
    }
    while (off < data.length) off += (await fh.write(data, off, data.length - off)).bytesWritten;
    const after = fstatSync(fh.fd).size;
    if (after !== expected + data.length) {
      throw new StoreError(
        'LOCK_COMPROMISED',
        `${path} grew by ${after - expected} bytes during this writer's write of ${data.length}: another writer wrote at the same time, and the journal may now hold two steps with seq ${firstSeq}; this batch was not acknowledged`,
        {
          location: { file: path, seq: firstSeq },
          hint: 'run stepchain verify on the journal; a retry with the same step_id finds a step that was committed',
        },
      );
    }
    if (this.fsync === 'always') await fh.sync();
    if (this.fsync === 'batch') this.deferred.files.add(path);
  }

  /** Lets go of the open bucket and of the encoding buffer (when the lock is released, or after a failed write). */
  async closeBucket(): Promise<void> {
    this.encoder.release();
    await this.closeHandle();
  }

  private async closeHandle(): Promise<void> {
    const open = this.bucket;
    this.bucket = null;
    await open?.handle.close().catch(() => {});
  }

  /** fsyncs every bucket written since the last sync ('batch' mode). */
  sync(): Promise<void> {
    return this.deferred.now();
  }
}

/** A run of a batch's lines that goes to one bucket: bytes [start, end) of the batch's encoding. */
interface Segment {
  first: number;
  start: number;
  end: number;
}

/** A batch's encoding is kept for the next batch unless it grew past this (one large batch keeps no large buffer). */
const KEEP_BYTES = 4 << 20;
const EMPTY = Buffer.alloc(0);

/**
 * A batch's lines encoded once into one buffer, and split by the bucket each goes to: a line starts a new
 * bucket when the current one is non-empty and the line would take it past segmentBytes. Each line's
 * UTF-8 length comes from encoding it, not from a separate Buffer.byteLength pass over it, and no joined
 * string is built: the sealed lines are ropes, and each pass over a rope re-walks it (measured on bench/'s
 * 1.2 KB steps: writeLines took a sixth of appendMany's CPU with byteLength + join + Buffer.from, a third of that now).
 */
class LineEncoder {
  private buf = EMPTY;

  encode(
    lines: readonly CommittedLine[],
    tail: TailState,
    segmentBytes: number,
  ): { data: Buffer; segments: Segment[] } {
    const segments: Segment[] = [];
    let cur: Segment = { first: tail.bucket, start: 0, end: 0 };
    let cursor = { first: tail.bucket, size: tail.size };
    let buf = this.buf;
    let off = 0;
    for (const l of lines) {
      // A UTF-16 unit takes at most 3 bytes of UTF-8, so this much room always holds the line whole.
      const room = off + 3 * l.text.length;
      if (room > buf.length) {
        const next = Buffer.allocUnsafe(Math.max(room, 2 * buf.length));
        buf.copy(next, 0, 0, off);
        buf = next;
      }
      const bytes = buf.write(l.text, off, 'utf8');
      cursor = placeLine(cursor, l.seq, bytes, segmentBytes);
      if (cursor.first !== cur.first) {
        if (cur.end > cur.start) segments.push(cur);
        cur = { first: l.seq, start: off, end: off };
      }
      off += bytes;
      cur.end = off;
    }
    segments.push(cur);
    this.buf = buf.length <= KEEP_BYTES ? buf : EMPTY;
    return { data: buf, segments };
  }

  release(): void {
    this.buf = EMPTY;
  }
}

/** A bucket a batch writes: its length before, whether the batch created it, and its length after the batch's write (null until written). */
interface Undo {
  path: string;
  size: number;
  created: boolean;
  end: number | null;
}

/**
 * Cuts every bucket of a failed batch back to its length before it (a new one is removed) — only where the
 * bucket still ends where this batch's write left it, so that no other writer's line is ever cut off. A
 * write that failed part-way is cut back too: nobody else writes while the lock is held.
 */
async function rollBack(undo: Undo[], failed: unknown): Promise<void> {
  // Compromised: another writer's bytes may follow this one's, so only buckets written whole are cut back.
  const compromised = failed instanceof StoreError && failed.code === 'LOCK_COMPROMISED';
  for (const u of undo.reverse()) {
    if (compromised && u.end === null) continue;
    try {
      const fh = await open(u.path, REWRITE_FLAGS);
      try {
        const size = fstatSync(fh.fd).size;
        if (u.end !== null && size !== u.end) continue;
        if (u.created) await unlink(u.path);
        else await fh.truncate(u.size);
      } finally {
        await fh.close();
      }
    } catch {
      // the next lock holder quarantines whatever remains
    }
  }
}

/** 'batch' mode: the files and directories written since the last sync, fsynced batchSyncMs after a write. */
class DeferredSync {
  readonly files = new Set<string>();
  readonly dirs = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private syncing: Promise<void> = Promise.resolve();

  constructor(private readonly delayMs: number) {}

  schedule(): void {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.syncing = this.syncing.then(() => this.flush());
    }, this.delayMs);
    this.timer.unref();
  }

  async now(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.syncing = this.syncing.then(() => this.flush());
    await this.syncing;
  }

  private async flush(): Promise<void> {
    const files = [...this.files];
    const dirs = [...this.dirs];
    this.files.clear();
    this.dirs.clear();
    for (const p of files) {
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
}
