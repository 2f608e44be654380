/**
 * A journal in a directory (spec/FILE-STORE.md): the Journal contract over the file store's parts. Appends
 * are prepared by the shared prepare, queued and group-committed (commit-queue.ts) under the journal lock
 * held across commits (lease.ts, lock.ts), sequenced against the true tail (tail.ts), written with rollback
 * and fsync batching (writer.ts); reads take no lock (reads.ts). Before the lock is let go, head.json is
 * brought up to date (§7).
 */
import { isWriterRefusal } from './tail-checks.js';
import { join } from 'node:path';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { formatTimestamp } from '../../record/fields.js';
import type { StepInput } from '../../record/input.js';
import type { StepRecord } from '../../record/seal.js';
import { CommitQueue, type CommitSink } from '../commit-queue.js';
import { StoreError } from '../errors.js';
import { IdempotencyWindow } from '../idempotency.js';
import { assertSeq } from '../ids.js';
import { appendManyStreaming, queueSteps } from '../append.js';
import { restoreRecord } from '../restore.js';
import { JournalParts } from '../parts-prepare.js';
import { FilePartStore } from './parts.js';
import { knownSteps, linesSince, sequenceBatch, type Group, type GroupOutcome } from '../sequencer.js';
import type {
  AppendOptions,
  AppendResult,
  Journal,
  JournalConfig,
  JournalReport,
  JournalVerifyOptions,
  Lineage,
  RunStateCache,
} from '../types.js';
import { assertOwnDirectories } from './fsutil.js';
import { BUCKETS_DIR, JournalPaths, type JournalMeta } from './layout.js';
import { faultPoint } from '../faults.js';
import {
  STREAM_CHUNK,
  readPending,
  removePending,
  rollBackPending,
  writePending,
  type PendingBatch,
  type StreamedBatch,
} from './batch.js';
import { prepareSteps, type BlobPayload } from '../prepare.js';
import { capabilitiesOf, writerProfile, type Genesis } from '../../record/formats.js';
import { Lease } from './lease.js';
import { acquireLock, sweepStaging, type HeldLock } from './lock.js';
import { readBlob, readHead, readStoredLines, runStateFile } from './reads.js';
import { Tail } from './tail.js';
import { verifyJournalDir } from './verify-dir.js';
import { BucketWriter, type CommittedLine, type FsyncMode } from './writer.js';
import { FileTreeStorage, leafSource } from './tree.js';
import {
  JournalTree,
  MemoryTree,
  signJournalCheckpoint,
  stepLeafHash,
  tileCountAt,
  tileLevelsAt,
  treeRoot,
  type NodeReader,
  type NoteSigner,
  type SignedCheckpoint,
} from '../../proofs/index.js';

/** Pending tile hashes a writer gathers before appending them (128 KiB), within one hold of the lock. */
const TILE_FLUSH = 4096;

export interface FileJournalOptions {
  fsync: FsyncMode;
  lockTimeoutMs: number;
  staleMs: number;
  idempotencyWindow: number;
  batchSyncMs: number;
  lockHoldMs: number;
  lockLingerMs: number;
  /** Called under the lock after a batch's lines are written, before its appends are acknowledged (lines in seq order). */
  afterCommit?: (lines: readonly CommittedLine[]) => Promise<void>;
  /** Follow every commit with the Merkle tree (default true); false defers it to checkpoint() and treeView(). */
  merkleTree?: boolean;
}

export class FileJournal implements Journal {
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  private readonly paths: JournalPaths;
  private readonly window: IdempotencyWindow;
  private readonly tail: Tail;
  private readonly writer: BucketWriter;
  private readonly lease: Lease;
  private readonly queue: CommitQueue;
  private readonly treeStorage: FileTreeStorage;
  private readonly tree: JournalTree;
  /** Set when feeding the tree failed after lines were committed: the state is not persisted, the next hold rebuilds it. */
  private treeBroken = false;
  /** Whether commits feed the tree (FileJournalOptions.merkleTree). */
  private readonly following: boolean;
  private closed = false;
  /** Set while appendStream writes: the queue's commits wait for it. */
  private streaming: Promise<void> | null = null;
  readonly parts: JournalParts | null; // a stepchain/v3 journal's parts (spec/PARTS.md): `parts/` in its directory

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
    this.paths = new JournalPaths(dir);
    this.window = new IdempotencyWindow(options.idempotencyWindow);
    this.tail = new Tail(this.paths, this.genesis, this.window, options.fsync === 'always');
    this.writer = new BucketWriter(this.paths, this.config.segmentBytes, options.fsync, options.batchSyncMs);
    this.treeStorage = new FileTreeStorage(dir);
    this.tree = new JournalTree(this.treeStorage);
    this.following = options.merkleTree !== false;
    this.lease = new Lease(dir, options, {
      acquired: async () => {
        await assertOwnDirectories([this.paths.buckets, join(dir, 'blobs'), this.paths.blobs]);
        await this.tail.sync();
        if (this.following) await this.syncTree();
      },
      releasing: async (wrote) => {
        await this.writer.closeBucket();
        if (wrote && this.tail.state !== null) await this.tail.writeHeadCache();
        if (wrote && this.following && !this.treeBroken) await this.tree.persist().catch(() => {});
        await this.treeStorage.close();
      },
    });
    this.queue = new CommitQueue(this.sink());
    this.parts = capabilitiesOf(this.genesis).parts
      ? new JournalParts(new FilePartStore(dir, { fsync: options.fsync !== 'none' }))
      : null;
  }

  // ---------------------------------------------------------------- appending

  append(step: StepInput, options?: AppendOptions): Promise<AppendResult> {
    return this.enqueue([step], options).then((r) => r[0]!);
  }

  /** A batch longer than STREAM_MANY goes as a stream (FILE-STORE.md §18): the store's memory stays bounded beside the caller's array. */
  appendMany(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return appendManyStreaming(
      steps,
      options,
      (s, o) => this.enqueue(s, o),
      (s, o) => this.appendStream(s, o),
    );
  }

  private enqueue(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return queueSteps(this.queue, this, this.closed, steps, options);
  }

  /** The queue's view of this journal: commit under the lock, hand it off, linger, release. */
  private sink(): CommitSink {
    return {
      commit: (groups) => this.commit(groups),
      beforeBatch: () => this.lease.handOffIfAsked(),
      // A streamed batch's lease is the stream's to let go, never the queue's.
      lingerMs: () => (this.lease.isHeld && this.streaming === null ? this.options.lockLingerMs : null),
      release: () => this.lease.release(),
    };
  }

  /** One batch under the lock: sequence against the true tail, write blobs then lines, record the steps. */
  private async commit(batch: readonly Group[]): Promise<GroupOutcome[]> {
    while (this.streaming !== null) await this.streaming; // a streamed batch holds the journal: appends wait for its end
    try {
      if (!this.lease.isHeld) await this.lease.acquire();
      const tail = this.tail.state!;
      if (tail.hash === null) {
        throw new StoreError('JOURNAL_CORRUPT', `the last step (seq ${tail.seq}) of ${this.dir} could not be read`, {
          hint: 'run verify on the journal',
        });
      }
      const seq = sequenceBatch(
        batch,
        { seq: tail.seq, hash: tail.hash },
        await knownSteps(this.tail.window, batch),
        formatTimestamp(new Date()),
        await linesSince(batch, tail.seq, (from, to) => this.textsUnderLock(from, to)),
      );
      if (seq.lines.length > 0) {
        const blobs = new Map<string, BlobPayload>();
        for (const o of seq.outcomes) if (o.ok) for (const b of o.blobs) blobs.set(b.digest, b);
        await this.writer.writeBlobs([...blobs.values()]);
        await this.lease.confirmBeforeWriting();
        this.tail.state = await this.writer.writeLines(seq.lines, tail);
        faultPoint('after-write');
        this.window.committed(seq.entries);
        await this.followTree(seq.lines);
        await this.options.afterCommit?.(seq.lines);
      }
      return seq.outcomes;
    } catch (e) {
      // Whatever happened, the next batch re-reads the tail from disk under a fresh lock.
      this.tail.state = null;
      await this.lease.release();
      throw e;
    }
  }

  /** Lines `from`..`to` (committed, up to the tail this writer holds the lock at), as texts: what linesSince reads. */
  private async *textsUnderLock(from: number, to: number): AsyncGenerator<string> {
    for await (const l of this.lines({ from, to })) yield l.text;
  }

  /**
   * Appends a stream of steps of any length as one all-or-nothing batch in bounded memory (FILE-STORE.md §18):
   * prepared, sequenced and written `chunk` steps at a time under the lock, behind a pending-batch mark that
   * readers honour and that is removed — the commit point — once every line is written (and durable as the
   * mode says). A refused step, a failed write or a crash leaves none of the batch. Other appends of this
   * journal, and other writers, wait until it ends. Resolves with how many steps the stream held, how many
   * lines it added (idempotent repeats add none) and the seqs of the first and last added.
   */
  async appendStream(
    steps: AsyncIterable<StepInput> | Iterable<StepInput>,
    options: { chunk?: number; onResults?: (results: AppendResult[]) => void; after?: number } = {},
  ): Promise<StreamedBatch> {
    if (this.closed) throw new StoreError('CLOSED', `journal ${this.id} is closed`, { hint: 'open it again' });
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to append',
      });
    const chunk = options.chunk ?? STREAM_CHUNK;
    await this.queue.settle();
    while (this.streaming !== null) await this.streaming;
    let finish!: () => void;
    this.streaming = new Promise((resolve) => (finish = resolve));
    const durable = this.options.fsync !== 'none';
    let marked = false;
    try {
      if (!this.lease.isHeld) await this.lease.acquire();
      const start = this.tail.state!;
      if (start.hash === null)
        throw new StoreError('JOURNAL_CORRUPT', `the last step (seq ${start.seq}) of ${this.dir} could not be read`, {
          hint: 'run verify on the journal',
        });
      const mark: PendingBatch = { bucket: start.bucket, size: start.size, seq: start.seq, step_hash: start.hash };
      await writePending(this.dir, mark, durable);
      marked = true;
      const result: StreamedBatch = { steps: 0, appended: 0, first: null, last: null };
      const profile = writerProfile(this.genesis);
      let tail = { ...start, hash: start.hash };
      let group: StepInput[] = [];
      const flush = async (): Promise<void> => {
        let prepared;
        try {
          prepared = prepareSteps(group, this.config.blobThreshold, profile);
          if (this.parts !== null) prepared = await this.parts.prepare(prepared);
        } catch (e) {
          if (e instanceof Error) {
            const at = /^step (\d+) of the batch: /.exec(e.message);
            e.message = `step ${result.steps + Number(at?.[1] ?? 0)} of the batch: ${e.message.slice(at?.[0].length ?? 0)}`;
          }
          throw e;
        }
        const groups: Group[] = [{ steps: prepared, after: result.steps === 0 ? options.after : undefined }]; // §17
        const seq = sequenceBatch(
          groups,
          { seq: tail.seq, hash: tail.hash },
          await knownSteps(this.tail.window, groups),
          formatTimestamp(new Date()),
        );
        const outcome = seq.outcomes[0]!;
        if (!outcome.ok) throw outcome.error;
        options.onResults?.(outcome.results);
        result.steps += group.length;
        group = [];
        if (seq.lines.length === 0) return;
        const blobs = new Map<string, BlobPayload>();
        for (const b of outcome.blobs) blobs.set(b.digest, b);
        await this.writer.writeBlobs([...blobs.values()]);
        await this.lease.confirmBeforeWriting();
        const next = await this.writer.writeLines(seq.lines, tail);
        this.tail.state = next;
        tail = { ...next, hash: next.hash! };
        this.window.committed(seq.entries);
        await this.followTree(seq.lines); // tiles past the chain, if it is rolled back, are cut at the next sync
        result.appended += seq.lines.length;
        result.first ??= seq.lines[0]!.seq;
        result.last = tail.seq;
      };
      for await (const step of steps) {
        group.push(step);
        if (group.length >= chunk) await flush();
      }
      if (group.length > 0) await flush();
      if (result.steps === 0) throw new StoreError('OPTION_INVALID', 'appendStream was given no steps');
      await this.writer.sync();
      await removePending(this.dir, durable); // the commit point
      marked = false;
      return result;
    } catch (e) {
      this.tail.state = null;
      this.treeBroken = true; // reloaded from what was persisted, at the next hold
      if (marked && this.lease.isHeld) {
        // Cut back under the lock still held; if that fails too, the mark stays and the next writer does it.
        const mark = await readPending(this.dir).catch(() => null);
        if (mark !== null) await rollBackPending(this.dir, this.paths, mark, durable).catch(() => {});
      }
      throw e;
    } finally {
      await this.lease.release().catch(() => {});
      this.streaming = null;
      finish();
    }
  }

  // ---------------------------------------------------------------- the tree (spec/FILE-STORE.md §16)

  /** Under a fresh lock: the tree brought to the chain's end (loaded, caught up, or rebuilt from the lines). */
  private async syncTree(): Promise<void> {
    const tail = this.tail.state!;
    if (tail.hash === null) return; // the commit refuses this journal anyway
    this.treeBroken = false;
    try {
      await this.tree.sync(
        { seq: tail.seq, step_hash: tail.seq < 0 ? null : tail.hash },
        leafSource((from) => readStoredLines(this.paths, { from })),
      );
    } catch (e) {
      this.treeBroken = true;
      if (e instanceof StoreError) throw e;
      throw new StoreError(
        'IO_ERROR',
        `the Merkle tree of ${this.dir} could not be brought up to date: ${e instanceof Error ? e.message : String(e)}`,
        { hint: 'check the tree/ directory; removing it makes the next writer rebuild it', cause: e },
      );
    }
  }

  /** Feeds committed lines to the tree. The lines are the truth: a tree that fails here is rebuilt, the append stands. */
  private async followTree(lines: readonly CommittedLine[]): Promise<void> {
    if (this.treeBroken || !this.following) return;
    try {
      for (const l of lines) this.tree.add(l.seq, l.hash);
      // Tiles are written in chunks and before the lock goes (persist): one-step commits pay no write.
      await this.tree.flushTiles(TILE_FLUSH);
    } catch {
      this.treeBroken = true;
    }
  }

  /**
   * Runs `fn` under this journal's lock (ChainSource.holdingAppends, ERASURE.md §4.1), once this handle's batch
   * in flight is done. Only the lock, not a writer's lease: its hooks (tail repair, head cache, tree) write into
   * a journal opened to be read. A read-only journal whose directory this process cannot write: no lock then.
   */
  holdingAppends<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.between(async () => {
      await this.afterStream();
      const options = { timeoutMs: this.options.lockTimeoutMs, staleMs: this.options.staleMs };
      const lock: HeldLock | null = this.lease.isHeld
        ? null
        : await acquireLock(this.dir, options).catch((e: unknown) => {
            if (!this.readOnly || !deniedWrite(e)) throw e;
            return null;
          });
      try {
        return await fn();
      } finally {
        await lock?.release();
      }
    });
  }

  /** Waits for this handle's own streamed batch (it holds the lock) to end: LOCK_TIMEOUT past the lock timeout. */
  private async afterStream(): Promise<void> {
    const ms = this.options.lockTimeoutMs;
    if (this.streaming !== null && !(await settlesWithin(this.streaming, ms)))
      throw new StoreError(
        'LOCK_TIMEOUT',
        `journal ${this.id}: this handle's streamed batch still holds it after ${ms} ms`,
        {
          location: { file: this.dir },
          hint: 'wait for the batch to end, or copy the journal through another handle',
        },
      );
  }

  /** Runs `fn` under this journal's lock with the tree at the chain's end (appends from this journal wait). */
  private underLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.between(async () => {
      await this.afterStream();
      const mine = !this.lease.isHeld;
      if (mine) await this.lease.acquire();
      try {
        if (this.treeBroken || !this.following) await this.syncTree();
        await this.tree.flushTiles(); // fn reads the tiles
        return await fn();
      } finally {
        if (mine) await this.lease.release();
      }
    });
  }

  /**
   * Signs a checkpoint of the journal's tree now, by the log key `signer` (its name is the origin,
   * spec/PROOFS.md §8.5), and keeps it in checkpoints/ — refused (ProofError CHECKPOINT_REFUSED) unless it
   * extends the last checkpoint this journal signed for that origin (§8.6).
   */
  async checkpoint(signer: NoteSigner): Promise<SignedCheckpoint> {
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to sign a checkpoint',
      });
    return this.underLock(() =>
      signJournalCheckpoint(
        this.tree,
        this.treeStorage,
        signer,
        leafSource((from) => readStoredLines(this.paths, { from })),
      ),
    );
  }

  /** The checkpoints this journal signed (signed notes, in file-name order: by size). */
  async checkpoints(): Promise<string[]> {
    return (await this.treeStorage.readCheckpoints()).map((k) => k.note);
  }

  /**
   * The tree at the journal's current size, for proofs: its size, root and a NodeReader. A writable journal
   * brings its stored tree up to date first; a read-only one uses the stored tree when it matches the head
   * and otherwise builds one in memory from the lines (it never writes).
   */
  async treeView(): Promise<{ size: number; root: Uint8Array; reader: NodeReader }> {
    if (!this.readOnly)
      return this.underLock(async () => ({
        size: this.tree.size,
        root: this.tree.root(),
        reader: this.treeStorage.reader(),
      }));
    const head = await this.head();
    const size = head === null ? 0 : head.seq + 1;
    const stored = await this.treeStorage.readTree();
    if (
      stored !== null &&
      stored.tree.size === size &&
      stored.step_hash === (head?.step_hash ?? null) &&
      (await this.tilesCover(size))
    ) {
      const reader = this.treeStorage.reader();
      return { size, root: await treeRoot(reader, size), reader };
    }
    const memory = new MemoryTree();
    for await (const l of leafSource((from) => readStoredLines(this.paths, { from }))(0)) {
      if (l.seq >= size) break;
      memory.append(stepLeafHash(l.step_hash)!);
    }
    return { size, root: await treeRoot(memory, size), reader: memory };
  }

  private async tilesCover(size: number): Promise<boolean> {
    for (let l = 0; l < tileLevelsAt(size); l++)
      if ((await this.treeStorage.tileCount(l)) < tileCountAt(size, l)) return false;
    return true;
  }

  /** Takes the lock once to repair a torn tail and a stale head cache (the idempotency window is read when first asked). */
  async recover(): Promise<void> {
    this.tail.state = null;
    try {
      await this.lease.acquire();
    } catch (e) {
      if (isWriterRefusal(e)) return; // nothing written; readers verify it, every writer refuses it
      throw e;
    }
    await sweepStaging(this.dir, this.options.staleMs);
    await this.lease.release();
  }

  /** fsyncs every bucket written since the last sync ('batch' mode). */
  sync(): Promise<void> {
    return this.writer.sync();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.close();
    await this.writer.sync();
  }

  /** `.run-state.json` (FILE-STORE.md §19): a run reader's saved state. */
  get runStateCache(): RunStateCache {
    return runStateFile(this.paths.dir, this.readOnly);
  }

  // ---------------------------------------------------------------- reading (no lock)

  head(): Promise<ChainHead | null> {
    return readHead(this.paths);
  }

  lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    return readStoredLines(this.paths, range);
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    const resolve = this.parts?.resolver(); // a stepchain/v3 journal's parts, each checked once per read
    for await (const l of this.lines(range)) {
      const record = await restoreRecord(this.genesis, l.text, l.seq, join(BUCKETS_DIR, l.segment), (ref) =>
        this.blob(ref.digest, ref.size),
      );
      yield resolve === undefined ? record : await resolve(record, l.seq);
    }
  }

  async get(seq: number): Promise<StepRecord | null> {
    assertSeq('seq', seq);
    for await (const r of this.read({ from: seq, to: seq })) return r;
    return null;
  }

  blob(digest: string, size?: number): Promise<Uint8Array | null> {
    return readBlob(this.paths, digest, size);
  }

  async verify(options: JournalVerifyOptions = {}): Promise<JournalReport> {
    // A lingering hold would show as a stale head.json: let it go (a pause; settle waits out endless appends).
    await this.queue.between(() => Promise.resolve());
    return verifyJournalDir(this.dir, { ...options, staleMs: this.options.staleMs });
  }
}

/** Whether taking the lock failed for want of permission to write the journal's directory (its cause's code). */
function deniedWrite(e: unknown): boolean {
  for (let c: unknown = e; c !== null && typeof c === 'object'; c = (c as { cause?: unknown }).cause) {
    const code = (c as { code?: unknown }).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return true;
  }
  return false;
}

/** Whether `p` settles within `ms`. */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([p.then(() => true), late]).finally(() => clearTimeout(timer));
}
