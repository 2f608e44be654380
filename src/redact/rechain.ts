/**
 * The publisher's walk over the journal (spec/REDACTION.md §5–§6): each step is verified as it streams
 * past, its blobs resolved, redacted by the policy, re-sealed onto the new chain, and committed to by a
 * salted step commitment from the first redaction on. What the walk collects — the new lines, the
 * redactions, the openings, the blobs kept — is what publish.ts turns into a receipt. Pure.
 */
import type { Json } from '../canonical/json.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { ChainVerifier } from '../chain/verifier.js';
import { describeProblem } from '../chain/report.js';
import type { StoredLine } from '../chain/source.js';
import { blobValue, fetchBlob } from '../record/blobs.js';
import { formatOf, genesisHash, type Genesis } from '../record/formats.js';
import { REDACTED_MARKER, blobRefOf, type BlobRef } from '../record/markers.js';
import type { JournalFormat, RecordProfile } from '../record/profile.js';
import { sealRecord, type StepRecord, type UnsealedRecord } from '../record/seal.js';
import { compareDeclarations } from './anchor.js';
import type { SaltSource } from './commit.js';
import { RedactError } from './errors.js';
import type { Policy } from './policy.js';
import { redactStep, type Redaction } from './redact.js';

export function sourceInvalid(message: string): RedactError {
  return new RedactError('SOURCE_INVALID', message, {
    hint: 'run `stepchain verify` on the journal; only a journal that verifies is published',
  });
}

const encoder = new TextEncoder();

/** Checks a string member that is never redacted (REDACTION.md §5.4): throws ENVELOPE_SECRET. */
export type EnvelopeCheck = (value: Json, what: string, location: { seq?: number; field?: string }) => void;

/** A blob reference found in a step, with the blob's bytes. */
export type HeldBlob = BlobRef & { bytes: Uint8Array };

/**
 * The original values of a step's redactable members, blobs resolved (REDACTION.md §5.4), and the blobs
 * they were; `cache` holds each blob's value once. Throws SOURCE_INVALID for a missing or damaged blob.
 */
export async function resolveOriginals(
  record: Record<string, Json>,
  profile: RecordProfile,
  seq: number,
  blob: (digest: string) => Promise<Uint8Array | null>,
  cache: Map<string, Json>,
): Promise<{ originals: Record<string, Json>; blobs: Map<string, HeldBlob> }> {
  const originals: Record<string, Json> = {};
  const blobs = new Map<string, HeldBlob>();
  for (const field of profile.redactable) {
    const v = record[field];
    if (v === undefined) continue;
    const ref = profile.blobFields.has(field) ? blobRefOf(v) : null;
    if (ref === null) {
      originals[field] = v;
      continue;
    }
    const got = await fetchBlob((r) => blob(r.digest), ref);
    if (!got.ok && got.missing)
      throw sourceInvalid(`step ${seq} references blob ${ref.digest} in ${field}, which the journal does not hold`);
    if (!got.ok) throw sourceInvalid(`blob ${ref.digest} (step ${seq}, ${field}) ${got.defect}`);
    let value = cache.get(ref.digest);
    if (value === undefined) cache.set(ref.digest, (value = blobValue(got.bytes)));
    originals[field] = value;
    blobs.set(field, { ...ref, bytes: got.bytes });
  }
  return { originals, blobs };
}

export class Rechain {
  private readonly verifier: ChainVerifier;
  private readonly format: JournalFormat;
  /** The published chain's lines, with the segment each original line came from. */
  readonly lines: StoredLine[] = [];
  /** Step commitments to make, by seq: every original step hash from the first redaction on. */
  readonly openings: { seq: number; salt: Uint8Array; step_hash: string }[] = [];
  /** The first seq with a redaction; every original step hash from it on depends on a redacted value. */
  redactedFrom: number | null = null;
  readonly redactions: Redaction[] = [];
  /** Blobs the published chain still references. */
  readonly kept = new Map<string, Uint8Array>();
  /** Per step, the content fields that were blobs in the original but are not in the published step. */
  readonly unblobbed: { seq: number; fields: string[] }[] = [];
  private readonly blobCache = new Map<string, Json>();
  private prev: string;
  private segment: string | null = null;
  private preexisting: string | null = null;

  constructor(
    private readonly source: { genesis: Genesis; blob(digest: string): Promise<Uint8Array | null> },
    private readonly policy: Policy,
    private readonly salts: SaltSource,
    private readonly envelope: EnvelopeCheck,
    head: string,
  ) {
    this.format = formatOf(source.genesis);
    this.prev = genesisHash(source.genesis);
    this.verifier = new ChainVerifier({
      genesis: source.genesis,
      expectHead: head,
      maxProblems: 10,
      onLine: (l) => {
        if (l.markers.some((m) => m.names.includes(REDACTED_MARKER))) {
          this.preexisting ??= `step ${l.seq ?? '?'} already holds a redaction marker; publish from the original journal, not from a published copy`;
        }
      },
    });
  }

  /** Verifies, redacts and re-seals one stored line of the original journal. */
  async step(line: StoredLine): Promise<void> {
    if (line.segment !== this.segment) this.verifier.beginSegment(line.segment);
    this.segment = line.segment;
    this.verifier.line(line.text, true);
    let record: StepRecord;
    try {
      record = JSON.parse(line.text) as StepRecord;
    } catch {
      throw sourceInvalid(`the line of step ${line.seq} is not JSON`);
    }
    const fields = record as unknown as Record<string, Json>;
    const profile = this.format.select((name) => fields[name]);
    this.envelope(record.step_id, `step ${line.seq}'s step_id`, { seq: line.seq, field: 'step_id' });
    this.envelope(record.ts, `step ${line.seq}'s ts`, { seq: line.seq, field: 'ts' });

    const { originals, blobs } = await this.originals(fields, profile, line.seq);
    const { fields: redacted, redactions: found } = redactStep(this.policy, line.seq, originals, this.salts, profile);
    found.sort(compareDeclarations);
    for (const r of found) this.redactions.push(r); // one push per value: a spread of an unbounded array overflows the stack
    if (this.redactedFrom === null && found.length > 0) this.redactedFrom = line.seq;
    // Drawn after the step's value salts (§5.3), so seeded salts number the same in every implementation.
    if (this.redactedFrom !== null)
      this.openings.push({ seq: line.seq, salt: this.salts(), step_hash: record.step_hash });

    const next = this.rebuild(fields, profile, originals, redacted, blobs, line.seq);
    const sealed = this.seal(next, record, line.seq);
    this.prev = sealed;
  }

  /** The original values of the redactable members, blobs resolved, and the blobs they were. */
  private originals(
    record: Record<string, Json>,
    profile: RecordProfile,
    seq: number,
  ): Promise<{ originals: Record<string, Json>; blobs: Map<string, HeldBlob> }> {
    return resolveOriginals(record, profile, seq, (d) => this.source.blob(d), this.blobCache);
  }

  /** The published record before sealing: the envelope as stored, prev_hash onto the new chain, the redacted members. */
  private rebuild(
    record: Record<string, Json>,
    profile: RecordProfile,
    originals: Record<string, Json>,
    redacted: Record<string, Json>,
    blobs: Map<string, HeldBlob>,
    seq: number,
  ): Record<string, unknown> {
    const next: Record<string, unknown> = {};
    // Every member a redaction may not stand in is kept as stored (the envelope; a v2 record's kind and ref).
    for (const m of profile.members)
      if (!profile.redactable.includes(m.name) && m.name !== 'step_hash' && m.name !== 'prev_hash')
        next[m.name] = record[m.name];
    next.prev_hash = this.prev;
    for (const field of profile.redactable) {
      if (!(field in originals)) continue;
      const blob = blobs.get(field);
      if (redacted[field] === originals[field]) {
        // Unchanged: keep the field as stored (a blob reference stays one, and its blob is published).
        next[field] = record[field];
        if (blob) this.kept.set(blob.digest, blob.bytes);
      } else {
        // Redacted (wholly: a marker; partly: the new value, inline so the verifier sees every marker).
        next[field] = redacted[field];
        if (blob) {
          const last = this.unblobbed[this.unblobbed.length - 1];
          if (last?.seq === seq) last.fields.push(field);
          else this.unblobbed.push({ seq, fields: [field] });
        }
      }
    }
    return next;
  }

  /** Seals the published record onto the new chain; returns its step hash. */
  private seal(next: Record<string, unknown>, original: StepRecord, seq: number): string {
    let sealed: { record: StepRecord; line: string };
    try {
      sealed = sealRecord(next as unknown as UnsealedRecord);
    } catch (e) {
      throw sourceInvalid(`step ${seq} cannot be re-sealed: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (encoder.encode(sealed.line).length > MAX_LINE_BYTES) {
      throw new RedactError(
        'LIMIT_EXCEEDED',
        `the redacted step ${seq} would be a line over ${MAX_LINE_BYTES} bytes (a partly redacted blob is stored inline)`,
        {
          location: { seq },
          hint: 'add a rule that redacts the whole field',
        },
      );
    }
    if (this.redactedFrom === null && sealed.record.step_hash !== original.step_hash) {
      // Steps before the first redaction are published unchanged, so their hashes are public (§6.2).
      throw sourceInvalid(
        `step ${seq} holds no redaction but does not re-seal to its own step hash; its line has members this version does not know`,
      );
    }
    this.lines.push({ segment: this.segment!, seq, text: sealed.line.slice(0, -1) });
    return sealed.record.step_hash;
  }

  /** After the last line: throws unless the original verified in full, from its genesis to its head. */
  finish(headSeq: number): void {
    const report = this.verifier.finish();
    if (!report.ok) {
      throw sourceInvalid(`the journal does not verify: ${describeProblem(report.problems[0]!)}`);
    }
    if (this.preexisting) throw sourceInvalid(this.preexisting);
    if (this.lines.length !== headSeq + 1)
      throw sourceInvalid(`the journal yielded ${this.lines.length} steps; its head is seq ${headSeq}`);
  }
}
