/**
 * The embedded file store (spec/FILE-STORE.md): one directory per journal under a root. Ids are
 * checked before they touch a path, so an id from untrusted input never names anything outside the root.
 * New journals (create, fork) are built in a hidden staging directory and renamed into place, so a
 * journal directory either is complete or does not exist.
 */
import { FilePartStore } from './parts.js';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { makeGenesis } from '../../record/index.js';
import { StoreError, ioError } from '../errors.js';
import { FileJournal, type FileJournalOptions } from './journal.js';
import type { FsyncMode } from './writer.js';
import { confirmUnerased, copyPrefix } from '../fork.js';
import { withAppendsHeld } from '../../chain/source.js';
import { afterLiveErasure } from '../../record/v3/erasure-pending.js';
import { NOT_REGULAR, TOO_LARGE, fsyncDir, isNotFound, readRegular } from './fsutil.js';
import { assertJournalId, intOption, isJournalId } from '../ids.js';
import { defaultConfig, journalConfig } from '../config.js';
import {
  BLOBS_DIR,
  BUCKETS_DIR,
  HEAD_FILE,
  MAX_META_BYTES,
  META_FILE,
  STORE_FORMAT,
  blobFileName,
  bucketName,
  parseMeta,
  serializeHead,
  serializeMeta,
  type JournalMeta,
} from './layout.js';
import { placeLine, type SegmentCursor } from '../segments.js';
import type {
  JournalReport,
  CreateOptions,
  ForkOptions,
  Journal,
  JournalConfig,
  JournalVerifyOptions,
  OpenOptions,
  Store,
} from '../types.js';
import { verifyJournalDir } from './verify-dir.js';
import { RunsIndex, indexJournal } from './runs-index.js';
import { selectRuns, type RunEntry, type RunFilter } from '../runs.js';
import { withStatus } from '../run-progress.js';
import { savedProgress } from './saved-progress.js';
import { recordStaging } from './staging.js';
import { finishRemovals, removeDirectory } from './removing.js';

export const DEFAULT_STALE_MS = 10_000;
/**
 * Twice stale (spec/FILE-STORE.md §8): a waiter outlasts a lock whose holder died where its death cannot be
 * proved (another host), which goes stale at most staleMs after the waiter first finds it. A dead holder on
 * this host is replaced at once.
 */
export const DEFAULT_LOCK_TIMEOUT_MS = 2 * DEFAULT_STALE_MS;
export const DEFAULT_IDEMPOTENCY_WINDOW = 10_000;
export const DEFAULT_BATCH_SYNC_MS = 100;
export const DEFAULT_LOCK_HOLD_MS = 100;
export const DEFAULT_LOCK_LINGER_MS = 2;

export interface FileStoreOptions {
  /** Durability of an acknowledged append (default 'always'); spec/FILE-STORE.md. */
  fsync?: FsyncMode;
  /** How long an append waits for another writer's lock before LOCK_TIMEOUT (default twice staleMs: 20 s). */
  lockTimeoutMs?: number;
  /**
   * A lock not refreshed for this long is taken over (default 10 s, at least 2 s). A lock whose holder is
   * provably dead (a crashed process on this host) is taken over at once; spec/FILE-STORE.md §8.
   */
  staleMs?: number;
  /** How many most recent steps an idempotent retry is guaranteed to be recognized in (default 10,000). */
  idempotencyWindow?: number;
  /** In 'batch' mode, how soon after a write the bucket is fsynced (default 100 ms). */
  batchSyncMs?: number;
  /**
   * A writer with appends queued keeps the journal lock across commits; once it has held it this long
   * (default 100 ms) it lets in any writer that has left a waiting mark meanwhile; spec/FILE-STORE.md §9.
   */
  lockHoldMs?: number;
  /** How long a writer keeps the lock after its last commit in case another append follows (default 2 ms). */
  lockLingerMs?: number;
  /**
   * Keep the journal's Merkle tree on every commit (spec/FILE-STORE.md §16; default true). With false the
   * tree is brought up to date only when a checkpoint or a proof asks for it (one pass over the steps
   * appended since); the benchmark measures the per-commit cost with it.
   */
  merkleTree?: boolean;
  /** Defaults for `create`: segment (bucket file) rotation size and blob threshold. */
  segmentBytes?: number;
  blobThreshold?: number;
}

export class FileStore implements Store {
  readonly root: string;
  private readonly journalOptions: FileJournalOptions;
  private readonly defaults: JournalConfig;
  private readonly runsIndex: RunsIndex;

  constructor(root: string, options: FileStoreOptions = {}) {
    if (typeof root !== 'string' || root.length === 0)
      throw new StoreError('OPTION_INVALID', 'the store root must be a directory path');
    this.root = resolve(root);
    const fsync = options.fsync ?? 'always';
    if (fsync !== 'always' && fsync !== 'batch' && fsync !== 'none') {
      throw new StoreError(
        'OPTION_INVALID',
        `fsync must be 'always', 'batch' or 'none' (got ${JSON.stringify(fsync)})`,
      );
    }
    const staleMs = intOption('staleMs', options.staleMs, DEFAULT_STALE_MS, 2000, 3_600_000);
    this.journalOptions = {
      fsync,
      lockTimeoutMs: intOption('lockTimeoutMs', options.lockTimeoutMs, 2 * staleMs, 0, 7_200_000),
      staleMs,
      idempotencyWindow: intOption(
        'idempotencyWindow',
        options.idempotencyWindow,
        DEFAULT_IDEMPOTENCY_WINDOW,
        1,
        10_000_000,
      ),
      batchSyncMs: intOption('batchSyncMs', options.batchSyncMs, DEFAULT_BATCH_SYNC_MS, 0, 60_000),
      lockHoldMs: intOption('lockHoldMs', options.lockHoldMs, DEFAULT_LOCK_HOLD_MS, 10, 10_000),
      lockLingerMs: intOption('lockLingerMs', options.lockLingerMs, DEFAULT_LOCK_LINGER_MS, 0, 1_000),
      merkleTree: options.merkleTree !== false,
    };
    this.defaults = defaultConfig(options);
    this.runsIndex = new RunsIndex(this.root);
  }

  async create(id: string, options: CreateOptions = {}): Promise<FileJournal> {
    assertJournalId(id);
    const config = journalConfig(options, this.defaults);
    const genesis = makeGenesis(options);
    await this.build(id, async () => ({ format: STORE_FORMAT, genesis, config, lineage: null }));
    return this.open(id);
  }

  async open(id: string, options: OpenOptions = {}): Promise<FileJournal> {
    assertJournalId(id);
    const dir = join(this.root, id);
    const metaPath = join(dir, META_FILE);
    let text: string;
    try {
      text = (await readRegular(metaPath, MAX_META_BYTES)).toString('utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw this.notFound(id, metaPath);
      if (code === NOT_REGULAR || code === TOO_LARGE) {
        throw new StoreError('JOURNAL_INVALID', `${(e as Error).message}: not a journal's metadata file`, {
          location: { file: metaPath },
          hint: 'restore the metadata file from a backup, and check who else can write to the journal directory',
        });
      }
      throw ioError('reading', metaPath, e);
    }
    const journal = new FileJournal(id, dir, parseMeta(text, metaPath), this.journalOptions, options.readOnly === true);
    if (!journal.readOnly) await journal.recover();
    return journal;
  }

  /**
   * Verifies journal `id` read-only without opening it (spec/FILE-STORE.md §13): a metadata file that cannot
   * be opened is reported as JOURNAL_INVALID, like every other defect, rather than thrown.
   */
  async verify(id: string, options: JournalVerifyOptions = {}): Promise<JournalReport> {
    assertJournalId(id);
    const dir = join(this.root, id);
    try {
      if (!(await stat(dir)).isDirectory()) throw this.notFound(id, dir);
    } catch (e) {
      if (e instanceof StoreError) throw e;
      if (isNotFound(e)) throw this.notFound(id, dir);
      throw ioError('reading', dir, e);
    }
    return verifyJournalDir(dir, { ...options, staleMs: this.journalOptions.staleMs });
  }

  private notFound(id: string, file: string): StoreError {
    return new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} under ${this.root}`, {
      location: { file },
      hint: 'create it first, or check the id with list()',
    });
  }

  /**
   * Without a filter: the ids of every journal, sorted. With one (even `{}`): the ids of the run journals
   * (stepchain/v2) that match it, in chronological order (FORMAT §11.1).
   */
  async list(filter?: RunFilter): Promise<string[]> {
    if (filter !== undefined) return (await this.runs(filter)).map((r) => r.id);
    let entries;
    try {
      entries = await readdir(this.root, { withFileTypes: true });
    } catch (e) {
      if (isNotFound(e)) return [];
      throw ioError('listing', this.root, e);
    }
    const ids: string[] = [];
    for (const e of entries) {
      if (!e.isDirectory() || !isJournalId(e.name)) continue;
      try {
        await stat(join(this.root, e.name, META_FILE));
        ids.push(e.name);
      } catch {
        // not a journal directory
      }
    }
    return ids.sort();
  }

  /** The run journals matching the filter, with their identity, in chronological order: from the run index (runs-index.ts). */
  async runs(filter: RunFilter = {}): Promise<RunEntry[]> {
    let entries;
    try {
      // Copies: the index keeps its entries between listings, and a progress is this listing's alone.
      entries = selectRuns(await this.runsIndex.runs(), filter).map((e) => ({ ...e }));
    } catch (e) {
      throw ioError('listing the runs under', this.root, e);
    }
    // Each run's progress from its saved state when that is current (FILE-STORE.md §19), without opening
    // the journal; the others are folded for a status filter (withStatus), or by the caller that wants them.
    for (const e of entries) {
      const progress = await savedProgress(join(this.root, e.id), e.run_id);
      if (progress !== null) e.progress = progress;
    }
    return withStatus(this, entries, filter);
  }

  async fork(parent: Journal, options: ForkOptions): Promise<FileJournal> {
    if (options === null || typeof options !== 'object')
      throw new StoreError('OPTION_INVALID', 'fork takes { fromStep, to }');
    assertJournalId(options.to, 'fork target id');
    const config: JournalConfig = {
      blobThreshold: parent.config.blobThreshold,
      segmentBytes: parent.config.segmentBytes,
    };
    const durable = this.journalOptions.fsync !== 'none';
    // A fork that meets an erase between its record and its rewrite waits for it (record/v3/erasure-pending.ts).
    await afterLiveErasure(async () => {
      let checkedTo = options.fromStep;
      await this.build(
        options.to,
        async (staging) => {
          let fh: import('node:fs/promises').FileHandle | null = null;
          let cursor: SegmentCursor = { first: 0, size: 0 };
          let parts: Buffer[] = [];
          let partBytes = 0;
          const flush = async (): Promise<void> => {
            if (fh !== null && partBytes > 0) await fh.write(Buffer.concat(parts));
            parts = [];
            partBytes = 0;
          };
          const closeBucket = async (): Promise<void> => {
            await flush();
            if (fh !== null) {
              if (durable) await fh.sync();
              await fh.close();
              fh = null;
            }
          };
          try {
            const copied = await copyPrefix(parent, options.fromStep, {
              line: async (text, seq) => {
                const buf = Buffer.from(text + '\n', 'utf8');
                const next = placeLine(cursor, seq, buf.length, config.segmentBytes);
                if (fh === null || next.first !== cursor.first) {
                  await closeBucket();
                  fh = await open(join(staging, BUCKETS_DIR, bucketName(next.first)), 'wx');
                }
                cursor = next;
                parts.push(buf);
                partBytes += buf.length;
                if (partBytes >= 1 << 20) await flush();
              },
              part: (address, bytes) =>
                new FilePartStore(staging, { fsync: durable }).put([{ address, bytes, indexKey: '' }]),
              blob: async (digest, bytes) => {
                const bh = await open(join(staging, BLOBS_DIR, blobFileName(digest)), 'wx');
                try {
                  await bh.writeFile(bytes);
                  if (durable) await bh.sync();
                } finally {
                  await bh.close();
                }
              },
            });
            await closeBucket();
            const lineage = copied.lineage;
            checkedTo = copied.checkedTo;
            await writeNew(
              join(staging, HEAD_FILE),
              serializeHead({ seq: lineage.from_step, step_hash: lineage.parent_step_hash }),
              durable,
            );
            return { format: STORE_FORMAT, genesis: parent.genesis, config, lineage } satisfies JournalMeta;
          } finally {
            if (fh !== null) await (fh as import('node:fs/promises').FileHandle).close().catch(() => {});
          }
        },
        {
          // Under the parent's lock no erase can record an erasure between this last look and the rename.
          hold: (fn) => withAppendsHeld(parent, fn),
          check: () => confirmUnerased(parent, options.fromStep, checkedTo),
        },
      );
    });
    return this.open(options.to);
  }

  /**
   * Removes journal `id` whole (spec/FILE-STORE.md §15): its directory is renamed to a hidden name under the
   * root — the commit point, after which no reader finds it — and then deleted. A crash in between leaves
   * only a hidden directory, which nothing lists. Removing a journal another writer still has open is the
   * caller's decision: that writer's next append fails.
   */
  async remove(id: string): Promise<void> {
    assertJournalId(id);
    const dir = join(this.root, id);
    try {
      await stat(join(dir, META_FILE));
    } catch (e) {
      if (isNotFound(e)) throw this.notFound(id, dir);
      throw ioError('reading', dir, e);
    }
    await removeDirectory(this.root, dir, this.journalOptions.fsync !== 'none', () => this.notFound(id, dir));
  }

  /** Deletes what a killed `remove` left (removing.ts); how many. */
  finishRemovals(): Promise<number> {
    return finishRemovals(this.root);
  }

  /**
   * Builds journal `id` in a staging directory (staging.ts) and renames it to `<root>/<id>`: the commit point,
   * so a crash leaves no journal or a complete one, and a staging directory the next build removes once its
   * builder is provably dead. `placing`: a check run just before the rename, both inside `hold` (a fork's last
   * look for erasure records, under its parent's lock).
   */
  private async build(
    id: string,
    fill: (staging: string) => Promise<JournalMeta>,
    placing?: { hold: <T>(fn: () => Promise<T>) => Promise<T>; check: () => Promise<void> },
  ): Promise<void> {
    const dir = join(this.root, id);
    try {
      await mkdir(this.root, { recursive: true });
    } catch (e) {
      throw ioError('creating the store root', this.root, e);
    }
    const exists = async (): Promise<boolean> => {
      try {
        await stat(dir);
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw ioError('checking', dir, e);
      }
    };
    const taken = (): StoreError =>
      new StoreError('JOURNAL_EXISTS', `journal ${JSON.stringify(id)} already exists under ${this.root}`, {
        location: { file: dir },
        hint: 'open it, or choose another id',
      });
    if (await exists()) throw taken();
    const { dir: staging, done } = await recordStaging(this.root);
    const durable = this.journalOptions.fsync !== 'none';
    try {
      await mkdir(join(staging, BUCKETS_DIR), { recursive: true });
      await mkdir(join(staging, BLOBS_DIR), { recursive: true });
      const meta = await fill(staging);
      await writeNew(join(staging, META_FILE), serializeMeta(meta), durable);
      const made = [join(staging, BUCKETS_DIR), join(staging, BLOBS_DIR), join(staging, 'blobs'), staging];
      if (durable) for (const d of made) await fsyncDir(d);
      if (await exists()) throw taken();
      const place = async (): Promise<void> => {
        await placing?.check();
        try {
          await rename(staging, dir);
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          if (code === 'ENOTEMPTY' || code === 'EEXIST') throw taken();
          throw ioError('renaming the new journal into', dir, e);
        }
        if (durable) await fsyncDir(this.root);
      };
      await (placing === undefined ? place() : placing.hold(place));
      await indexJournal(this.root, id, meta.genesis, meta.lineage);
    } catch (e) {
      await rm(staging, { recursive: true, force: true }).catch(() => {});
      if (e instanceof StoreError) throw e;
      throw ioError('creating journal', dir, e);
    } finally {
      await done();
    }
  }
}

async function writeNew(path: string, data: string, durable: boolean): Promise<void> {
  const fh = await open(path, 'wx');
  try {
    await fh.writeFile(data);
    if (durable) await fh.sync();
  } finally {
    await fh.close();
  }
}
