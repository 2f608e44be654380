/**
 * What a waiting writer checks before an intake row's outcome resolves its append (spec/POSTGRES.md §6.6,
 * step 4). A row's `result` can be written by any role with UPDATE on the intake, so it is read as a claim,
 * never as the answer: for each step the claim places, the writer reads the line at that seq from the steps
 * table and seals its own texts again with that line's envelope (seq, step_id, ts, prev_hash, and its salt or
 * seed). The stored line must be that seal byte for byte, with the writer's step_id (the writer names every
 * step it enqueues, so the step_id is its own) and, when the caller gave one, its ts; a call with `after` must
 * start right after that seq. Only then does the append resolve, with what the chain holds. Anything else is
 * JOURNAL_CORRUPT, never an acknowledgement.
 */
import type { Envelope, RecordProfile } from '../../record/profile.js';
import { StoreError } from '../errors.js';
import type { Group, GroupOutcome } from '../sequencer.js';
import type { AppendResult } from '../types.js';
import type { DbPool } from './driver.js';
import type { Tables } from './schema.js';

export interface ConfirmContext {
  readonly pool: DbPool;
  readonly tables: Tables;
  readonly key: number;
  readonly id: string;
  readonly profile: RecordProfile;
}

const isSeq = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
const isText = (v: unknown): v is string => typeof v === 'string';

/**
 * Replaces each successful outcome among `outcomes` by what the chain confirms, or by the error saying why not.
 * `lines`: lines already read, by seq; the others claimed are read here.
 */
export async function confirmOutcomes(
  c: ConfirmContext,
  mine: ReadonlyMap<number, Group>,
  outcomes: Map<number, GroupOutcome>,
  lines: Map<number, string>,
): Promise<void> {
  const seqs = new Set<number>();
  for (const [id, o] of outcomes) {
    if (!o.ok) continue;
    const group = mine.get(id);
    const results = o.results as unknown;
    if (group === undefined || !Array.isArray(results) || results.length !== group.steps.length) {
      outcomes.set(id, forged(c, id, 'its outcome does not list one result per step'));
      continue;
    }
    for (const r of results as { seq?: unknown }[])
      if (r !== null && typeof r === 'object' && isSeq(r.seq) && !lines.has(r.seq)) seqs.add(r.seq);
  }
  if (seqs.size > 0) {
    const r = await c.pool.query<{ seq: string; line: string }>(
      `SELECT seq, line FROM ${c.tables.steps} WHERE journal = $1 AND seq = ANY($2::bigint[])`,
      [c.key, [...seqs]],
    );
    for (const row of r.rows) lines.set(Number(row.seq), row.line);
  }
  for (const [id, o] of outcomes) {
    if (!o.ok) continue;
    const group = mine.get(id)!;
    const confirmed: AppendResult[] = [];
    let next = group.after === undefined ? null : group.after + 1;
    let why: string | null = null;
    for (let i = 0; i < group.steps.length && why === null; i++) {
      const claimed = (o.results as unknown[])[i] as { seq?: unknown } | null;
      const seq = claimed !== null && typeof claimed === 'object' && isSeq(claimed.seq) ? claimed.seq : null;
      const got = seq === null ? 'no seq' : confirmStep(c.profile, group.steps[i]!, seq, lines.get(seq));
      if (typeof got === 'string') why = `step ${i}: ${got}`;
      else if (next !== null && got.seq > group.after! && got.seq !== next++)
        why = `step ${i} is at seq ${got.seq}, not where the call's "after" put it`;
      else confirmed.push(got);
    }
    outcomes.set(id, why === null ? { ok: true, results: confirmed, blobs: [] } : forged(c, id, why));
  }
}

/** The step's result as the chain holds it at `seq`, or why the line there is not the step. */
function confirmStep(
  profile: RecordProfile,
  step: Group['steps'][number],
  seq: number,
  stored: string | undefined,
): AppendResult | string {
  if (stored === undefined) return `the chain has no step at seq ${seq}`;
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(stored) as Record<string, unknown>;
  } catch {
    return `the line at seq ${seq} is not JSON`;
  }
  const { step_id: stepId, ts, prev_hash: prevHash, salt, seed } = rec;
  if (rec.seq !== seq || !isText(stepId) || !isText(ts) || !isText(prevHash))
    return `the line at seq ${seq} has no envelope`;
  if (stepId !== step.step_id) return `the line at seq ${seq} is step_id ${JSON.stringify(stepId)}, not this step's`;
  if (step.ts !== undefined && ts !== step.ts) return `the line at seq ${seq} has another ts`;
  const envelope: Envelope = { seq, stepId, ts, prevHash };
  if (isText(salt)) envelope.salt = salt;
  if (isText(seed)) envelope.seed = seed;
  let sealed: { stepHash: string; line: string };
  try {
    sealed = profile.seal(step.texts, envelope);
  } catch (e) {
    return `the line at seq ${seq} cannot be sealed again (${e instanceof Error ? e.message : String(e)})`;
  }
  if (trimmed(sealed.line) !== trimmed(stored))
    return `the line at seq ${seq} is not the line this writer's step makes`;
  return { seq, step_id: stepId, step_hash: sealed.stepHash, prev_hash: prevHash, ts };
}

const trimmed = (line: string): string => (line.endsWith('\n') ? line.slice(0, -1) : line);

function forged(c: ConfirmContext, id: number, why: string): GroupOutcome {
  return {
    ok: false,
    error: new StoreError(
      'JOURNAL_CORRUPT',
      `journal ${c.id}: intake row ${id} reports the append chained, but the chain does not hold it as this writer enqueued it (${why}); the append is not acknowledged`,
      {
        hint: "something wrote the intake table around the store (spec/POSTGRES.md §6.6: grant it only to the journal's writers); read the chain, then append again with the same step_id",
      },
    ),
  };
}
