/**
 * The JSON data model (spec/FORMAT.md §3.1) and the small shape checks every parser of a hostile document
 * uses: a manifest, an anchor block, a proof, a policy. Each answers a yes or no and never throws, so the
 * caller can name the member that is wrong.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = Record<string, Json>;

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Whether `o` has exactly the members `names` (given in UTF-16 order), no more, no fewer. */
export function hasExactMembers(o: Record<string, unknown>, names: readonly string[]): boolean {
  const k = Object.keys(o).sort();
  return k.length === names.length && k.every((x, i) => x === names[i]);
}

/** An integer from 0 to 2^53 − 1: a seq, a size, a count. */
export function isSeq(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
}
