/**
 * Turns a stored line back into the step the caller appended: parses it, checks its seq, and replaces
 * each blob reference with the value it names after checking the blob's size and digest. Pure.
 */
import { RESERVED_PREFIX } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestBytes, isDigest } from '../canonical/sha256.js';
import { BLOB_MARKER } from '../chain/verify.js';
import { CONTENT_FIELDS, type Json, type StepRecord } from '../chain/record.js';
import { StoreError } from './errors.js';
import type { BlobRef } from '../chain/verify.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The reference when `value` is a blob marker, else null. */
export function blobRefOf(value: unknown): BlobRef | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const keys = Object.keys(value);
  if (keys.length !== 1 || keys[0] !== BLOB_MARKER) return null;
  const body = (value as Record<string, unknown>)[BLOB_MARKER] as Record<string, unknown> | null;
  if (body === null || typeof body !== 'object' || !isDigest(body.digest) || typeof body.size !== 'number') return null;
  return { digest: body.digest, size: body.size };
}

/** BLOB_CORRUPT for a stored blob whose size is not its reference's: thrown before any of it is read. */
export function blobSizeError(where: string, digest: string, actual: number, expected: number): StoreError {
  return new StoreError('BLOB_CORRUPT', `${where}: blob ${digest} holds ${actual} bytes, the reference says ${expected}`, {
    hint: 'restore blobs/sha256/ from a backup',
  });
}

/** Checks blob bytes against a reference: null when they match, else why not. */
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
  if (marker !== undefined) return `holds the reserved member name ${JSON.stringify(marker.names.find((n) => n.startsWith(RESERVED_PREFIX)) ?? marker.names[0])} at ${marker.path === '' ? 'its root' : marker.path}, which no writer stores in a blob`;
  return null;
}

export async function restoreRecord(
  text: string,
  expectedSeq: number,
  where: string,
  loadBlob: (ref: BlobRef) => Promise<Uint8Array | null>,
): Promise<StepRecord> {
  let record: StepRecord;
  try {
    record = JSON.parse(text) as StepRecord;
  } catch {
    throw new StoreError('JOURNAL_CORRUPT', `${where}: the line for seq ${expectedSeq} is not JSON`, {
      location: { seq: expectedSeq },
      hint: 'run verify on the journal to locate the damage',
    });
  }
  if (record === null || typeof record !== 'object' || record.seq !== expectedSeq) {
    throw new StoreError('JOURNAL_CORRUPT', `${where}: expected seq ${expectedSeq}, found ${String((record as { seq?: unknown } | null)?.seq)}`, {
      location: { seq: expectedSeq },
      hint: 'run verify on the journal to locate the damage',
    });
  }
  for (const field of CONTENT_FIELDS) {
    const ref = blobRefOf(record[field]);
    if (ref === null) continue;
    const bytes = await loadBlob(ref);
    if (bytes === null) {
      throw new StoreError('BLOB_MISSING', `seq ${expectedSeq} field ${field} references blob ${ref.digest}, which the journal does not hold`, {
        location: { seq: expectedSeq, path: `/${field}` },
        hint: 'restore blobs/sha256/ from a backup',
      });
    }
    const defect = blobDefect(bytes, ref);
    if (defect !== null) {
      throw new StoreError('BLOB_CORRUPT', `blob ${ref.digest} (seq ${expectedSeq} field ${field}) ${defect}`, {
        location: { seq: expectedSeq, path: `/${field}` },
        hint: 'restore blobs/sha256/ from a backup',
      });
    }
    (record as unknown as Record<string, Json>)[field] = JSON.parse(decoder.decode(bytes)) as Json;
  }
  return record;
}
