/**
 * Disclosure (spec/REDACTION.md §8): the secrets file a publisher keeps, the proof that reveals one
 * redacted value, and the check anyone can run offline against the public receipt. Pure — the checks run
 * in a browser and never throw on hostile input.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { parsePointer } from '../canonical/pointer.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';
import { isValidId, type Json } from '../chain/record.js';
import type { ByteInput } from '../receipt/verify.js';
import { commitment, saltFromHex, saltToHex } from './commit.js';
import { RedactError } from './errors.js';
import type { Redaction } from './redact.js';
import { verifyPublishedReceipt, type PublishedReport, type VerifyPublishedOptions } from './verify.js';

export const SECRETS_FORMAT = 'stepchain-redaction-secrets/v1';
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

export function secretsFile(manifestDigest: string, redactions: readonly Redaction[], unblobbed: ReadonlyArray<{ seq: number; fields: string[] }> = []): SecretsFile {
  return {
    format: SECRETS_FORMAT,
    manifest_digest: manifestDigest,
    redactions: redactions.map((r) => ({ commitment: r.commitment, path: r.path, rule: r.rule, salt: saltToHex(r.salt), seq: r.seq, value: r.value })),
    unblobbed: unblobbed.map((u) => ({ fields: [...u.fields], seq: u.seq })),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const keysAre = (o: Record<string, unknown>, keys: string[]): boolean => {
  const k = Object.keys(o).sort();
  return k.length === keys.length && k.every((x, i) => x === keys[i]);
};
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
  if (!isObject(secrets) || secrets.format !== SECRETS_FORMAT || !isDigest(secrets.manifest_digest) || !Array.isArray(secrets.redactions)) {
    throw new RedactError('SECRETS_INVALID', `not a secrets file (expected {"format": "${SECRETS_FORMAT}", "manifest_digest", "redactions"})`);
  }
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
  /** A whole-step proof re-derives a step hash other than the anchor's for that step. */
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
  if (!isObject(proof) || !keysAre(proof, ['commitment', 'format', 'manifest_digest', 'path', 'rule', 'salt', 'seq', 'value'])) {
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
    ...(published.signed_by ? [`That receipt is signed by ${published.signed_by}, whose anchor names the original head ${published.anchor!.head.step_hash}.`] : []),
  ];
  return report;
}

export const STEP_DISCLOSURE_FORMAT = 'stepchain-step-disclosure/v1';

/** Reveals every redacted value of one step, so its original step hash can be re-derived (spec §8.4). */
export interface StepDisclosureProof {
  /** Content fields that were blobs in the original and are not in the published step, sorted. */
  blob_fields: string[];
  format: typeof STEP_DISCLOSURE_FORMAT;
  manifest_digest: string;
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

const BLOB_FIELDS = new Set(['input', 'model', 'prompt', 'result', 'tool_call']);

/** Builds the whole-step proof for `seq` from a secrets file (every redaction of the step). */
export function discloseStepFromSecrets(secrets: unknown, seq: number): StepDisclosureProof {
  if (!isObject(secrets) || secrets.format !== SECRETS_FORMAT || !isDigest(secrets.manifest_digest) || !Array.isArray(secrets.redactions)) {
    throw new RedactError('SECRETS_INVALID', `not a secrets file (expected {"format": "${SECRETS_FORMAT}", "manifest_digest", "redactions"})`);
  }
  if (!isSeq(seq)) throw new RedactError('ARGUMENT_INVALID', 'a whole-step disclosure needs a seq (non-negative integer)');
  const entries = (secrets.redactions as unknown[]).filter((e) => isObject(e) && e.seq === seq) as Array<Record<string, unknown>>;
  const values = entries.map((e) => discloseFromSecrets(secrets, seq, e.path as string)).map(({ commitment: c, path, rule, salt, value }) => ({ commitment: c, path, rule, salt, value }));
  const u = Array.isArray(secrets.unblobbed) ? (secrets.unblobbed as unknown[]).find((x) => isObject(x) && x.seq === seq) : undefined;
  const fields = isObject(u) && Array.isArray(u.fields) ? (u.fields as unknown[]).filter((f): f is string => typeof f === 'string').sort() : [];
  return { blob_fields: fields, format: STEP_DISCLOSURE_FORMAT, manifest_digest: secrets.manifest_digest, seq, values };
}

function stepProofDefect(proof: unknown): string | null {
  if (!isObject(proof) || !keysAre(proof, ['blob_fields', 'format', 'manifest_digest', 'seq', 'values'])) {
    return 'a whole-step proof has exactly the members blob_fields, format, manifest_digest, seq and values';
  }
  if (proof.format !== STEP_DISCLOSURE_FORMAT) return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(STEP_DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  const bf = proof.blob_fields;
  if (!Array.isArray(bf) || !bf.every((f, i) => typeof f === 'string' && BLOB_FIELDS.has(f) && (i === 0 || f > (bf[i - 1] as string)))) {
    return 'blob_fields must be content field names, sorted, without repeats';
  }
  if (!Array.isArray(proof.values)) return 'values must be an array';
  const paths = new Set<string>();
  for (const [i, v] of (proof.values as unknown[]).entries()) {
    const single = isObject(v) ? { ...v, format: DISCLOSURE_FORMAT, manifest_digest: proof.manifest_digest, seq: proof.seq } : v;
    const why = isObject(v) && keysAre(v, ['commitment', 'path', 'rule', 'salt', 'value']) ? proofDefect(single) : 'an entry has exactly commitment, path, rule, salt and value';
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
 * Checks a whole-step proof: every redaction of the step is disclosed and matches its marker; putting the
 * values back (and the blob references for `blob_fields`), with prev_hash the anchor's previous original
 * hash, gives a record that hashes to the anchor's original step hash. Never throws.
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
  const declared = (published.manifest.redactions as Array<{ path: string; rule: string; seq: number }>).filter((d) => d.seq === p.seq);
  const given = new Map(p.values.map((v) => [v.path, v]));
  for (const d of declared) if (!given.has(d.path)) return fail('INCOMPLETE_DISCLOSURE', `the redaction at ${d.path} (rule ${JSON.stringify(d.rule)}) is not disclosed; a whole-step proof discloses every redaction of the step`);
  for (const v of p.values) {
    const d = declared.find((x) => x.path === v.path);
    if (!d) return fail('NOT_REDACTED', `no redaction of step ${p.seq} stands at ${v.path}`);
    let marker: unknown = record;
    for (const t of parsePointer(v.path)) marker = isObject(marker) || Array.isArray(marker) ? (marker as Record<string, unknown>)[t] : undefined;
    const inner = isObject(marker) ? (marker['$stepchain:redacted'] as Record<string, unknown> | undefined) : undefined;
    if (!inner || inner.rule !== v.rule || inner.commitment !== v.commitment) return fail('MARKER_MISMATCH', `the marker at ${v.path} does not name the proof's rule and commitment`);
    if (commitment(saltFromHex(v.salt)!, v.value) !== v.commitment) return fail('COMMITMENT_MISMATCH', `the salt and value disclosed for ${v.path} do not give the marker's commitment`);
    if (typeof inner.text === 'string' && (typeof v.value !== 'string' || !textFits(inner.text, v.value))) return fail('TEXT_MISMATCH', `the marker's text at ${v.path} cannot have come from the disclosed value`);
  }
  // Put the values back. Markers never nest (nothing below a redacted node is walked), so order is free.
  for (const v of p.values) {
    const tokens = parsePointer(v.path);
    if (!setAt(record, tokens, v.value)) return fail('NOT_REDACTED', `no value stands at ${v.path}`);
  }
  for (const f of p.blob_fields) {
    if (!(f in record)) return fail('PROOF_INVALID', `blob_fields names ${f}, which the step does not have`);
    const text = canonicalJson(record[f], { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH });
    record[f] = { '$stepchain:blob': { digest: digestUtf8(text), size: utf8Length(text) } };
  }
  if (p.seq >= anchor.length) return fail('ANCHOR_MISMATCH', `the anchor lists ${anchor.length} original steps; there is no step ${p.seq}`);
  record.prev_hash = p.seq === 0 ? anchor.genesis_hash : anchor.steps[p.seq - 1];
  delete record.step_hash;
  let hash: string;
  try {
    hash = digestUtf8(canonicalJson(record, { refuseReserved: false, maxDepth: MAX_RECORD_DEPTH }));
  } catch {
    return fail('PROOF_INVALID', 'the re-assembled step is not I-JSON');
  }
  if (hash !== anchor.steps[p.seq]) return fail('ANCHOR_MISMATCH', `the re-assembled step hashes to ${hash}; the anchor's original step hash for seq ${p.seq} is ${anchor.steps[p.seq]}`);
  record.step_hash = hash;
  report.ok = true;
  report.record = record as Json;
  report.proves = [
    `Step ${p.seq} of the original run is exactly the re-assembled record: its hash is the anchor's original step hash ${hash}. So the published step's unredacted content is original, and every redacted value of the step is disclosed.`,
    `That hash links to the original head ${anchor.head.step_hash} only through the anchor's list (the publisher's ${published.signed_by ? 'signed ' : ''}claim); whole-step proofs of every later step, checked against a head pinned independently, make the link a proof.`,
  ];
  return report;
}

function utf8Length(s: string): number {
  return new TextEncoder().encode(s).length;
}
