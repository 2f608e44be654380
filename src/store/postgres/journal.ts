/**
 * A journal in Postgres behind the Journal interface (spec/POSTGRES.md §6). Appends from one process are
 * group-committed: every append queued while a commit is in flight goes into the next transaction, which
 * locks the journal's head row, looks up retried step_ids among the last W steps, seals through the same
 * prepare and sequencer as the file store (so the lines are byte-identical), inserts lines and blobs,
 * moves the head row and commits. An append resolves only after COMMIT returned.
 */
import { formatTimestamp, type Genesis, type StepInput, type StepRecord } from '../../chain/record.js';
import type { ChainReport } from '../../chain/report.js';
import type { ChainHead, SeqRange, StoredLine } from '../../chain/source.js';
import { isDigest } from '../../canonical/sha256.js';
import { StoreError } from '../errors.js';
import { assertSeq, checkRange } from '../ids.js';
import { bucketName, type JournalMeta } from '../layout.js';
import { prepareSteps, recordKey, type BlobPayload, type PreparedStep } from '../prepare.js';
import { blobSizeError, restoreRecord } from '../restore.js';
import { IdempotencyWindow, sequenceBatch, type Group, type WindowEntry } from '../sequencer.js';
import type { AppendResult, Journal, JournalConfig, JournalVerifyOptions, Lineage } from '../types.js';
import type { DbClient } from './driver.js';
import { isConnectionLoss, sqlState, translate } from './errors.js';
import { beginAndLockHead, clashError, holdsLine, insertBlobs, lastLine, linesPage, readBlob, writeLines, type HeadRow, type NewLine } from './sql.js';
import type { StoreContext } from './store.js';
import { verifyJournalRows } from './verify.js';

interface Pending extends Group {
  resolve: (results: AppendResult[]) => void;
  reject: (error: unknown) => void;
}

/** At most this many append calls go into one transaction, bounding its memory. */
const MAX_GROUPS_PER_BATCH = 4096;

export class PostgresJournal implements Journal {
  readonly genesis: Genesis;
  readonly lineage: Lineage | null;
  readonly config: JournalConfig;
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  private closed = false;

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
  }

  private get where(): string {
    return `${this.ctx.display} journal ${this.id}`;
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
      prepared = prepareSteps(steps, this.config.blob_threshold);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ steps: prepared, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.flushing !== null) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      // Let every append issued in this turn of the event loop join the transaction.
      await new Promise((resolve) => setImmediate(resolve));
      if (this.queue.length === 0) return;
      await this.commit(this.queue.splice(0, MAX_GROUPS_PER_BATCH));
    }
  }

  /** One transaction for a batch of append calls; each call is resolved or rejected on its own. */
  private async commit(batch: Pending[]): Promise<void> {
    let client: DbClient;
    try {
      client = await this.ctx.pool.connect();
    } catch (e) {
      const error = translate(e, this.ctx.display, `appending to journal ${this.id}`);
      for (const p of batch) p.reject(error);
      return;
    }
    let phase: 'work' | 'commit' = 'work';
    let last: NewLine | null = null;
    let outcomes: ReturnType<typeof sequenceBatch>['outcomes'];
    try {
      const ids = new Set<string>();
      for (const p of batch) for (const s of p.steps) if (s.step_id !== undefined) ids.add(s.step_id);
      const lookup = ids.size === 0 ? null : { ids: [...ids], window: this.ctx.idempotencyWindow };
      const { head, hits } = await beginAndLockHead(client, this.ctx.tables, this.key, this.ctx.lockTimeoutMs, this.ctx.idleTimeoutMs, lookup);
      if (head === null) throw new StoreError('JOURNAL_NOT_FOUND', `journal ${this.id} is no longer in ${this.ctx.display}`, { hint: 'something removed its row; restore it from a backup' });
      const window = this.windowFrom(hits);
      const seq = sequenceBatch(batch, { seq: head.seq, hash: head.hash }, window, formatTimestamp(new Date()));
      outcomes = seq.outcomes;
      if (seq.lines.length === 0) {
        await client.query('ROLLBACK');
      } else {
        const blobs = new Map<string, BlobPayload>();
        for (const o of seq.outcomes) if (o.ok) for (const b of o.blobs) blobs.set(b.digest, b);
        const stepIds = new Map<number, string>();
        for (const o of seq.outcomes) if (o.ok) for (const r of o.results) stepIds.set(r.seq, r.step_id);
        const { lines, tail } = placeInBuckets(seq.lines, stepIds, head, this.config.bucket_bytes);
        last = lines[lines.length - 1]!;
        await insertBlobs(client, this.ctx.tables, this.key, [...blobs.values()]);
        try {
          await writeLines(client, this.ctx.tables, this.key, lines, tail);
        } catch (e) {
          if (sqlState(e) === '23505') throw clashError(this.id, head.seq + 1, e);
          throw e;
        }
        phase = 'commit';
        await client.query('COMMIT');
      }
      client.release();
    } catch (e) {
      const lost = isConnectionLoss(e);
      if (!lost) await client.query('ROLLBACK').catch(() => {});
      client.release(true);
      let error: unknown = translate(e, this.ctx.display, `appending to journal ${this.id}`);
      if (phase === 'commit' && lost && last !== null) {
        // COMMIT was sent and no answer came: the transaction may have committed. Learn which.
        const fate = await this.commitFate(last);
        if (fate === 'committed') {
          error = null;
        } else if (fate === 'unknown') {
          error = new StoreError('SERVER_UNREACHABLE', `${this.ctx.display}: the connection was lost during COMMIT of journal ${this.id}, and whether it committed cannot be learnt now`, {
            hint: 'retry with the same step_ids: a step that did commit is returned as it is (FORMAT.md §8.10)',
            cause: e,
          });
        }
      }
      if (error !== null) {
        for (const p of batch) p.reject(error);
        return;
      }
    }
    outcomes!.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.results) : batch[i]!.reject(o.error)));
  }

  /**
   * The idempotency window for this batch (FORMAT.md §8.10): the steps among the last W whose step_id the
   * batch supplies again, looked up under the lock (beginAndLockHead).
   */
  private windowFrom(hits: ReadonlyArray<{ seq: number; line: string }>): IdempotencyWindow {
    const window = new IdempotencyWindow(this.ctx.idempotencyWindow);
    for (const row of hits) {
      const [stepId, entry] = windowEntry(row.line, row.seq, this.where);
      window.add(stepId, entry);
    }
    return window;
  }

  /** After a COMMIT that went unanswered: waits for that transaction to end (the row lock), then looks. */
  private async commitFate(last: NewLine): Promise<'committed' | 'absent' | 'unknown'> {
    let client: DbClient;
    try {
      client = await this.ctx.pool.connect();
    } catch {
      return 'unknown';
    }
    try {
      await beginAndLockHead(client, this.ctx.tables, this.key, this.ctx.lockTimeoutMs, this.ctx.idleTimeoutMs);
      const held = await holdsLine(client, this.ctx.tables, this.key, last.seq, last.text);
      await client.query('ROLLBACK');
      client.release();
      return held ? 'committed' : 'absent';
    } catch {
      client.release(true);
      return 'unknown';
    }
  }

  // ---------------------------------------------------------------- reading

  async head(): Promise<ChainHead | null> {
    let row;
    try {
      row = await lastLine(this.ctx.pool, this.ctx.tables, this.key);
    } catch (e) {
      throw translate(e, this.ctx.display, `reading the head of journal ${this.id}`);
    }
    if (row === null) return null;
    const hash = (parseLine(row.line, row.seq, this.where) as { step_hash?: unknown }).step_hash;
    if (typeof hash !== 'string' || !isDigest(hash)) throw corrupt(this.where, row.seq, 'its step_hash is not a digest');
    return { seq: row.seq, step_hash: hash };
  }

  async *lines(range?: SeqRange): AsyncGenerator<StoredLine> {
    const { from, to } = checkRange(range);
    let next = from;
    for (;;) {
      let page;
      try {
        page = await linesPage(this.ctx.pool, this.ctx.tables, this.key, next, to ?? null);
      } catch (e) {
        throw translate(e, this.ctx.display, `reading journal ${this.id}`);
      }
      for (const row of page) {
        // Rows are read by seq; a missing row would silently shorten the chain.
        if (row.seq !== next) throw corrupt(this.where, next, `the row for seq ${next} is missing (the next row is seq ${row.seq})`);
        yield { bucket: bucketName(row.bucket), seq: row.seq, text: row.line };
        next++;
      }
      if (page.length === 0 || (to !== undefined && next > to)) return;
    }
  }

  async *read(range?: SeqRange): AsyncGenerator<StepRecord> {
    for await (const l of this.lines(range)) yield await restoreRecord(l.text, l.seq, this.where, (ref) => this.blob(ref.digest, ref.size));
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
    if (found === null) return null;
    if (found.bytes === null || (size !== undefined && found.size !== size)) throw blobSizeError(this.where, digest, found.size, size ?? found.size);
    return found.bytes;
  }

  async verify(options: JournalVerifyOptions = {}): Promise<ChainReport> {
    return verifyJournalRows(this.ctx, this.id, options);
  }

  async close(): Promise<void> {
    this.closed = true;
    while (this.flushing !== null) await this.flushing;
  }
}

/**
 * Gives each new line the bucket the file store would put it in (FORMAT.md §8.5 rotation), so that lines,
 * bucket labels and therefore receipts are the same whichever store wrote them; returns the new head row.
 */
export function placeInBuckets(
  lines: ReadonlyArray<{ seq: number; text: string; hash: string }>,
  stepIds: ReadonlyMap<number, string>,
  head: HeadRow,
  bucketBytes: number,
): { lines: NewLine[]; tail: HeadRow } {
  let first = head.bucketFirst;
  let size = head.bucketSize;
  const placed: NewLine[] = [];
  for (const l of lines) {
    // sequenceBatch's text ends with the newline, as the file store writes it; the row holds the line without it.
    const bytes = Buffer.byteLength(l.text, 'utf8');
    if (size > 0 && size + bytes > bucketBytes) {
      first = l.seq;
      size = 0;
    }
    size += bytes;
    placed.push({ seq: l.seq, bucket: first, stepId: stepIds.get(l.seq)!, text: l.text.slice(0, -1) });
  }
  const end = lines[lines.length - 1]!;
  return { lines: placed, tail: { seq: end.seq, hash: end.hash, bucketFirst: first, bucketSize: size } };
}

function parseLine(line: string, seq: number, where: string): Record<string, unknown> {
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    throw corrupt(where, seq, 'the line is not JSON');
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) throw corrupt(where, seq, 'the line is not a JSON object');
  return rec as Record<string, unknown>;
}

/** The idempotency window's entry for a stored line. */
function windowEntry(line: string, seq: number, where: string): [string, WindowEntry] {
  const rec = parseLine(line, seq, where) as unknown as StepRecord;
  if (rec.seq !== seq || typeof rec.step_id !== 'string') throw corrupt(where, seq, `the row for seq ${seq} holds seq ${String(rec.seq)}`);
  return [rec.step_id, { seq, step_hash: rec.step_hash, prev_hash: rec.prev_hash, key: recordKey(rec), ts: rec.ts }];
}

function corrupt(where: string, seq: number, why: string): StoreError {
  return new StoreError('JOURNAL_CORRUPT', `${where} seq ${seq}: ${why}`, { location: { seq }, hint: 'run verify on the journal to locate the damage' });
}
