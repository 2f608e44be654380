/**
 * Disclosure (spec/REDACTION.md §8): the secrets file a publisher keeps, and the proof that reveals one
 * redacted value with the check anyone can run offline against the public receipt. Whole-step proofs are
 * disclose-step.ts, hash disclosures disclose-hash.ts. Pure — the checks run in a browser and never throw
 * on hostile input.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { MAX_RECORD_DEPTH } from '../canonical/limits.js';
import { parsePointer } from '../canonical/pointer.js';
import { isDigest } from '../canonical/sha256.js';
import { hasExactMembers, isObject, isSeq, type Json } from '../canonical/json.js';
import { isValidId } from '../record/fields.js';
import type { ByteInput } from '../receipt/verify.js';
import { WITHDRAWN_FORMATS, type StepOpening } from './anchor.js';
import { commitment, saltFromHex, saltToHex } from './commit.js';
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
  unblobbed: { fields: string[]; seq: number }[];
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
  manifestDigest: string,
  redactions: readonly Redaction[],
  unblobbed: readonly { seq: number; fields: string[] }[],
  steps: readonly StepOpening[],
): SecretsFile {
  return {
    format: SECRETS_FORMAT,
    manifest_digest: manifestDigest,
    redactions: redactions.map((r) => ({
      commitment: r.commitment,
      path: r.path,
      rule: r.rule,
      salt: saltToHex(r.salt),
      seq: r.seq,
      value: r.value,
    })),
    steps: steps.map((o) => ({ salt: o.salt, seq: o.seq, step_hash: o.step_hash })),
    unblobbed: unblobbed.map((u) => ({ fields: [...u.fields], seq: u.seq })),
  };
}

/** Checks the secrets file's outline (format, manifest digest, redactions, steps); throws SECRETS_INVALID. */
export function assertSecrets(
  secrets: unknown,
): asserts secrets is Record<string, unknown> & { manifest_digest: string; redactions: unknown[]; steps: unknown[] } {
  if (isObject(secrets) && secrets.format === WITHDRAWN_SECRETS) {
    throw new RedactError(
      'SECRETS_INVALID',
      `this secrets file (${WITHDRAWN_SECRETS}) belongs to a receipt whose anchor format is withdrawn: ${WITHDRAWN_FORMATS['stepchain-redaction/v1']!}`,
    );
  }
  if (
    !isObject(secrets) ||
    secrets.format !== SECRETS_FORMAT ||
    !isDigest(secrets.manifest_digest) ||
    !Array.isArray(secrets.redactions) ||
    !Array.isArray(secrets.steps)
  ) {
    throw new RedactError(
      'SECRETS_INVALID',
      `not a secrets file (expected {"format": "${SECRETS_FORMAT}", "manifest_digest", "redactions", "steps", "unblobbed"})`,
    );
  }
}

/** The secrets file's opening of step `seq`'s commitment, checked; null when the file has none for it. */
export function openingFromSecrets(
  secrets: { steps: unknown[] },
  seq: number,
): { salt: string; step_hash: string } | null {
  const o = secrets.steps.find((x) => isObject(x) && x.seq === seq);
  if (o === undefined) return null;
  if (!isObject(o) || saltFromHex(o.salt) === null || !isDigest(o.step_hash))
    throw new RedactError('SECRETS_INVALID', `the secrets file's opening of step ${seq} is damaged`);
  return { salt: o.salt as string, step_hash: o.step_hash };
}

export const isPointer = (v: unknown): v is string => {
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
  if (!isSeq(seq) || !isPointer(path))
    throw new RedactError(
      'ARGUMENT_INVALID',
      'disclose needs a seq (non-negative integer) and a JSON Pointer path such as /tool_call/arguments/api_key',
    );
  const entry = secrets.redactions.find((e) => isObject(e) && e.seq === seq && e.path === path) as
    Record<string, unknown> | undefined;
  if (!entry) {
    const here = secrets.redactions
      .filter((e) => isObject(e) && e.seq === seq)
      .map((e) => (e as { path: string }).path);
    throw new RedactError(
      'NOT_REDACTED',
      `nothing was redacted at seq ${seq}, ${path}${here.length ? `; redacted paths in that step: ${here.slice(0, 10).join(', ')}${here.length > 10 ? ', …' : ''}` : ''}`,
      { location: { seq, path } },
    );
  }
  const salt = saltFromHex(entry.salt);
  if (!salt || !isDigest(entry.commitment) || !isValidId(entry.rule) || !('value' in entry))
    throw new RedactError('SECRETS_INVALID', `the secrets file's entry for seq ${seq}, ${path} is damaged`);
  let recomputed: string;
  try {
    recomputed = commitment(salt, entry.value);
  } catch {
    throw new RedactError('SECRETS_INVALID', `the secrets file's value for seq ${seq}, ${path} is not I-JSON`);
  }
  if (recomputed !== entry.commitment)
    throw new RedactError(
      'SECRETS_INVALID',
      `the secrets file's salt and value for seq ${seq}, ${path} do not match its commitment`,
    );
  return {
    commitment: entry.commitment,
    format: DISCLOSURE_FORMAT,
    manifest_digest: secrets.manifest_digest,
    path,
    rule: entry.rule,
    salt: entry.salt as string,
    seq,
    value: entry.value as Json,
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
  problems: { code: DisclosureProblemCode; message: string }[];
  seq: number | null;
  path: string | null;
  /** A v3 publication's unit opening of one chunk of the string at `path` (REDACTION.md §13.7): its index. */
  chunk?: number;
  rule: string | null;
  /** The disclosed value, only when ok. */
  value: Json | null;
  manifest_digest: string | null;
  receipt: PublishedReport | null;
  proves: string[];
}

/** The report on a proof refused before anything was checked against a receipt (PROOF_INVALID). */
export function invalidProofReport(message: string): DisclosureReport {
  const none = { seq: null, path: null, rule: null, value: null, manifest_digest: null, receipt: null };
  return { ok: false, problems: [{ code: 'PROOF_INVALID', message }], ...none, proves: [] };
}

/** Why `proof` is not a disclosure document, or null. */
export function proofDefect(proof: unknown): string | null {
  if (
    !isObject(proof) ||
    !hasExactMembers(proof, ['commitment', 'format', 'manifest_digest', 'path', 'rule', 'salt', 'seq', 'value'])
  ) {
    return 'a disclosure proof has exactly the members commitment, format, manifest_digest, path, rule, salt, seq and value';
  }
  if (proof.format !== DISCLOSURE_FORMAT)
    return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(DISCLOSURE_FORMAT)}`;
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
export async function verifyDisclosure(
  receipt: ByteInput,
  proof: unknown,
  options: Omit<VerifyPublishedOptions, 'locate'> = {},
): Promise<DisclosureReport> {
  const report: DisclosureReport = {
    ok: false,
    problems: [],
    seq: null,
    path: null,
    rule: null,
    value: null,
    manifest_digest: null,
    receipt: null,
    proves: [],
  };
  const defect = proofDefect(proof);
  if (defect) {
    report.problems.push({ code: 'PROOF_INVALID', message: defect });
    return report;
  }
  const p = proof as DisclosureProof;
  report.seq = p.seq;
  report.path = p.path;
  report.rule = p.rule;
  const published = await verifyPublishedReceipt(receipt, { ...options, locate: { seq: p.seq, path: p.path } });
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok) {
    const first = published.problems[0];
    report.problems.push({
      code: 'RECEIPT_INVALID',
      message: `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}`,
    });
    return report;
  }
  if (published.manifest_digest !== p.manifest_digest) {
    report.problems.push({
      code: 'MANIFEST_MISMATCH',
      message: `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}`,
    });
    return report;
  }
  const marker = published.located;
  if (!marker) {
    report.problems.push({
      code: 'NOT_REDACTED',
      message: `no redaction marker stands at seq ${p.seq}, ${p.path} in this receipt`,
    });
    return report;
  }
  if (marker.rule !== p.rule || marker.commitment !== p.commitment) {
    report.problems.push({
      code: 'MARKER_MISMATCH',
      message: `the marker at seq ${p.seq}, ${p.path} is rule ${JSON.stringify(marker.rule)} with commitment ${marker.commitment}; the proof claims rule ${JSON.stringify(p.rule)} with ${p.commitment}`,
    });
    return report;
  }
  if (commitment(saltFromHex(p.salt)!, p.value) !== marker.commitment) {
    report.problems.push({
      code: 'COMMITMENT_MISMATCH',
      message:
        "SHA-256 over the salt and the disclosed value is not the marker's commitment: the value (or salt) is not the redacted one",
    });
    return report;
  }
  if (marker.text !== undefined && (typeof p.value !== 'string' || !textFits(marker.text, p.value))) {
    report.problems.push({
      code: 'TEXT_MISMATCH',
      message:
        "the marker's text (the string with its secrets replaced by placeholders) cannot have come from the disclosed value",
    });
    return report;
  }
  report.ok = true;
  report.value = p.value;
  report.proves = [
    `The value redacted at seq ${p.seq}, ${p.path} (rule ${JSON.stringify(p.rule)}) of the published receipt ${published.manifest_digest} is the disclosed value: it matches the marker's salted SHA-256 commitment.`,
    // Issue 32: in a v2 publication such a marker stands in a redacted view, whose text (the marker included)
    // no head binds: the proof ties the value to this receipt's marker only.
    ...(published.publication
      ? [
          'The marker stands in a redacted view, which is NOT bound to the original head: anyone holding the receipt could have written the marker, so this ties the value to this receipt only. An opening of the slot (stepchain-opening/v1) binds it to the head.',
        ]
      : []),
    ...(published.signed_by ? [`That receipt is signed by ${published.signed_by}.`] : []),
  ];
  return report;
}
