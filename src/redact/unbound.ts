/**
 * Which text a published record shows without binding it to the head (spec/REDACTION.md §12.5 step 6): the
 * one rule the verifier's report and every surface that renders records (the page's step list) share. Pure.
 */
import { isObject } from '../canonical/json.js';
import { REDACTABLE_MEMBERS } from '../record/formats.js';
import { REDACTED_MARKER } from '../record/markers.js';

/**
 * The slots of a public-form record that are redacted views (REDACTION §12.2): named in `digests`, present,
 * and not a whole marker (a whole marker beside a digest is a slot in two states, the chain's HASH_MISMATCH).
 * Their text is not bound to the head: only the digest is. Names that are not slots are left out (the
 * chain's FIELD_INVALID). In `digests` order, which is slot order in a canonical line.
 */
export function viewSlots(record: unknown): string[] {
  if (!isObject(record) || !isObject(record.digests)) return [];
  const out: string[] = [];
  for (const slot of Object.keys(record.digests)) {
    const v = record[slot];
    if (
      REDACTABLE_MEMBERS.has(slot) &&
      v !== undefined &&
      !(isObject(v) && Object.keys(v).length === 1 && REDACTED_MARKER in v)
    )
      out.push(slot);
  }
  return out;
}

/**
 * A JSON Pointer as people may read it: control characters (C0, DEL, C1) and bidirectional overrides, which
 * member names in a receipt may hold, written as \u{…} escapes, so a place named in a sentence, on a terminal
 * or on the page cannot rewrite what is around it.
 */
export function printablePointer(path: string): string {
  return path.replace(
    /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u{${c.charCodeAt(0).toString(16)}}`,
  );
}
