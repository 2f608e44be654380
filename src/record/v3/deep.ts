/**
 * The deep tier of `stepchain/v3` (spec/FORMAT.md §14.7): recompute a stored record's root R from its
 * values and seed, and compare it with the `root` it carries. The fast tier proves that no stored byte
 * changed since the writer sealed the line; this proves that the writer's `root` commits to the values the
 * line holds (what a publication proves against). Pure; never throws on hostile input.
 */
import { CommitError, V3_SLOTS, commitRecord, seedFromHex } from './commit.js';

export interface DeepFinding {
  code: 'ROOT_MISMATCH' | 'MARKER_INVALID';
  message: string;
  /** Top-level member, and a JSON Pointer below it when known. */
  field: string;
  path?: string;
}

/**
 * Checks one private-form record (parsed). Returns null when its root is the one its values and seed give,
 * or the finding. Lines whose members break their own rules are the fast tier's: a record without a valid
 * seed or root is not judged here (null).
 */
export function deepCheckRecord(record: Readonly<Record<string, unknown>>): DeepFinding | null {
  const seed = typeof record.seed === 'string' ? seedFromHex(record.seed) : null;
  const root = record.root;
  if (seed === null || typeof root !== 'string') return null;
  const values: Record<string, unknown> = {};
  for (const slot of V3_SLOTS) if (slot in record) values[slot] = record[slot];
  let computed: string;
  try {
    computed = commitRecord(values, seed).root;
  } catch (e) {
    if (e instanceof CommitError)
      return { code: 'MARKER_INVALID', message: e.message, field: e.path.split('/')[1] ?? 'root', path: e.path };
    return {
      code: 'ROOT_MISMATCH',
      message: `the record's values could not be committed (${String(e)})`,
      field: 'root',
    };
  }
  if (computed === root) return null;
  return {
    code: 'ROOT_MISMATCH',
    message: `stored root ${root} is not the root of the record's values (${computed}): the writer sealed a root that does not commit to what the line holds, so no publication of this record can be proven`,
    field: 'root',
  };
}

/** deepCheckRecord of a stored line's text; null for a line that is not a JSON object (the fast tier reports it). */
export function deepCheckLine(text: string): DeepFinding | null {
  let record: unknown;
  try {
    record = JSON.parse(text);
  } catch {
    return null;
  }
  if (record === null || typeof record !== 'object' || Array.isArray(record)) return null;
  return deepCheckRecord(record as Record<string, unknown>);
}

/**
 * Which slot's values disagree, when the writer's slot digests are known (a vector, a test): the deep tier
 * itself only has R. Given the expected slot digests (hex), returns the first slot that differs.
 */
export function mismatchedSlot(
  record: Readonly<Record<string, unknown>>,
  expectedSlotDigests: readonly string[],
): string | null {
  const seed = typeof record.seed === 'string' ? seedFromHex(record.seed) : null;
  if (seed === null) return null;
  const values: Record<string, unknown> = {};
  for (const slot of V3_SLOTS) if (slot in record) values[slot] = record[slot];
  const c = commitRecord(values, seed);
  for (let j = 0; j < V3_SLOTS.length; j++) {
    let hex = '';
    for (const b of c.slots[j]!.digest) hex += b.toString(16).padStart(2, '0');
    if (hex !== expectedSlotDigests[j]) return V3_SLOTS[j]!;
  }
  return null;
}
