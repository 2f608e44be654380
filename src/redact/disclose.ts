/**
 * Disclosure (spec/REDACTION.md §8): the secrets file a publisher keeps; the proofs that reveal one
 * redacted value, every redacted value of one step (re-deriving its original step hash and opening the
 * anchor's commitment to it), or one original step hash (the original head, for someone who holds it);
 * and the checks anyone can run offline against the public receipt. Pure — the checks run in a browser
 * and never throw on hostile input.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { parsePointer } from '../canonical/pointer.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';
import { hasExactMembers, isObject, isSeq, type Json } from '../canonical/json.js';
import { isValidId } from '../record/fields.js';
import { DEFAULT_FORMAT } from '../record/formats.js';
import { BLOB_MARKER, REDACTED_MARKER } from '../record/markers.js';
import type { ByteInput } from '../receipt/verify.js';
import { WITHDRAWN_FORMATS, type StepOpening } from './anchor.js';
import { commitment, saltFromHex, saltToHex, stepCommitment } from './commit.js';
import { RedactError } from './errors.js';
import type { Redaction } from './redact.js';
import { verifyPublishedReceipt, type PublishedReport, type VerifyPublishedOptions } from './verify.js';

export const SECRETS_FORMAT = 'stepchain-redaction-secrets/v2';
/** Secrets files of withdrawn publications (their receipts no longer verify). */
const WITHDRAWN_SECRETS = 'stepchain-redaction-secrets/v1';
export const DISCLOSURE_FORMAT = 'stepchain-disclosure/v1';

export interface SecretEntry {
  commitment: string;
  path: string;
  rule: string;
  /** 64 lowercase hex digits: the 32-byte salt. */
  salt: string;
  seq: number;
  value: Json;
}

/** The private file a publisher keeps: every salt and original value, bound to one published receipt. */
export interface SecretsFile {
  format: typeof SECRETS_FORMAT;
  manifest_digest: string;
  redactions: SecretEntry[];
  /** The opening of every step commitment of the anchor, by seq: each original step hash and its salt. */
  steps: StepOpening[];
  /** Per step, the content fields that were blobs in the original journal (needed to re-derive its step hash). */
  unblobbed: Array<{ fields: string[]; seq: number }>;
}

export interface DisclosureProof {
  commitment: string;
  format: typeof DISCLOSURE_FORMAT;
  manifest_digest: string;
  path: string;
  rule: string;
  salt: string;
  seq: number;
  value: Json;
}

export function secretsFile(
  manifestDigest: string, redactions: readonly Redaction[], unblobbed: ReadonlyArray<{ seq: number; fields: string[] }>, steps: readonly StepOpening[],
): SecretsFile {
  return {
    format: SECRETS_FORMAT,
    manifest_digest: manifestDigest,
    redactions: redactions.map((r) => ({ commitment: r.commitment, path: r.path, rule: r.rule, salt: saltToHex(r.salt), seq: r.seq, value: r.value })),
    steps: steps.map((o) => ({ salt: o.salt, seq: o.seq, step_hash: o.step_hash })),
    unblobbed: unblobbed.map((u) => ({ fields: [...u.fields], seq: u.seq })),
  };
}

/** Checks the secrets file's outline (format, manifest digest, redactions, steps); throws SECRETS_INVALID. */
function assertSecrets(secrets: unknown): asserts secrets is Record<string, unknown> & { manifest_digest: string; redactions: unknown[]; steps: unknown[] } {
  if (isObject(secrets) && secrets.format === WITHDRAWN_SECRETS) {
    throw new RedactError('SECRETS_INVALID', `this secrets file (${WITHDRAWN_SECRETS}) belongs to a receipt whose anchor format is withdrawn: ${WITHDRAWN_FORMATS['stepchain-redaction/v1']!}`);
  }
  if (!isObject(secrets) || secrets.format !== SECRETS_FORMAT || !isDigest(secrets.manifest_digest) || !Array.isArray(secrets.redactions) || !Array.isArray(secrets.steps)) {
    throw new RedactError('SECRETS_INVALID', `not a secrets file (expected {"format": "${SECRETS_FORMAT}", "manifest_digest", "redactions", "steps", "unblobbed"})`);
  }
}

/** The secrets file's opening of step `seq`'s commitment, checked; null when the file has none for it. */
function openingFromSecrets(secrets: { steps: unknown[] }, seq: number): { salt: string; step_hash: string } | null {
  const o = secrets.steps.find((x) => isObject(x) && x.seq === seq);
  if (o === undefined) return null;
  if (!isObject(o) || saltFromHex(o.salt) === null || !isDigest(o.step_hash)) throw new RedactError('SECRETS_INVALID', `the secrets file's opening of step ${seq} is damaged`);
  return { salt: o.salt as string, step_hash: o.step_hash };
}

const isPointer = (v: unknown): v is string => {
  if (typeof v !== 'string' || v === '') return false;
  try {
    parsePointer(v);
    return true;
  } catch {
    return false;
  }
};

/** Builds the proof for one location from a secrets file; throws RedactError when it cannot. */
export function discloseFromSecrets(secrets: unknown, seq: number, path: string): DisclosureProof {
  assertSecrets(secrets);
  if (!isSeq(seq) || !isPointer(path)) throw new RedactError('ARGUMENT_INVALID', 'disclose needs a seq (non-negative integer) and a JSON Pointer path such as /tool_call/arguments/api_key');
  const entry = (secrets.redactions as unknown[]).find((e) => isObject(e) && e.seq === seq && e.path === path) as Record<string, unknown> | undefined;
  if (!entry) {
    const here = (secrets.redactions as unknown[]).filter((e) => isObject(e) && e.seq === seq).map((e) => (e as { path: string }).path);
    throw new RedactError('NOT_REDACTED', `nothing was redacted at seq ${seq}, ${path}${here.length ? `; redacted paths in that step: ${here.slice(0, 10).join(', ')}${here.length > 10 ? ', …' : ''}` : ''}`, { location: { seq, path } });
  }
  const salt = saltFromHex(entry.salt);
  if (!salt || !isDigest(entry.commitment) || !isValidId(entry.rule) || !('value' in entry)) throw new RedactError('SECRETS_INVALID', `the secrets file's entry for seq ${seq}, ${path} is damaged`);
  let recomputed: string;
  try {
    recomputed = commitment(salt, entry.value);
  } catch {
    throw new RedactError('SECRETS_INVALID', `the secrets file's value for seq ${seq}, ${path} is not I-JSON`);
  }
  if (recomputed !== entry.commitment) throw new RedactError('SECRETS_INVALID', `the secrets file's salt and value for seq ${seq}, ${path} do not match its commitment`);
  return {
    commitment: entry.commitment, format: DISCLOSURE_FORMAT, manifest_digest: secrets.manifest_digest, path, rule: entry.rule as string,
    salt: entry.salt as string, seq, value: entry.value as Json,
  };
}

export type DisclosureProblemCode =
  /** The proof is not a disclosure document (shape, format, salt). */
  | 'PROOF_INVALID'
  /** The receipt does not verify as a published receipt. */
  | 'RECEIPT_INVALID'
  /** The proof was made for another receipt (another manifest digest). */
  | 'MANIFEST_MISMATCH'
  /** No redaction marker stands at the proof's seq and path. */
  | 'NOT_REDACTED'
  /** The marker names another rule or commitment than the proof. */
  | 'MARKER_MISMATCH'
  /** SHA-256 over the salt and the value is not the marker's commitment. */
  | 'COMMITMENT_MISMATCH'
  /** The marker's `text` (substring redaction) cannot have come from the disclosed value. */
  | 'TEXT_MISMATCH'
  /** A whole-step proof leaves a redaction of the step undisclosed. */
  | 'INCOMPLETE_DISCLOSURE'
  /** A whole-step or hash proof does not open the anchor's commitment (or re-derives another step hash). */
  | 'ANCHOR_MISMATCH';

export interface DisclosureReport {
  ok: boolean;
  problems: Array<{ code: DisclosureProblemCode; message: string }>;
  seq: number | null;
  path: string | null;
  rule: string | null;
  /** The disclosed value, only when ok. */
  value: Json | null;
  manifest_digest: string | null;
  receipt: PublishedReport | null;
  proves: string[];
}

/** Why `proof` is not a disclosure document, or null. */
export function proofDefect(proof: unknown): string | null {
  if (!isObject(proof) || !hasExactMembers(proof, ['commitment', 'format', 'manifest_digest', 'path', 'rule', 'salt', 'seq', 'value'])) {
    return 'a disclosure proof has exactly the members commitment, format, manifest_digest, path, rule, salt, seq and value';
  }
  if (proof.format !== DISCLOSURE_FORMAT) return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isDigest(proof.commitment)) return 'commitment must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  if (!isPointer(proof.path)) return 'path must be a non-empty JSON Pointer';
  if (!isValidId(proof.rule)) return 'rule must be a rule id';
  if (saltFromHex(proof.salt) === null) return 'salt must be 64 lowercase hex digits (32 bytes)';
  try {
    canonicalJson(proof.value, { maxDepth: MAX_RECORD_DEPTH });
  } catch {
    return 'value must be I-JSON without reserved member names';
  }
  return null;
}

/** Whether a marker's `text` can be `value` with some non-empty substrings replaced by placeholders. */
export function textFits(text: string, value: string): boolean {
  const parts = text.split(/\[REDACTED:[a-z][a-z-]*\]/);
  if (parts.length === 1) return false; // a text without any placeholder hides nothing
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!value.startsWith(first)) return false;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = value.indexOf(parts[i]!, at + 1);
    if (found < 0) return false;
    at = found + parts[i]!.length;
  }
  return value.length - last.length >= at + 1 && value.endsWith(last);
}

/**
 * Checks a disclosure proof against a published receipt, offline: the receipt verifies (as a published
 * receipt), the proof names its manifest, a marker stands at the proof's seq and path with the same rule
 * and commitment, and SHA-256 over the tag, salt and value gives that commitment. Never throws.
 */
export async function verifyDisclosure(receipt: ByteInput, proof: unknown, options: Omit<VerifyPublishedOptions, 'locate'> = {}): Promise<DisclosureReport> {
  const report: DisclosureReport = { ok: false, problems: [], seq: null, path: null, rule: null, value: null, manifest_digest: null, receipt: null, proves: [] };
  const defect = proofDefect(proof);
  if (defect) {
    report.problems.push({ code: 'PROOF_INVALID', message: defect });
    return report;
  }
  const p = proof as unknown as DisclosureProof;
  report.seq = p.seq;
  report.path = p.path;
  report.rule = p.rule;
  const published = await verifyPublishedReceipt(receipt, { ...options, locate: { seq: p.seq, path: p.path } });
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok) {
    const first = published.problems[0];
    report.problems.push({ code: 'RECEIPT_INVALID', message: `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}` });
    return report;
  }
  if (published.manifest_digest !== p.manifest_digest) {
    report.problems.push({ code: 'MANIFEST_MISMATCH', message: `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}` });
    return report;
  }
  const marker = published.located;
  if (!marker) {
    report.problems.push({ code: 'NOT_REDACTED', message: `no redaction marker stands at seq ${p.seq}, ${p.path} in this receipt` });
    return report;
  }
  if (marker.rule !== p.rule || marker.commitment !== p.commitment) {
    report.problems.push({ code: 'MARKER_MISMATCH', message: `the marker at seq ${p.seq}, ${p.path} is rule ${JSON.stringify(marker.rule)} with commitment ${marker.commitment}; the proof claims rule ${JSON.stringify(p.rule)} with ${p.commitment}` });
    return report;
  }
  if (commitment(saltFromHex(p.salt)!, p.value) !== marker.commitment) {
    report.problems.push({ code: 'COMMITMENT_MISMATCH', message: 'SHA-256 over the salt and the disclosed value is not the marker\'s commitment: the value (or salt) is not the redacted one' });
    return report;
  }
  if (marker.text !== undefined && (typeof p.value !== 'string' || !textFits(marker.text, p.value))) {
    report.problems.push({ code: 'TEXT_MISMATCH', message: 'the marker\'s text (the string with its secrets replaced by placeholders) cannot have come from the disclosed value' });
    return report;
  }
  report.ok = true;
  report.value = p.value;
  report.proves = [
    `The value redacted at seq ${p.seq}, ${p.path} (rule ${JSON.stringify(p.rule)}) of the published receipt ${published.manifest_digest} is the disclosed value: it matches the marker's salted SHA-256 commitment.`,
    ...(published.signed_by ? [`That receipt is signed by ${published.signed_by}.`] : []),
  ];
  return report;
}

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
  values: Array<{ commitment: string; path: string; rule: string; salt: string; value: Json }>;
}

export interface StepDisclosureReport {
  ok: boolean;
  problems: Array<{ code: DisclosureProblemCode; message: string }>;
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
  if (!isSeq(seq)) throw new RedactError('ARGUMENT_INVALID', 'a whole-step disclosure needs a seq (non-negative integer)');
  const entries = (secrets.redactions as unknown[]).filter((e) => isObject(e) && e.seq === seq) as Array<Record<string, unknown>>;
  const values = entries.map((e) => discloseFromSecrets(secrets, seq, e.path as string)).map(({ commitment: c, path, rule, salt, value }) => ({ commitment: c, path, rule, salt, value }));
  const u = Array.isArray(secrets.unblobbed) ? (secrets.unblobbed as unknown[]).find((x) => isObject(x) && x.seq === seq) : undefined;
  const fields = isObject(u) && Array.isArray(u.fields) ? (u.fields as unknown[]).filter((f): f is string => typeof f === 'string').sort() : [];
  const own = openingFromSecrets(secrets, seq);
  // The previous step's opening is needed only when this step's is there too (seq > redacted_from).
  const prev = own && seq > 0 ? openingFromSecrets(secrets, seq - 1) : null;
  return { blob_fields: fields, format: STEP_DISCLOSURE_FORMAT, manifest_digest: secrets.manifest_digest, prev, salt: own ? own.salt : null, seq, values };
}

function openingDefect(v: unknown, what: string): string | null {
  if (v === null) return null;
  if (!isObject(v) || !hasExactMembers(v, ['salt', 'step_hash'])) return `${what} must be null or {"salt", "step_hash"}`;
  if (saltFromHex(v.salt) === null) return `${what}.salt must be 64 lowercase hex digits (32 bytes)`;
  if (!isDigest(v.step_hash)) return `${what}.step_hash must be a digest`;
  return null;
}

function stepProofDefect(proof: unknown): string | null {
  if (isObject(proof) && proof.format === WITHDRAWN_STEP_DISCLOSURE) return `${WITHDRAWN_STEP_DISCLOSURE} proofs belong to withdrawn publications (anchor format stepchain-redaction/v1); make a new proof against a receipt published with this version`;
  if (!isObject(proof) || !hasExactMembers(proof, ['blob_fields', 'format', 'manifest_digest', 'prev', 'salt', 'seq', 'values'])) {
    return 'a whole-step proof has exactly the members blob_fields, format, manifest_digest, prev, salt, seq and values';
  }
  if (proof.format !== STEP_DISCLOSURE_FORMAT) return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(STEP_DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  const bf = proof.blob_fields;
  if (!Array.isArray(bf) || !bf.every((f, i) => typeof f === 'string' && BLOB_FIELDS.has(f) && (i === 0 || f > (bf[i - 1] as string)))) {
    return 'blob_fields must be content field names, sorted, without repeats';
  }
  const prevWhy = openingDefect(proof.prev, 'prev');
  if (prevWhy) return prevWhy;
  if (proof.salt !== null && saltFromHex(proof.salt) === null) return 'salt must be null or 64 lowercase hex digits (32 bytes)';
  if (!Array.isArray(proof.values)) return 'values must be an array';
  const paths = new Set<string>();
  for (const [i, v] of (proof.values as unknown[]).entries()) {
    const single = isObject(v) ? { ...v, format: DISCLOSURE_FORMAT, manifest_digest: proof.manifest_digest, seq: proof.seq } : v;
    const why = isObject(v) && hasExactMembers(v, ['commitment', 'path', 'rule', 'salt', 'value']) ? proofDefect(single) : 'an entry has exactly commitment, path, rule, salt and value';
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
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, tokens[i]!)) return false;
    node = (node as Record<string, unknown>)[tokens[i]!];
  }
  if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, tokens[tokens.length - 1]!)) return false;
  (node as Record<string, unknown>)[tokens[tokens.length - 1]!] = value;
  return true;
}

/**
 * Checks a whole-step proof (spec/REDACTION.md §8.4): every redaction of the step is disclosed and matches
 * its marker; the openings the step needs are there; putting the values back (and the blob references for
 * `blob_fields`), with prev_hash the original hash of the step before, gives a record whose hash opens the
 * anchor's commitment for the step (or, before the first redaction, is its published hash). Never throws.
 */
export async function verifyStepDisclosure(receipt: ByteInput, proof: unknown, options: Omit<VerifyPublishedOptions, 'locate'> = {}): Promise<StepDisclosureReport> {
  const report: StepDisclosureReport = { ok: false, problems: [], seq: null, record: null, manifest_digest: null, receipt: null, proves: [] };
  const fail = (code: DisclosureProblemCode, message: string): StepDisclosureReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = stepProofDefect(proof);
  if (defect) return fail('PROOF_INVALID', defect);
  const p = proof as unknown as StepDisclosureProof;
  report.seq = p.seq;
  const published = await verifyPublishedReceipt(receipt, { ...options, locate: { seq: p.seq, step: true } });
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok || !published.anchor || !published.manifest) {
    const first = published.problems[0];
    return fail('RECEIPT_INVALID', `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}`);
  }
  if (published.manifest_digest !== p.manifest_digest) return fail('MANIFEST_MISMATCH', `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}`);
  if (published.located_line === null) return fail('NOT_REDACTED', `the receipt has no step ${p.seq}`);
  const anchor = published.anchor;
  const record = JSON.parse(published.located_line) as Record<string, unknown>;
  const publishedHash = record.step_hash as string;
  const publishedPrev = record.prev_hash as string;
  const declared = (published.manifest.redactions as Array<{ path: string; rule: string; seq: number }>).filter((d) => d.seq === p.seq);
  const given = new Map(p.values.map((v) => [v.path, v]));
  for (const d of declared) if (!given.has(d.path)) return fail('INCOMPLETE_DISCLOSURE', `the redaction at ${d.path} (rule ${JSON.stringify(d.rule)}) is not disclosed; a whole-step proof discloses every redaction of the step`);
  for (const v of p.values) {
    const d = declared.find((x) => x.path === v.path);
    if (!d) return fail('NOT_REDACTED', `no redaction of step ${p.seq} stands at ${v.path}`);
    let marker: unknown = record;
    for (const t of parsePointer(v.path)) marker = isObject(marker) || Array.isArray(marker) ? (marker as Record<string, unknown>)[t] : undefined;
    const inner = isObject(marker) ? (marker[REDACTED_MARKER] as Record<string, unknown> | undefined) : undefined;
    if (!inner || inner.rule !== v.rule || inner.commitment !== v.commitment) return fail('MARKER_MISMATCH', `the marker at ${v.path} does not name the proof's rule and commitment`);
    if (commitment(saltFromHex(v.salt)!, v.value) !== v.commitment) return fail('COMMITMENT_MISMATCH', `the salt and value disclosed for ${v.path} do not give the marker's commitment`);
    if (typeof inner.text === 'string' && (typeof v.value !== 'string' || !textFits(inner.text, v.value))) return fail('TEXT_MISMATCH', `the marker's text at ${v.path} cannot have come from the disclosed value`);
  }
  // The openings this step needs, and no others (§8.4 step 4).
  const k = anchor.redacted_from;
  if (p.seq >= anchor.length) return fail('ANCHOR_MISMATCH', `the anchor counts ${anchor.length} original steps; there is no step ${p.seq}`);
  if (p.seq > k && p.prev === null) return fail('INCOMPLETE_DISCLOSURE', `step ${p.seq}'s prev_hash is the original hash of step ${p.seq - 1}, which the anchor holds only as a commitment: the proof must open it (prev)`);
  if (p.seq <= k && p.prev !== null) return fail('PROOF_INVALID', `prev must be null: step ${p.seq} is not after the first redaction (seq ${k}), so its prev_hash is the published one`);
  if (p.seq >= k && p.salt === null) return fail('INCOMPLETE_DISCLOSURE', `the anchor commits to step ${p.seq}'s original hash: the proof must give that commitment's salt`);
  if (p.seq < k && p.salt !== null) return fail('PROOF_INVALID', `salt must be null: step ${p.seq} is before the first redaction (seq ${k}) and has no commitment`);
  if (p.prev && stepCommitment(saltFromHex(p.prev.salt)!, p.prev.step_hash) !== anchor.commitments[p.seq - 1 - k]) {
    return fail('ANCHOR_MISMATCH', `prev does not open the anchor's commitment to the original hash of step ${p.seq - 1}`);
  }
  // Put the values back. Markers never nest (nothing below a redacted node is walked), so order is free.
  for (const v of p.values) {
    const tokens = parsePointer(v.path);
    if (!setAt(record, tokens, v.value)) return fail('NOT_REDACTED', `no value stands at ${v.path}`);
  }
  for (const f of p.blob_fields) {
    if (!(f in record)) return fail('PROOF_INVALID', `blob_fields names ${f}, which the step does not have`);
    const text = canonicalJson(record[f], { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH });
    record[f] = { [BLOB_MARKER]: { digest: digestUtf8(text), size: utf8Length(text) } };
  }
  // Steps up to the first redaction keep their published prev_hash, which is the original (§6.2).
  record.prev_hash = p.prev ? p.prev.step_hash : publishedPrev;
  delete record.step_hash;
  let hash: string;
  try {
    hash = digestUtf8(canonicalJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH }));
  } catch {
    return fail('PROOF_INVALID', 'the re-assembled step is not I-JSON');
  }
  if (p.salt !== null) {
    if (stepCommitment(saltFromHex(p.salt)!, hash) !== anchor.commitments[p.seq - k]) return fail('ANCHOR_MISMATCH', `the re-assembled step hashes to ${hash}, which does not open the anchor's commitment for seq ${p.seq}`);
  } else if (hash !== publishedHash) {
    return fail('ANCHOR_MISMATCH', `the re-assembled step hashes to ${hash}; step ${p.seq} is before the first redaction, so it must hash to its published step hash ${publishedHash}`);
  }
  record.step_hash = hash;
  report.ok = true;
  report.record = record as Json;
  const last = anchor.length - 1;
  report.proves = [
    `Step ${p.seq} of the original run is exactly the re-assembled record, with step hash ${hash}: ${p.salt !== null ? 'it opens the anchor\'s commitment for that step' : 'the step precedes the first redaction and is published unchanged'}. So the published step's unredacted content is original, and every redacted value of the step is disclosed.`,
    p.seq === last && p.salt !== null
      ? `That hash is the original head the anchor commits to (the publisher's ${published.signed_by ? 'signed ' : ''}claim): compare it with a head pinned independently.`
      : `That hash links to the original head only through the anchor's commitments (the publisher's ${published.signed_by ? 'signed ' : ''}claim); whole-step proofs of every later step, checked against a head pinned independently, make the link a proof.`,
  ];
  return report;
}

export const HASH_DISCLOSURE_FORMAT = 'stepchain-hash-disclosure/v1';

/** Opens the anchor's commitment to one original step hash (the original head for the last step), revealing no value. */
export interface HashDisclosureProof {
  format: typeof HASH_DISCLOSURE_FORMAT;
  manifest_digest: string;
  salt: string;
  seq: number;
  step_hash: string;
}

export interface HashDisclosureReport {
  ok: boolean;
  problems: Array<{ code: DisclosureProblemCode; message: string }>;
  seq: number | null;
  /** The original step hash the anchor commits to, only when ok. */
  step_hash: string | null;
  /** Whether the step is the original head. */
  head: boolean;
  manifest_digest: string | null;
  receipt: PublishedReport | null;
  proves: string[];
}

/** Builds the hash disclosure of step `seq` (default: the last committed step, the original head) from a secrets file. */
export function discloseHashFromSecrets(secrets: unknown, seq?: number): HashDisclosureProof {
  assertSecrets(secrets);
  if (seq !== undefined && !isSeq(seq)) throw new RedactError('ARGUMENT_INVALID', 'a hash disclosure needs a seq (non-negative integer)');
  let at = seq ?? -1;
  if (seq === undefined) for (const o of secrets.steps) if (isObject(o) && isSeq(o.seq) && o.seq > at) at = o.seq;
  const o = at >= 0 ? openingFromSecrets(secrets, at) : null;
  if (!o) {
    throw new RedactError('NOT_REDACTED', seq === undefined
      ? 'nothing was redacted, so the anchor commits to no step hash: the original head is the published head'
      : `the anchor commits to no hash of step ${seq}: steps before the first redaction are published with their original hashes`, { location: { seq: at } });
  }
  return { format: HASH_DISCLOSURE_FORMAT, manifest_digest: secrets.manifest_digest, salt: o.salt, seq: at, step_hash: o.step_hash };
}

function hashProofDefect(proof: unknown): string | null {
  if (!isObject(proof) || !hasExactMembers(proof, ['format', 'manifest_digest', 'salt', 'seq', 'step_hash'])) {
    return 'a hash disclosure has exactly the members format, manifest_digest, salt, seq and step_hash';
  }
  if (proof.format !== HASH_DISCLOSURE_FORMAT) return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(HASH_DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  if (saltFromHex(proof.salt) === null) return 'salt must be 64 lowercase hex digits (32 bytes)';
  if (!isDigest(proof.step_hash)) return 'step_hash must be a digest';
  return null;
}

/**
 * Checks a hash disclosure (spec/REDACTION.md §8.5): the receipt verifies as a published receipt, the
 * proof names its manifest, and SHA-256 over the tag, salt and step hash gives the anchor's commitment for
 * that seq. Never throws.
 */
export async function verifyHashDisclosure(receipt: ByteInput, proof: unknown, options: Omit<VerifyPublishedOptions, 'locate'> = {}): Promise<HashDisclosureReport> {
  const report: HashDisclosureReport = { ok: false, problems: [], seq: null, step_hash: null, head: false, manifest_digest: null, receipt: null, proves: [] };
  const fail = (code: DisclosureProblemCode, message: string): HashDisclosureReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = hashProofDefect(proof);
  if (defect) return fail('PROOF_INVALID', defect);
  const p = proof as unknown as HashDisclosureProof;
  report.seq = p.seq;
  const published = await verifyPublishedReceipt(receipt, options);
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok || !published.anchor) {
    const first = published.problems[0];
    return fail('RECEIPT_INVALID', `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}`);
  }
  if (published.manifest_digest !== p.manifest_digest) return fail('MANIFEST_MISMATCH', `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}`);
  const a = published.anchor;
  if (p.seq >= a.length) return fail('NOT_REDACTED', `the receipt has no step ${p.seq}`);
  if (p.seq < a.redacted_from) return fail('NOT_REDACTED', `the anchor commits to no hash of step ${p.seq}: steps before the first redaction (seq ${a.redacted_from}) are published with their original hashes`);
  if (stepCommitment(saltFromHex(p.salt)!, p.step_hash) !== a.commitments[p.seq - a.redacted_from]) {
    return fail('ANCHOR_MISMATCH', `SHA-256 over the salt and ${p.step_hash} is not the anchor's commitment for step ${p.seq}`);
  }
  report.ok = true;
  report.step_hash = p.step_hash;
  report.head = p.seq === a.length - 1;
  report.proves = [
    `The anchor of the published receipt ${published.manifest_digest} commits to ${p.step_hash} as the original hash of step ${p.seq}${report.head ? ', the original head' : ''} (the publisher's ${published.signed_by ? `claim, signed by ${published.signed_by}` : 'unsigned claim'}): compare it with a ${report.head ? 'head' : 'step hash'} obtained independently.`,
  ];
  return report;
}

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}
