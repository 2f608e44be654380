/**
 * The marker objects of one step line (spec/FORMAT.md §3.5, and §14.6 for v3): each has a defined name,
 * a body of the right shape and stands where the record's profile allows it; a v1/v2 line's blob
 * references are collected for the blob check. Part of the per-line check (line.ts). Pure; never throws
 * on hostile input.
 */
import type { MarkerSpan } from '../canonical/scan.js';
import { BLOB_MARKER, REDACTED_MARKER, isBlobBody, isRedactedBody, type BlobRef } from '../record/markers.js';
import type { RecordProfile } from '../record/profile.js';
import { V3_MARKERS } from '../record/v3.js';
import { ERASED_MARKER, erasedMarkerDefect } from '../record/v3/erasure.js';
import type { ChainProblemCode, ProblemLocation } from './report.js';

/** Marker objects (FORMAT §3.5): exactly one member with a defined name, a body of the right shape, in a place the profile allows. */
export function checkMarkers(
  text: string,
  markers: MarkerSpan[],
  profile: RecordProfile,
  at: ProblemLocation,
  report: (code: ChainProblemCode, message: string, location: ProblemLocation) => void,
): (BlobRef & { field: string })[] {
  const blobs: (BlobRef & { field: string })[] = [];
  for (const m of markers) {
    const loc = { ...at, field: unescapeToken(m.path.split('/')[1] ?? ''), path: m.path };
    if (profile.version === 3) {
      const why = v3MarkerDefect(text, m, profile);
      if (why !== null) report('MARKER_INVALID', why, loc);
      continue;
    }
    if (m.names.length !== 1) {
      report('MARKER_INVALID', `a marker object must have exactly one member (found ${m.names.length})`, loc);
      continue;
    }
    const name = m.names[0]!;
    const body = (JSON.parse(text.slice(m.start, m.end)) as Record<string, unknown>)[name];
    if (name === BLOB_MARKER) {
      const field = m.path.slice(1);
      if (!profile.blobFields.has(field)) {
        report('MARKER_INVALID', 'a blob reference may only stand as a whole content field', loc);
        continue;
      }
      if (!isBlobBody(body)) {
        report(
          'MARKER_INVALID',
          'a blob reference is {"$stepchain:blob":{"digest":"sha256:<hex>","size":<bytes>}}',
          loc,
        );
        continue;
      }
      blobs.push({ field, digest: body.digest, size: body.size });
    } else if (name === REDACTED_MARKER) {
      // Checked wherever it stands (FORMAT §3.5): outside the content fields and meta — in ts, seq, an
      // unknown member — it is invalid even when its shape is right, besides that member's own problem.
      if (!profile.redactable.includes(loc.field)) {
        report(
          'MARKER_INVALID',
          `a redaction marker may stand only inside a content field or meta, not in ${JSON.stringify(loc.field)}`,
          loc,
        );
      } else if (!isRedactedBody(body)) {
        report(
          'MARKER_INVALID',
          'a redaction marker is {"$stepchain:redacted":{"commitment":"sha256:<hex>","rule":"<id>"}} with an optional "text"',
          loc,
        );
      }
    } else {
      report('MARKER_INVALID', `unknown marker ${JSON.stringify(name)}`, loc);
    }
  }
  return blobs;
}

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const isDigestText = (v: unknown): boolean => typeof v === 'string' && DIGEST_RE.test(v);

/**
 * The markers of a v3 record (FORMAT §14.6): a part reference `{"$stepchain:part":{"digest":D,…}}` in any
 * form; in the public form also withheld markers (a value `{"$stepchain:withheld":D}`, or beside an object's
 * disclosed members `"$stepchain:withheld":[D,…]` sorted without repeats) and chunk lists
 * `{"$stepchain:chunks":[…]}`. Whether each then commits to the root is the deep tier's question.
 */
function v3MarkerDefect(text: string, m: MarkerSpan, profile: RecordProfile): string | null {
  let obj: Record<string, unknown>;
  try {
    obj = JSON.parse(text.slice(m.start, m.end)) as Record<string, unknown>;
  } catch {
    return 'a marker object that is not JSON';
  }
  const field = unescapeToken(m.path.split('/')[1] ?? '');
  if (!profile.redactable.includes(field))
    return `a marker may stand only inside a content slot or meta, not in ${JSON.stringify(field)}`;
  const isPublic = profile.memberNames.has('secrets');
  const isSealed = profile.memberNames.has('keys');
  const reserved = m.names.filter((n) => n.startsWith('$stepchain:'));
  for (const name of reserved) {
    const body = obj[name];
    if (name === V3_MARKERS.part) {
      if (m.names.length !== 1) return 'a part reference is an object with the one member "$stepchain:part"';
      if (
        body === null ||
        typeof body !== 'object' ||
        Array.isArray(body) ||
        !isDigestText((body as Record<string, unknown>).digest)
      )
        return 'a part reference is {"$stepchain:part":{"digest":"sha256:<hex>",…}}';
    } else if (name === V3_MARKERS.withheld && isPublic) {
      if (typeof body === 'string') {
        if (m.names.length !== 1 || !isDigestText(body))
          return 'a withheld value is {"$stepchain:withheld":"sha256:<hex>"}';
      } else if (Array.isArray(body)) {
        if (
          body.length === 0 ||
          !body.every(isDigestText) ||
          body.some((d, i) => i > 0 && (d as string) <= (body[i - 1] as string))
        )
          return 'withheld members are a non-empty list of digests, sorted ascending without repeats';
      } else return "a withheld marker holds a digest, or a list of digests beside an object's members";
    } else if (name === V3_MARKERS.chunks && isPublic) {
      if (m.names.length !== 1 || !Array.isArray(body) || body.length < 2)
        return 'a chunk list is {"$stepchain:chunks":[chunks…]} with at least two chunks';
    } else if (name === ERASED_MARKER && (isSealed || isPublic)) {
      const why = erasedMarkerDefect(obj);
      if (why !== null) return why;
    } else if (name === ERASED_MARKER) {
      return `${JSON.stringify(name)} stands only in a record in sealed form (after an erasure: no seed; bind, keys, salts) or in a publication of one`;
    } else if (name === V3_MARKERS.withheld || name === V3_MARKERS.chunks) {
      return `${JSON.stringify(name)} stands only in a publication's public form, never in a stored record`;
    } else {
      return `unknown marker ${JSON.stringify(name)}`;
    }
  }
  return null;
}

/** One JSON Pointer reference token, unescaped (RFC 6901 §4). */
export function unescapeToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}
