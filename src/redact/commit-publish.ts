/**
 * Publishing a `stepchain/v2` journal without re-anchoring (spec/REDACTION.md §12): each stored record is
 * rewritten in its public form — per slot the value with its slot salt, or the slot digest alone (a
 * whole-slot marker, or a redacted view with the digest in `digests`) — keeping seq, prev_hash and
 * step_hash as they are, so the public chain verifies against the ORIGINAL head. Nothing is re-sealed:
 * the publisher checks that every public record still hashes to its original step hash. The record salt
 * and the salt of every withheld slot stay in the journal. Reads the journal; never writes it. Pure.
 */
import { canonicalJson, canonicalJsonTrusted } from '../canonical/jcs.js';
import type { Json } from '../canonical/json.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { describeProblem } from '../chain/report.js';
import type { ChainSource, StoredLine } from '../chain/source.js';
import { ChainVerifier } from '../chain/verifier.js';
import { isSaltHex, publicStepHash, slotDigest, slotSalts } from '../record/commitments.js';
import { formatOf } from '../record/formats.js';
import { REDACTED_MARKER } from '../record/markers.js';
import type { JournalFormat } from '../record/profile.js';
import { planReceipt, type ReceiptPlan } from '../receipt/writer.js';
import { compareDeclarations, type Declaration } from './anchor.js';
import { randomSalts } from './commit.js';
import { RedactError } from './errors.js';
import { COMMITTED_PUBLICATION_FORMAT, type PublicationBlock } from './publication.js';
import type { Policy } from './policy.js';
import { checkedSalts, envelopeCheck, sweep, type PublishCoreOptions } from './publish.js';
import { resolveOriginals, sourceInvalid, type HeldBlob } from './rechain.js';
import { redactStep, rulesForStep, type Redaction } from './redact.js';

/** A slot withheld whole: its digest stands in the public record; the journal opens it (§12.6). */
export interface WithheldSlot {
  seq: number;
  slot: string;
  rule: string;
  digest: string;
}

export interface CommittedPublication {
  plan: ReceiptPlan;
  publication: PublicationBlock;
  /** The head, the same in the journal and in the public receipt. */
  head: { seq: number; step_hash: string };
  /** Slots withheld whole (private: their openings are in the journal). */
  withheld: WithheldSlot[];
  /** Values redacted inside a redacted view, each with its value salt and original value (private). */
  redactions: Redaction[];
  /** Every declaration, in manifest order. */
  declarations: Declaration[];
  /** The public records, without newlines. */
  lines: string[];
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Whether a path rule without detectors ends at the (absent) slot itself: it withholds the slot. */
function withholdsAbsent(rules: ReturnType<typeof rulesForStep>, slot: string): string | null {
  for (const r of rules)
    if (r.detectors.length === 0 && r.paths?.matches(r.paths.step(r.paths.root(), slot))) return r.id;
  return null;
}

/** Publishes a v2 journal by its policy, in public form, against its own head. */
export async function planCommittedPublication(
  source: ChainSource,
  options: PublishCoreOptions,
): Promise<CommittedPublication> {
  const { policy } = options;
  const salts = checkedSalts(options.salts ?? randomSalts());
  const head = await source.head();
  if (head === null) throw new RedactError('SOURCE_INVALID', 'the journal holds no step; there is nothing to publish');
  const format = formatOf(source.genesis);
  if (format.capabilities.publication === 'reanchored')
    throw sourceInvalid(`a ${format.format} journal has no public form; publish it with planPublication (re-anchored)`);
  const envelope = envelopeCheck(policy);
  envelope(source.genesis as unknown as Json, 'the genesis', {});
  const walk = new CommittedWalk(source, format, policy, salts, envelope, head.step_hash);
  for await (const line of source.lines({ from: 0, to: head.seq })) await walk.step(line);
  walk.finish(head.seq);

  const publication: PublicationBlock = { format: COMMITTED_PUBLICATION_FORMAT, policy_digest: policy.digest };
  const declarations = walk.declarations.sort(compareDeclarations);
  const texts = [
    ...walk.lines.map((l) => ({ text: l.text, where: `step ${l.seq}` })),
    ...[...walk.kept].map(([digest, bytes]) => ({ text: decoder.decode(bytes), where: `blob ${digest}` })),
    { text: canonicalJson(source.genesis), where: 'the genesis' },
  ];
  sweep(walk.sweepable, texts);
  const plan = await planReceipt({
    genesis: source.genesis,
    lines: async function* () {
      yield* walk.lines;
    },
    from: 0,
    to: head.seq,
    blob: async (d) => walk.kept.get(d) ?? null,
    extra: { publication, redactions: declarations } as unknown as Record<string, Json>,
    ...(options.sign === undefined ? {} : { sign: options.sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  sweep(walk.sweepable, [{ text: decoder.decode(plan.manifestBytes), where: 'the manifest' }]);
  return {
    plan,
    publication,
    head: { seq: head.seq, step_hash: head.step_hash },
    withheld: walk.withheld,
    redactions: walk.redactions,
    declarations,
    lines: walk.lines.map((l) => l.text),
  };
}

class CommittedWalk {
  private readonly verifier: ChainVerifier;
  readonly lines: StoredLine[] = [];
  readonly declarations: Declaration[] = [];
  readonly withheld: WithheldSlot[] = [];
  readonly redactions: Redaction[] = [];
  /** What the leak sweep searches for: every redaction's matches, and every salt that stays private. */
  readonly sweepable: Redaction[] = [];
  readonly kept = new Map<string, Uint8Array>();
  private readonly blobCache = new Map<string, Json>();
  private segment: string | null = null;

  constructor(
    private readonly source: ChainSource,
    private readonly format: JournalFormat,
    private readonly policy: Policy,
    private readonly salts: ReturnType<typeof checkedSalts>,
    private readonly envelope: ReturnType<typeof envelopeCheck>,
    head: string,
  ) {
    this.verifier = new ChainVerifier({ genesis: source.genesis, expectHead: head, maxProblems: 10 });
  }

  async step(line: StoredLine): Promise<void> {
    if (line.segment !== this.segment) this.verifier.beginSegment(line.segment);
    this.segment = line.segment;
    this.verifier.line(line.text, true);
    const scan = scanCanonical(line.text, {});
    if (scan.defect || scan.members === null)
      throw sourceInvalid(`the line of step ${line.seq} is not a canonical JSON object`);
    const record = JSON.parse(line.text) as Record<string, Json>;
    const profile = this.format.select((name) => record[name]);
    if (profile !== this.format.records[0] || !isSaltHex(record.salt)) {
      throw sourceInvalid(
        `step ${line.seq} is not a stored ${this.format.format} record with its salt; publish from the original journal, not from a published copy`,
      );
    }
    const seq = line.seq;
    this.envelope(record.step_id!, `step ${seq}'s step_id`, { seq, field: 'step_id' });
    this.envelope(record.ts!, `step ${seq}'s ts`, { seq, field: 'ts' });
    const { originals, blobs } = await resolveOriginals(
      record,
      profile,
      seq,
      (d) => this.source.blob(d),
      this.blobCache,
    );
    const { fields: redacted, redactions } = redactStep(this.policy, seq, originals, this.salts, profile);
    const rules = rulesForStep(this.policy, seq, profile.toolName(originals));

    const out: Record<string, Json> = {};
    for (const m of profile.members)
      if (m.role === 'envelope' && m.name !== 'salt' && record[m.name] !== undefined) out[m.name] = record[m.name]!;
    for (const f of profile.contentFields) if (!profile.redactable.includes(f)) out[f] = record[f]!;
    const saltsOut: Record<string, string> = {};
    const digests: Record<string, string> = {};
    const recordSalt = record.salt;
    const slotSaltsOf = slotSalts(recordSalt, profile.redactable);
    for (let i = 0; i < profile.redactable.length; i++) {
      const slot = profile.redactable[i]!;
      const stored = record[slot];
      const salt = slotSaltsOf[i]!;
      const digest = slotDigest(salt, slot, stored === undefined ? undefined : canonicalJsonTrusted(stored));
      const whole = stored === undefined ? withholdsAbsent(rules, slot) : wholeRule(redacted[slot]);
      if (whole !== null) {
        out[slot] = { [REDACTED_MARKER]: { commitment: digest, rule: whole } };
        this.withheld.push({ seq, slot, rule: whole, digest });
        this.declarations.push({ path: `/${slot}`, rule: whole, seq });
        this.sweepable.push(saltNeedle(seq, slot, salt, whole));
      } else if (stored !== undefined && redacted[slot] !== originals[slot]) {
        out[slot] = redacted[slot]!; // a redacted view, inline so every marker is in the line
        digests[slot] = digest;
        this.sweepable.push(saltNeedle(seq, slot, salt, 'view'));
      } else {
        if (stored !== undefined) out[slot] = stored;
        saltsOut[slot] = salt;
        const blob: HeldBlob | undefined = blobs.get(slot);
        if (blob) this.kept.set(blob.digest, blob.bytes);
      }
    }
    for (const r of redactions) {
      this.sweepable.push(r);
      if (!r.path.includes('/', 1) && out[r.path.slice(1)] !== undefined && wholeRule(out[r.path.slice(1)]) !== null)
        continue; // the whole slot, declared above
      this.redactions.push(r);
      this.declarations.push({ path: r.path, rule: r.rule, seq });
    }
    this.sweepable.push(saltNeedle(seq, 'salt', recordSalt, 'record'));
    out.salts = saltsOut;
    if (Object.keys(digests).length > 0) out.digests = digests;
    this.emit(out, record.step_hash as string, seq);
  }

  /** Writes the public record and checks that it still hashes to the original step hash. */
  private emit(out: Record<string, Json>, stepHash: string, seq: number): void {
    const text = canonicalJson(out, { refuseReserved: false });
    if (new TextEncoder().encode(text).length + 1 > MAX_LINE_BYTES) {
      throw new RedactError(
        'LIMIT_EXCEEDED',
        `the public record of step ${seq} would be a line over ${MAX_LINE_BYTES} bytes (a redacted view of a blob is stored inline)`,
        {
          location: { seq },
          hint: 'add a rule that withholds the whole field',
        },
      );
    }
    const scan = scanCanonical(text, {});
    const published = this.format.records[1]!;
    if (publicStepHash(published, text, scan.members!) !== stepHash)
      throw sourceInvalid(
        `the public form of step ${seq} does not hash to its step hash; the record has members this version does not know`,
      );
    this.lines.push({ segment: this.segment!, seq, text });
  }

  finish(headSeq: number): void {
    const report = this.verifier.finish();
    if (!report.ok) throw sourceInvalid(`the journal does not verify: ${describeProblem(report.problems[0]!)}`);
    if (this.lines.length !== headSeq + 1)
      throw sourceInvalid(`the journal yielded ${this.lines.length} steps; its head is seq ${headSeq}`);
  }
}

/** The rule of a whole-value redaction marker, or null when the value is not one. */
function wholeRule(v: Json | undefined): string | null {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return null;
  const body = (v as Record<string, Json>)[REDACTED_MARKER];
  return body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    typeof (body as Record<string, Json>).rule === 'string'
    ? ((body as Record<string, Json>).rule as string)
    : null;
}

/** A private salt as a sweep needle: were it anywhere in the public bytes, publishing stops (LEAK_DETECTED). */
function saltNeedle(seq: number, slot: string, salt: string, what: string): Redaction {
  return {
    seq,
    path: `/${slot}`,
    rule: `${what} salt`,
    commitment: '',
    salt: new Uint8Array(0),
    value: null,
    matched: [salt],
    detected: true,
  };
}
