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
import { describeProblem, type Problem } from '../chain/report.js';
import type { ChainSource, StoredLine } from '../chain/source.js';
import { ChainVerifier } from '../chain/verifier.js';
import { formatOf } from '../record/formats.js';
import { stepHashWithout } from '../record/profile.js';
import { planReceipt, type ReceiptPlan } from '../receipt/writer.js';
import { RedactError } from './errors.js';
import { COMMITTED_PUBLICATION_FORMAT_V3, type PublicationBlockV3 } from './publication.js';
import { envelopeCheck, sweep, type PublishCoreOptions } from './publish.js';
import { sourceInvalid } from './rechain.js';
import type { Redaction } from './redact.js';
import {
  checkPublicRecordV3,
  compareV3Declarations,
  publicRecordV3,
  selectRecordV3Parts,
  shownPart,
  topWithheld,
  unitTree,
  type V3AnyDeclaration,
  type V3PartDeclaration,
  type V3PublicRecord,
  type V3Withheld,
} from './v3-public.js';
import { b64u, hiddenUnits, publicPartBytes, PublicationParts } from './v3-parts.js';
import { partSourceOf, type PartEntry } from '../receipt/parts.js';
import { PartError, type PartRef } from '../record/v3/parts.js';
import { checkPublicPart, parsePublicPartFile } from '../record/v3/public-part.js';
import { seedFromHex, slotKey } from '../record/v3/commit.js';
import { digestBytes, toHex } from '../canonical/sha256.js';
import { UnsaltedDigests } from './v3-approval-digest.js';
import { lineageMember } from '../receipt/lineage.js';
import { PendingErasures, describePending, lineReader, type LineAt } from '../record/v3/erasure-pending.js';
import { ErasureSplit } from '../record/v3/erasure-split.js';

export interface V3Publication {
  plan: ReceiptPlan;
  publication: PublicationBlockV3;
  /** The head, the same in the journal and in the public receipt. */
  head: { seq: number; step_hash: string };
  /** The last seq of the journal read for erasure records (past the head): where a check once written reads on. */
  checkedTo: number;
  /** Every withheld unit with its digest and salt (private: each salt opens its unit, §13.7). */
  withheld: (V3Withheld | V3PartWithheld)[];
  /** Every declaration, in manifest order. */
  declarations: V3AnyDeclaration[];
  /** The public records, without newlines. */
  lines: string[];
  /** The public part files, by address (§13.10). */
  parts: Map<string, Uint8Array>;
}

/** A unit withheld inside a part (§13.10), private to the publisher. */
export interface V3PartWithheld extends V3PartDeclaration {
  digest: string;
  salt: Uint8Array;
  kind: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Publishes a v3 journal by its policy, in public form, against its own head. An erasure of a step the lines
 * read hold in clear, recorded and not carried out, is refused ERASURE_PENDING (ERASURE.md §4.1): judged on the
 * lines read, not on a second read that an erase completed in between would pass (the caller waits for a live
 * erase: afterLiveErasure).
 */
export async function planV3Publication(source: ChainSource, options: PublishCoreOptions): Promise<V3Publication> {
  const { policy } = options;
  const head = await source.head();
  if (head === null) throw new RedactError('SOURCE_INVALID', 'the journal holds no step; there is nothing to publish');
  if (formatOf(source.genesis).capabilities.publication !== 'tree')
    throw sourceInvalid(
      `a ${String((source.genesis as { format?: unknown }).format)} journal is not published by the v3 publisher`,
    );
  const envelope = envelopeCheck(policy);
  envelope(source.genesis as unknown as Json, 'the genesis', {});
  const verifier = new ChainVerifier({ genesis: source.genesis, expectHead: head.step_hash, maxProblems: 10 });
  const published = formatOf(source.genesis).records[1]!;
  const partSource = partSourceOf(source);
  const parts = new PublicationParts(partSource ?? (async () => null), unitTree);
  const digests = new UnsaltedDigests(); // pre-v2 approval digests of calls not shown whole (APPROVALS.md §8)
  // Pass 1: every record's selections (a part's withheld units are the union over the records that show it).
  const pending: {
    segment: string;
    seq: number;
    step_hash: string;
    finish: (refs: PartRef[]) => V3PublicRecord;
  }[] = [];
  let segment: string | null = null;
  const erasures = new PendingErasures();
  const split = new ErasureSplit();
  for await (const line of source.lines({ from: 0, to: head.seq })) {
    erasures.line(line.text);
    split.inRange(line.text);
    if (line.segment !== segment) verifier.beginSegment(line.segment);
    segment = line.segment;
    verifier.line(line.text, true);
    const scan = scanCanonical(line.text, {});
    if (scan.defect || !scan.members?.has('step_hash'))
      throw sourceInvalid(`the line of step ${line.seq} is not a canonical stored record`);
    const record = JSON.parse(line.text) as JsonObject;
    const seq = line.seq;
    for (const f of ['step_id', 'ts']) envelope(record[f]!, `step ${seq}'s ${f}`, { seq, field: f });
    const bind = stepHashWithout(line.text, scan.members.get('step_hash')!);
    pending.push({
      segment: line.segment,
      seq,
      step_hash: record.step_hash as string,
      finish: await selectRecord(line.text, record, bind, policy, parts, digests),
    });
  }
  const report = verifier.finish();
  const checkedTo = await readPastHead(source, head.seq, erasures, split, report.problems);
  if (!report.ok) throw sourceInvalid(`the journal does not verify: ${describeProblem(report.problems[0]!)}`);
  if (pending.length !== head.seq + 1)
    throw sourceInvalid(`the journal yielded ${pending.length} steps; its head is seq ${head.seq}`);
  await refuseUnerased(erasures, head.seq, lineReader(source));

  // Pass 2: the public records, then every part they reach (through shown references and lists' bases), once.
  const lines: StoredLine[] = [];
  const declarations: V3AnyDeclaration[] = [];
  const withheld: (V3Withheld | V3PartWithheld)[] = [];
  const needles: Redaction[] = [];
  const queue: PartRef[] = [];
  for (const p of pending) {
    const pub = p.finish(queue);
    const text = canonicalJson(pub.record, { refuseReserved: false });
    if (new TextEncoder().encode(text).length + 1 > MAX_LINE_BYTES) {
      throw new RedactError(
        'LIMIT_EXCEEDED',
        `the public record of step ${p.seq} would be a line over ${MAX_LINE_BYTES} bytes`,
        { location: { seq: p.seq }, hint: 'withhold a larger unit' },
      );
    }
    // The reader's two checks, made by the publisher first: the public record's step hash (fast) and root (deep).
    const pscan = scanCanonical(text, {});
    const problems = checkPublicRecordV3(pub.record);
    if (
      published.stepHashOf(text, pscan.members!.get('step_hash')!, pscan.members!) !== p.step_hash ||
      problems.length > 0
    ) {
      throw sourceInvalid(
        `the public form of step ${p.seq} does not verify against its step hash${problems.length > 0 ? ` (${problems[0]!.code}: ${problems[0]!.message})` : ''}`,
      );
    }
    lines.push({ segment: p.segment, seq: p.seq, text });
    declarations.push(...pub.declarations);
    withheld.push(...pub.withheld);
    needles.push(...pub.needles);
  }
  const { publicParts, partTexts } = await publishParts(queue, parts, { withheld, declarations, needles });
  const partList: PartEntry[] = [...publicParts]
    .map(([address, bytes]) => ({ address, digest: digestBytes(bytes), size: bytes.length }))
    .sort((a, b) => (a.address < b.address ? -1 : 1));

  const publication: PublicationBlockV3 = { format: COMMITTED_PUBLICATION_FORMAT_V3, policy_digest: policy.digest };
  declarations.sort(compareV3Declarations);
  sweep(needles, [
    ...lines.map((l) => ({ text: l.text, where: `step ${l.seq}` })),
    ...partTexts,
    { text: canonicalJson(source.genesis), where: 'the genesis' },
  ]);
  const plan = await planReceipt({
    genesis: source.genesis,
    lines: async function* () {
      yield* lines;
    },
    from: 0,
    to: head.seq,
    blob: async () => null,
    parts: async (address) => publicParts.get(address) ?? null,
    partList,
    extra: { ...lineageMember(source), publication, redactions: declarations } as unknown as Record<string, Json>,
    ...(options.sign === undefined ? {} : { sign: options.sign }),
    ...(options.exporter === undefined ? {} : { exporter: options.exporter }),
  });
  sweep(needles, [{ text: decoder.decode(plan.manifestBytes), where: 'the manifest' }]);
  return {
    plan,
    publication,
    head: { seq: head.seq, step_hash: head.step_hash },
    checkedTo,
    withheld,
    declarations,
    lines: lines.map((l) => l.text),
    parts: publicParts,
  };
}

/**
 * Every part the public records reach (`queue`: the private references they show; bases and inner references
 * are added as parts are published), each once as its public file (§13.10), checked as a reader checks it;
 * its withheld units declared, its private secrets added to the sweep's needles.
 */
async function publishParts(
  queue: PartRef[],
  parts: PublicationParts,
  out: { withheld: (V3Withheld | V3PartWithheld)[]; declarations: V3AnyDeclaration[]; needles: Redaction[] },
): Promise<{ publicParts: Map<string, Uint8Array>; partTexts: { text: string; where: string }[] }> {
  const { withheld, declarations, needles } = out;
  const publicParts = new Map<string, Uint8Array>();
  const partTexts: { text: string; where: string }[] = [];
  const elements = new Map<string, Uint8Array[]>();
  while (queue.length > 0) {
    const ref = queue.pop()!;
    if (publicParts.has(ref.digest)) continue;
    const p = await parts.load(ref, -1, '').catch((e: unknown) => {
      throw e instanceof PartError ? sourceInvalid(`${e.message} (${e.code}); nothing is published`) : e;
    });
    const hidden = hiddenUnits(p);
    for (const w of topWithheld(p, hidden)) {
      withheld.push({ part: p.part, ...w });
      declarations.push({
        part: p.part,
        path: w.path,
        rule: w.rule,
        ...(w.chunk === undefined ? {} : { chunk: w.chunk }),
      });
      needles.push(privateNeedle(w.path, 'withheld salt', w.salt));
    }
    const made = publicPartBytes(p, (t) => shownPart(t, queue));
    if (p.file.kind === 'list') queue.push(p.file.base);
    needles.push({
      seq: -1,
      path: '',
      rule: 'part seed',
      commitment: '',
      salt: new Uint8Array(0),
      value: null,
      matched: [p.file.seed],
      detected: true,
    });
    const seed = seedFromHex(p.file.seed)!;
    if (made.anyWithheld) needles.push(privateNeedle('', 'part key', slotKey(seed, 0)));
    // The reader's check, made by the publisher first: the public file gives the part's address.
    const parsed = parsePublicPartFile(made.bytes);
    const base = p.file.kind === 'list' ? baseElements(p.file.base.digest, publicParts, parts, elements) : null;
    const checked = typeof parsed === 'string' ? null : checkPublicPart(parsed, p.part, base);
    if (!checked?.ok) throw sourceInvalid(`the public file of part ${p.part} does not give its address`);
    if (checked.elements !== null) elements.set(p.part, checked.elements);
    publicParts.set(p.part, made.bytes);
    const nl = made.bytes.indexOf(0x0a);
    partTexts.push({ text: decoder.decode(nl < 0 ? made.bytes : made.bytes.subarray(0, nl)), where: `part ${p.part}` });
  }
  return { publicParts, partTexts };
}

/** One record's selections (§13.3; with parts §13.10), and how to build its public form once all are in. */
async function selectRecord(
  text: string,
  record: JsonObject,
  bind: string,
  policy: PublishCoreOptions['policy'],
  parts: PublicationParts,
  digests: UnsaltedDigests,
): Promise<(refs: PartRef[]) => V3PublicRecord> {
  if (!text.includes('"$stepchain:part"')) {
    const pub = publicRecordV3(record, bind, policy, digests);
    return () => pub;
  }
  try {
    return (await selectRecordV3Parts(record, bind, policy, parts, digests)).finish;
  } catch (e) {
    throw e instanceof PartError
      ? sourceInvalid(`step ${record.seq as number}: ${e.message} (${e.code}); nothing is published`)
      : e;
  }
}

function privateNeedle(path: string, what: string, bytes: Uint8Array): Redaction {
  return {
    seq: -1,
    path,
    rule: what,
    commitment: '',
    salt: new Uint8Array(0),
    value: null,
    matched: [toHex(bytes), b64u(bytes)],
    detected: true,
  };
}

/**
 * A list's base elements as a reader computes them from the public files (published first: the base chain is
 * checked bottom up), down to a list whose elements `known` holds (each list's kept there once checked). Without
 * it every list of a chat's chain rechecked the whole chain below it: publishing a 2 000-turn conversation took
 * 6 minutes and 2.4 GB.
 */
function baseElements(
  address: string,
  published: ReadonlyMap<string, Uint8Array>,
  parts: PublicationParts,
  known: Map<string, Uint8Array[]>,
): Uint8Array[] | null {
  const chain: string[] = [];
  let elements: Uint8Array[] | null = null;
  for (let a: string | null = address; a !== null;) {
    const done = known.get(a);
    if (done !== undefined) {
      elements = done;
      break;
    }
    chain.push(a);
    const p = parts.loaded.get(a);
    a = p?.file.kind === 'list' ? p.file.base.digest : null;
  }
  for (let i = chain.length - 1; i >= 0; i--) {
    const p = parts.loaded.get(chain[i]!);
    if (p === undefined) return null;
    const bytes = published.get(chain[i]!) ?? publicPartBytes(p, (t) => shownPart(t, [])).bytes;
    const f = parsePublicPartFile(bytes);
    if (typeof f === 'string') return null;
    const r = checkPublicPart(f, chain[i]!, elements);
    if (!r.ok) return null;
    elements = r.elements;
    if (elements !== null) known.set(chain[i]!, elements);
  }
  return elements;
}

/**
 * The journal's lines past the head read at the start, read for erasure records only (ERASURE.md §4.1): an
 * erase may record one there while the publication reads. A line it read before the rewrite leaves that
 * erasure pending for the lines read (refuseUnerased: ERASURE_PENDING, waited for); a line it read after holds
 * an erased marker whose erasure record lies past the head, so the lines read alone do not verify: the head
 * moved, and SOURCE_CHANGED has the publication read again to the new one (afterLiveErasure).
 */
async function readPastHead(
  source: ChainSource,
  headSeq: number,
  erasures: PendingErasures,
  split: ErasureSplit,
  problems: readonly Problem[],
): Promise<number> {
  let checkedTo = headSeq;
  const onlyMarkers =
    problems.length > 0 &&
    problems.length <= split.open &&
    problems.every((p) => p.code === 'ERASURE_UNRECORDED' && p.location.path !== undefined);
  for await (const l of source.lines({ from: headSeq + 1 })) {
    erasures.line(l.text, false);
    if (onlyMarkers) split.after(l.text);
    checkedTo = l.seq;
  }
  if (onlyMarkers && split.split() !== null)
    throw new RedactError(
      'SOURCE_CHANGED',
      `the journal grew while it was published: an erase recorded an erasure after its head (seq ${headSeq}) and carried it out in a step already read; publish again`,
    );
  return checkedTo;
}

/** An erasure of a step the publication read in clear, recorded and not carried out: refused (ERASURE.md §4.1). */
async function refuseUnerased(erasures: PendingErasures, headSeq: number, lineAt: LineAt): Promise<void> {
  const p = await erasures.first(headSeq, 0, lineAt);
  if (p !== null)
    throw new RedactError('ERASURE_PENDING', describePending(p, null, 'publish'), {
      location: { seq: p.target },
    });
}
