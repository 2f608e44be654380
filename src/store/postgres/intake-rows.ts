/**
 * What an intake row carries (spec/POSTGRES.md §6.6): one append call's prepared steps as JSON (the canonical
 * texts the seal joins, the idempotency key, a caller's step_id and ts, a copy's salt or seed), and, once a
 * sequencer chained or refused it, the call's outcome. Another process seals these texts, so they are
 * carried as they are: the line it writes is the line this process would have written.
 */
import { StepchainError, type ErrorLocation } from '../../errors.js';
import type { RecordProfile, StepTexts } from '../../record/profile.js';
import { StoreError, type StoreErrorCode } from '../errors.js';
import type { PreparedStep } from '../prepare.js';
import type { Group, GroupOutcome } from '../sequencer.js';
import type { AppendResult } from '../types.js';

/** The intake rows' payload format; a sequencer leaves rows of another version to a writer that reads them. */
const PAYLOAD_V = 1;

interface StepPayload {
  texts: StepTexts;
  key: string;
  step_id?: string;
  ts?: string;
  salt?: string;
  seed?: string;
}

export function encodeGroup(g: Group): string {
  const steps: StepPayload[] = g.steps.map((s) => {
    const p: StepPayload = { texts: s.texts, key: s.key };
    if (s.step_id !== undefined) p.step_id = s.step_id;
    if (s.ts !== undefined) p.ts = s.ts;
    if (s.salt !== undefined) p.salt = s.salt;
    if (s.seed !== undefined) p.seed = s.seed;
    return p;
  });
  return JSON.stringify(g.after === undefined ? { v: PAYLOAD_V, steps } : { v: PAYLOAD_V, after: g.after, steps });
}

const optString = (v: unknown): v is string | undefined => v === undefined || typeof v === 'string';

/** A row's group; null for another payload version; an error outcome for a row this version cannot read. */
export function decodeGroup(
  payload: string,
  profile: RecordProfile,
  id: number,
): Group | null | { ok: false; error: StoreError } {
  const bad = (why: string): { ok: false; error: StoreError } => ({
    ok: false,
    error: new StoreError('JOURNAL_CORRUPT', `intake row ${id} cannot be read (${why}); nothing of it was written`, {
      hint: 'something wrote the intake table around the store; append the step again',
    }),
  });
  let p: { v?: unknown; after?: unknown; steps?: unknown };
  try {
    p = JSON.parse(payload) as typeof p;
  } catch {
    return bad('not JSON');
  }
  if (p === null || typeof p !== 'object') return bad('not an object');
  if (p.v !== PAYLOAD_V) return typeof p.v === 'number' ? null : bad('no version');
  if (!Array.isArray(p.steps) || (p.after !== undefined && !Number.isSafeInteger(p.after))) return bad('members');
  const steps: PreparedStep[] = [];
  for (const s of p.steps as StepPayload[]) {
    if (
      s === null ||
      typeof s !== 'object' ||
      typeof s.key !== 'string' ||
      s.texts === null ||
      typeof s.texts !== 'object'
    )
      return bad('a step');
    if (!optString(s.step_id) || !optString(s.ts) || !optString(s.salt) || !optString(s.seed)) return bad('a step');
    for (const t of Object.values(s.texts)) if (typeof t !== 'string') return bad('a step text');
    steps.push({
      profile,
      content: {},
      meta: undefined,
      texts: s.texts,
      step_id: s.step_id,
      ts: s.ts,
      salt: s.salt,
      seed: s.seed,
      blobs: [],
      key: s.key,
    });
  }
  return p.after === undefined ? { steps } : { steps, after: p.after as number };
}

export function encodeOutcome(o: GroupOutcome): string {
  if (o.ok) return JSON.stringify({ ok: true, results: o.results });
  const e = o.error;
  if (e instanceof StepchainError)
    return JSON.stringify({ ok: false, code: String(e.code), message: e.message, hint: e.hint, location: e.location });
  return JSON.stringify({ ok: false, code: 'JOURNAL_CORRUPT', message: e instanceof Error ? e.message : String(e) });
}

export function decodeOutcome(text: string): GroupOutcome {
  const o = JSON.parse(text) as
    | { ok: true; results: AppendResult[] }
    | { ok: false; code: StoreErrorCode; message: string; hint?: string; location?: Record<string, unknown> };
  if (o.ok) return { ok: true, results: o.results, blobs: [] };
  const location = (o.location ?? {}) as ErrorLocation;
  const error = new StoreError(o.code, '', o.hint === undefined ? { location } : { hint: o.hint, location });
  error.message = o.message; // the sequencer's message as it made it, code and hint included
  return { ok: false, error };
}
