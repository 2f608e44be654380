/**
 * Publishing a `stepchain/v3` journal (spec/REDACTION.md §13): every stored record is rewritten in its
 * public form (v3-public.ts) — withheld units as markers at their places, everything shown a disclosed
 * unit with its salt — keeping seq, prev_hash, root and step_hash, so the public receipt verifies against
 * the ORIGINAL head, and every byte it shows is bound to it. The publisher checks the journal (fast tier),
 * each record's root against its values (deep tier), each public record against its step hash (both tiers
 * as a reader runs them), and sweeps everything it publishes for the selected values and for every secret
 * that stays private. Reads the journal; never writes it. Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import type { Json, JsonObject } from '../canonical/json.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { scanCanonical } from '../canonical/scan.js';
import { describeProblem } from '../chain/report.js';
import type { ChainSource, StoredLine } from '../chain/source.js';
import { ChainVerifier } from '../chain/verifier.js';
import { formatOf } from '../record/formats.js';
import { stepHashWithout } from '../record/profile.js';
import { FORMAT_V3 } from '../record/v3.js';
import { planReceipt, type ReceiptPlan } from '../receipt/writer.js';
import { RedactError } from './errors.js';
import { COMMITTED_PUBLICATION_FORMAT_V3, type PublicationBlockV3 } from './publication.js';
import { envelopeCheck, sweep, type PublishCoreOptions } from './publish.js';
import { sourceInvalid } from './rechain.js';
import type { Redaction } from './redact.js';
import { checkPublicRecordV3, compareV3Declarations, publicRecordV3, type V3Declaration, type V3Withheld } from './v3-public.js';

export interface V3Publication {
  plan: ReceiptPlan;
  publication: PublicationBlockV3;
  /** The head, the same in the journal and in the public receipt. */
  head: { seq: number; step_hash: string };
  /** Every withheld unit with its digest and salt (private: each salt opens its unit, §13.7). */
  withheld: V3Withheld[];
  /** Every declaration, in manifest order. */
  declarations: V3Declaration[];
  /** The public records, without newlines. */
  lines: string[];
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Publishes a v3 journal by its policy, in public form, against its own head. */
export async function planV3Publication(source: ChainSource, options: PublishCoreOptions): Promise<V3Publication> {
  const { policy } = options;
  const head = await source.head();
  if (head === null) throw new RedactError('SOURCE_INVALID', 'the journal holds no step; there is nothing to publish');
  if (formatOf(source.genesis).format !== FORMAT_V3) throw sourceInvalid(`a ${String((source.genesis as { format?: unknown }).format)} journal is not published by the v3 publisher`);
  const envelope = envelopeCheck(policy);
  envelope(source.genesis as unknown as Json, 'the genesis', {});
  const verifier = new ChainVerifier({ genesis: source.genesis, expectHead: head.step_hash, maxProblems: 10 });
  const published = formatOf(source.genesis).records[1]!;
  const lines: StoredLine[] = [];
  const declarations: V3Declaration[] = [];
  const withheld: V3Withheld[] = [];
  const needles: Redaction[] = [];
  let segment: string | null = null;
  for await (const line of source.lines({ from: 0, to: head.seq })) {
    if (line.segment !== segment) verifier.beginSegment(line.segment);
    segment = line.segment;
    verifier.line(line.text, true);
    const scan = scanCanonical(line.text, {});
    if (scan.defect || scan.members === null || !scan.members.has('step_hash')) throw sourceInvalid(`the line of step ${line.seq} is not a canonical stored record`);
    const record = JSON.parse(line.text) as JsonObject;
    if (JSON.stringify(record).includes('"$stepchain:part"')) {
      throw sourceInvalid(`step ${line.seq} references parts (content stored once); publishing parts is not implemented yet`);
    }
    const seq = line.seq;
    envelope(record.step_id!, `step ${seq}'s step_id`, { seq, field: 'step_id' });
    envelope(record.ts!, `step ${seq}'s ts`, { seq, field: 'ts' });
    const bind = stepHashWithout(line.text, scan.members.get('step_hash')!);
    const pub = publicRecordV3(record, bind, policy);
    const text = canonicalJson(pub.record, { refuseReserved: false });
    if (new TextEncoder().encode(text).length + 1 > MAX_LINE_BYTES) {
      throw new RedactError('LIMIT_EXCEEDED', `the public record of step ${seq} would be a line over ${MAX_LINE_BYTES} bytes`, { location: { seq }, hint: 'withhold a larger unit' });
    }
    // The reader's two checks, made by the publisher first: the public record's step hash (fast) and root (deep).
    const pscan = scanCanonical(text, {});
    if (published.stepHashOf(text, pscan.members!.get('step_hash')!, pscan.members!) !== record.step_hash || checkPublicRecordV3(pub.record).length > 0) {
      throw sourceInvalid(`the public form of step ${seq} does not verify against its step hash`);
    }
    lines.push({ segment: line.segment, seq, text });
    declarations.push(...pub.declarations);
    withheld.push(...pub.withheld);
    needles.push(...pub.needles);
  }
  const report = verifier.finish();
  if (!report.ok) throw sourceInvalid(`the journal does not verify: ${describeProblem(report.problems[0]!)}`);
  if (lines.length !== head.seq + 1) throw sourceInvalid(`the journal yielded ${lines.length} steps; its head is seq ${head.seq}`);

  const publication: PublicationBlockV3 = { format: COMMITTED_PUBLICATION_FORMAT_V3, policy_digest: policy.digest };
  declarations.sort(compareV3Declarations);
  sweep(needles, [...lines.map((l) => ({ text: l.text, where: `step ${l.seq}` })), { text: canonicalJson(source.genesis), where: 'the genesis' }]);
  const plan = await planReceipt({
    genesis: source.genesis,
    lines: async function* () {
      yield* lines;
    },
    from: 0,
    to: head.seq,
    blob: async () => null,
    extra: { publication, redactions: declarations } as unknown as Record<string, Json>,
    ...(options.sign === undefined ? {} : { sign: options.sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  sweep(needles, [{ text: decoder.decode(plan.manifestBytes), where: 'the manifest' }]);
  return { plan, publication, head: { seq: head.seq, step_hash: head.step_hash }, withheld, declarations, lines: lines.map((l) => l.text) };
}
