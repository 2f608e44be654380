/**
 * Where else a journal holds the value an erase removes (spec/ERASURE.md §4, "The same value elsewhere"): the
 * runtime repeats values across records — a tool's result in its `tool.completed` and in `run.completed`, an
 * argument in the start and its outcome — and erasing one unit leaves the others. The erase reports each
 * (seq and pointer) so that they can be erased too; it does not erase them unasked.
 */
import type { Journal } from '../store/types.js';
import { ERASURE_KIND } from '../record/v3/erasure.js';
import { matchPaths } from './common.js';

/** At most this many places are listed (a value repeated more often is reported as that many, and "more"). */
const MAX_PLACES = 100;

/** A value worth looking for: not one so common it would match everywhere (null, a boolean, a short number or string). */
function distinctive(v: unknown): boolean {
  if (typeof v === 'string') return v.length >= 3;
  if (typeof v === 'number') return String(v).length >= 3;
  return v !== null && typeof v === 'object';
}

/** The value at a JSON Pointer of a parsed record, or undefined. */
export function valueAt(record: unknown, path: string): unknown {
  let v: unknown = record;
  for (const raw of path.split('/').slice(1)) {
    const t = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (v === null || typeof v !== 'object') return undefined;
    v = Object.prototype.hasOwnProperty.call(v, t) ? (v as Record<string, unknown>)[t] : undefined;
  }
  return v;
}

/**
 * Every other place (seq and pointer, in chain order) where the records of `journal` hold `value` (as JSON),
 * the erasure records and the erased unit itself excepted.
 */
export async function placesOf(
  journal: Journal,
  value: unknown,
  erased: { seq: number; path: string },
): Promise<{ seq: number; path: string }[]> {
  if (!distinctive(value)) return [];
  const want = JSON.stringify(value);
  const needle = typeof value === 'string' ? want.slice(1, -1) : want;
  const out: { seq: number; path: string }[] = [];
  for await (const l of journal.lines()) {
    if (!l.text.includes(needle) || l.text.includes(`"kind":"${ERASURE_KIND}"`)) continue;
    const r = JSON.parse(l.text) as Record<string, unknown>;
    const hits: string[] = [];
    for (const slot of ['input', 'model', 'prompt', 'tool_call', 'result', 'error', 'meta'])
      matchPaths(r[slot], ['**'], `/${slot}`, want, hits);
    for (const path of hits) if (l.seq !== erased.seq || path !== erased.path) out.push({ seq: l.seq, path });
    if (out.length >= MAX_PLACES) break;
  }
  return out.slice(0, MAX_PLACES);
}
