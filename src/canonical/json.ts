/**
 * The JSON data model (spec/FORMAT.md §3.1) and the small shape checks every parser of a hostile document
 * uses: a manifest, an anchor block, a proof, a policy. Each answers a yes or no and never throws, so the
 * caller can name the member that is wrong.
 */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = Record<string, Json>;
/**
 * A JSON value a caller hands in: Json, with read-only arrays and objects accepted too. An object member may
 * be typed undefined, since the compiler cannot tell an optional member from one set to undefined; the
 * canonical gate refuses an undefined member at run time.
 */
export type JsonValue =
  null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue | undefined };

/** A JSON object: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Sets member `key` of `o`, also one named "__proto__" (legal JSON, kept by JSON.parse as an own member): a
 * plain assignment would set the object's prototype instead, and the member would vanish from its keys.
 */
export function setMember<V>(o: Record<string, V>, key: string, value: V): void {
  if (key === '__proto__')
    Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
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
