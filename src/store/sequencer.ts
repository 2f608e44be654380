/**
 * Assigns seqs and seals a batch of appends against the true tail (spec/FILE-STORE.md, spec/FORMAT.md §7). Pure: every
 * store calls it while it holds the journal (the file store under its lock, a database in its
 * transaction), so the tail it links to is the committed one. A group (one append() or appendMany()
 * call) succeeds or fails as a whole. The committed steps an idempotent retry may repeat come from the
 * store's IdempotencyIndex, looked up for the whole batch first (stepIdsOf).
 */
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { newStepId } from '../record/fields.js';
import type { Envelope, RecordProfile } from '../record/profile.js';
import { StoreError } from './errors.js';
import type { BlobPayload, PreparedStep } from './prepare.js';
import type { CommittedStep, IdempotencyIndex } from './idempotency.js';
import type { AppendResult } from './types.js';

/** The committed end of the chain: seq -1 and the genesis hash when there is no step. */
export interface Tail {
  seq: number;
  hash: string;
}

export interface Group {
  steps: PreparedStep[];
  /** The seq the chain must end at for this group to commit (AppendOptions.after); any end when absent. */
  after?: number;
  /**
   * With `after`: a chain that moved past `after` still takes the group at its end when no line after `after`
   * is one this refuses — the lines read by the store under its lock (`LinesSince`), so no writer appends
   * between the reading and the commit. An erasure appends so (erase/common.ts appendErasure): only another
   * erasure of its record concerns it, and an erasure waiting for a moment when no other writer appends
   * waited for as long as they kept appending.
   */
  unlessAfter?: (line: string) => boolean;
}

/**
 * What the committed lines after each `unlessAfter` group's `after`, up to the tail a batch is sequenced against,
 * say to it: refused, when one of them is a line its `unlessAfter` refuses (read by the store under its lock:
 * linesSince). A group absent from it was not read for: it is HEAD_MOVED as any other.
 */
export type LinesSince = ReadonlyMap<Group, boolean>;

/**
 * How far past its `after` a chain may have moved for an `unlessAfter` group to read the lines since: beyond,
 * the group fails with HEAD_MOVED as any other, and its writer reads afresh. Bounds the time a commit reads under
 * the lock (the lines are tested as they stream, none held): a writer streaming 12 000 steps back to back kept an
 * erasure out at a bound of 10 000 (outsider J).
 */
export const MOST_LINES_SINCE = 1_000_000;

/** The lines a batch's `unlessAfter` groups read before it is sequenced at `tailSeq`; undefined when none needs any. */
export async function linesSince(
  groups: readonly Group[],
  tailSeq: number,
  read: (from: number, to: number) => AsyncIterable<string>,
): Promise<LinesSince | undefined> {
  const reading = groups.filter(
    (g) =>
      g.unlessAfter !== undefined &&
      g.after !== undefined &&
      g.after < tailSeq &&
      tailSeq - g.after <= MOST_LINES_SINCE,
  );
  if (reading.length === 0) return undefined;
  const from = Math.min(...reading.map((g) => g.after!)) + 1;
  const refused = new Map<Group, boolean>(reading.map((g) => [g, false]));
  let seq = from;
  for await (const text of read(from, tailSeq)) {
    for (const g of reading) if (g.after! < seq && !refused.get(g)! && g.unlessAfter!(text)) refused.set(g, true);
    seq++;
  }
  // A line missing from what was read is not known not to refuse: such groups are HEAD_MOVED.
  return seq === tailSeq + 1 ? refused : new Map();
}

/**
 * Whether `group`, asked to follow a seq the chain (at `seq`, this batch's earlier lines included) has moved
 * past, commits anyway: it has `unlessAfter`, and no line since its `after` is one that refuses.
 */
function movedPastFreely(
  group: Group,
  seq: number,
  tailSeq: number,
  since: LinesSince | undefined,
  batchLines: SequencedBatch['lines'],
): boolean {
  const after = group.after!;
  const unless = group.unlessAfter;
  if (unless === undefined || after > seq) return false;
  // The committed lines since (none when only this batch's earlier groups moved the chain), then the batch's.
  if (after < tailSeq && since?.get(group) !== false) return false;
  for (const l of batchLines) if (l.seq > after && unless(l.text.slice(0, -1))) return false;
  return true;
}

export type GroupOutcome = { ok: true; results: AppendResult[]; blobs: BlobPayload[] } | { ok: false; error: unknown };

export interface SequencedBatch {
  /** New lines in seq order, each with its trailing newline. */
  lines: { seq: number; text: string; hash: string }[];
  outcomes: GroupOutcome[];
  tail: Tail;
  /** Window entries to add once the lines are committed. */
  entries: [string, CommittedStep][];
}

const encoder = new TextEncoder();

/** No committed step to match: a batch without caller-supplied step_ids. */
export const NO_STEPS: ReadonlyMap<string, CommittedStep> = new Map();

/** The caller-supplied step_ids of a batch: what to ask the IdempotencyIndex about (often none). */
export function stepIdsOf(groups: readonly Group[]): string[] {
  const ids: string[] = [];
  for (const g of groups) for (const s of g.steps) if (s.step_id !== undefined) ids.push(s.step_id);
  return ids;
}

function headMoved(after: number, seq: number): StoreError {
  return new StoreError(
    'HEAD_MOVED',
    `the append was to follow seq ${after}, but the chain now ends at seq ${seq}: another writer appended; nothing was written`,
    {
      location: { seq },
      hint: 'read the steps after the one you knew, decide again, and append with the new last seq',
    },
  );
}

function stepIdConflict(stepId: string, hit: CommittedStep, sameContent: boolean): StoreError {
  return new StoreError(
    'STEP_ID_CONFLICT',
    `step_id ${JSON.stringify(stepId)} is already seq ${hit.seq} with different ${sameContent ? 'ts' : 'content or meta'}`,
    {
      location: { seq: hit.seq, path: '/step_id' },
      hint: 'a retry must repeat the original step exactly; a new step needs a new step_id',
    },
  );
}

function stepTooLarge(seq: number): StoreError {
  return new StoreError('STEP_TOO_LARGE', `step ${seq}'s line would exceed the limit of ${MAX_LINE_BYTES} bytes`, {
    location: { seq, path: '/meta' },
    hint: 'large content fields become blobs automatically; move large data out of meta into a content field',
  });
}

/**
 * What the profiles can work out for a batch's steps before they are sequenced (RecordProfile.precommit: v3
 * hashes every record's unit tree together, a few kernel calls per batch instead of per record), by step.
 */
function precommitted(groups: readonly Group[]): Map<PreparedStep, NonNullable<Envelope['committed']>> | null {
  let byProfile: Map<RecordProfile, PreparedStep[]> | null = null;
  for (const g of groups)
    for (const s of g.steps)
      if (s.profile.precommit !== undefined) {
        byProfile ??= new Map();
        const list = byProfile.get(s.profile);
        if (list === undefined) byProfile.set(s.profile, [s]);
        else list.push(s);
      }
  if (byProfile === null) return null;
  const out = new Map<PreparedStep, NonNullable<Envelope['committed']>>();
  for (const [profile, steps] of byProfile) {
    if (steps.length < 2) continue;
    const done = profile.precommit!(steps);
    for (let i = 0; i < steps.length; i++) if (done[i] !== undefined) out.set(steps[i]!, done[i]!);
  }
  return out;
}

/** `known`: the committed steps among the batch's step_ids, from the store's IdempotencyIndex. */
export function sequenceBatch(
  groups: readonly Group[],
  tail: Tail,
  known: ReadonlyMap<string, CommittedStep>,
  now: string,
  since?: LinesSince,
): SequencedBatch {
  const lines: SequencedBatch['lines'] = [];
  const outcomes: GroupOutcome[] = [];
  const entries: SequencedBatch['entries'] = [];
  const batchIds = new Map<string, CommittedStep>();
  let t = tail;
  const committed = precommitted(groups);
  for (const group of groups) {
    const local = new Map<string, CommittedStep>();
    const groupLines: SequencedBatch['lines'] = [];
    const results: AppendResult[] = [];
    const blobs: BlobPayload[] = [];
    let gt = t;
    try {
      if (group.after !== undefined && group.after !== t.seq && !movedPastFreely(group, t.seq, tail.seq, since, lines))
        throw headMoved(group.after, t.seq);
      for (const step of group.steps) {
        if (step.step_id !== undefined) {
          const hit = local.get(step.step_id) ?? batchIds.get(step.step_id) ?? known.get(step.step_id);
          if (hit !== undefined) {
            if (hit.key === step.key && (step.ts === undefined || step.ts === hit.ts)) {
              results.push({
                seq: hit.seq,
                step_id: step.step_id,
                step_hash: hit.step_hash,
                prev_hash: hit.prev_hash,
                ts: hit.ts,
              });
              continue;
            }
            throw stepIdConflict(step.step_id, hit, hit.key === step.key);
          }
        }
        const seq = gt.seq + 1;
        const stepId = step.step_id ?? newStepId();
        const ts = step.ts ?? now;
        // No spread of a conditional object: it allocated two objects per step where one will do.
        const envelope: Envelope = { seq, stepId, ts, prevHash: gt.hash };
        if (step.salt !== undefined) envelope.salt = step.salt;
        if (step.seed !== undefined) envelope.seed = step.seed;
        const done = committed?.get(step);
        if (done !== undefined) envelope.committed = done;
        const { stepHash, line } = step.profile.seal(step.texts, envelope);
        if (line.length * 3 > MAX_LINE_BYTES && encoder.encode(line).length > MAX_LINE_BYTES) {
          throw stepTooLarge(seq);
        }
        const entry: CommittedStep = { seq, step_hash: stepHash, prev_hash: gt.hash, key: step.key, ts };
        local.set(stepId, entry);
        groupLines.push({ seq, text: line, hash: stepHash });
        results.push({ seq, step_id: stepId, step_hash: stepHash, prev_hash: gt.hash, ts });
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

/** The committed steps a batch's caller-supplied step_ids may repeat, from the store's index (NO_STEPS when none is supplied). */
export async function knownSteps(
  index: IdempotencyIndex,
  groups: readonly Group[],
): Promise<ReadonlyMap<string, CommittedStep>> {
  const ids = stepIdsOf(groups);
  return ids.length === 0 ? NO_STEPS : index.lookup(ids);
}
