/**
 * Assigns seqs and seals a batch of appends against the true tail (spec/FORMAT.md §8, §7). Pure:
 * both stores call it while they hold the journal (the file store under its lock), so the tail it links
 * to is the committed one. A group (one append() or appendMany() call) succeeds or fails as a whole.
 */
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { newStepId } from '../record/fields.js';
import { StoreError } from './errors.js';
import type { BlobPayload, PreparedStep } from './prepare.js';
import type { AppendResult } from './types.js';

/** The committed end of the chain: seq -1 and the genesis hash when there is no step. */
export interface Tail {
  seq: number;
  hash: string;
}

export interface WindowEntry {
  seq: number;
  step_hash: string;
  prev_hash: string;
  key: string;
  ts: string;
}

/**
 * step_id → its step, for the last `size` seqs. Memory is O(size); eviction is by seq, so the window is
 * exactly "the last `size` steps" whatever order entries arrive in.
 */
export class IdempotencyWindow {
  private readonly map = new Map<string, WindowEntry>();
  private readonly order: Array<[number, string]> = [];
  private first = 0;

  constructor(readonly size: number) {}

  get(stepId: string): WindowEntry | undefined {
    return this.map.get(stepId);
  }

  add(stepId: string, entry: WindowEntry): void {
    this.map.set(stepId, entry);
    this.order.push([entry.seq, stepId]);
    const oldest = entry.seq - this.size;
    while (this.first < this.order.length && this.order[this.first]![0] <= oldest) {
      const [seq, id] = this.order[this.first++]!;
      if (this.map.get(id)?.seq === seq) this.map.delete(id);
    }
    if (this.first > 4096 && this.first * 2 > this.order.length) {
      this.order.splice(0, this.first);
      this.first = 0;
    }
  }

  clear(): void {
    this.map.clear();
    this.order.length = 0;
    this.first = 0;
  }
}

export interface Group {
  steps: PreparedStep[];
}

export type GroupOutcome =
  | { ok: true; results: AppendResult[]; blobs: BlobPayload[] }
  | { ok: false; error: unknown };

export interface SequencedBatch {
  /** New lines in seq order, each with its trailing newline. */
  lines: Array<{ seq: number; text: string; hash: string }>;
  outcomes: GroupOutcome[];
  tail: Tail;
  /** Window entries to add once the lines are committed. */
  entries: Array<[string, WindowEntry]>;
}

const encoder = new TextEncoder();

export function sequenceBatch(groups: readonly Group[], tail: Tail, window: IdempotencyWindow, now: string): SequencedBatch {
  const lines: SequencedBatch['lines'] = [];
  const outcomes: GroupOutcome[] = [];
  const entries: SequencedBatch['entries'] = [];
  const batchIds = new Map<string, WindowEntry>();
  let t = tail;
  for (const group of groups) {
    const local = new Map<string, WindowEntry>();
    const groupLines: SequencedBatch['lines'] = [];
    const results: AppendResult[] = [];
    const blobs: BlobPayload[] = [];
    let gt = t;
    try {
      for (const step of group.steps) {
        if (step.step_id !== undefined) {
          const hit = local.get(step.step_id) ?? batchIds.get(step.step_id) ?? window.get(step.step_id);
          if (hit !== undefined) {
            if (hit.key === step.key && (step.ts === undefined || step.ts === hit.ts)) {
              results.push({ seq: hit.seq, step_id: step.step_id, step_hash: hit.step_hash, prev_hash: hit.prev_hash });
              continue;
            }
            throw new StoreError('STEP_ID_CONFLICT', `step_id ${JSON.stringify(step.step_id)} is already seq ${hit.seq} with different ${hit.key === step.key ? 'ts' : 'content or meta'}`, {
              location: { seq: hit.seq, path: '/step_id' },
              hint: 'a retry must repeat the original step exactly; a new step needs a new step_id',
            });
          }
        }
        const seq = gt.seq + 1;
        const stepId = step.step_id ?? newStepId();
        const ts = step.ts ?? now;
        const { stepHash, line } = step.profile.seal(step.texts, { seq, stepId, ts, prevHash: gt.hash });
        if (line.length * 3 > MAX_LINE_BYTES && encoder.encode(line).length > MAX_LINE_BYTES) {
          throw new StoreError('STEP_TOO_LARGE', `step ${seq}'s line would exceed the limit of ${MAX_LINE_BYTES} bytes`, {
            location: { seq, path: '/meta' },
            hint: 'large content fields become blobs automatically; move large data out of meta into a content field',
          });
        }
        const entry: WindowEntry = { seq, step_hash: stepHash, prev_hash: gt.hash, key: step.key, ts };
        local.set(stepId, entry);
        groupLines.push({ seq, text: line, hash: stepHash });
        results.push({ seq, step_id: stepId, step_hash: stepHash, prev_hash: gt.hash });
        for (const b of step.blobs) blobs.push(b);
        gt = { seq, hash: stepHash };
      }
    } catch (error) {
      outcomes.push({ ok: false, error });
      continue;
    }
    for (const [id, e] of local) {
      batchIds.set(id, e);
      entries.push([id, e]);
    }
    // Never push(...groupLines): a group may hold a million lines, past the engine's argument limit.
    for (const l of groupLines) lines.push(l);
    outcomes.push({ ok: true, results, blobs });
    t = gt;
  }
  return { lines, outcomes, tail: t, entries };
}
