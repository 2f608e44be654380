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
 *
 * Racing an erase of the source (ERASURE.md §4.1, §6.4): once it has copied to the head it read, the copy
 * reads the source's erasure records to its end; one that erases a copied step sends it on to the new end
 * (the erasure record with it), and the erasures the target then holds pending are carried out there
 * (`completeErasures`). A source that keeps changing is refused SOURCE_CHANGED, the target a valid prefix.
 */
import { describeLocation } from '../chain/report.js';
import { ChainVerifier } from '../chain/verifier.js';
import { capabilitiesOf, formatOf, genesisHash } from '../record/formats.js';
import type { RunIdentity } from '../record/v2.js';
import { ErasureSplit } from '../record/v3/erasure-split.js';
import { PendingErasures, erasedSince, lineReader, type PendingErasure } from '../record/v3/erasure-pending.js';
import { Batch, reappendable, samePrefixLine, sealedStep } from './copy-steps.js';
import { StoreError } from './errors.js';
import { sealedLineOf } from './sealed-copy.js';
import type { ChainHead, Journal, Store, StoredLine } from './types.js';

export interface CopyOptions {
  /** Called after each source line with the number of lines read so far. */
  onProgress?: (lines: number) => void;
  /**
   * Carries out, in the target, the erasures the copy carries there but the target does not carry out yet
   * (ERASURE.md §4.1, §6.4): `resumeErasures` of `stepchain/erase`, which `stepchain copy` passes. The store
   * layer cannot erase; without it such an erasure stays pending in the target (`erasures_pending`).
   */
  completeErasures?: (target: Store, id: string) => Promise<unknown>;
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
  /**
   * The target holds an erasure record whose erasure it does not carry out yet (copied from the source, or
   * recorded there while the copy ran), and no `completeErasures` was given: the value is still in the target
   * until `stepchain erase <target> --resume`.
   */
  erasures_pending: boolean;
}

export async function copyJournal(
  source: Journal,
  target: Store,
  id: string,
  options: CopyOptions = {},
): Promise<CopyResult> {
  let head = await source.head();
  const { journal: dest, created } = await targetJournal(source, target, id);
  // What the target held before this copy: a pass retried after PART_MISSING finds what the failed one wrote.
  let had: number;
  let pass: Pass | null = null;
  let changed: StoreError | null = null;
  let destHead: ChainHead | null;
  try {
    had = ((await dest.head())?.seq ?? -1) + 1;
    for (let round = 1; ; round++) {
      try {
        pass = await copyPass(source, dest, id, head, options);
      } catch (e) {
        // An erase of the source deletes the part of a value it erases after recording the erasure (ERASURE.md
        // §6.3): a pass that read the line before its rewrite finds the part gone and the head moved. The next
        // pass reads the line as the erase left it (outsider 14, 3); a part missing while nothing moved is not this.
        const now = await source.head();
        if ((e as { code?: unknown }).code !== 'PART_MISSING' || round >= MAX_ROUNDS || now?.seq === head?.seq) throw e;
        head = now;
        continue;
      }
      // An erase may have recorded, past the end this pass read, an erasure of a step it copied (ERASURE.md
      // §4.1): the copy may hold that step in clear. It copies on to the source's new end, which carries the
      // erasure record (and, the step being rewritten meanwhile, its sealed line against the copy's own).
      const erased = await erasedPast(source, pass.end);
      if (erased === null) break;
      if (round >= MAX_ROUNDS) {
        changed = sourceChanged(source.id, id, erased, pass.end, round);
        break;
      }
      head = await source.head();
    }
    destHead = await dest.head();
  } finally {
    await dest.close();
  }
  // The erasures the copy carries and that its target does not carry out yet: completed there, as a resume does.
  if (pass.pending && options.completeErasures !== undefined) await options.completeErasures(target, id);
  if (changed !== null) throw changed;
  return {
    already: had,
    copied: (destHead === null ? 0 : destHead.seq + 1) - had,
    head: destHead,
    created,
    lineage_dropped: source.lineage !== null,
    erasures_pending: pass.pending && options.completeErasures === undefined,
  };
}

/** How many times a copy goes on to the source's new end after an erasure was recorded past the end it read. */
const MAX_ROUNDS = 8;

/** What one pass of a copy did: the target's steps before it, the last seq copied, whether an erasure is pending. */
interface Pass {
  have: number;
  end: number;
  pending: boolean;
}

/** The first erasure recorded in `source` past `end` of a step up to `end` (null: none, or not a v3 journal). */
async function erasedPast(source: Journal, end: number): Promise<PendingErasure | null> {
  if (end < 0 || !capabilitiesOf(source.genesis).erasure) return null;
  return erasedSince(source.lines({ from: end + 1 }), 0, end, lineReader(source));
}

/**
 * Copies the source's steps up to `head` (and on past it, see below) into `dest` after the identical prefix it
 * holds. A line read after an erase rewrote it in sealed form holds an erased marker whose erasure record the
 * erase appended past `head` (outsider 14, F5): the pass reads on to the source's end for it, so the target
 * never holds a sealed line without its erasure record (a target that does not verify).
 */
async function copyPass(
  source: Journal,
  dest: Journal,
  id: string,
  head: ChainHead | null,
  options: CopyOptions,
): Promise<Pass> {
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
    // The target's lines as it holds them: its erased markers still to meet their records, its pending erasures.
    const split = new ErasureSplit();
    const pending = new PendingErasures();
    const batch = new Batch(dest, id);
    let segment: string | null = null;
    let read = 0;
    let end = -1;
    let prev = genesisHash(source.genesis);
    const copyLine = async (l: StoredLine): Promise<void> => {
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
        await batch.flush();
        throw refused;
      }
      options.onProgress?.(++read);
      let text = l.text;
      if (l.seq < have) {
        // The target's prefix must be the source's, byte for byte, or the same step before an erase sealed it.
        const mine = await destLines!.next();
        if (mine.done === true || !samePrefixLine(mine.value.text, l.text, l.seq, prev, lineHash, format))
          throw differs(id, `its step ${l.seq} is not the source's`);
        text = mine.value.text;
      } else {
        const sealed = sealedLineOf(l.text, format);
        const step =
          sealed === null ? await reappendable(source, dest, l, prev) : await sealedStep(source, dest, sealed, l);
        await batch.add(step, l.seq, lineHash, l.text.length);
      }
      split.inRange(text);
      pending.line(text);
      prev = lineHash;
      end = l.seq;
    };
    if (have > 0) destLines = dest.lines({ from: 0, to: have - 1 })[Symbol.asyncIterator]();
    for await (const l of head === null ? [] : source.lines({ from: 0, to: head.seq })) await copyLine(l);
    for (let more = 0; split.open > 0 && more < MAX_ROUNDS; more++) {
      const before = end;
      for await (const l of source.lines({ from: end + 1 })) await copyLine(l);
      if (end === before) break; // nothing past it: the marker names no record, and finish() says so
    }
    await batch.flush();
    const report = verifier.finish();
    const problem = report.problems[0];
    if (problem !== undefined)
      throw sourceCorrupt(
        problem.location.seq ?? 0,
        `${describeLocation(problem.location)} (${problem.code}: ${problem.message})`,
        true,
      );
    if (report.steps !== Math.max(end + 1, want)) {
      throw new StoreError('JOURNAL_CORRUPT', `the source yielded ${report.steps} steps for 0..${want - 1}`, {
        hint: 'run verify on the source',
      });
    }
    // Pending as for fork, export and publish (ERASURE.md §4.1): one the target can carry out. A planted record
    // (another digest) or a replayed one (its unit already erased in the target) is never carried out.
    return { have, end, pending: (await pending.first(end, 0, lineReader(dest))) !== null };
  } finally {
    await destLines?.return?.();
  }
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

/** An erase of the source kept recording erasures of copied steps past the end each pass read (MAX_ROUNDS times). */
function sourceChanged(source: string, id: string, p: PendingErasure, end: number, rounds: number): StoreError {
  return new StoreError(
    'SOURCE_CHANGED',
    `copying journal ${source} into ${id}: the source kept changing — ${rounds} times an erasure of a copied step was recorded past the end the copy had read (the last: ${p.path} of seq ${p.target}, recorded at seq ${p.seq}); the copy stopped, and the target holds the source's steps 0..${end}, a valid prefix that may hold that value in clear`,
    {
      location: { seq: p.target },
      hint: `copy again once no erase of ${source} is running (the copy completes the target), or run stepchain erase ${id} --resume after it`,
    },
  );
}
