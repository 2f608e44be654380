/**
 * A journal in a SQLite file behind the Journal contract (spec/SQLITE.md §6): the Postgres journal's
 * structure on SQLite's locking. Appends are prepared by the shared prepare and group-committed by the
 * shared CommitQueue, whose sink is one BEGIN IMMEDIATE transaction per batch: read the head row (the write
 * lock is already held), ask the step_id index once, sequenceBatch against the head, place each line in
 * its bucket by the shared rotation rule, insert blobs and lines, feed the Merkle tree, move the head row,
 * COMMIT. An append resolves only after COMMIT returned; nothing is held between batches.
 */
import { isDigest } from '../../canonical/sha256.js';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { signJournalCheckpoint, type SignedCheckpoint } from '../../proofs/keeper.js';
import { stepLeafHash } from '../../proofs/hash.js';
import { MemoryTree, treeRoot, type NodeReader } from '../../proofs/nodes.js';
import type { NoteSigner } from '../../proofs/note.js';
import { formatTimestamp } from '../../record/fields.js';
import type { Genesis } from '../../record/formats.js';
import type { StepInput } from '../../record/input.js';
import type { StepRecord } from '../../record/seal.js';
import { appendManyStreaming, queueSteps, writeRefusal } from '../append.js';
import { type StreamedBatch, type StreamOptions } from '../stream.js';
import { streamRows } from '../rows/stream.js';
import { capabilitiesOf } from '../../record/formats.js';
import { CommitQueue } from '../commit-queue.js';
import { StoreError } from '../errors.js';
import { assertSeq } from '../ids.js';
import type { JournalMeta } from '../meta.js';
import type { BlobPayload } from '../prepare.js';
import { restoreRecord } from '../restore.js';
import { JournalParts } from '../parts-prepare.js';
import { withPartProblems } from '../parts-verify.js';
import { SqlitePartStore, deleteUnreferencedParts } from './parts.js';
import {
  blobOfRow,
  clashError,
  committedSteps,
  headOfRow,
  placeLines,
  rowLines,
  rowTexts,
  type LockedHead,
} from '../rows/lines.js';
import { catchUpAndFollow, planTreeStep, rowLeaves, stateAtHead, syncTree } from '../rows/tree.js';
import {
  knownSteps,
  linesSince,
  sequenceBatch,
  type Group,
  type GroupOutcome,
  type SequencedBatch,
} from '../sequencer.js';
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
import { nextTurn, type SqliteFile } from './db.js';
import type { Connection } from './driver.js';
import {
  dropRunState,
  insertBlobs,
  insertLines,
  isConstraint,
  lastLine,
  linesPage,
  linesWithStepIds,
  lockedHead,
  putRunState,
  readBlob,
  runStateRow,
  updateHead,
} from './sql.js';
import { advanceRunState, keepsRunState } from '../rows/run-state.js';
import { SqliteTreeStorage, writeTreeStep } from './tree.js';
import { verifySqliteJournal } from './verify.js';
import { type LineRewrite, type LineRewriter, type RewriteOutcome } from '../rewrite.js';

/** What journals and the verifier share: the file, and the writers' settings. */
export interface SqliteContext {
  db: SqliteFile;
  /** The file as people may see it. */
  display: string;
  idempotencyWindow: number;
  /** Whether commits feed the tree (SqliteStoreOptions.merkleTree). */
  merkleTree: boolean;
}

export class SqliteJournal implements Journal, LineRewriter {
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  private readonly queue: CommitQueue;
  private closed = false;
  /** A stepchain/v3 journal's parts (spec/PARTS.md §7): tables parts and part_index, written through the store's writer connection. */
  readonly parts: JournalParts | null;
  private readonly partStore: SqlitePartStore | null;

  constructor(
    private readonly ctx: SqliteContext,
    readonly id: string,
    /** The journal's row key (journals.key). */
    readonly key: number,
    meta: JournalMeta,
    readonly readOnly: boolean,
  ) {
    this.genesis = meta.genesis;
    this.lineage = meta.lineage;
    this.config = meta.config;
    // Nothing is kept between batches: each is its own transaction, and the write lock ends with it.
    this.queue = new CommitQueue({
      commit: (groups) => this.commit(groups),
      beforeBatch: async () => {},
      lingerMs: () => null,
      release: async () => {},
    });
    // Through the store's own connections: the writer's queue of transactions, and the reader (parts.ts).
    this.partStore = capabilitiesOf(this.genesis).parts ? new SqlitePartStore(ctx.db, id) : null;
    this.parts = this.partStore === null ? null : new JournalParts(this.partStore);
  }

  private get where(): string {
    return `${this.ctx.display} journal ${this.id}`;
  }

  private gone(): StoreError {
    return new StoreError('JOURNAL_NOT_FOUND', `journal ${this.id} is no longer in ${this.ctx.display}`, {
      hint: 'something removed it; restore the file from a backup',
    });
  }

  /** Runs `fn` on the reader connection; the journal's file without a store is JOURNAL_NOT_FOUND. */
  private onReader<T>(doing: string, fn: (db: Connection) => T): T {
    const out = this.ctx.db.read(`${doing} journal ${this.id}`, (db) => ({ value: fn(db) }));
    if (out === null) throw this.gone();
    return out.value;
  }

  /** Runs `fn` in a write transaction holding the head row as it is under SQLite's write lock. */
  private underLock<T>(doing: string, fn: (db: Connection, head: LockedHead) => Promise<T> | T): Promise<T> {
    return this.ctx.db.write(`${doing} journal ${this.id}`, (db) => {
      const head = lockedHead(db, this.key);
      if (head === null) throw this.gone();
      return fn(db, head);
    });
  }

  // ---------------------------------------------------------------- appending

  append(step: StepInput, options?: AppendOptions): Promise<AppendResult> {
    return this.enqueue([step], options).then((r) => r[0]!);
  }

  /** A batch longer than STREAM_MANY goes as a stream (appendStream): the store's memory stays bounded beside the caller's array. */
  appendMany(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return appendManyStreaming(
      steps,
      options,
      (s, o) => this.enqueue(s, o),
      (s, o) => this.appendStream(s, o),
    );
  }

  /**
   * Appends a stream of steps of any length as one all-or-nothing batch in bounded memory (SQLITE.md §6):
   * one write transaction (BEGIN IMMEDIATE) for the whole stream, its steps prepared, sequenced and
   * inserted `chunk` at a time against the head row as the transaction left it, a v3 journal's parts in the
   * same transaction, then one COMMIT. A refused step, a failed write or a crash before COMMIT leaves none
   * of the batch (SQLite rolls the transaction back; after a crash, its frames in the WAL are never
   * committed). Readers see the chain as it was until COMMIT; other writers, in this process or others,
   * wait for SQLite's write lock — another process's append fails with LOCK_TIMEOUT if the batch holds it
   * longer than its lock timeout.
   */
  async appendStream(
    steps: AsyncIterable<StepInput> | Iterable<StepInput>,
    options: StreamOptions = {},
  ): Promise<StreamedBatch> {
    const refused = writeRefusal(this, this.closed);
    if (refused !== null) throw refused;
    return this.underLock('appending a streamed batch to', (db, start) =>
      streamRows(steps, options, {
        genesis: this.genesis,
        blobThreshold: this.config.blobThreshold,
        // The parts on the transaction's own connection: stored, or rolled back, with the lines.
        parts: capabilitiesOf(this.genesis).parts ? new JournalParts(new SqlitePartStore(db, this.id)) : null,
        start,
        write: async (head, prepared) => {
          const outcome = (await this.commitOn(db, head, [{ steps: prepared }]))[0]!;
          const next = outcome.ok ? lockedHead(db, this.key) : head;
          if (next === null) throw this.gone();
          return nextTurn().then(() => ({ outcome, head: next })); // timers and I/O run between chunks (SQLITE.md §6.2)
        },
      }),
    );
  }

  private enqueue(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return queueSteps(this.queue, this, this.closed, steps, options);
  }

  /** The queue's sink: one transaction for a batch of append calls; each call's outcome on its own. */
  private commit(groups: readonly Group[]): Promise<GroupOutcome[]> {
    return this.underLock('appending to', (db, head) => this.commitOn(db, head, groups));
  }

  /** Inside a write transaction whose head row reads `head`: sequences `groups` and writes their lines, blobs, tree and head. */
  private async commitOn(db: Connection, head: LockedHead, groups: readonly Group[]): Promise<GroupOutcome[]> {
    const index = {
      lookup: (ids: readonly string[]) =>
        committedSteps(
          linesWithStepIds(db, this.key, [...new Set(ids)], head.seq, this.ctx.idempotencyWindow),
          this.genesis,
          this.where,
        ),
      committed: () => {},
      clear: () => {},
    };
    const batch = sequenceBatch(
      groups,
      { seq: head.seq, hash: head.hash },
      await knownSteps(index, groups),
      formatTimestamp(new Date()),
      await linesSince(groups, head.seq, (from, to) =>
        rowTexts((a, b) => Promise.resolve(linesPage(db, this.key, a, b)), from, to),
      ),
    );
    if (batch.lines.length === 0) return batch.outcomes;
    const { lines, tail } = placeLines(batch, head, this.config.segmentBytes);
    const blobs = new Map<string, BlobPayload>();
    for (const o of batch.outcomes) if (o.ok) for (const b of o.blobs) blobs.set(b.digest, b);
    insertBlobs(db, this.key, [...blobs.values()]);
    // The tree (spec/SQLITE.md §4.1): the fast path when its state is the head's; otherwise caught up
    // from the rows first (before the new rows are in), in this transaction.
    const treeStep = this.ctx.merkleTree ? planTreeStep(head, batch.lines, this.where) : null;
    if (this.ctx.merkleTree && treeStep === null)
      await catchUpAndFollow(this.treeStorage(db), head, this.leaves(db), batch.lines);
    try {
      insertLines(db, this.key, lines);
    } catch (e) {
      if (isConstraint(e, 'PRIMARYKEY')) throw clashError(this.id, head.seq + 1, e);
      throw e;
    }
    if (treeStep !== null) writeTreeStep(db, this.key, treeStep);
    updateHead(db, this.key, tail);
    if (keepsRunState(this.genesis)) await this.advanceRunState(db, head, batch.lines);
    return batch.outcomes;
  }

  /**
   * The run_state row after the batch's lines (spec/SQLITE.md §4.2), in the append's transaction. A line
   * that cannot be folded (a blob or part unreadable here) removes the row instead of failing the append:
   * readers then fold the run from its records, and the next append folds it again.
   */
  private async advanceRunState(db: Connection, head: LockedHead, lines: SequencedBatch['lines']): Promise<void> {
    const resolve = this.parts?.resolver();
    try {
      const row = await advanceRunState(
        {
          runId: this.genesis.journal_id,
          row: runStateRow(db, this.key),
          head: { seq: head.seq, step_hash: head.hash },
          older: (to) => rowLines(async (from, end) => linesPage(db, this.key, from, end), { from: 0, to }, this.where),
          restore: async (text, seq) => {
            const record = await restoreRecord(this.genesis, text, seq, this.where, async (ref) =>
              blobOfRow(readBlob(db, this.key, ref.digest, ref.size), ref.digest, ref.size, this.where),
            );
            return resolve === undefined ? record : resolve(record, seq);
          },
        },
        lines,
      );
      putRunState(db, this.key, row);
    } catch {
      dropRunState(db, this.key);
    }
  }

  /** The run_state row's saved state (spec/SQLITE.md §4.2): written by appends only, so there is no write. */
  get runStateCache(): RunStateCache | undefined {
    if (!keepsRunState(this.genesis)) return undefined;
    return {
      read: async () => this.onReader('reading the run state of', (db) => runStateRow(db, this.key)?.state ?? null),
    };
  }

  private treeStorage(db: Connection): SqliteTreeStorage {
    return new SqliteTreeStorage(() => db, this.key);
  }

  private leaves(db: Connection) {
    return rowLeaves(async (from, to) => linesPage(db, this.key, from, to), this.where);
  }

  // ---------------------------------------------------------------- reading

  async head(): Promise<ChainHead | null> {
    return headOfRow(
      this.onReader('reading the head of', (db) => lastLine(db, this.key)),
      this.where,
    );
  }

  lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    return rowLines(
      async (from, to) => this.onReader('reading', (db) => linesPage(db, this.key, from, to)),
      range,
      this.where,
      async () => (await this.head())?.seq ?? null,
    );
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    const resolve = this.parts?.resolver(); // a stepchain/v3 journal's parts, each checked once per read
    for await (const l of this.lines(range)) {
      const record = await restoreRecord(this.genesis, l.text, l.seq, this.where, (ref) =>
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

  async blob(digest: string, size?: number): Promise<Uint8Array | null> {
    if (!isDigest(digest)) return null;
    return blobOfRow(
      this.onReader(`reading blob ${digest} of`, (db) => readBlob(db, this.key, digest, size)),
      digest,
      size,
      this.where,
    );
  }

  verify(options: JournalVerifyOptions = {}): Promise<JournalReport> {
    const parts = this.parts;
    if (parts === null) return verifySqliteJournal(this.ctx, this.id, options);
    return verifySqliteJournal(this.ctx, this.id, options).then((r) =>
      withPartProblems(r, this.lines(), (a, size) => parts.store.get(a, size)),
    );
  }

  // ---------------------------------------------------------------- the tree (spec/SQLITE.md §4.1)

  /**
   * Signs a checkpoint of the journal's tree now, by the log key `signer`, and keeps it in the checkpoints
   * table — refused (ProofError CHECKPOINT_REFUSED) unless it extends the last checkpoint this journal signed
   * for that origin (spec/PROOFS.md §8.6). One write transaction: appends and other signers, in any process,
   * wait, and the note is handed out only after its row committed.
   */
  async checkpoint(signer: NoteSigner): Promise<SignedCheckpoint> {
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to sign a checkpoint',
      });
    return this.underLock('signing a checkpoint of', async (db, head) => {
      const tree = await syncTree(this.treeStorage(db), head, this.leaves(db));
      return signJournalCheckpoint(tree, this.treeStorage(db), signer, this.leaves(db));
    });
  }

  /** The checkpoints this journal signed (signed notes, by size). */
  async checkpoints(): Promise<string[]> {
    const storage = new SqliteTreeStorage(() => this.onReader('reading the checkpoints of', (db) => db), this.key);
    return (await storage.readCheckpoints()).map((k) => k.note);
  }

  /**
   * The tree at the journal's current size, for proofs: its size, root and a NodeReader. A writable journal
   * brings its stored tree up to date first (in a write transaction); a read-only one uses the stored tree
   * when it is the head's and otherwise builds one in memory from the rows (it never writes). Tile rows
   * below the state's size never change, so the reader may read them after the transaction.
   */
  async treeView(): Promise<{ size: number; root: Uint8Array; reader: NodeReader }> {
    const storage = new SqliteTreeStorage(() => this.onReader('reading the tree of', (db) => db), this.key);
    if (!this.readOnly) {
      const size = await this.underLock(
        'updating the tree of',
        async (db, head) => (await syncTree(this.treeStorage(db), head, this.leaves(db))).size,
      );
      const reader = storage.reader();
      return { size, root: await treeRoot(reader, size), reader };
    }
    const head = this.onReader('reading the tree of', (db) => lockedHead(db, this.key));
    if (head === null) throw this.gone();
    const size = head.seq + 1;
    if (stateAtHead(head) !== null) {
      const reader = storage.reader();
      return { size, root: await treeRoot(reader, size), reader };
    }
    const memory = new MemoryTree();
    for await (const l of rowLeaves(
      async (from, to) => this.onReader('reading', (db) => linesPage(db, this.key, from, to)),
      this.where,
    )(0)) {
      if (l.seq >= size) break;
      memory.append(stepLeafHash(l.step_hash)!);
    }
    return { size, root: await treeRoot(memory, size), reader: memory };
  }

  // ---------------------------------------------------------------- erasure

  /**
   * Replaces the line of `seq` in place (spec/ERASURE.md §6.1, SQLITE.md §6.4): in one write transaction (the writer
   * connection has secure_delete on, so the old row's bytes and overflow pages are overwritten with zeros
   * rather than left in free space); the parts the old line named that no line and no other part references
   * any more, and the run_state row (it holds the values as folded: readers fold the sealed records, and the
   * next append writes it again), go in the same transaction. After COMMIT the WAL, which still holds page
   * images of the old row, is checkpointed into the file and truncated to zero bytes.
   */
  async rewriteLine(seq: number, rewrite: (line: string) => LineRewrite | null): Promise<RewriteOutcome | null> {
    assertSeq('seq', seq);
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to erase',
      });
    const done = await this.underLock('erasing a value of', (db, head) => {
      const row = db.prepare('SELECT line, bucket FROM steps WHERE journal = ? AND seq = ?').get(this.key, seq) as
        { line: string; bucket: number } | undefined;
      if (row === undefined) return null;
      const next = rewrite(row.line);
      if (next === null) return null;
      db.prepare('UPDATE steps SET line = ? WHERE journal = ? AND seq = ?').run(next.line, this.key, seq);
      // The head row counts the open segment's bytes (the file store's tail bucket length): a sealed line is longer.
      if (Number(row.bucket) === head.cursor.first) {
        db.prepare('UPDATE journals SET bucket_size = bucket_size + ? WHERE key = ?').run(
          Buffer.byteLength(next.line, 'utf8') - Buffer.byteLength(row.line, 'utf8'),
          this.key,
        );
      }
      if (keepsRunState(this.genesis)) dropRunState(db, this.key);
      const parts = new SqlitePartStore(db, this.id);
      const partsDeleted = deleteUnreferencedParts(db, this.key, this.id, next.parts, (a) => void parts.delete(a));
      next.beforeCommit?.();
      return { partsDeleted };
    });
    if (done === null) return null;
    return { ...done, walTruncated: await this.ctx.db.truncateWal() };
  }

  /**
   * Runs `fn` holding the database file's write lock, which every append takes to commit (ChainSource.holdingAppends,
   * ERASURE.md §4.1), once this handle's batch in flight is done. A journal opened read-only holds it on a
   * connection of its own; where this process may only read the file, `fn` runs without.
   */
  async holdingAppends<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.between(() =>
      this.ctx.db.holdingWrites(`holding the appends of ${this.where}`, fn, this.readOnly),
    );
  }

  /** Whether this journal lives in the database file `file` (a fork into it holds it by its own transaction). */
  inFile(file: string): boolean {
    return this.ctx.db.isFile(file);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.close();
    this.partStore?.close();
  }
}
