/** Byte helpers shared by the pure modules (no Buffer: they run in a browser). */

/** The concatenation of `parts`, as one new array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * `s` in a string of its own, for a piece of a stored line kept after the line is done with (a step_id, a call's
 * key). V8 keeps a slice (and a concatenation) as a view that holds its whole source alive: kept for every
 * record, such pieces held every line of a journal (a 100 000-step verify peaked at 290 MB and its collector
 * traced them all). Prefixing then slicing flattens the text into a copy; short strings are copied anyway.
 */
export function ownString(s: string): string {
  return (' ' + s).slice(1);
}
