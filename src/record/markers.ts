/**
 * Markers (spec/FORMAT.md §3.5): objects with exactly one member whose name carries the reserved prefix.
 * The format defines two — a blob reference (§7) and a redaction (REDACTION.md §5) — and this module is the
 * one place that knows their names and shapes. Where a marker may stand is the record profile's rule.
 * Pure: runs in a browser.
 */
import { RESERVED_PREFIX } from '../canonical/limits.js';
import { isDigest } from '../canonical/sha256.js';
import { isObject } from '../canonical/json.js';
import { isValidId } from './fields.js';

export const BLOB_MARKER = `${RESERVED_PREFIX}blob`;
export const REDACTED_MARKER = `${RESERVED_PREFIX}redacted`;

/** A blob reference (spec/FORMAT.md §7): the digest and size of the value it stands for. */
export interface BlobRef {
  digest: string;
  size: number;
}

/** The body of a redaction marker (REDACTION.md §5.1). */
export interface RedactedBody {
  commitment: string;
  rule: string;
  text?: string;
}

/** Whether `v` is a marker object: exactly one member, whose name starts with the reserved prefix. */
export function isMarker(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  let n = 0;
  let name = '';
  for (const k in v) {
    if (++n > 1) return false;
    name = k;
  }
  return n === 1 && name.startsWith(RESERVED_PREFIX);
}

/** Whether a blob marker's body is `{"digest": <digest>, "size": <bytes>}` and nothing else. */
export function isBlobBody(body: unknown): body is BlobRef {
  if (!isObject(body)) return false;
  return (
    Object.keys(body).length === 2 &&
    isDigest(body.digest) &&
    typeof body.size === 'number' &&
    Number.isSafeInteger(body.size) &&
    body.size >= 0
  );
}

/** Whether a redaction marker's body is `{"commitment", "rule"}` with an optional `"text"`. */
export function isRedactedBody(body: unknown): body is RedactedBody {
  if (!isObject(body)) return false;
  for (const k of Object.keys(body)) if (k !== 'commitment' && k !== 'rule' && k !== 'text') return false;
  return (
    isDigest(body.commitment) && isValidId(body.rule) && (body.text === undefined || typeof body.text === 'string')
  );
}

/** The reference when `value` is a well-formed blob marker, else null. */
export function blobRefOf(value: unknown): BlobRef | null {
  if (!isMarker(value)) return null;
  const body = value[BLOB_MARKER];
  return isBlobBody(body) ? { digest: body.digest, size: body.size } : null;
}

/** The marker object for a blob. */
export function blobMarker(ref: BlobRef): { [BLOB_MARKER]: BlobRef } {
  return { [BLOB_MARKER]: { digest: ref.digest, size: ref.size } };
}
