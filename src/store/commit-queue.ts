/**
 * Group commit (spec/FILE-STORE.md §9): appends queue up while a batch is being committed, and every call
 * issued meanwhile joins the next batch, so concurrent callers share one write and one sync. The queue
 * knows nothing of files or locks: a store plugs in a CommitSink that commits a batch (the file store
 * under its lock, a database in one transaction) and says how long to keep the journal between batches.
 * Node: it yields to the event loop with setImmediate.
 */
import type { PreparedStep } from './prepare.js';
import type { Group, GroupOutcome } from './sequencer.js';
import type { AppendResult } from './types.js';

export interface CommitSink {
  /** Commits one batch, returning each group's outcome; throwing fails every group of the batch with that error. */
  commit(groups: readonly Group[]): Promise<GroupOutcome[]>;
  /** Called before each batch (the file store hands its lock to a waiting writer here). */
  beforeBatch(): Promise<void>;
  /** Once the queue is empty: how long to wait for another append before `release`; null when nothing is held. */
  lingerMs(): number | null;
  /** Lets the journal go (the lock, a connection). */
  release(): Promise<void>;
}

interface Pending extends Group {
  resolve: (results: AppendResult[]) => void;
  reject: (error: unknown) => void;
}

/** At most this many calls go into one group commit, bounding a batch's memory. */
const MAX_GROUPS_PER_BATCH = 4096;

export class CommitQueue {
  private queue: Pending[] = [];
  private flushing: Promise<void> | null = null;
  /** Wakes a lingering drain when an append arrives or the queue closes. */
  private wake: (() => void) | null = null;
  private closed = false;
  /** How many `between` calls are running: no batch starts while any is. */
  private paused = 0;
  /** Resolves when the last running `between` call ends (close waits for it). */
  private resumed: Promise<void> = Promise.resolve();
  private resume: () => void = () => {};

  constructor(private readonly sink: CommitSink) {}

  /**
   * Queues one append() or appendMany() call: its steps commit together, contiguously, or not at all (`after`:
   * AppendOptions; `unlessAfter`: sequencer.ts Group).
   */
  enqueue(steps: PreparedStep[], after?: number, unlessAfter?: (line: string) => boolean): Promise<AppendResult[]> {
    return new Promise((resolve, reject) => {
      const pending: Pending = after === undefined ? { steps, resolve, reject } : { steps, after, resolve, reject };
      if (after !== undefined && unlessAfter !== undefined) pending.unlessAfter = unlessAfter;
      this.queue.push(pending);
      this.kick();
    });
  }

  private kick(): void {
    if (this.wake !== null) {
      this.wake();
      return;
    }
    if (this.flushing !== null || this.paused > 0) return;
    this.flushing = this.drain().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0) this.kick();
    });
  }

  /**
   * Commits the queue in batches. The journal is kept between batches while appends keep coming (a caller
   * awaiting each append re-appends within microseconds), so a busy writer pays for taking it once per
   * hold, not once per append; it is released once the sink's linger passes without appends.
   */
  private async drain(): Promise<void> {
    for (;;) {
      // Let every append issued in this turn of the event loop (and every caller just acknowledged) join.
      await new Promise((resolve) => setImmediate(resolve));
      // Paused (`between`): let go of what is held, as when idle (a verify then sees head.json written); the
      // drain started when the pause ends commits what queued meanwhile.
      if (this.paused > 0) {
        if (this.sink.lingerMs() !== null) await this.sink.release();
        return;
      }
      if (this.queue.length > 0) {
        await this.sink.beforeBatch();
        await this.commit(this.queue.splice(0, MAX_GROUPS_PER_BATCH));
        continue;
      }
      const linger = this.sink.lingerMs();
      if (linger === null) return;
      if (!this.closed && (await this.appendArrives(linger))) continue;
      await this.sink.release();
      if (this.queue.length === 0) return;
    }
  }

  private async commit(batch: Pending[]): Promise<void> {
    let settle: () => void;
    try {
      const outcomes = await this.sink.commit(batch);
      settle = () => outcomes.forEach((o, i) => (o.ok ? batch[i]!.resolve(o.results) : batch[i]!.reject(o.error)));
    } catch (e) {
      settle = () => batch.forEach((p) => p.reject(e));
    }
    // The lines are as durable as the store promises: acknowledge now, whether or not the journal is kept.
    settle();
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

  /** Commits what is queued and lets the journal go now instead of after lingering. */
  async settle(): Promise<void> {
    while (this.flushing !== null) {
      this.wake?.();
      await this.flushing;
    }
  }

  /**
   * Runs `fn` once the batch being committed is done and the sink let go, with no batch started until it
   * ends: appends queued meanwhile wait and commit after it, in order. Unlike awaiting `settle`, which a caller
   * appending without pause could hold off forever, this waits for one batch at most (outsider 15).
   */
  async between<T>(fn: () => Promise<T>): Promise<T> {
    if (this.paused++ === 0) this.resumed = new Promise((resolve) => (this.resume = resolve));
    try {
      await this.settle();
      return await fn();
    } finally {
      if (--this.paused === 0) {
        this.resume();
        // A drain commits what queued meanwhile.
        this.kick();
      }
    }
  }

  /** No lingering from now on; then settle (after any `between` running). */
  async close(): Promise<void> {
    this.closed = true;
    while (this.paused > 0) await this.resumed;
    await this.settle();
  }
}
