/**
 * What a blob's bytes must be (spec/FORMAT.md §7): the size and digest its reference records, the UTF-8
 * canonical form of an I-JSON value, and no reserved member name inside. Every reader that takes a blob
 * from somewhere — a store's verify, a fork, a read, an export, the publisher, diff — asks here. Pure.
 */
import { RESERVED_PREFIX } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestBytes } from '../canonical/sha256.js';
import type { Json } from '../canonical/json.js';
import type { BlobRef } from './markers.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Checks blob bytes against a reference: null when they are the blob it names, else why not (a phrase after "blob <digest>"). */
export function blobDefect(bytes: Uint8Array, ref: BlobRef): string | null {
  if (bytes.length !== ref.size) return `holds ${bytes.length} bytes, the reference says ${ref.size}`;
  const actual = digestBytes(bytes);
  if (actual !== ref.digest) return `hashes to ${actual}`;
  // A writer that hashed what it wrote may still have written something that is not a canonical value.
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return 'is not valid UTF-8';
  }
  const scan = scanCanonical(text, { members: false });
  if (scan.defect !== null) return `is not the canonical JSON of a value (${scan.defect.code}: ${scan.defect.reason})`;
  // A blob is a value a writer accepted, and writers refuse reserved names (§3.4, §7): a marker inside one
  // was put there by someone else, and a reader would show it as if it were the step's content.
  const marker = scan.markers[0];
  if (marker !== undefined)
    return `holds the reserved member name ${JSON.stringify(marker.names.find((n) => n.startsWith(RESERVED_PREFIX)) ?? marker.names[0])} at ${marker.path === '' ? 'its root' : marker.path}, which no writer stores in a blob`;
  return null;
}

/** The value of blob bytes that passed blobDefect. */
export function blobValue(bytes: Uint8Array): Json {
  return JSON.parse(decoder.decode(bytes)) as Json;
}

/** A blob fetched for a reference and checked: its bytes, or why there are none to use. */
export type FetchedBlob =
  { ok: true; bytes: Uint8Array } | { ok: false; missing: true } | { ok: false; missing: false; defect: string };

/**
 * Fetches the blob `ref` names and checks it (FORMAT §7): every reader that takes a blob from a store or a
 * receipt goes through here, so none of them skips a check. `get` returns null when the blob is absent.
 */
export async function fetchBlob(get: (ref: BlobRef) => Promise<Uint8Array | null>, ref: BlobRef): Promise<FetchedBlob> {
  const bytes = await get(ref);
  if (bytes === null) return { ok: false, missing: true };
  const defect = blobDefect(bytes, ref);
  return defect === null ? { ok: true, bytes } : { ok: false, missing: false, defect };
}
