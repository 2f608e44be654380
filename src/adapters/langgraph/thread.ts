/**
 * One thread namespace's journal and what its records add up to (spec/LANGGRAPH.md §5): the checkpoints by
 * id, the channel values by (channel, version), and each checkpoint's pending writes under the rule
 * LangGraph's savers share — a regular write is kept once per (task, index), a special channel's is replaced.
 * The view is a fold of the journal in seq order; before every read it takes in whatever other writers
 * (other processes, other savers) appended since, so it never serves a stale thread. What it takes in it
 * verifies first (LANGGRAPH §6): each line's own checks and its link to the one before, from the genesis on
 * first read, then from the last step it folded — so a tampered thread is refused, never resumed, at the
 * cost of one line check per record read once.
 */
import type { Journal } from '../../journal.js';
import { restoreRecord } from '../../format.js';
import { ChainVerifier } from '../../verify.js';
import { LangGraphError } from './errors.js';
import {
  readRecord,
  type CheckpointRecord,
  type StoredValue,
  type ThreadRecord,
  type WritesRecord,
} from './records.js';

export interface CheckpointEntry {
  record: CheckpointRecord;
  seq: number;
  step_hash: string;
}

export interface StoredWrite {
  taskId: string;
  taskPath: string;
  idx: number;
  channel: string;
  value: StoredValue;
}

export class ThreadLog {
  readonly checkpoints = new Map<string, CheckpointEntry>();
  private readonly values = new Map<string, StoredValue>();
  private readonly writes = new Map<string, Map<string, StoredWrite>>();
  /** The last seq folded in; -1 before the first. */
  private lastSeq = -1;
  /** The step hash of that step: where the next lines read must link (null before the first). */
  private lastHash: string | null = null;
  /** The checkpoint of the latest checkpoint record, in journal order (not id order). */
  lastCheckpoint: CheckpointEntry | null = null;
  threadId: string | null = null;
  namespace: string | null = null;
  /** Serializes folding, so records go in exactly once and in seq order. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly journal: Journal) {}

  /** Runs `fn` after every fold queued before it. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => {});
    return next;
  }

  /** Folds in whatever the journal holds past what this view has seen. */
  refresh(): Promise<void> {
    return this.serial(() => this.catchUp());
  }

  private async catchUp(): Promise<void> {
    const head = await this.journal.head();
    if (head === null || head.seq <= this.lastSeq) return;
    const { genesis } = this.journal;
    // Verified before any of it is folded, so a bad line leaves the view as it was.
    const verifier =
      this.lastHash === null
        ? new ChainVerifier({ genesis, expectHead: head.step_hash })
        : new ChainVerifier({
            genesis,
            start: { seq: this.lastSeq + 1, prev_hash: this.lastHash },
            expectHead: head.step_hash,
          });
    const lines: { text: string; seq: number; segment: string }[] = [];
    let segment: string | null = null;
    for await (const l of this.journal.lines({ from: this.lastSeq + 1, to: head.seq })) {
      if (l.segment !== segment) verifier.beginSegment((segment = l.segment));
      verifier.line(l.text, true);
      lines.push({ text: l.text, seq: l.seq, segment: l.segment });
    }
    const report = verifier.finish();
    if (!report.ok) {
      const p = report.problems[0];
      const at =
        p?.location.seq !== undefined
          ? ` at seq ${p.location.seq}`
          : p?.location.line !== undefined
            ? ` at ${p.location.file ?? 'line'}:${p.location.line}`
            : '';
      throw new LangGraphError(
        'THREAD_INVALID',
        `journal ${JSON.stringify(this.journal.id)} does not verify (${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}, first: ${p?.code ?? '?'}${at}${p ? `: ${p.message}` : ''}): its checkpoints are not read`,
        {
          hint: 'stepchain verify <journal> names each problem; a thread is resumed only from a journal that verifies',
          ...(p?.location.seq !== undefined ? { location: { seq: p.location.seq } } : {}),
        },
      );
    }
    for (const l of lines) {
      const rec = await restoreRecord(genesis, l.text, l.seq, l.segment, (ref) =>
        this.journal.blob(ref.digest, ref.size),
      );
      const r = readRecord(rec);
      if (r !== null) this.apply(r, rec.seq, rec.step_hash);
      this.lastSeq = rec.seq;
      this.lastHash = rec.step_hash;
    }
  }

  /** Appends a record and folds it in (with anything another writer slipped in before it). */
  async append(r: ThreadRecord, step: Parameters<Journal['append']>[0]): Promise<{ seq: number; step_hash: string }> {
    const done = await this.journal.append(step);
    await this.serial(async () => {
      if (done.seq <= this.lastSeq) return;
      if (done.seq === this.lastSeq + 1) {
        this.apply(r, done.seq, done.step_hash);
        this.lastSeq = done.seq;
        this.lastHash = done.step_hash;
      } else {
        await this.catchUp();
      }
    });
    return done;
  }

  private apply(r: ThreadRecord, seq: number, stepHash: string): void {
    this.threadId ??= r.thread_id;
    this.namespace ??= r.checkpoint_ns;
    if (r.kind === 'langgraph.checkpoint') {
      const entry = { record: r, seq, step_hash: stepHash };
      this.checkpoints.set(r.checkpoint_id, entry);
      this.lastCheckpoint = entry;
      for (const [channel, v] of Object.entries(r.channel_values))
        this.values.set(valueKey(channel, v.version), v.value);
    } else {
      this.applyWrites(r);
    }
  }

  /** The shared rule (LANGGRAPH §5): index ≥ 0 keeps the first write for (task, index); a special channel's (index < 0) is replaced. */
  private applyWrites(r: WritesRecord): void {
    let held = this.writes.get(r.checkpoint_id);
    if (held === undefined) this.writes.set(r.checkpoint_id, (held = new Map<string, StoredWrite>()));
    for (const w of r.writes) {
      const key = `${r.task_id},${w.idx}`;
      if (w.idx >= 0 && held.has(key)) continue;
      held.set(key, { taskId: r.task_id, taskPath: r.task_path, idx: w.idx, channel: w.channel, value: w.value });
    }
  }

  /** Whether a write would change anything under the rule: an unchanged one is not appended. */
  wouldKeep(checkpointId: string, taskId: string, idx: number): boolean {
    return idx < 0 || !(this.writes.get(checkpointId)?.has(`${taskId},${idx}`) ?? false);
  }

  value(channel: string, version: string | number): StoredValue | undefined {
    return this.values.get(valueKey(channel, version));
  }

  writesOf(checkpointId: string): StoredWrite[] {
    return [...(this.writes.get(checkpointId)?.values() ?? [])];
  }

  /** The newest checkpoint by id (ids are uuid6: they sort by time), as LangGraph means "latest". */
  latest(): CheckpointEntry | undefined {
    let best: CheckpointEntry | undefined;
    for (const e of this.checkpoints.values())
      if (best === undefined || e.record.checkpoint_id > best.record.checkpoint_id) best = e;
    return best;
  }
}

const valueKey = (channel: string, version: string | number): string => `${channel}\u0000${JSON.stringify(version)}`;
