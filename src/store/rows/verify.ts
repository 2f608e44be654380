/**
 * Verifying a journal kept as rows, read-only (spec/POSTGRES.md §8, spec/SQLITE.md §8): the shared
 * verifySource over the rows in seq order (one segment per bucket value, labelled as the file store names
 * its bucket files, so problem locations read alike), every referenced blob and a fork's lineage; then what
 * a row store keeps besides: the metadata, each row's seq against its line's, and the head row against the
 * chain. The store reads the snapshot and the pages; nothing here knows SQL.
 */
import type { Problem } from '../../chain/report.js';
import { genesisHash } from '../../record/formats.js';
import { StoreError } from '../errors.js';
import { parseMeta, type JournalMeta } from '../meta.js';
import { segmentLabel } from '../segments.js';
import type { JournalProblemCode, JournalReport, JournalVerifyOptions } from '../types.js';
import { journalReport, verifySource, type BlobProblem, type SourceSegment } from '../verify-source.js';
import type { LineRow, PageReader } from './lines.js';

/** The head row and what lies past it, read as one snapshot. */
export interface RowSnapshot {
  meta: string;
  headSeq: number;
  headHash: string;
  bucketFirst: number;
  bucketSize: number;
  /** Rows past head_seq in the same snapshot: written around the store. */
  beyond: number;
}

export interface RowJournal {
  snap: RowSnapshot;
  /** The journals table as problems name it (`stepchain.journals`, `journals`). */
  metaFile: string;
  /** The blobs table as problems name it. */
  blobsWhere: string;
  page: PageReader;
  /** A blob's bytes; `size` given, one of another size comes back as its size alone, bytes null. */
  blob(digest: string, size: number | undefined): Promise<{ size: number; bytes: Uint8Array | null } | null>;
}

export async function verifyRowJournal(
  src: RowJournal,
  id: string,
  options: JournalVerifyOptions,
): Promise<JournalReport> {
  const { snap, metaFile } = src;
  let meta: JournalMeta;
  try {
    meta = parseMeta(snap.meta, `${metaFile} (id ${id}) meta`);
  } catch (e) {
    const message = e instanceof StoreError ? e.message.replace(/^JOURNAL_INVALID: /, '') : String(e);
    return {
      ok: false,
      start_hash: null,
      start_seq: 0,
      head: null,
      head_seq: null,
      steps: 0,
      problems: [{ code: 'JOURNAL_INVALID', message, location: { file: metaFile, field: 'meta' } }],
      warnings: [],
      problems_truncated: false,
    };
  }
  const rows = new RowSegments(src.page, snap.headSeq);
  const mine: Problem<JournalProblemCode>[] = [];
  const verified = await verifySource(
    {
      genesis: meta.genesis,
      lineage: meta.lineage,
      segments: () => rows.segments(),
      blob: async (ref): Promise<Uint8Array | null | BlobProblem> => {
        const found = await src.blob(ref.digest, ref.size);
        if (found?.bytes !== null) return found?.bytes ?? null;
        return {
          code: 'BLOB_CORRUPT',
          message: `blob ${ref.digest} holds ${found.size} bytes, the reference says ${ref.size}`,
        };
      },
      blobsWhere: src.blobsWhere,
    },
    {
      ...options,
      onLine: (l) => {
        const rowSeq = rows.rowSeqOf(l.file, l.line);
        if (l.seq !== null && rowSeq !== undefined && l.seq !== rowSeq) {
          mine.push({
            code: 'JOURNAL_INVALID',
            message: `the row with seq ${rowSeq} holds the step with seq ${l.seq}`,
            location: { ...(l.file === undefined ? {} : { file: l.file }), line: l.line, seq: l.seq, field: 'seq' },
          });
        }
      },
    },
  );
  // A failure to read rows is the database's, not the journal's: it is thrown, coded, not reported.
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the database's own error, unchanged
  for (const s of verified.segments) if (s.error !== null) throw s.error;
  const report = journalReport({
    ...verified,
    lineage: verified.lineage.map((p) => ({ ...p, location: { ...p.location, file: metaFile } })),
  });
  mine.push(...headRowProblems(snap, meta, rows, report.head, metaFile));
  const problems = [...report.problems, ...mine];
  return { ...report, ok: problems.length === 0 && !report.problems_truncated, problems };
}

/** The head row is written in the same transaction as the steps: any disagreement with them is damage, not a crash. */
function headRowProblems(
  snap: RowSnapshot,
  meta: JournalMeta,
  rows: RowSegments,
  chainHead: string | null,
  metaFile: string,
): Problem<JournalProblemCode>[] {
  const problems: Problem<JournalProblemCode>[] = [];
  const headAt = { file: metaFile, field: 'head_seq' };
  if (snap.beyond > 0)
    problems.push({
      code: 'JOURNAL_INVALID',
      message: `${snap.beyond} row(s) lie past the head row's seq ${snap.headSeq}: steps were written without the store`,
      location: headAt,
    });
  const count = rows.count;
  if (count !== snap.headSeq + 1) {
    problems.push({
      code: 'JOURNAL_INVALID',
      message: `the head row says the chain ends at seq ${snap.headSeq}, but ${count} row(s) were found up to it`,
      location: headAt,
    });
  } else if (
    (count > 0 && chainHead !== null && chainHead !== snap.headHash) ||
    (count === 0 && snap.headHash !== genesisHash(meta.genesis))
  ) {
    const chain =
      count === 0
        ? `the journal has no step, so it must be the genesis hash ${genesisHash(meta.genesis)}`
        : `the chain's last step_hash is ${chainHead}`;
    problems.push({
      code: 'JOURNAL_INVALID',
      message: `the head row names ${snap.headHash}, but ${chain}`,
      location: { file: metaFile, field: 'head_hash' },
    });
  } else if (count > 0 && (snap.bucketFirst !== rows.lastBucket || snap.bucketSize !== rows.lastBucketBytes)) {
    problems.push({
      code: 'JOURNAL_INVALID',
      message: `the head row's open segment is ${snap.bucketFirst} with ${snap.bucketSize} bytes, the rows say ${rows.lastBucket} with ${rows.lastBucketBytes}`,
      location: { file: metaFile, field: 'bucket_size' },
    });
  }
  return problems;
}

/**
 * The rows up to the snapshot's head_seq as verifySource's segments: a segment per run of rows with one
 * bucket value, its lines in batches of a page. Remembers the current batch's row seqs (for the row/line
 * check) and the last segment's size (for the head row check).
 */
class RowSegments {
  private page: LineRow[] = [];
  private at = 0;
  private next = 0;
  count = 0;
  lastBucket = -1;
  lastBucketBytes = 0;
  private batch: { label: string; firstLine: number; seqs: number[] } | null = null;

  constructor(
    private readonly read: PageReader,
    private readonly headSeq: number,
  ) {}

  /** The seq of the row that line `line` of segment `label` came from, while its batch is being verified. */
  rowSeqOf(label: string | undefined, line: number): number | undefined {
    const b = this.batch;
    return b === null || b.label !== label ? undefined : b.seqs[line - b.firstLine];
  }

  async *segments(): AsyncGenerator<SourceSegment> {
    while (await this.fill()) {
      const bucket = this.page[this.at]!.bucket;
      yield { label: segmentLabel(bucket), declaredFirstSeq: bucket, lines: this.linesOf(bucket) };
    }
  }

  private async *linesOf(bucket: number): AsyncGenerator<string[]> {
    const label = segmentLabel(bucket);
    this.lastBucket = bucket;
    this.lastBucketBytes = 0;
    let line = 1;
    while ((await this.fill()) && this.page[this.at]!.bucket === bucket) {
      const texts: string[] = [];
      const seqs: number[] = [];
      for (; this.at < this.page.length && this.page[this.at]!.bucket === bucket; this.at++) {
        const row = this.page[this.at]!;
        texts.push(row.line);
        seqs.push(row.seq);
        this.lastBucketBytes += row.bytes + 1;
      }
      this.count += texts.length;
      this.batch = { label, firstLine: line, seqs };
      line += texts.length;
      yield texts;
    }
  }

  /** Whether a row is at hand, reading the next page when the current one is used up. */
  private async fill(): Promise<boolean> {
    if (this.at < this.page.length) return true;
    if (this.next > this.headSeq) return false;
    this.page = await this.read(this.next, this.headSeq);
    this.at = 0;
    if (this.page.length === 0) return false;
    this.next = this.page[this.page.length - 1]!.seq + 1;
    return true;
  }
}
