/**
 * Copying a journal between stores (spec/POSTGRES.md §10): a directory to Postgres, Postgres to a
 * directory, or any Store to any other. The copy has the source's genesis and config and, step for step,
 * the source's bytes: each step is re-appended with its own step_id and ts through the target's ordinary
 * append path, after checking, with the same prepare and seal every store uses, that the line the target
 * will seal is exactly the source's line. The source
 * is verified as it streams past (the chain from its genesis, every blob), and only read.
 *
 * Idempotent: a target that already holds an identical prefix of the source (an interrupted copy, or an
 * earlier copy of a journal that has grown since) is completed; a target holding anything else — another
 * genesis or config, a differing step, more steps than the source — is refused and left untouched.
 */
import type { Json } from '../canonical/json.js';
import { describeLocation } from '../chain/report.js';
import { ChainVerifier } from '../chain/verifier.js';
import { capabilitiesOf, formatOf, genesisHash, writerProfile } from '../record/formats.js';
import type { CopiedStepInput } from '../record/input.js';
import type { RunIdentity } from '../record/v2.js';
import type { StepRecord } from '../record/seal.js';
import { StoreError } from './errors.js';
import { ERASURE_WRITER, prepareStep } from './prepare.js';
import { restoreRecord } from './restore.js';
import { SEALED_LINE, sealedLineOf, type SealedLine } from './sealed-copy.js';
import { PartCopier } from './parts-copy.js';
import type { ChainHead, Journal, Store, StoredLine } from './types.js';

export interface CopyOptions {
  /** Called after each source line with the number of lines read so far. */
  onProgress?: (lines: number) => void;
}

export interface CopyResult {
  /** Steps the target held already, identical to the source's. */
  already: number;
  /** Steps appended to the target by this copy. */
  copied: number;
  /** The target's head after the copy: the source's head when the copy began. */
  head: ChainHead | null;
  /** Whether the target was created by this copy. */
  created: boolean;
  /**
   * A fork's lineage names its parent by id in the source store, so it is not carried over: the copy is a
   * journal with the same genesis and steps, verifiable on its own, without a lineage.
   */
  lineage_dropped: boolean;
}

/** Steps per appendMany, and the most bytes of lines one such batch may hold (plus one step). */
const BATCH_STEPS = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

export async function copyJournal(
  source: Journal,
  target: Store,
  id: string,
  options: CopyOptions = {},
): Promise<CopyResult> {
  const head = await source.head();
  const { journal: dest, created } = await targetJournal(source, target, id);
  // The target's prefix, read beside the source's: ended in `finally` (a refusal part-way left its file open).
  let destLines: AsyncIterator<StoredLine> | null = null;
  try {
    const destHead = await dest.head();
    const have = destHead === null ? 0 : destHead.seq + 1;
    const want = head === null ? 0 : head.seq + 1;
    if (have > want) throw differs(id, `it holds ${have} steps and the source ${want}`);
    // A line with a problem of its own (or that breaks the links) stops the copy before it is written. What
    // only the whole chain can judge (an erased value against its erasure record later in the chain, an
    // approval against its request: ERASURE.md §5, APPROVALS.md §5) is read from finish(), once, at the end:
    // finishing after each line judged a sealed record before its erasure record was read.
    let lineHash: string | null = null;
    // A fork is verified as a fork (its lineage's from_step): a copy never turns a journal that does not verify into one that does.
    const forkedAt = source.lineage?.from_step;
    const verifier = new ChainVerifier({
      genesis: source.genesis,
      maxProblems: 1,
      ...(forkedAt === undefined ? {} : { forkedAt }),
      onLine: (v) => void (lineHash = v.clean ? v.step_hash : null),
    });
    const guard = lineageGuard(source, dest, id, have);
    const format = formatOf(source.genesis);
    let segment: string | null = null;
    let read = 0;
    let batch: { step: CopiedStepInput; seq: number; hash: string }[] = [];
    let batchBytes = 0;
    let prev = genesisHash(source.genesis);
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const results = await dest.appendMany(batch.map((b) => b.step));
      results.forEach((r, i) => {
        const expected = batch[i]!;
        if (r.seq !== expected.seq || r.step_hash !== expected.hash) {
          throw new StoreError(
            'JOURNAL_CORRUPT',
            `copying into ${id}: the target committed seq ${r.seq} (${r.step_hash}) where the source has seq ${expected.seq} (${expected.hash}); another writer appended to the target meanwhile`,
            {
              location: { seq: expected.seq },
              hint: 'copy into a journal nobody else writes',
            },
          );
        }
      });
      batch = [];
      batchBytes = 0;
    };
    if (have > 0) destLines = dest.lines({ from: 0, to: have - 1 })[Symbol.asyncIterator]();
    const lines = head === null ? [] : source.lines({ from: 0, to: head.seq });
    for await (const l of lines) {
      if (l.segment !== segment) verifier.beginSegment((segment = l.segment));
      lineHash = null;
      verifier.line(l.text, true);
      if (lineHash === null) {
        // The line's own problem is the first the verifier holds (it keeps one).
        const p = verifier.finish().problems[0];
        throw sourceCorrupt(
          l.seq,
          p === undefined
            ? `seq ${l.seq} (its step_hash cannot be read)`
            : `${describeLocation(p.location)} (${p.code}: ${p.message})`,
        );
      }
      const refused = guard(l);
      if (refused !== null) {
        await flush();
        throw refused;
      }
      options.onProgress?.(++read);
      if (l.seq < have) {
        // The target's prefix must be the source's, byte for byte.
        const mine = await destLines!.next();
        if (mine.done === true || mine.value.text !== l.text)
          throw differs(id, `its step ${l.seq} is not the source's`);
      } else {
        const sealed = sealedLineOf(l.text, format);
        const step =
          sealed === null ? await reappendable(source, dest, l, prev) : await sealedStep(source, dest, sealed, l);
        batch.push({ step, seq: l.seq, hash: lineHash });
        batchBytes += l.text.length;
        if (batch.length >= BATCH_STEPS || batchBytes >= BATCH_BYTES) await flush();
      }
      prev = lineHash;
    }
    await flush();
    const report = verifier.finish();
    const problem = report.problems[0];
    if (problem !== undefined)
      throw sourceCorrupt(
        problem.location.seq ?? 0,
        `${describeLocation(problem.location)} (${problem.code}: ${problem.message})`,
        true,
      );
    if (report.steps !== want) {
      throw new StoreError('JOURNAL_CORRUPT', `the source yielded ${report.steps} steps for 0..${want - 1}`, {
        hint: 'run verify on the source',
      });
    }
    return {
      already: have,
      copied: want - have,
      head: await dest.head(),
      created,
      lineage_dropped: source.lineage !== null,
    };
  } finally {
    await destLines?.return?.();
    await dest.close();
  }
}

/** A record in sealed form (ERASURE.md §6.4): carried as it stands, with the parts it still references. */
async function sealedStep(source: Journal, dest: Journal, sealed: SealedLine, l: StoredLine): Promise<CopiedStepInput> {
  if (l.text.includes('"$stepchain:part"')) await PartCopier.of(source, dest).copy(sealed.record, l.seq);
  const step: CopiedStepInput = { step_id: sealed.record.step_id as string, ts: sealed.record.ts as string };
  Object.defineProperty(step, SEALED_LINE, { value: sealed });
  return step;
}

/**
 * A record in private form as the step to re-append, after checking that what the target will seal from it
 * (the same prepare and seal) is the source's line, predicted before anything is written.
 */
async function reappendable(source: Journal, dest: Journal, l: StoredLine, prev: string): Promise<CopiedStepInput> {
  // Restoring checks every blob against its reference (BLOB_MISSING, BLOB_CORRUPT); a v3 record's parts go to the target first (parts-copy.ts).
  const rec = await restoreRecord(source.genesis, l.text, l.seq, `source journal ${source.id}`, (ref) =>
    source.blob(ref.digest, ref.size),
  );
  const stored = l.text.includes('"$stepchain:part"')
    ? await PartCopier.of(source, dest).carry(rec as unknown as Record<string, Json>, l.seq)
    : null;
  const step = stepInputOf(rec, source);
  const profile = writerProfile(dest.genesis);
  const texts = { ...prepareStep(step, dest.config.blobThreshold, profile).texts, ...stored };
  const sealed = profile.seal(texts, {
    seq: l.seq,
    stepId: rec.step_id,
    ts: rec.ts,
    prevHash: prev,
    ...(typeof step.salt === 'string' ? { salt: step.salt } : {}),
    ...(typeof step.seed === 'string' ? { seed: step.seed } : {}),
  }).line;
  if (sealed.slice(0, -1) !== l.text) {
    throw new StoreError(
      'JOURNAL_INVALID',
      `the source's step ${l.seq} is not what a writer of this version seals from its content (blob substitution or encoding differ), so it cannot be copied byte for byte; the copy stopped, and the target holds an identical prefix of the source`,
      { location: { seq: l.seq } },
    );
  }
  return step;
}

/** The target journal: created with the source's genesis and config, or an existing one that has them. */
async function targetJournal(
  source: Journal,
  target: Store,
  id: string,
): Promise<{ journal: Journal; created: boolean }> {
  const identity = {
    journalId: source.genesis.journal_id,
    createdAt: source.genesis.created_at,
    // The genesis is copied whole: its format and, for v2, the run identity (FORMAT §11.2).
    format: source.genesis.format,
    ...(capabilitiesOf(source.genesis).runRecords ? { run: (source.genesis as { run: RunIdentity }).run } : {}),
    segmentBytes: source.config.segmentBytes,
    blobThreshold: source.config.blobThreshold,
  };
  let journal: Journal;
  try {
    journal = await target.create(id, identity);
    return { journal, created: true };
  } catch (e) {
    if (!(e instanceof StoreError) || e.code !== 'JOURNAL_EXISTS') throw e;
  }
  journal = await target.open(id);
  const mismatch =
    genesisHash(journal.genesis) !== genesisHash(source.genesis)
      ? `another genesis (journal_id ${journal.genesis.journal_id}, the source's is ${source.genesis.journal_id})`
      : journal.config.segmentBytes !== source.config.segmentBytes ||
          journal.config.blobThreshold !== source.config.blobThreshold
        ? 'another config (segmentBytes, blobThreshold)'
        : null;
  if (mismatch !== null) {
    await journal.close();
    throw differs(id, `it has ${mismatch}`);
  }
  return { journal, created: false };
}

/**
 * The step a caller appended to make `rec`: its content fields and meta (by the record's own profile),
 * step_id and ts. A record that `append` does not write (another profile) cannot be re-appended.
 */
function stepInputOf(rec: StepRecord, source: Journal): CopiedStepInput {
  const fields = rec as unknown as Record<string, Json>;
  const profile = formatOf(source.genesis).select((name) => fields[name]);
  if (profile !== writerProfile(source.genesis)) {
    throw new StoreError(
      'JOURNAL_INVALID',
      `the source's step ${rec.seq} is a ${profile.id} record, which append does not write, so it cannot be copied step by step`,
      { location: { seq: rec.seq } },
    );
  }
  const step: Record<string, Json> = { step_id: rec.step_id, ts: rec.ts };
  for (const f of profile.contentFields) step[f] = fields[f]!;
  if (rec.meta !== undefined) step.meta = rec.meta;
  // A v2 record's salt (FORMAT §12.2) goes with it, so the copy's commitments and step hash are the source's.
  if (typeof fields.salt === 'string') step.salt = fields.salt;
  // A v3 record's seed (FORMAT §14.4) likewise: the copy's root, B and step hash are the source's.
  if (typeof fields.seed === 'string') step.seed = fields.seed;
  // A copy reproduces a verified chain's records, its erasure records too (ERASURE.md §3.1 reserves them to erase).
  Object.defineProperty(step, ERASURE_WRITER, { value: true });
  return step;
}

/** The member that makes a line an approval request, as canonical JSON writes it (APPROVALS.md §2). */
const REQUEST_KIND = '"kind":"approval.requested"';

/**
 * The two places a copy would move an approval across a fork point (APPROVALS.md §4, §8 *Copies and forks*):
 * the refusal for the step about to be appended (at `have` or later), or null. Read in seq order, every line.
 * - The source is a fork whose copied prefix holds an approval request: its decisions are the parent's too and
 *   authorise no effect in the fork; the lineage that says so names a journal of the source store and is not
 *   carried, so a copy that writes the request, or any step after it into a target that already holds it (the
 *   parent itself: a decision signed in the fork would work there), would let one request authorise twice.
 * - The target is a fork holding nothing past its fork point: the copy's steps would become the fork's own
 *   steps after F, yet they are the source's, which shares the parent's prefix — the parent's own request and
 *   grant, say, byte for byte, past the point where the fork rule reaches them.
 */
function lineageGuard(source: Journal, dest: Journal, id: string, have: number): (l: StoredLine) => StoreError | null {
  const forkedAt = source.lineage?.from_step;
  const intoFork = dest.lineage !== null && have === dest.lineage.from_step + 1 ? dest.lineage.from_step : null;
  let request: number | null = null;
  return (l) => {
    if (forkedAt !== undefined && l.seq <= forkedAt && request === null && l.text.includes(REQUEST_KIND))
      request = l.seq;
    if (l.seq < have) return null;
    if (intoFork !== null) return copyIntoFork(id, l.seq, intoFork);
    return request === null ? null : lineageNeeded(id, l.seq, forkedAt!, request);
  };
}

function lineageNeeded(id: string, seq: number, forkedAt: number, request: number): StoreError {
  const what =
    seq === request
      ? `its step ${seq} is an approval request copied from the parent; a copy does not carry the lineage, so the parent's decisions on it would authorise effects a second time in the copy`
      : `its step ${request} is an approval request copied from the parent, which the target holds already, and its step ${seq} would be appended after it; without the lineage, a decision on that request made in the fork would authorise an effect in the target, and the parent's in both`;
  return new StoreError(
    'COPY_DROPS_LINEAGE',
    `copying into ${id}: the source is a fork of steps 0–${forkedAt} of its parent, and ${what}; the copy stopped before step ${seq}, and the target holds only steps before it`,
    {
      location: { seq },
      hint: 'copy the parent instead, or fork the copied parent again in the target store (stepchain fork)',
    },
  );
}

function copyIntoFork(id: string, seq: number, forkedAt: number): StoreError {
  return new StoreError(
    'COPY_INTO_FORK',
    `copying into ${id}: the target is a fork of steps 0–${forkedAt} of its parent and holds nothing after them; the source's step ${seq} would become the fork's own first step, yet it is the source's (the parent's own request and decision, say), where the fork rule no longer reaches it and one grant would authorise an effect in both journals; nothing was written`,
    {
      location: { seq },
      hint: 'copy into a new journal id (or a fork made after those steps: stepchain fork --from-step), or append to the fork with its own writer',
    },
  );
}

/** The source does not verify: at one line (nothing of it written), or across lines, found once all were copied. */
function sourceCorrupt(seq: number, what: string, atEnd = false): StoreError {
  return new StoreError(
    'JOURNAL_CORRUPT',
    `the source does not verify at ${what}; ${atEnd ? 'found once every line was read: the target holds a copy of the source, which does not verify either' : 'the copy stopped, and the target holds an identical prefix of the source'}`,
    { location: { seq }, hint: 'run verify on the source' },
  );
}

function differs(id: string, why: string): StoreError {
  return new StoreError(
    'JOURNAL_EXISTS',
    `the target journal ${id} exists and is not a copy of the source: ${why}; it was left untouched`,
    {
      hint: 'copy to a new id, or remove the target first',
    },
  );
}
