/**
 * A journal in Postgres behind the Journal contract (spec/POSTGRES.md §6). Appends are prepared by the shared
 * prepare and group-committed by the shared CommitQueue, whose sink goes through the intake (intake.ts, §6.6)
 * or is one transaction per batch: lock the head row, ask the step_id index once, sequenceBatch against the
 * locked tail, place each line by the shared rotation rule, insert blobs and lines, feed the tree, move the
 * head row, COMMIT. An append resolves only after that COMMIT returned; nothing is held between batches.
 */
import { isDigest } from '../../canonical/sha256.js';
import { StepchainError } from '../../errors.js';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { formatTimestamp } from '../../record/fields.js';
import type { Genesis } from '../../record/formats.js';
import type { StepInput } from '../../record/input.js';
import type { StepRecord } from '../../record/seal.js';
import { CommitQueue } from '../commit-queue.js';
import { StoreError } from '../errors.js';
import { assertSeq } from '../ids.js';
import { parseMeta, type JournalMeta } from '../meta.js';
import { appendManyStreaming, queueSteps, writeRefusal } from '../append.js';
import { type StreamedBatch, type StreamOptions } from '../stream.js';
import { streamRows } from '../rows/stream.js';
import { capabilitiesOf, genesisHash, writerProfile } from '../../record/formats.js';
import type { BlobPayload } from '../prepare.js';
import { restoreRecord } from '../restore.js';
import { JournalParts } from '../parts-prepare.js';
import { withPartProblems } from '../parts-verify.js';
import { PostgresPartStore } from './parts.js';
import { blobOfRow, headOfRow, placeLines, rowLines, rowTexts } from '../rows/lines.js';
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
import { keepsRunState } from '../rows/run-state.js';
import type { DbClient } from './driver.js';
import { isConnectionLoss, sqlState, translate } from './errors.js';
import { appendingTo, holdingJournal } from './holds.js';
import { idleGaps, stalledStream } from './idle.js';
import { StepIdIndex } from './idempotency.js';
import {
  beginAndLockHead,
  clashError,
  insertBlobs,
  lastLine,
  linesPage,
  lockedHeadNow,
  readBlob,
  writeLines,
  type LockedHead,
  type NewLine,
} from './sql.js';
import type { StoreContext } from './store.js';
import { verifyJournalRows } from './verify.js';
import { commitThroughIntake, intakeOf, intakeTakes } from './intake.js';
import type { RecordProfile } from '../../record/profile.js';
import { catchUpAndFollow, planTreeStep, PostgresTreeStorage, rowLeaves, syncedTree, treeStatements } from './tree.js';
import { signJournalCheckpoint, type SignedCheckpoint } from '../../proofs/keeper.js';
import { treeRoot, type NodeReader } from '../../proofs/nodes.js';
import type { NoteSigner } from '../../proofs/note.js';
import type { LineRewrite, LineRewriter, RewriteOutcome } from '../rewrite.js';
import {
  advanceRunStateRow,
  commitFateOf,
  readRunStateRow,
  rewriteRow,
  storedOrRowsTree,
  UNDEFINED_TABLE,
} from './journal-rows.js';

export class PostgresJournal implements Journal, LineRewriter {
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  private readonly queue: CommitQueue;
  /** The record profile this journal seals by (the intake seals other processes' rows by it too). */
  readonly profile: RecordProfile;
  private closed = false;
  /** A stepchain/v3 journal's parts (spec/PARTS.md §7): tables parts and part_index in the store's schema. */
  readonly parts: JournalParts | null;

  constructor(
    private readonly ctx: StoreContext,
    readonly id: string,
    /** The journal's row key (journals.key). */
    readonly key: number,
    meta: JournalMeta,
    readonly readOnly: boolean,
  ) {
    this.genesis = meta.genesis;
    this.lineage = meta.lineage;
    this.config = meta.config;
    this.profile = writerProfile(this.genesis);
    // Nothing is kept between batches: each is its own transaction, and the row lock ends with it.
    this.queue = new CommitQueue({
      commit: (groups) => this.commit(groups),
      beforeBatch: async () => {},
      lingerMs: () => null,
      release: async () => {},
    });
    this.parts = capabilitiesOf(this.genesis).parts
      ? new JournalParts(new PostgresPartStore(ctx.pool, ctx.tables.schema, id, ctx.display))
      : null;
  }

  get where(): string {
    return `${this.ctx.display} journal ${this.id}`;
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
   * Appends a stream of steps of any length as one all-or-nothing batch in bounded memory (POSTGRES.md §6):
   * one transaction holding the head row lock for the whole stream, `chunk` steps prepared, sequenced and
   * inserted at a time, then one COMMIT. A refused step, a failed statement, a lost connection or a crash
   * before COMMIT leaves none of it; an unanswered COMMIT is settled as any append's. Readers see the chain
   * as it was until COMMIT; other appends wait for the row lock (LOCK_TIMEOUT past their lock timeout); a
   * stream stalled between chunks past idleTimeoutMs is ended by the server and fails whole. A v3 journal's
   * parts go through the pool as they come: a failed batch may leave parts no line references (harmless).
   */
  async appendStream(
    steps: AsyncIterable<StepInput> | Iterable<StepInput>,
    options: StreamOptions = {},
  ): Promise<StreamedBatch> {
    const refused = writeRefusal(this, this.closed);
    if (refused !== null) throw refused;
    const gaps = idleGaps(await this.connect(`appending to journal ${this.id}`, true));
    const client = gaps.client;
    let last: NewLine | null = null;
    /** Set once COMMIT is sent: what the batch resolves with if it is found committed after all. */
    let committing: StreamedBatch | null = null;
    try {
      const start = await beginAndLockHead(
        client,
        this.ctx.tables,
        this.key,
        this.ctx.lockTimeoutMs,
        this.ctx.idleTimeoutMs,
      );
      if (start === null) throw this.gone();
      const result = await streamRows(steps, options, {
        genesis: this.genesis,
        blobThreshold: this.config.blobThreshold,
        parts: this.parts,
        start,
        write: async (head, prepared) => {
          const written = await this.commitOn(client, head, [{ steps: prepared }]);
          const outcome = written.outcomes[0]!;
          if (!outcome.ok || written.last === null) return { outcome, head };
          last = written.last;
          const next = await lockedHeadNow(client, this.ctx.tables, this.key);
          if (next === null) throw this.gone();
          return { outcome, head: next };
        },
      });
      if (last === null) {
        await client.query('ROLLBACK');
      } else {
        committing = result;
        await client.query('COMMIT');
      }
      client.release();
      return result;
    } catch (e) {
      const stall = stalledStream(e, gaps.longest, this.ctx, this.id);
      await this.failed(client, stall ?? e, committing === null ? null : last);
      return committing!; // the COMMIT went unanswered, and the batch is found committed
    }
  }

  /**
   * A connection from the pool; a failure to get one is the coded error of what was being done. An append's
   * once this process holds the journal no longer, counted as under way until it is released (holds.ts).
   */
  private async connect(doing: string, appending = false): Promise<DbClient> {
    const end = appending ? await appendingTo(this.holdKey, doing, this.ctx.lockTimeoutMs) : null;
    let client: DbClient;
    try {
      client = await this.ctx.pool.connect();
    } catch (e) {
      end?.();
      throw translate(e, this.ctx.display, doing);
    }
    if (end === null) return client;
    return {
      query: (text, values) => client.query(text, values),
      release: (destroy) => {
        client.release(destroy);
        end();
      },
    };
  }

  gone(): StoreError {
    return new StoreError('JOURNAL_NOT_FOUND', `journal ${this.id} is no longer in ${this.ctx.display}`, {
      hint: 'something removed its row; restore it from a backup',
    });
  }

  private enqueue(steps: readonly StepInput[], options?: AppendOptions): Promise<AppendResult[]> {
    return queueSteps(this.queue, this, this.closed, steps, options);
  }

  /** The queue's sink: one transaction for a batch of append calls; each call's outcome on its own. */
  private async commit(groups: readonly Group[]): Promise<GroupOutcome[]> {
    const hub = this.ctx.intake;
    if (hub !== null && intakeTakes(groups, this.profile))
      return commitThroughIntake(
        intakeOf(this.ctx, hub, this, (c, h, g) => this.commitOn(c, h, g)),
        groups,
      );
    const client = await this.connect(`appending to journal ${this.id}`, true);
    let sent: { outcomes: GroupOutcome[]; last: NewLine } | null = null;
    try {
      const head = await beginAndLockHead(
        client,
        this.ctx.tables,
        this.key,
        this.ctx.lockTimeoutMs,
        this.ctx.idleTimeoutMs,
      );
      if (head === null) throw this.gone();
      const written = await this.commitOn(client, head, groups);
      if (written.last === null) {
        await client.query('ROLLBACK');
      } else {
        sent = { outcomes: written.outcomes, last: written.last };
        await client.query('COMMIT');
      }
      client.release();
      return written.outcomes;
    } catch (e) {
      await this.failed(client, e, sent?.last ?? null);
      return sent!.outcomes; // the COMMIT went unanswered, and the batch is found committed
    }
  }

  /**
   * Inside the transaction beginAndLockHead began, whose head row reads `head`: sequences `groups` and writes
   * their blobs, lines, tree and head row. `last`: the last line written, null when none was.
   */
  private async commitOn(
    client: DbClient,
    head: LockedHead,
    groups: readonly Group[],
  ): Promise<{ outcomes: GroupOutcome[]; last: NewLine | null }> {
    const index = new StepIdIndex(
      client,
      this.ctx.tables,
      this.key,
      this.genesis,
      head.seq,
      this.ctx.idempotencyWindow,
      this.where,
    );
    const batch = sequenceBatch(
      groups,
      { seq: head.seq, hash: head.hash },
      await knownSteps(index, groups),
      formatTimestamp(new Date()),
      await linesSince(groups, head.seq, (from, to) =>
        rowTexts((a, b) => linesPage(client, this.ctx.tables, this.key, a, b), from, to),
      ),
    );
    if (batch.lines.length === 0) return { outcomes: batch.outcomes, last: null };
    const { lines, tail } = placeLines(batch, head, this.config.segmentBytes);
    const blobs = new Map<string, BlobPayload>();
    for (const o of batch.outcomes) if (o.ok) for (const b of o.blobs) blobs.set(b.digest, b);
    await insertBlobs(client, this.ctx.tables, this.key, [...blobs.values()]);
    // The tree (spec/POSTGRES.md §4.1): written by the lines' own last statement when its state is the
    // head's; otherwise caught up from the rows first, in this transaction.
    const treeStep = this.ctx.merkleTree ? planTreeStep(head, batch.lines, this.where) : null;
    if (this.ctx.merkleTree && treeStep === null)
      await catchUpAndFollow(client, this.ctx.tables, this.key, head, batch.lines, this.where);
    try {
      await writeLines(
        client,
        this.ctx.tables,
        this.key,
        lines,
        tail,
        treeStep ? (values) => treeStatements(this.ctx.tables, treeStep, values) : undefined,
      );
    } catch (e) {
      if (sqlState(e) === '23505') throw clashError(this.id, head.seq + 1, e);
      throw e;
    }
    // The run_state row after the batch's lines (spec/POSTGRES.md §4.2), in the append's transaction.
    const rows = { client, tables: this.ctx.tables, key: this.key, genesis: this.genesis, where: this.where };
    if (keepsRunState(this.genesis)) await advanceRunStateRow({ ...rows, parts: this.parts }, head, batch.lines);
    return { outcomes: batch.outcomes, last: lines[lines.length - 1]! };
  }

  /**
   * After an append transaction failed with `e`: rolls back and lets the connection go; then throws the
   * coded error — unless COMMIT had been sent (`sentLast`, the last line it wrote), no answer came, and
   * the batch is found committed: then it returns, and the append stands.
   */
  private async failed(client: DbClient, e: unknown, sentLast: NewLine | null): Promise<void> {
    const lost = isConnectionLoss(e);
    if (!lost) await client.query('ROLLBACK').catch(() => {});
    client.release(true);
    // COMMIT was sent and no answer came: the transaction may have committed. Learn which.
    if (sentLast !== null && lost) {
      const fate = await commitFateOf(this.ctx, this.key, sentLast); // waits for that transaction to end
      if (fate === 'committed') return;
      if (fate === 'unknown') {
        throw new StoreError(
          'SERVER_UNREACHABLE',
          `${this.ctx.display}: the connection was lost during COMMIT of journal ${this.id}, and whether it committed cannot be learnt now`,
          {
            hint: 'retry with the same step_ids: a step that did commit is returned as it is (FILE-STORE.md §10)',
            cause: e,
          },
        );
      }
    }
    // A refusal of a streamed step (prepare, parts) is the caller's error, not the server's.
    if (e instanceof StepchainError) throw e;
    throw translate(e, this.ctx.display, `appending to journal ${this.id}`);
  }

  /** The run_state row's saved state (spec/POSTGRES.md §4.2): written by appends only, so there is no write. */
  get runStateCache(): RunStateCache | undefined {
    return keepsRunState(this.genesis)
      ? { read: () => readRunStateRow(this.ctx.pool, this.ctx.tables, this.key) }
      : undefined;
  }

  // ---------------------------------------------------------------- reading

  async head(): Promise<ChainHead | null> {
    let row;
    try {
      row = await lastLine(this.ctx.pool, this.ctx.tables, this.key);
    } catch (e) {
      throw translate(e, this.ctx.display, `reading the head of journal ${this.id}`);
    }
    return headOfRow(row, this.where);
  }

  lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    return rowLines(
      async (from, to) => {
        try {
          return await linesPage(this.ctx.pool, this.ctx.tables, this.key, from, to);
        } catch (e) {
          throw translate(e, this.ctx.display, `reading journal ${this.id}`);
        }
      },
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
    let found;
    try {
      found = await readBlob(this.ctx.pool, this.ctx.tables, this.key, digest, size);
    } catch (e) {
      throw translate(e, this.ctx.display, `reading blob ${digest} of journal ${this.id}`);
    }
    return blobOfRow(found, digest, size, this.where);
  }

  verify(options: JournalVerifyOptions = {}): Promise<JournalReport> {
    const parts = this.parts;
    if (parts === null) return verifyJournalRows(this.ctx, this.id, options);
    return verifyJournalRows(this.ctx, this.id, options).then((r) =>
      withPartProblems(r, this.lines(), (a, size) => parts.store.get(a, size)),
    );
  }

  // ---------------------------------------------------------------- the tree (spec/POSTGRES.md §4.1)

  /**
   * Signs a checkpoint of the journal's tree now, by the log key `signer` (its name is the origin,
   * spec/PROOFS.md §8.5), and keeps it in the checkpoints table — refused (ProofError CHECKPOINT_REFUSED)
   * unless it extends the last checkpoint this journal signed for that origin (§8.6). One transaction
   * under the head row's lock: appends and other signers, in any process, wait, and the note is handed
   * out only after its row committed.
   */
  async checkpoint(signer: NoteSigner): Promise<SignedCheckpoint> {
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to sign a checkpoint',
      });
    return this.underLock('signing a checkpoint of', async (client, head) => {
      const tree = await syncedTree(client, this.ctx.tables, this.key, head, this.where);
      return signJournalCheckpoint(
        tree,
        new PostgresTreeStorage(client, this.ctx.tables, this.key),
        signer,
        rowLeaves(client, this.ctx.tables, this.key, this.where),
      );
    });
  }

  /** The checkpoints this journal signed (signed notes, by size). */
  async checkpoints(): Promise<string[]> {
    try {
      return (await new PostgresTreeStorage(this.ctx.pool, this.ctx.tables, this.key).readCheckpoints()).map(
        (k) => k.note,
      );
    } catch (e) {
      if (sqlState(e) === UNDEFINED_TABLE) return []; // a schema older than version 2, read without migrating
      throw translate(e, this.ctx.display, `reading the checkpoints of journal ${this.id}`);
    }
  }

  /**
   * The tree at the journal's current size, for proofs: its size, root and a NodeReader. A writable journal
   * brings its stored tree up to date first (under the lock); a read-only one uses the stored tree when it
   * is the head's and otherwise builds one in memory from the rows (it never writes). Tile rows below the
   * state's size never change, so the reader may read them after the transaction.
   */
  async treeView(): Promise<{ size: number; root: Uint8Array; reader: NodeReader }> {
    const storage = new PostgresTreeStorage(this.ctx.pool, this.ctx.tables, this.key);
    if (!this.readOnly) {
      const size = await this.underLock(
        'updating the tree of',
        async (client, head) => (await syncedTree(client, this.ctx.tables, this.key, head, this.where)).size,
      );
      const reader = storage.reader();
      return { size, root: await treeRoot(reader, size), reader };
    }
    return storedOrRowsTree(this.ctx, this.key, this.id, this.where, () => this.head());
  }

  // ---------------------------------------------------------------- erasure

  /**
   * Replaces the line of `seq` in place (spec/ERASURE.md §6.1, POSTGRES.md §6.5): in one transaction holding the
   * journal's head row lock (the writer lock every append takes), the row is updated and the parts the old
   * line named that no line and no other part references any more are deleted. The old row version stays in
   * the table's files as a dead tuple until VACUUM, and in the WAL until recycled (ERASURE.md §6.2).
   */
  async rewriteLine(seq: number, rewrite: (line: string) => LineRewrite | null): Promise<RewriteOutcome | null> {
    assertSeq('seq', seq);
    if (this.readOnly)
      throw new StoreError('READ_ONLY', `journal ${this.id} was opened read-only`, {
        hint: 'open it without readOnly to erase',
      });
    return this.underLock('erasing a value of', (client, head) =>
      rewriteRow(client, this.ctx.tables, { key: this.key, id: this.id }, head, seq, rewrite),
    );
  }

  /**
   * Runs `fn` holding the head row's lock, which every append takes to commit (ChainSource.holdingAppends,
   * ERASURE.md §4.1), once this handle's batch in flight is done. A read-only role cannot lock it: no hold then.
   */
  async holdingAppends<T>(fn: () => Promise<T>): Promise<T> {
    let ran = false;
    const run = (): Promise<T> => ((ran = true), fn());
    // Its turn among the store's holds before the queue pauses: waiting for it paused, this handle's appends waited
    // behind every hold queued before it (outsider H: 20 s, pool 2, holds of the journal in loops).
    return this.ctx.holds.run(`holding the appends of journal ${this.id}`, this.ctx.lockTimeoutMs, () =>
      this.queue.between(() =>
        // No idle timeout: the session is idle while the copy is written and renamed, and a hold the server
        // ended meanwhile would let an erase in before the rename (outsider 15). A dead copier's socket ends it.
        this.underLock('holding the appends of', run, 0, true).catch((e: unknown) => {
          if (!ran && this.readOnly && e instanceof StoreError && e.message.includes('SQLSTATE 42501')) return fn();
          throw e;
        }),
      ),
    );
  }

  /** This journal among the holds of this process (holds.ts holdingJournal): its server, schema and key. */
  get holdKey(): string {
    return `${this.ctx.display}|${this.ctx.tables.journals}|${this.key}`;
  }

  /**
   * Locks this journal's head row in `client`'s transaction when that reaches this journal's own row (the same
   * schema, key, id and genesis: the same database, through any store): a fork then holds its parent by its own
   * transaction, its COMMIT the end of the hold. Another connection's hold could end first (its session killed,
   * or its socket closed with the forking process) while the COMMIT still went through (outsider 15).
   */
  async lockIn(client: DbClient, ctx: StoreContext): Promise<boolean> {
    if (ctx.tables.journals !== this.ctx.tables.journals) return false;
    await client.query(`SET LOCAL lock_timeout = ${Math.trunc(ctx.lockTimeoutMs)}`);
    const sql = `SELECT meta FROM ${ctx.tables.journals} WHERE key = $1 AND id = $2 FOR UPDATE`;
    const meta = (await client.query<{ meta: string }>(sql, [this.key, this.id])).rows[0]?.meta;
    try {
      return meta !== undefined && genesisHash(parseMeta(meta, this.where).genesis) === genesisHash(this.genesis);
    } catch {
      return false;
    }
  }

  /** Runs `fn` in a transaction holding the head row's lock, and commits; in turn with the store's other holds (holds.ts). */
  private underLock<T>(
    doing: string,
    fn: (client: DbClient, head: LockedHead) => Promise<T>,
    idleTimeoutMs = this.ctx.idleTimeoutMs,
    turnTaken = false,
  ): Promise<T> {
    const what = `${doing} journal ${this.id}`;
    // Its turn among the store's holds (unless `turnTaken`), then the journal's among this process's (holds.ts),
    // in that order everywhere.
    const inTurn = (f: () => Promise<T>): Promise<T> =>
      turnTaken ? f() : this.ctx.holds.run(what, this.ctx.lockTimeoutMs, f);
    return inTurn(() =>
      holdingJournal(this.holdKey, what, this.ctx.lockTimeoutMs, async () => {
        const client = await this.connect(what);
        try {
          const head = await beginAndLockHead(client, this.ctx.tables, this.key, this.ctx.lockTimeoutMs, idleTimeoutMs);
          if (head === null) throw this.gone();
          const out = await fn(client, head);
          await client.query('COMMIT');
          client.release();
          return out;
        } catch (e) {
          await client.query('ROLLBACK').catch(() => {});
          client.release(true);
          if (e instanceof StepchainError) throw e; // coded already: a refusal of the hold's work, a proof's
          throw translate(e, this.ctx.display, what);
        }
      }),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.queue.close();
  }
}
