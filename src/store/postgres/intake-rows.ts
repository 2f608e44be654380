/**
 * What an intake row carries (spec/POSTGRES.md §6.6): one append call's prepared steps as JSON (the canonical
 * texts the seal joins, the idempotency key, a caller's step_id and ts, a copy's salt or seed), and, once a
 * sequencer chained or refused it, the call's outcome. Another process seals these texts, so they are
 * carried as they are: the line it writes is the line this process would have written.
 */
import { StepchainError, type ErrorLocation } from '../../errors.js';
import type { RecordProfile, StepTexts } from '../../record/profile.js';
import { StoreError, type StoreErrorCode } from '../errors.js';
import { prepareStep, type PreparedStep } from '../prepare.js';
import type { Group, GroupOutcome } from '../sequencer.js';
import type { AppendResult } from '../types.js';

/** The intake rows' payload format; a sequencer leaves rows of another version to a writer that reads them. */
const PAYLOAD_V = 1;
/** How every payload of this version starts (encodeGroup): a sequencer reads only the rows that do. */
export const PAYLOAD_PREFIX = `{"v":${PAYLOAD_V},`;
/**
 * A row of this version, as SQL: a literal, not a parameter, so that the sequencer's selection and the partial
 * index over the chainable rows (intake-hub.ts) state the same predicate and the planner can use the index.
 */
export const CHAINABLE_PREDICATE = `starts_with(payload, '${PAYLOAD_PREFIX}')`;

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

/** A row's group (read for its PAYLOAD_PREFIX); an error outcome for a row this version cannot read or take. */
export function decodeGroup(
  payload: string,
  profile: RecordProfile,
  id: number,
): Group | { ok: false; error: StepchainError } {
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
  if (p.v !== PAYLOAD_V) return bad(`version ${JSON.stringify(p.v)} under the prefix of version ${PAYLOAD_V}`);
  if (!Array.isArray(p.steps) || (p.after !== undefined && !Number.isSafeInteger(p.after))) return bad('members');
  const steps: PreparedStep[] = [];
  for (const [i, s] of (p.steps as StepPayload[]).entries()) {
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
    const checked = checkedStep(s, profile, `intake row ${id}${p.steps.length > 1 ? `, step ${i} of the call` : ''}`);
    if ('error' in checked) return checked;
    steps.push(checked);
  }
  return p.after === undefined ? { steps } : { steps, after: p.after as number };
}

/**
 * A row's step checked exactly as a direct append checks a caller's step (spec/POSTGRES.md §6.6, *What a
 * sequencer checks*): each text parsed back to its value, the step rebuilt from the values, step_id, ts, salt
 * and seed, and put through prepareStep, the function every append goes through; then the texts it makes
 * must be the row's, text for text (so each is the canonical JSON of its value, and no member is added or
 * missing), and the idempotency key it makes must be the row's. The row's texts are what the seal joins into
 * the line, so a row that passes is a line an honest writer could have enqueued; any other is refused with
 * the code a direct append gives its input (FIELD_INVALID, CANONICAL_…, ERASURE_RESERVED …) or
 * JOURNAL_CORRUPT, and nothing of its call is written.
 */
function checkedStep(
  s: StepPayload,
  profile: RecordProfile,
  where: string,
): PreparedStep | { ok: false; error: StepchainError } {
  const refuse = (error: StepchainError): { ok: false; error: StepchainError } => {
    error.message = `${where}: ${error.message}`;
    return { ok: false, error };
  };
  const corrupt = (why: string): { ok: false; error: StepchainError } =>
    refuse(
      new StoreError('JOURNAL_CORRUPT', `${why}; nothing of the call was written`, {
        hint: 'something wrote the intake table around the store; append the step again',
      }),
    );
  const input: Record<string, unknown> = {};
  const names = Object.keys(s.texts);
  for (const name of names) {
    if (name !== 'meta' && !profile.contentFields.includes(name))
      return corrupt(`texts has a member "${name}" that is no content field`);
    try {
      input[name] = JSON.parse(s.texts[name]!);
    } catch {
      return corrupt(`texts.${name} is not JSON`);
    }
  }
  if (s.step_id !== undefined) input.step_id = s.step_id;
  if (s.ts !== undefined) input.ts = s.ts;
  if (s.salt !== undefined) input.salt = s.salt;
  if (s.seed !== undefined) input.seed = s.seed;
  let step: PreparedStep;
  try {
    // No blob threshold: a writer sends a step through the intake only when it has no blob (intakeTakes).
    step = prepareStep(input, Number.POSITIVE_INFINITY, profile);
  } catch (e) {
    if (e instanceof StepchainError) return refuse(e as StepchainError);
    return corrupt(`a step that cannot be prepared (${e instanceof Error ? e.message : String(e)})`);
  }
  const made = Object.keys(step.texts);
  if (made.length !== names.length)
    return corrupt('texts does not hold exactly the content fields (and meta when given)');
  for (const name of made)
    if (step.texts[name] !== s.texts[name]) return corrupt(`texts.${name} is not the canonical JSON of its value`);
  if (step.key !== s.key) return corrupt('its idempotency key is not the key of its texts');
  return step;
}

export function encodeOutcome(o: GroupOutcome): string {
  if (o.ok) return JSON.stringify({ ok: true, results: o.results });
  const e = o.error;
  if (e instanceof StepchainError)
    return JSON.stringify({ ok: false, code: String(e.code), message: e.message, hint: e.hint, location: e.location });
  return JSON.stringify({ ok: false, code: 'JOURNAL_CORRUPT', message: e instanceof Error ? e.message : String(e) });
}

/** A row's outcome as written; a `result` that is no outcome of this version's is JOURNAL_CORRUPT (never an ack). */
export function decodeOutcome(text: string, id: number): GroupOutcome {
  let o: { ok?: unknown; results?: unknown; code?: unknown; message?: unknown; hint?: unknown; location?: unknown };
  try {
    o = JSON.parse(text) as typeof o;
  } catch {
    o = {};
  }
  if (o !== null && typeof o === 'object' && o.ok === true && Array.isArray(o.results))
    return { ok: true, results: o.results as AppendResult[], blobs: [] };
  if (
    o === null ||
    typeof o !== 'object' ||
    o.ok !== false ||
    typeof o.code !== 'string' ||
    typeof o.message !== 'string'
  )
    return {
      ok: false,
      error: new StoreError(
        'JOURNAL_CORRUPT',
        `intake row ${id}'s outcome cannot be read; the append is not acknowledged`,
        {
          hint: 'something wrote the intake table around the store; read the chain, then append again with the same step_id',
        },
      ),
    };
  const location = (o.location !== null && typeof o.location === 'object' ? o.location : {}) as ErrorLocation;
  const hint = typeof o.hint === 'string' ? o.hint : undefined;
  const error = new StoreError(o.code as StoreErrorCode, '', hint === undefined ? { location } : { hint, location });
  error.message = o.message; // the sequencer's message as it made it, code and hint included
  return { ok: false, error };
}
