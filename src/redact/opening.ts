/**
 * Disclosure of a v2 publication as the opening of a slot digest (spec/REDACTION.md §12.6): the journal
 * holder gives one slot's salt and value; anyone with the public receipt recomputes the digest that stands
 * in the step — so the value is proven to be the original, bound to the original head. The salt comes from
 * the journal (the record salt), never from a secrets file. Verification is pure and never throws.
 */
import { canonicalJson, canonicalJsonTrusted } from '../canonical/jcs.js';
import { isObject, type Json } from '../canonical/json.js';
import { scanCanonical } from '../canonical/scan.js';
import { digestUtf8, isDigest } from '../canonical/sha256.js';
import { assertIJson } from '../canonical/validate.js';
import type { ChainSource } from '../chain/source.js';
import { isSaltHex, slotDigest, slotSalt, slotStates } from '../record/commitments.js';
import { blobRefOf, blobValue, fetchBlob } from '../record/index.js';
import { formatOf } from '../record/formats.js';
import type { ByteInput } from '../receipt/verify.js';
import type { DisclosureProblemCode } from './disclose.js';
import { RedactError } from './errors.js';
import { verifyPublishedReceipt } from './verify.js';

export const SLOT_OPENING_FORMAT = 'stepchain-opening/v1';

/** `value` absent: the slot was absent (an optional member). `blob`: the value of a slot stored as a blob. */
export interface SlotOpening {
  format: typeof SLOT_OPENING_FORMAT;
  manifest_digest: string;
  seq: number;
  slot: string;
  salt: string;
  value?: Json;
  blob?: Json;
}

export interface OpeningReport {
  ok: boolean;
  problems: { code: DisclosureProblemCode; message: string }[];
  seq: number | null;
  slot: string | null;
  /** Whether the slot held a value (false: the optional member was absent), when ok. */
  present: boolean | null;
  /** The opened value (a blob's value when the slot was a blob), when ok. */
  value: Json | null;
}

const MEMBERS = new Set(['format', 'manifest_digest', 'seq', 'slot', 'salt', 'value', 'blob']);

/** Why a document is not a slot opening (§12.6 step 1), or null. */
export function openingDefect(p: unknown): string | null {
  if (!isObject(p)) return 'an opening is a JSON object';
  for (const k of Object.keys(p)) if (!MEMBERS.has(k)) return `unknown member ${JSON.stringify(k)} in an opening`;
  if (p.format !== SLOT_OPENING_FORMAT) return `format must be ${JSON.stringify(SLOT_OPENING_FORMAT)}`;
  if (!isDigest(p.manifest_digest)) return 'manifest_digest must be a digest';
  if (typeof p.seq !== 'number' || !Number.isSafeInteger(p.seq) || p.seq < 0) return 'seq must be an integer ≥ 0';
  if (typeof p.slot !== 'string' || p.slot.length === 0) return 'slot must name a member';
  if (!isSaltHex(p.salt)) return 'salt must be 32 lowercase hex digits';
  if ('blob' in p && !('value' in p)) return 'blob comes with the value (the blob reference) it resolves';
  for (const k of ['value', 'blob'] as const) {
    if (!(k in p)) continue;
    try {
      assertIJson(p[k], { refuseReserved: k === 'blob' });
    } catch {
      return `${k} must be an I-JSON value`;
    }
  }
  return null;
}

/** Opens slot `slot` of step `seq` from the journal, for the publication with `manifestDigest`. */
export async function openSlot(
  source: ChainSource,
  seq: number,
  slot: string,
  manifestDigest: string,
): Promise<SlotOpening> {
  const format = formatOf(source.genesis);
  const stored = format.records[0]!;
  // A format published re-anchored (v1) hashes raw values: its records have no slots to open.
  const slotted = format.capabilities.publication !== 'reanchored';
  if (!slotted || !stored.redactable.includes(slot)) {
    throw new RedactError(
      'ARGUMENT_INVALID',
      `${slot} is not a slot of a ${format.format} record (slots: ${!slotted ? 'none' : stored.redactable.join(', ')})`,
    );
  }
  let text: string | null = null;
  for await (const l of source.lines({ from: seq, to: seq })) text = l.text;
  if (text === null) throw new RedactError('ARGUMENT_INVALID', `the journal has no step ${seq}`);
  const record = JSON.parse(text) as Record<string, Json>;
  if (!isSaltHex(record.salt))
    throw new RedactError('SOURCE_INVALID', `step ${seq} carries no record salt: open slots from the original journal`);
  const opening: SlotOpening = {
    format: SLOT_OPENING_FORMAT,
    manifest_digest: manifestDigest,
    seq,
    slot,
    salt: slotSalt(record.salt, slot, stored.redactable),
  };
  if (record[slot] !== undefined) opening.value = record[slot];
  const ref = stored.blobFields.has(slot) && record[slot] !== undefined ? blobRefOf(record[slot]) : null;
  if (ref !== null) {
    const blob = await fetchBlob((r) => source.blob(r.digest), ref);
    if (!blob.ok)
      throw new RedactError('SOURCE_INVALID', `blob ${ref.digest} (step ${seq}, ${slot}) is missing or damaged`);
    opening.blob = blobValue(blob.bytes);
  }
  return opening;
}

/** Verifies an opening against the public receipt's bytes (§12.6). Never throws. */
export async function verifyOpening(receipt: ByteInput, proof: unknown): Promise<OpeningReport> {
  const report: OpeningReport = { ok: false, problems: [], seq: null, slot: null, present: null, value: null };
  const fail = (code: DisclosureProblemCode, message: string): OpeningReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = openingDefect(proof);
  if (defect) return fail('PROOF_INVALID', defect);
  const p = proof as SlotOpening;
  report.seq = p.seq;
  report.slot = p.slot;
  const published = await verifyPublishedReceipt(receipt, { locate: { seq: p.seq, step: true } });
  if (!published.ok || published.publication === null)
    return fail(
      'RECEIPT_INVALID',
      published.ok
        ? 'the receipt is not published against its original head (no publication block)'
        : `the receipt does not verify: ${published.problems[0]?.code ?? 'unknown'}`,
    );
  if (published.manifest_digest !== p.manifest_digest)
    return fail(
      'MANIFEST_MISMATCH',
      `the opening was made for manifest ${p.manifest_digest}; this receipt's is ${published.manifest_digest}`,
    );
  const line = published.located_line;
  if (line === null) return fail('NOT_REDACTED', `the receipt has no step ${p.seq}`);
  const scan = scanCanonical(line, {});
  const profile = formatOf(published.genesis).records[1]!;
  const state = scan.members === null ? undefined : slotStates(profile, line, scan.members).get(p.slot);
  if (state === undefined) return fail('NOT_REDACTED', `${p.slot} is not a slot of step ${p.seq}`);
  if (state.kind !== 'withheld' && state.kind !== 'view')
    return fail(
      'NOT_REDACTED',
      `slot ${p.slot} of step ${p.seq} is disclosed in the receipt; there is nothing to open`,
    );
  const valueText = 'value' in p ? canonicalJson(p.value, { refuseReserved: false }) : undefined;
  if (slotDigest(p.salt, p.slot, valueText) !== state.digest)
    return fail('COMMITMENT_MISMATCH', `the salt and value do not open the digest of slot ${p.slot} at step ${p.seq}`);
  let value = p.value ?? null;
  const ref = 'value' in p ? blobRefOf(p.value) : null;
  if (ref !== null) {
    if (!('blob' in p))
      return fail('PROOF_INVALID', `slot ${p.slot} was stored as a blob: the opening must carry the blob's value`);
    const text = canonicalJsonTrusted(p.blob);
    if (digestUtf8(text) !== ref.digest || new TextEncoder().encode(text).length !== ref.size)
      return fail('COMMITMENT_MISMATCH', `the opening's blob value does not match the reference ${ref.digest}`);
    value = p.blob as Json;
  } else if ('blob' in p)
    return fail('PROOF_INVALID', `slot ${p.slot} was not a blob; an opening carries blob only for one`);
  report.ok = true;
  report.present = 'value' in p;
  report.value = value;
  return report;
}
