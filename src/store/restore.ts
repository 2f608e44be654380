/**
 * Turns a stored line back into the step the caller appended (spec/FORMAT.md §7): parses it, checks its
 * seq, and replaces each blob reference with the value it names once the blob passed its checks. Pure.
 */
import type { Json } from '../canonical/json.js';
import { blobValue, fetchBlob } from '../record/blobs.js';
import { formatOf, type Genesis } from '../record/formats.js';
import { blobRefOf, type BlobRef } from '../record/markers.js';
import type { StepRecord } from '../record/seal.js';
import { StoreError } from './errors.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { nestsDeeper } from '../canonical/depth.js';

/** BLOB_CORRUPT for a stored blob whose size is not its reference's: thrown before any of it is read. */
export function blobSizeError(where: string, digest: string, actual: number, expected: number): StoreError {
  return new StoreError(
    'BLOB_CORRUPT',
    `${where}: blob ${digest} holds ${actual} bytes, the reference says ${expected}`,
    {
      hint: 'restore blobs/sha256/ from a backup',
    },
  );
}

export async function restoreRecord(
  genesis: Genesis,
  text: string,
  expectedSeq: number,
  where: string,
  loadBlob: (ref: BlobRef) => Promise<Uint8Array | null>,
): Promise<StepRecord> {
  let record: StepRecord;
  if (nestsDeeper(text))
    throw new StoreError(
      'JOURNAL_CORRUPT',
      `${where}: the line for seq ${expectedSeq} nests deeper than ${MAX_RECORD_DEPTH} levels (DEPTH_LIMIT): no verifier accepts it`,
      { location: { seq: expectedSeq }, hint: 'run verify on the journal to locate the damage' },
    );
  try {
    record = JSON.parse(text) as StepRecord;
  } catch {
    throw new StoreError('JOURNAL_CORRUPT', `${where}: the line for seq ${expectedSeq} is not JSON`, {
      location: { seq: expectedSeq },
      hint: 'run verify on the journal to locate the damage',
    });
  }
  if (record === null || typeof record !== 'object' || record.seq !== expectedSeq) {
    throw new StoreError(
      'JOURNAL_CORRUPT',
      `${where}: expected seq ${expectedSeq}, found ${String((record as { seq?: unknown } | null)?.seq)}`,
      {
        location: { seq: expectedSeq },
        hint: 'run verify on the journal to locate the damage',
      },
    );
  }
  const fields = record as unknown as Record<string, Json>;
  const profile = formatOf(genesis).select((name) => fields[name]);
  for (const field of profile.blobFields) {
    const ref = blobRefOf(fields[field]);
    if (ref === null) continue;
    const blob = await fetchBlob(loadBlob, ref);
    if (!blob.ok && blob.missing) {
      throw new StoreError(
        'BLOB_MISSING',
        `seq ${expectedSeq} field ${field} references blob ${ref.digest}, which the journal does not hold`,
        {
          location: { seq: expectedSeq, path: `/${field}` },
          hint: 'restore blobs/sha256/ from a backup',
        },
      );
    }
    if (!blob.ok) {
      throw new StoreError('BLOB_CORRUPT', `blob ${ref.digest} (seq ${expectedSeq} field ${field}) ${blob.defect}`, {
        location: { seq: expectedSeq, path: `/${field}` },
        hint: 'restore blobs/sha256/ from a backup',
      });
    }
    fields[field] = blobValue(blob.bytes);
  }
  return record;
}
