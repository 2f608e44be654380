/**
 * The value rules of the envelope members every record profile shares (spec/FORMAT.md §5.1): ids and
 * timestamps. Pure: runs in a browser.
 */

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const TS_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** step_id and journal_id: 1–128 characters from [A-Za-z0-9._:-], starting with a letter or digit. */
export function isValidId(value: unknown): value is string {
  return typeof value === 'string' && ID_RE.test(value);
}

/**
 * The last timestamp found valid. A group commit gives its steps one ts, so a verifier meets the same
 * value line after line; validity is a function of the string alone, so remembering one is safe anywhere.
 */
let lastValidTs: string | null = null;

/** RFC 3339 UTC with exactly three fraction digits, and a real instant (no Feb 30, no leap second). */
export function isValidTimestamp(value: unknown): value is string {
  if (value === lastValidTs) return true;
  if (typeof value !== 'string' || !TS_RE.test(value)) return false;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== value) return false;
  lastValidTs = value;
  return true;
}

/**
 * A UTC timestamp with 0 to 9 fraction digits (an approval request's `expires_at`, a statement's `decided_at`:
 * APPROVALS.md §2) read as milliseconds since the epoch; null unless it names a real instant (Date.parse
 * alone rolls 30 February over to 2 March).
 */
export function utcInstant(v: unknown): number | null {
  if (typeof v !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/.test(v)) return null;
  const t = Date.parse(v);
  return Number.isFinite(t) && new Date(t).toISOString().slice(0, 19) === v.slice(0, 19) ? t : null;
}

export function formatTimestamp(date: Date): string {
  const iso = date.toISOString();
  if (!TS_RE.test(iso)) throw new RangeError(`timestamp ${iso} is outside years 0000–9999`);
  return iso;
}

export function newStepId(): string {
  return globalThis.crypto.randomUUID();
}
