/**
 * Verifying a journal wherever it lives (spec/FORMAT.md §6, §7, spec/FILE-STORE.md §11): the chain from its genesis across
 * every segment, every blob its lines reference, and a fork's lineage. Every store runs this one
 * procedure over its own segments and blobs and adds only what it keeps besides (the file store: its
 * directory's entries, bucket names, the head cache). Pure: the store supplies the bytes.
 */
import type { SplitLine } from '../chain/lines.js';
import type { LineCheckPool } from '../chain/batch.js';
import { ChainFeeder } from '../chain/feeder.js';
import { ProblemBudget, ProblemList } from '../chain/problems.js';
import type { BlobProblemCode, ChainProblemCode, ChainReport, Problem, ProblemLocation } from '../chain/report.js';
import { ChainVerifier, type VerifiedLine } from '../chain/verifier.js';
import { blobDefect } from '../record/blobs.js';
import type { Genesis } from '../record/formats.js';
import type { BlobRef } from '../record/markers.js';
import { lineageProblems } from './lineage.js';
import type { JournalProblemCode, JournalReport, Lineage } from './types.js';

/** A stored line: its text (a complete line), or its bytes as read from a file (possibly torn or too long). */
export type SourceLine = string | SplitLine;

export interface SourceSegment {
  /** The segment's label, used in problem locations. */
  label: string;
  /** The first seq the label declares (a bucket's 16 digits, FORMAT §6.3 step 8), or null. */
  declaredFirstSeq: number | null;
  /** The segment's lines in order, in batches (a reader awaits once per batch, not per line). */
  lines: AsyncIterable<readonly SourceLine[]> | Iterable<readonly SourceLine[]>;
}

/** A problem the store finds with a blob before reading it (not a regular file, a size other than the reference's, unreadable). */
export interface BlobProblem {
  code: BlobProblemCode;
  message: string;
}

export interface VerifiableJournal {
  /** The genesis as the store holds it (checked here: an invalid one is GENESIS_INVALID). */
  genesis: unknown;
  lineage: Lineage | null;
  segments(): AsyncIterable<SourceSegment> | Iterable<SourceSegment>;
  /** A referenced blob's bytes, null when the store does not hold it, or a problem found before reading it. */
  blob(ref: BlobRef): Promise<Uint8Array | null | BlobProblem>;
  /** Where the store keeps blobs, for "blob … is not in <where>". */
  blobsWhere: string;
}

export interface VerifySourceOptions {
  expectHead?: string;
  /** Called after each line with the number of lines read so far. */
  onProgress?: (lines: number) => void;
  /** The budget the blob problems count against (default: 1000 of their own). */
  budget?: ProblemBudget;
  /** Observes every line that scanned as a canonical record (after its blobs were checked). */
  onLine?: (line: VerifiedLine) => void;
  /** Where the per-line checks run (worker threads); without one, on this thread. The report is the same. */
  pool?: LineCheckPool;
  /** stepchain/v3: the deep tier too (FORMAT §14.7). */
  deep?: boolean;
  /** stepchain/v3: pinned approvers (spec/APPROVALS.md §5). */
  approvers?: readonly { key: Uint8Array; name?: string }[];
}

export interface SegmentOutcome {
  label: string;
  declaredFirstSeq: number | null;
  /** Newline-terminated lines read. */
  wholeLines: number;
  /** What stopped reading the segment before its end (an I/O error), or null. */
  error: unknown;
}

export interface SourceVerification {
  /** The chain's report: its problems only. */
  chain: ChainReport<ChainProblemCode>;
  blobs: ProblemList<BlobProblemCode>;
  lineage: Problem<JournalProblemCode>[];
  segments: SegmentOutcome[];
}

interface Pending {
  ref: BlobRef & { field: string };
  location: ProblemLocation;
}

export async function verifySource(
  source: VerifiableJournal,
  options: VerifySourceOptions = {},
): Promise<SourceVerification> {
  const pending: Pending[] = [];
  let lineageHash: string | null = null;
  const { lineage } = source;
  const verifier = new ChainVerifier({
    genesis: source.genesis,
    ...(options.expectHead === undefined ? {} : { expectHead: options.expectHead }),
    ...(options.deep === true ? { deep: true } : {}),
    ...(options.approvers === undefined ? {} : { approvers: options.approvers }),
    ...(lineage === null ? {} : { forkedAt: lineage.from_step }),
    // A store holds private records only: a public-form v3 line in it is refused, never taken at its bind.
    storedOnly: true,
    onLine: (l) => {
      for (const ref of l.blobs) {
        pending.push({
          ref,
          location: {
            ...(l.file === undefined ? {} : { file: l.file }),
            line: l.line,
            ...(l.seq === null ? {} : { seq: l.seq }),
            field: ref.field,
          },
        });
      }
      if (lineage !== null && l.seq === lineage.from_step) lineageHash = l.step_hash;
      options.onLine?.(l);
    },
  });
  const blobs = new BlobChecks(source, new ProblemList<BlobProblemCode>(options.budget ?? new ProblemBudget()));
  const segments: SegmentOutcome[] = [];
  let seen = 0;
  const onProgress = options.onProgress;
  const feeder = new ChainFeeder(verifier, options.pool, onProgress ? { onEach: () => onProgress(++seen) } : {});
  for await (const segment of source.segments()) {
    feeder.beginSegment(segment.label, segment.declaredFirstSeq);
    const outcome: SegmentOutcome = {
      label: segment.label,
      declaredFirstSeq: segment.declaredFirstSeq,
      wholeLines: 0,
      error: null,
    };
    segments.push(outcome);
    try {
      for await (const batch of segment.lines) {
        for (const line of batch) {
          if (typeof line === 'string') feeder.line(line, true);
          else if (line.tooLong && line.terminated) feeder.longLine(line.end - line.start - 1);
          else feeder.line(line.bytes, line.terminated);
          if (typeof line === 'string' || line.terminated) outcome.wholeLines++;
        }
        // Blobs are checked in line order as their references come through the verifier.
        await feeder.settle();
        if (pending.length > 0) await blobs.check(pending.splice(0));
      }
    } catch (e) {
      outcome.error = e;
    }
  }
  const chain = await feeder.finish();
  if (pending.length > 0) await blobs.check(pending.splice(0));
  return {
    chain,
    blobs: blobs.problems,
    lineage: lineageProblems(source.genesis as Genesis, lineage, lineageHash),
    segments,
  };
}

/** Each referenced blob checked once (by digest and size), each reference reported where it stands. */
class BlobChecks {
  private readonly outcomes = new Map<string, BlobProblem | null>();

  constructor(
    private readonly source: VerifiableJournal,
    readonly problems: ProblemList<BlobProblemCode>,
  ) {}

  async check(refs: readonly Pending[]): Promise<void> {
    for (const { ref, location } of refs) {
      const key = `${ref.digest}/${ref.size}`;
      let outcome = this.outcomes.get(key);
      if (outcome === undefined) {
        outcome = await this.judge(ref);
        this.outcomes.set(key, outcome);
      }
      if (outcome !== null)
        this.problems.add(outcome.code, `${outcome.message} (referenced by ${ref.field})`, location);
    }
  }

  private async judge(ref: BlobRef): Promise<BlobProblem | null> {
    const got = await this.source.blob(ref);
    if (got === null)
      return { code: 'BLOB_MISSING', message: `blob ${ref.digest} is not in ${this.source.blobsWhere}` };
    if (!(got instanceof Uint8Array)) return got;
    const defect = blobDefect(got, ref);
    return defect === null ? null : { code: 'BLOB_CORRUPT', message: `blob ${ref.digest} ${defect}` };
  }
}

/** The report of a store that keeps nothing besides its segments and blobs: the chain's problems, the blobs', the lineage's. */
export function journalReport(v: SourceVerification): JournalReport {
  const problems: Problem<JournalProblemCode>[] = [...v.chain.problems, ...v.blobs.items, ...v.lineage];
  const truncated = v.chain.problems_truncated || v.blobs.truncated;
  return { ...v.chain, ok: problems.length === 0 && !truncated, problems, problems_truncated: truncated };
}
