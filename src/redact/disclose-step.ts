/**
 * Whole-step disclosure (spec/REDACTION.md §8.4): every redacted value of one step, so that its original
 * step hash can be re-derived and checked against the anchor's commitment to it. Pure; the check never
 * throws on hostile input.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { parsePointer } from '../canonical/pointer.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';
import { hasExactMembers, isObject, isSeq, setMember, type Json } from '../canonical/json.js';
import { DEFAULT_FORMAT } from '../record/formats.js';
import { BLOB_MARKER, REDACTED_MARKER } from '../record/markers.js';
import type { ByteInput } from '../receipt/verify.js';
import type { AnchorBlock } from './anchor.js';
import { commitment, saltFromHex, stepCommitment } from './commit.js';
import {
  DISCLOSURE_FORMAT,
  assertSecrets,
  discloseFromSecrets,
  openingFromSecrets,
  proofDefect,
  textFits,
  type DisclosureProblemCode,
} from './disclose.js';
import { RedactError } from './errors.js';
import { verifyPublishedReceipt, type PublishedReport, type VerifyPublishedOptions } from './verify.js';

export const STEP_DISCLOSURE_FORMAT = 'stepchain-step-disclosure/v2';
/** Whole-step proofs of withdrawn publications. */
const WITHDRAWN_STEP_DISCLOSURE = 'stepchain-step-disclosure/v1';

/** An opening of one step commitment: the original step hash and its salt (hex). */
export interface Opening {
  salt: string;
  step_hash: string;
}

/**
 * Reveals every redacted value of one step, so its original step hash can be re-derived and checked
 * against the anchor's commitment to it (spec/REDACTION.md §8.4).
 */
export interface StepDisclosureProof {
  /** Content fields that were blobs in the original and are not in the published step, sorted. */
  blob_fields: string[];
  format: typeof STEP_DISCLOSURE_FORMAT;
  manifest_digest: string;
  /** The opening of step seq − 1's commitment (its original hash is this step's prev_hash) when seq > redacted_from; else null. */
  prev: Opening | null;
  /** The salt of this step's own commitment when seq ≥ redacted_from; else null. */
  salt: string | null;
  seq: number;
  values: { commitment: string; path: string; rule: string; salt: string; value: Json }[];
}

export interface StepDisclosureReport {
  ok: boolean;
  problems: { code: DisclosureProblemCode; message: string }[];
  seq: number | null;
  /** The original step record (with its step_hash), only when ok. */
  record: Json | null;
  manifest_digest: string | null;
  receipt: PublishedReport | null;
  proves: string[];
}

/** Content fields a whole-step proof may name as blobs in the original (FORMAT §7). */
const BLOB_FIELDS = DEFAULT_FORMAT.records[0]!.blobFields;

/** Builds the whole-step proof for `seq` from a secrets file (every redaction of the step, and the openings it needs). */
export function discloseStepFromSecrets(secrets: unknown, seq: number): StepDisclosureProof {
  assertSecrets(secrets);
  if (!isSeq(seq))
    throw new RedactError('ARGUMENT_INVALID', 'a whole-step disclosure needs a seq (non-negative integer)');
  const entries = secrets.redactions.filter((e) => isObject(e) && e.seq === seq) as Record<string, unknown>[];
  const values = entries
    .map((e) => discloseFromSecrets(secrets, seq, e.path as string))
    .map(({ commitment: c, path, rule, salt, value }) => ({ commitment: c, path, rule, salt, value }));
  const u = Array.isArray(secrets.unblobbed)
    ? (secrets.unblobbed as unknown[]).find((x) => isObject(x) && x.seq === seq)
    : undefined;
  const fields =
    isObject(u) && Array.isArray(u.fields)
      ? (u.fields as unknown[]).filter((f): f is string => typeof f === 'string').sort()
      : [];
  const own = openingFromSecrets(secrets, seq);
  // The previous step's opening is needed only when this step's is there too (seq > redacted_from).
  const prev = own && seq > 0 ? openingFromSecrets(secrets, seq - 1) : null;
  return {
    blob_fields: fields,
    format: STEP_DISCLOSURE_FORMAT,
    manifest_digest: secrets.manifest_digest,
    prev,
    salt: own ? own.salt : null,
    seq,
    values,
  };
}

function openingDefect(v: unknown, what: string): string | null {
  if (v === null) return null;
  if (!isObject(v) || !hasExactMembers(v, ['salt', 'step_hash']))
    return `${what} must be null or {"salt", "step_hash"}`;
  if (saltFromHex(v.salt) === null) return `${what}.salt must be 64 lowercase hex digits (32 bytes)`;
  if (!isDigest(v.step_hash)) return `${what}.step_hash must be a digest`;
  return null;
}

function stepProofDefect(proof: unknown): string | null {
  if (isObject(proof) && proof.format === WITHDRAWN_STEP_DISCLOSURE)
    return `${WITHDRAWN_STEP_DISCLOSURE} proofs belong to withdrawn publications (anchor format stepchain-redaction/v1); make a new proof against a receipt published with this version`;
  if (
    !isObject(proof) ||
    !hasExactMembers(proof, ['blob_fields', 'format', 'manifest_digest', 'prev', 'salt', 'seq', 'values'])
  ) {
    return 'a whole-step proof has exactly the members blob_fields, format, manifest_digest, prev, salt, seq and values';
  }
  if (proof.format !== STEP_DISCLOSURE_FORMAT)
    return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(STEP_DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  const bf = proof.blob_fields;
  if (
    !Array.isArray(bf) ||
    !bf.every((f, i) => typeof f === 'string' && BLOB_FIELDS.has(f) && (i === 0 || f > (bf[i - 1] as string)))
  ) {
    return 'blob_fields must be content field names, sorted, without repeats';
  }
  const prevWhy = openingDefect(proof.prev, 'prev');
  if (prevWhy) return prevWhy;
  if (proof.salt !== null && saltFromHex(proof.salt) === null)
    return 'salt must be null or 64 lowercase hex digits (32 bytes)';
  if (!Array.isArray(proof.values)) return 'values must be an array';
  const paths = new Set<string>();
  for (const [i, v] of (proof.values as unknown[]).entries()) {
    const single = isObject(v)
      ? { ...v, format: DISCLOSURE_FORMAT, manifest_digest: proof.manifest_digest, seq: proof.seq }
      : v;
    const why =
      isObject(v) && hasExactMembers(v, ['commitment', 'path', 'rule', 'salt', 'value'])
        ? proofDefect(single)
        : 'an entry has exactly commitment, path, rule, salt and value';
    if (why) return `values[${i}]: ${why}`;
    const path = (v as { path: string }).path;
    if (paths.has(path)) return `values[${i}] repeats the path ${path}`;
    paths.add(path);
  }
  return null;
}

function setAt(root: Record<string, unknown>, tokens: string[], value: Json): boolean {
  let node: unknown = root;
  for (let i = 0; i < tokens.length - 1; i++) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, tokens[i]!))
      return false;
    node = (node as Record<string, unknown>)[tokens[i]!];
  }
  if (
    node === null ||
    typeof node !== 'object' ||
    !Object.prototype.hasOwnProperty.call(node, tokens[tokens.length - 1]!)
  )
    return false;
  setMember(node as Record<string, unknown>, tokens[tokens.length - 1]!, value);
  return true;
}

/** A check that failed: the problem's code and message. */
type Failure = [DisclosureProblemCode, string];

/**
 * Checks a whole-step proof (spec/REDACTION.md §8.4): every redaction of the step is disclosed and matches
 * its marker; the openings the step needs are there; putting the values back (and the blob references for
 * `blob_fields`), with prev_hash the original hash of the step before, gives a record whose hash opens the
 * anchor's commitment for the step (or, before the first redaction, is its published hash). Never throws.
 */
export async function verifyStepDisclosure(
  receipt: ByteInput,
  proof: unknown,
  options: Omit<VerifyPublishedOptions, 'locate'> = {},
): Promise<StepDisclosureReport> {
  const report: StepDisclosureReport = {
    ok: false,
    problems: [],
    seq: null,
    record: null,
    manifest_digest: null,
    receipt: null,
    proves: [],
  };
  const fail = ([code, message]: Failure): StepDisclosureReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = stepProofDefect(proof);
  if (defect) return fail(['PROOF_INVALID', defect]);
  const p = proof as StepDisclosureProof;
  report.seq = p.seq;
  const published = await verifyPublishedReceipt(receipt, { ...options, locate: { seq: p.seq, step: true } });
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok || !published.anchor || !published.manifest) {
    const first = published.problems[0];
    return fail([
      'RECEIPT_INVALID',
      `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}`,
    ]);
  }
  if (published.manifest_digest !== p.manifest_digest)
    return fail([
      'MANIFEST_MISMATCH',
      `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}`,
    ]);
  if (published.located_line === null) return fail(['NOT_REDACTED', `the receipt has no step ${p.seq}`]);
  const anchor = published.anchor;
  const record = JSON.parse(published.located_line) as Record<string, unknown>;
  const publishedHash = record.step_hash as string;
  const declared = (published.manifest.redactions as { path: string; rule: string; seq: number }[]).filter(
    (d) => d.seq === p.seq,
  );
  const failure = checkValues(p, record, declared) ?? checkOpenings(p, anchor);
  if (failure) return fail(failure);
  const hashed = reassemble(p, record);
  if (typeof hashed !== 'string') return fail(hashed);
  const hash = hashed;
  if (p.salt !== null) {
    if (stepCommitment(saltFromHex(p.salt)!, hash) !== anchor.commitments[p.seq - anchor.redacted_from])
      return fail([
        'ANCHOR_MISMATCH',
        `the re-assembled step hashes to ${hash}, which does not open the anchor's commitment for seq ${p.seq}`,
      ]);
  } else if (hash !== publishedHash) {
    return fail([
      'ANCHOR_MISMATCH',
      `the re-assembled step hashes to ${hash}; step ${p.seq} is before the first redaction, so it must hash to its published step hash ${publishedHash}`,
    ]);
  }
  record.step_hash = hash;
  report.ok = true;
  report.record = record as Json;
  const signed = published.signed_by ? 'signed ' : '';
  report.proves = [
    `Step ${p.seq} of the original run is exactly the re-assembled record, with step hash ${hash}: ${p.salt !== null ? "it opens the anchor's commitment for that step" : 'the step precedes the first redaction and is published unchanged'}. So the published step's unredacted content is original, and every redacted value of the step is disclosed.`,
    p.seq === anchor.length - 1 && p.salt !== null
      ? `That hash is the original head the anchor commits to (the publisher's ${signed}claim): compare it with a head pinned independently.`
      : `That hash links to the original head only through the anchor's commitments (the publisher's ${signed}claim); whole-step proofs of every later step, checked against a head pinned independently, make the link a proof.`,
  ];
  return report;
}

/** Every redaction of the step is disclosed, and each disclosed value matches the marker standing at its path. */
function checkValues(
  p: StepDisclosureProof,
  record: Record<string, unknown>,
  declared: readonly { path: string; rule: string }[],
): Failure | null {
  const given = new Map(p.values.map((v) => [v.path, v]));
  for (const d of declared)
    if (!given.has(d.path))
      return [
        'INCOMPLETE_DISCLOSURE',
        `the redaction at ${d.path} (rule ${JSON.stringify(d.rule)}) is not disclosed; a whole-step proof discloses every redaction of the step`,
      ];
  for (const v of p.values) {
    const d = declared.find((x) => x.path === v.path);
    if (!d) return ['NOT_REDACTED', `no redaction of step ${p.seq} stands at ${v.path}`];
    let marker: unknown = record;
    for (const t of parsePointer(v.path))
      marker = isObject(marker) || Array.isArray(marker) ? (marker as Record<string, unknown>)[t] : undefined;
    const inner = isObject(marker) ? (marker[REDACTED_MARKER] as Record<string, unknown> | undefined) : undefined;
    if (inner?.rule !== v.rule || inner.commitment !== v.commitment)
      return ['MARKER_MISMATCH', `the marker at ${v.path} does not name the proof's rule and commitment`];
    if (commitment(saltFromHex(v.salt)!, v.value) !== v.commitment)
      return ['COMMITMENT_MISMATCH', `the salt and value disclosed for ${v.path} do not give the marker's commitment`];
    if (typeof inner.text === 'string' && (typeof v.value !== 'string' || !textFits(inner.text, v.value)))
      return ['TEXT_MISMATCH', `the marker's text at ${v.path} cannot have come from the disclosed value`];
  }
  return null;
}

/** The openings this step needs, and no others (§8.4 step 4). */
function checkOpenings(p: StepDisclosureProof, anchor: AnchorBlock): Failure | null {
  const k = anchor.redacted_from;
  if (p.seq >= anchor.length)
    return ['ANCHOR_MISMATCH', `the anchor counts ${anchor.length} original steps; there is no step ${p.seq}`];
  if (p.seq > k && p.prev === null)
    return [
      'INCOMPLETE_DISCLOSURE',
      `step ${p.seq}'s prev_hash is the original hash of step ${p.seq - 1}, which the anchor holds only as a commitment: the proof must open it (prev)`,
    ];
  if (p.seq <= k && p.prev !== null)
    return [
      'PROOF_INVALID',
      `prev must be null: step ${p.seq} is not after the first redaction (seq ${k}), so its prev_hash is the published one`,
    ];
  if (p.seq >= k && p.salt === null)
    return [
      'INCOMPLETE_DISCLOSURE',
      `the anchor commits to step ${p.seq}'s original hash: the proof must give that commitment's salt`,
    ];
  if (p.seq < k && p.salt !== null)
    return [
      'PROOF_INVALID',
      `salt must be null: step ${p.seq} is before the first redaction (seq ${k}) and has no commitment`,
    ];
  if (p.prev && stepCommitment(saltFromHex(p.prev.salt)!, p.prev.step_hash) !== anchor.commitments[p.seq - 1 - k]) {
    return ['ANCHOR_MISMATCH', `prev does not open the anchor's commitment to the original hash of step ${p.seq - 1}`];
  }
  return null;
}

/** The original record put back together in place (values, blob references, the original prev_hash); its step hash. */
function reassemble(p: StepDisclosureProof, record: Record<string, unknown>): string | Failure {
  // Markers never nest (nothing below a redacted node is walked), so order is free.
  for (const v of p.values) {
    if (!setAt(record, parsePointer(v.path), v.value)) return ['NOT_REDACTED', `no value stands at ${v.path}`];
  }
  for (const f of p.blob_fields)
    if (!(f in record)) return ['PROOF_INVALID', `blob_fields names ${f}, which the step does not have`];
  // Steps up to the first redaction keep their published prev_hash, which is the original (§6.2).
  if (p.prev) record.prev_hash = p.prev.step_hash;
  delete record.step_hash;
  try {
    // Inside the try: a disclosed value may be as deep as a record, so a field holding one can be too deep to hash.
    for (const f of p.blob_fields) {
      const text = canonicalJson(record[f], { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH });
      record[f] = { [BLOB_MARKER]: { digest: digestUtf8(text), size: new TextEncoder().encode(text).length } };
    }
    return digestUtf8(canonicalJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH }));
  } catch {
    return ['PROOF_INVALID', 'the re-assembled step is not I-JSON'];
  }
}
