/**
 * Idempotent retry (spec/FILE-STORE.md §10): which step_ids a journal already holds. The sequencer asks an
 * IdempotencyIndex for the caller-supplied step_ids of a batch at once, so a store can answer from memory
 * (IdempotencyWindow, the last N steps) or with one query (a database looking step_ids up in its table).
 */

/** A committed step, as an idempotent retry must match it. */
export interface CommittedStep {
  seq: number;
  step_hash: string;
  prev_hash: string;
  /** The idempotency key of its content and meta (RecordProfile.key). */
  key: string;
  ts: string;
}

export interface IdempotencyIndex {
  /**
   * The committed steps among `stepIds` that the index knows (the file store: at least the last
   * `idempotencyWindow` steps). Called with the lock held, once per batch, only when a step of it carries
   * a caller's step_id.
   */
  lookup(stepIds: readonly string[]): ReadonlyMap<string, CommittedStep> | Promise<ReadonlyMap<string, CommittedStep>>;
  /** Steps committed since (by this writer, or read back from the tail another one wrote). */
  committed(entries: Iterable<readonly [string, CommittedStep]>): void;
  /** Forgets everything: the tail is about to be read afresh. */
  clear(): void;
}

/**
 * step_id → its step, for the last `size` seqs. Memory is O(size); eviction is by seq, so the window is
 * exactly "the last `size` steps" whatever order entries arrive in.
 */
export class IdempotencyWindow implements IdempotencyIndex {
  private readonly map = new Map<string, CommittedStep>();
  /** Seqs and step_ids in arrival order, side by side: a pair array per step was garbage for every append. */
  private readonly seqs: number[] = [];
  private readonly ids: string[] = [];
  private first = 0;

  constructor(readonly size: number) {}

  lookup(stepIds: readonly string[]): ReadonlyMap<string, CommittedStep> {
    const found = new Map<string, CommittedStep>();
    for (const id of stepIds) {
      const hit = this.map.get(id);
      if (hit !== undefined) found.set(id, hit);
    }
    return found;
  }

  committed(entries: Iterable<readonly [string, CommittedStep]>): void {
    for (const [id, entry] of entries) this.add(id, entry);
  }

  add(stepId: string, entry: CommittedStep): void {
    this.map.set(stepId, entry);
    this.seqs.push(entry.seq);
    this.ids.push(stepId);
    const oldest = entry.seq - this.size;
    while (this.first < this.seqs.length && this.seqs[this.first]! <= oldest) {
      const seq = this.seqs[this.first]!;
      const id = this.ids[this.first++]!;
      if (this.map.get(id)?.seq === seq) this.map.delete(id);
    }
    if (this.first > 4096 && this.first * 2 > this.seqs.length) {
      this.seqs.splice(0, this.first);
      this.ids.splice(0, this.first);
      this.first = 0;
    }
  }

  clear(): void {
    this.map.clear();
    this.seqs.length = 0;
    this.ids.length = 0;
    this.first = 0;
  }
}
