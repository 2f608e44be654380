/**
 * Read-only verification of a journal directory (spec/FILE-STORE.md §13): the metadata file, the directory's
 * entries, the chain across every bucket, every referenced blob, a fork's lineage, and the head cache. It
 * never writes: a torn, uncommitted final line and a stale head cache are warnings (repaired by the next
 * writer), not problems. Every file is opened as a regular file of bounded size (fsutil.openRegular), so a
 * FIFO or a device planted anywhere in the directory is reported, never waited on or read without end.
 */
import type { VerifiedLine } from '../../chain/verifier.js';
import { lstat, opendir, readdir, stat } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, relative } from 'node:path';
import { MAX_LINE_BYTES } from '../../canonical/limits.js';
import { MAX_PROBLEMS, ProblemBudget, ProblemList } from '../../chain/problems.js';
import type { Problem } from '../../chain/report.js';
import { capabilitiesOf } from '../../record/formats.js';
import type { BlobRef } from '../../record/markers.js';
import { StoreError } from '../errors.js';
import { errorCode, isNotFound, openRegular, readExactly, readRegular } from './fsutil.js';
import { LOCK_NAME, WAITING_NAME, describeHolder, inspectLock } from './lock.js';
import {
  BLOBS_DIR,
  BUCKETS_DIR,
  CHECKPOINTS_DIR,
  HEAD_FILE,
  MAX_HEAD_BYTES,
  MAX_META_BYTES,
  META_FILE,
  blobFileName,
  bucketFirstSeq,
  bucketName,
  isOutOfRangeBucketName,
  isQuarantineName,
  parseHead,
  parseMeta,
  TREE_DIR,
  type JournalMeta,
} from './layout.js';
import { readLineBatches, type RawLine } from './lines.js';
import { PENDING_NAME, readPending, type PendingBatch } from './batch.js';
import { FilePartStore, PARTS_DIR } from './parts.js';
import { verifyParts } from '../parts-verify.js';
import { readStoredLines } from './reads.js';
import { JournalPaths } from './layout.js';
import type { JournalProblemCode, JournalReport, JournalVerifyOptions } from '../types.js';
import { verifySource, type BlobProblem, type SegmentOutcome } from '../verify-source.js';

export interface DirVerifyOptions extends JournalVerifyOptions {
  /** The writers' stale threshold, to say whether a lock left in the directory is stale (default 10 s). */
  staleMs?: number;
  /** Observes every line the chain's pass reads, in seq order; a pass that starts again (§18) starts from seq 0 again. */
  onLine?: (line: VerifiedLine) => void;
}

const BLOB_NAME_RE = /^[0-9a-f]{64}$/;
/**
 * Verify reads a bucket 256 KiB at a time into reused buffers, on its own thread (lines.ts ReadOptions.sync: a
 * pool thread waited for a core its line checks held). Reads of 64 KiB cost 9% of a 100 000-step verify's CPU
 * time; a fresh 1 MiB buffer per read, 30 MB more peak RSS (bench/workers/rss.mjs). The verifier is done with
 * every line before it asks for the next read.
 */
const VERIFY_READS = { chunkBytes: 256 * 1024, reuse: true, sync: true } as const;

/** §3: the entries a journal directory may hold, and the kind of each. */
const ENTRIES: ReadonlyMap<string, 'file' | 'directory'> = new Map([
  [META_FILE, 'file'],
  [BUCKETS_DIR, 'directory'],
  ['blobs', 'directory'],
  [HEAD_FILE, 'file'],
  [LOCK_NAME, 'directory'],
  [WAITING_NAME, 'file'],
  [TREE_DIR, 'directory'],
  [CHECKPOINTS_DIR, 'directory'],
  [PARTS_DIR, 'directory'],
]);

function stopped(problem: Problem<JournalProblemCode>): JournalReport {
  return {
    ok: false,
    start_hash: null,
    start_seq: 0,
    head: null,
    head_seq: null,
    steps: 0,
    problems: [problem],
    warnings: [],
    problems_truncated: false,
  };
}

export async function verifyJournalDir(dir: string, options: DirVerifyOptions = {}): Promise<JournalReport> {
  // 1. The metadata file; without it there is no genesis to verify from.
  let meta: JournalMeta;
  try {
    meta = parseMeta((await readRegular(join(dir, META_FILE), MAX_META_BYTES)).toString('utf8'), META_FILE);
  } catch (e) {
    const message =
      e instanceof StoreError
        ? e.message.replace(/^JOURNAL_INVALID: /, '')
        : isNotFound(e)
          ? `${META_FILE} is missing`
          : `${META_FILE} cannot be read (${errorCode(e)}: ${(e as Error).message})`;
    return stopped({ code: 'JOURNAL_INVALID', message, location: { file: META_FILE } });
  }
  // Problems are reported in the order of §13's steps, whenever they are found: the entries (step 2),
  // the chain (3–4), the buckets (5), the blobs (6), the lineage (7); all but the chain's share one budget.
  const budget = new ProblemBudget(MAX_PROBLEMS);
  const entries = new ProblemList<JournalProblemCode>(budget);
  const kinds = await checkEntries(dir, entries);
  const allBuckets = await bucketFiles(dir, kinds, entries);
  const { verified, mark, partsFrom } = await verifyCommitted(dir, meta, allBuckets, options, budget);
  const buckets = allBuckets;
  const report = verified.chain;
  const warnings: Problem<JournalProblemCode>[] = [];
  const markProblems: Problem<JournalProblemCode>[] = [];
  if (mark === 'unreadable') {
    warnings.push({
      code: 'BATCH_PENDING',
      message: `${PENDING_NAME} cannot be read: a streamed batch may be pending, and the lines of it are verified as if committed (FILE-STORE §18)`,
      location: { file: PENDING_NAME },
    });
  } else if (mark !== null) {
    const uncommitted = allBuckets.filter(([first]) => first > mark.bucket).map(([, name]) => name);
    warnings.push({
      code: 'BATCH_PENDING',
      message: `a streamed batch is pending (${PENDING_NAME}): the chain is verified as committed, to seq ${mark.seq}; lines after byte ${mark.size} of ${bucketName(mark.bucket)}${uncommitted.length > 0 ? ` and in ${uncommitted.join(', ')}` : ''} are not committed — its writer is writing them, or died and the next writer cuts them back (FILE-STORE §18)`,
      location: { file: PENDING_NAME, seq: mark.seq },
    });
    if ((report.head_seq ?? -1) !== mark.seq || (mark.seq >= 0 && report.head !== mark.step_hash)) {
      markProblems.push({
        code: 'JOURNAL_INVALID',
        message: `${PENDING_NAME} says the committed chain ends at seq ${mark.seq} (${mark.step_hash}), at byte ${mark.size} of ${bucketName(mark.bucket)}; the chain read to there ends at seq ${report.head_seq ?? 'none'}${report.head ? ` (${report.head})` : ''}`,
        location: { file: PENDING_NAME },
      });
    }
  }
  // A torn final line of the last bucket is an uncommitted write, not damage; anywhere else it is.
  const lastName = buckets.length > 0 ? buckets[buckets.length - 1]![1] : null;
  const chainProblems: Problem<JournalProblemCode>[] = [];
  for (const p of report.problems)
    (p.code === 'TRUNCATED_LINE' && p.location.file === lastName ? warnings : chainProblems).push(p);
  const bucketProblems = checkBuckets(verified.segments, report, new ProblemList<JournalProblemCode>(budget));
  // 8. The head cache.
  const stale = await headCacheDefect(dir, kinds.get(HEAD_FILE), report);
  if (stale !== null)
    warnings.push({
      code: 'HEAD_CACHE_STALE',
      message: `${HEAD_FILE} ${stale}; ${await whoRewrites(dir, options.staleMs ?? 10_000)}`,
      location: { file: HEAD_FILE },
    });
  // 6b. A stepchain/v3 journal's parts (PARTS.md §9): each referenced part once, size, digest and shape.
  const partProblems: Problem<JournalProblemCode>[] = [];
  // The chain's pass noted the first bucket with a part reference: none, no second pass (the common case).
  // A torn last line (a warning: a writer died mid-line) does not stop the check; any other chain problem does,
  // as the lines' references cannot be trusted then.
  if (capabilitiesOf(meta.genesis).parts && chainProblems.length === 0 && partsFrom !== null) {
    const parts = new FilePartStore(dir, { fsync: false });
    partProblems.push(
      ...(await verifyParts(
        readStoredLines(new JournalPaths(dir), { from: partsFrom }),
        (a, size) => parts.get(a, size),
        { where: (a) => relative(dir, parts.pathOf(a)) },
      )),
    );
  }
  const all = [
    ...entries.items,
    ...chainProblems,
    ...bucketProblems.items,
    ...verified.blobs.items,
    ...partProblems,
    ...verified.lineage,
    ...markProblems,
  ];
  return {
    ...report,
    ok: all.length === 0 && !report.problems_truncated && !budget.truncated,
    problems: all,
    warnings: [...report.warnings, ...warnings],
    problems_truncated: report.problems_truncated || budget.truncated,
  };
}

/**
 * §13 steps 3–7 over what is committed. §18: the lines of a streamed batch are not committed while its mark
 * exists, so the chain is verified to where the mark says it ended; a mark that appears during a pass (a
 * batch began while this one read without it) sends the pass round again with it (at most three passes),
 * so no pending line is taken for a committed one.
 */
async function verifyCommitted(
  dir: string,
  meta: JournalMeta,
  allBuckets: [number, string][],
  options: DirVerifyOptions,
  budget: ProblemBudget,
): Promise<{
  verified: Awaited<ReturnType<typeof verifySource>>;
  mark: PendingBatch | null | 'unreadable';
  partsFrom: number | null;
}> {
  let mark: PendingBatch | null | 'unreadable' = null;
  let partsFrom: number | null = null;
  const v3 = capabilitiesOf(meta.genesis).parts;
  let verified!: Awaited<ReturnType<typeof verifySource>>;
  const left = budget.left;
  const truncated = budget.truncated;
  for (let pass = 0; pass < 3; pass++) {
    const before = await pendingMark(dir);
    const limit = before === 'unreadable' ? null : before;
    const buckets = limit === null ? allBuckets : allBuckets.filter(([first]) => first <= limit.bucket);
    budget.left = left;
    budget.truncated = truncated;
    partsFrom = null;
    const notingParts = (first: number, lines: AsyncGenerator<RawLine[]>): AsyncGenerator<RawLine[]> =>
      withPartsNoted(lines, () => {
        if (partsFrom === null || first < partsFrom) partsFrom = first;
      });
    verified = await verifySource(
      {
        genesis: meta.genesis,
        lineage: meta.lineage,
        segments: () =>
          buckets.map(([first, name]) => ({
            label: name,
            declaredFirstSeq: first,
            lines: ((lines) => (v3 ? notingParts(first, lines) : lines))(
              readLineBatches(
                join(dir, BUCKETS_DIR, name),
                0,
                MAX_LINE_BYTES,
                limit !== null && first === limit.bucket ? { ...VERIFY_READS, end: limit.size } : VERIFY_READS,
              ),
            ),
          })),
        blob: (ref) => readBlob(join(dir, BLOBS_DIR, blobFileName(ref.digest)), ref),
        blobsWhere: `${BLOBS_DIR}/`,
      },
      { ...options, budget },
    );
    mark = before;
    if (limit !== null) break;
    const after = await pendingMark(dir);
    if (after === null || after === 'unreadable' || after.seq >= (verified.chain.head_seq ?? -1)) break;
  }
  return { verified, mark, partsFrom };
}

/**
 * A part reference's member name as it stands in a stored line: JCS writes `$`, `:` and letters as
 * themselves, so a line holds a reference only if it holds these exact bytes (PARTS.md §9's step needs
 * the lines that do; a journal without parts then needs no second pass over its buckets).
 */
const PART_NAME_BYTES = Buffer.from('"$stepchain:part"');

/** The batches unchanged, calling `noted` for each line (terminated or not) whose bytes hold a part reference's name. */
async function* withPartsNoted(lines: AsyncGenerator<RawLine[]>, noted: () => void): AsyncGenerator<RawLine[]> {
  for await (const batch of lines) {
    for (const l of batch) {
      // `$` is rare in a line: its search is a memchr, and the name's is tried only where one stands.
      const dollar = l.bytes.indexOf(0x24);
      if (dollar > 0 && l.bytes.indexOf(PART_NAME_BYTES, dollar - 1) >= 0) noted();
    }
    yield batch;
  }
}

/** The pending-batch mark (§18), null when there is none, 'unreadable' when there is one that cannot be read. */
async function pendingMark(dir: string): Promise<PendingBatch | null | 'unreadable'> {
  try {
    return await readPending(dir);
  } catch {
    return 'unreadable';
  }
}

/** 2. The directory's entries (§3) and blobs/ (§6); returns the kind of each entry. */
async function checkEntries(dir: string, problems: ProblemList<JournalProblemCode>): Promise<Map<string, Kind>> {
  const kinds = await entryKinds(dir);
  for (const [name, kind] of kinds) {
    const want = ENTRIES.get(name);
    if (want === undefined)
      problems.add(
        'JOURNAL_INVALID',
        `unexpected entry ${name} in the journal directory: a journal holds only ${[...ENTRIES.keys()].join(', ')} (and names beginning with ".")`,
        { file: name },
      );
    else if (kind !== want)
      problems.add(
        'JOURNAL_INVALID',
        `${name} is ${kind === 'other' ? 'neither a regular file nor a directory' : `a ${kind}`}, where a journal has a ${want}`,
        { file: name },
      );
  }
  for (const name of [BUCKETS_DIR, 'blobs']) {
    if (!kinds.has(name)) problems.add('JOURNAL_INVALID', `the journal directory has no ${name}/`, { file: name });
  }
  await checkBlobsDir(dir, (p) => problems.push(p));
  return kinds;
}

/** buckets/ (§5): the bucket files by first seq, sorted; any other name is a problem. */
async function bucketFiles(
  dir: string,
  kinds: Map<string, Kind>,
  problems: ProblemList<JournalProblemCode>,
): Promise<[number, string][]> {
  let names: string[] = [];
  if (kinds.get(BUCKETS_DIR) === 'directory') {
    try {
      names = await readdir(join(dir, BUCKETS_DIR));
    } catch (e) {
      problems.add('JOURNAL_INVALID', `cannot list ${BUCKETS_DIR}/ (${errorCode(e)})`, { file: BUCKETS_DIR });
    }
  }
  const buckets: [number, string][] = [];
  for (const n of names) {
    const first = bucketFirstSeq(n);
    if (first !== null) buckets.push([first, n]);
    else if (isOutOfRangeBucketName(n)) {
      problems.add(
        'JOURNAL_INVALID',
        `${n} in ${BUCKETS_DIR}/ is not a bucket name: its 16 digits exceed 2^53 - 1, the largest seq`,
        { file: n },
      );
    } else if (!isQuarantineName(n) && !n.startsWith('.')) {
      problems.add(
        'JOURNAL_INVALID',
        `unexpected file ${n} in ${BUCKETS_DIR}/: not a bucket (16-digit seq + ".jsonl") or a quarantine file`,
        { file: n },
      );
    }
  }
  return buckets.sort((a, b) => a[0] - b[0]);
}

/** 5. Every bucket readable; only the last may be empty, and an empty last bucket is where the next step goes (§5). */
function checkBuckets(
  segments: readonly SegmentOutcome[],
  report: JournalReport,
  problems: ProblemList<JournalProblemCode>,
): ProblemList<JournalProblemCode> {
  for (const s of segments) {
    if (s.error !== null)
      problems.add(
        'JOURNAL_INVALID',
        `cannot read bucket ${s.label} (${errorCode(s.error)}${errorCode(s.error) === 'ENOTREGULAR' ? `: ${(s.error as Error).message}` : ''})`,
        { file: s.label },
      );
  }
  const lastName = segments.length > 0 ? segments[segments.length - 1]!.label : null;
  for (const s of segments) {
    if (s.wholeLines !== 0) continue;
    const first = s.declaredFirstSeq!;
    if (s.label !== lastName) {
      problems.add('JOURNAL_INVALID', `bucket ${s.label} holds no step, but only the last bucket may be empty`, {
        file: s.label,
      });
    } else if (report.steps > 0 ? report.head_seq !== null && first !== report.head_seq + 1 : first !== 0) {
      const next = report.steps > 0 ? report.head_seq! + 1 : 0;
      problems.add(
        'JOURNAL_INVALID',
        `the empty last bucket ${s.label} is named for seq ${first}, but the next step is seq ${next} (${bucketName(next)})`,
        { file: s.label },
      );
    }
  }
  return problems;
}

/** 8. How head.json differs from the chain's end (§7), or null when it names it (or rightly is absent). */
async function headCacheDefect(dir: string, kind: Kind | undefined, report: JournalReport): Promise<string | null> {
  if (kind === undefined)
    return report.head_seq !== null ? `is missing, and the chain ends at seq ${report.head_seq}` : null;
  if (kind !== 'file') return null; // reported with the entries
  let cached: { seq: number; step_hash: string } | null = null;
  let why = 'is unreadable';
  try {
    cached = parseHead((await readRegular(join(dir, HEAD_FILE), MAX_HEAD_BYTES)).toString('utf8'));
  } catch (e) {
    why = `cannot be read (${errorCode(e)})`;
  }
  if (cached !== null && cached.seq === report.head_seq && cached.step_hash === report.head) return null;
  return cached === null
    ? why
    : `says seq ${cached.seq} ${cached.step_hash}, the chain ends at ${report.head_seq === null ? 'no step' : `seq ${report.head_seq} ${report.head}`}`;
}

/** Says what is true about the lock now, for the stale head cache's message (§7, §8). */
async function whoRewrites(dir: string, staleMs: number): Promise<string> {
  const state = await inspectLock(dir).catch(() => null);
  if (state === null) return 'the next writer rewrites it';
  if (state.verdict === 'dead')
    return `the lock was left by ${describeHolder(state, staleMs)} (a crash): the next writer on this host takes it over at once and rewrites ${HEAD_FILE}`;
  if (state.verdict === 'alive' && state.ageMs <= staleMs)
    return `the lock is held by ${describeHolder(state, staleMs)}, which rewrites ${HEAD_FILE} when it lets go`;
  if (state.ageMs > staleMs)
    return `the lock is stale, held by ${describeHolder(state, staleMs)}: the next writer takes it over and rewrites ${HEAD_FILE}`;
  return `the lock is held by ${describeHolder(state, staleMs)}: that writer rewrites ${HEAD_FILE} when it lets go, or the next one once the lock is stale`;
}

type Kind = 'file' | 'directory' | 'FIFO' | 'device' | 'socket' | 'other';

/** The kind of each visible entry of `dir`, following symbolic links as readers do (names beginning with "." aside). */
async function entryKinds(dir: string): Promise<Map<string, Kind>> {
  const kinds = new Map<string, Kind>();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return kinds;
  }
  const kindOf = (st: Stats): Kind =>
    st.isFile()
      ? 'file'
      : st.isDirectory()
        ? 'directory'
        : st.isFIFO()
          ? 'FIFO'
          : st.isCharacterDevice() || st.isBlockDevice()
            ? 'device'
            : st.isSocket()
              ? 'socket'
              : 'other';
  for (const name of names) {
    if (name.startsWith('.')) continue; // writers' temporary files and lock staging directories
    const path = join(dir, name);
    try {
      kinds.set(name, kindOf(await stat(path)));
    } catch {
      // Writers come and go while this runs: journal.lock is released and taken again between the listing
      // and the stat. An entry gone is no entry; one there again is classified as it is now; only a link
      // whose target is missing is 'other'.
      const now = await lstat(path).catch(() => null);
      if (now !== null) kinds.set(name, now.isSymbolicLink() ? 'other' : kindOf(now));
    }
  }
  return kinds;
}

/** blobs/ holds only sha256/, and sha256/ only 64-hex names (§6); listed as a stream, never held whole. */
async function checkBlobsDir(dir: string, add: (p: Problem<JournalProblemCode>) => void): Promise<void> {
  try {
    for (const name of await readdir(join(dir, 'blobs'))) {
      if (name.startsWith('.') || name === 'sha256') continue;
      add({
        code: 'JOURNAL_INVALID',
        message: `unexpected entry ${name} in blobs/: it holds only sha256/`,
        location: { file: `blobs/${name}` },
      });
    }
  } catch {
    return; // blobs/ missing or not a directory: reported with the journal's entries
  }
  let reported = 0;
  try {
    for await (const e of await opendir(join(dir, BLOBS_DIR))) {
      if (e.name.startsWith('.') || BLOB_NAME_RE.test(e.name)) continue;
      if (reported++ < 100)
        add({
          code: 'JOURNAL_INVALID',
          message: `unexpected file ${e.name} in ${BLOBS_DIR}/: a blob is named by the 64 hex digits of its digest`,
          location: { file: `${BLOBS_DIR}/${e.name}` },
        });
    }
  } catch (e) {
    add({
      code: 'JOURNAL_INVALID',
      message: `cannot list ${BLOBS_DIR}/ (${errorCode(e)})`,
      location: { file: BLOBS_DIR },
    });
  }
}

/**
 * One referenced blob's bytes (FORMAT.md §7, §13 step 5), or what is wrong with it before a byte is read: absent
 * is null; not a regular file, or a size other than the reference's, is BLOB_CORRUPT; then verifySource
 * checks the digest and canonical form.
 */
async function readBlob(path: string, ref: BlobRef): Promise<Uint8Array | null | BlobProblem> {
  let opened;
  try {
    opened = await openRegular(path);
  } catch (e) {
    if (isNotFound(e)) return null;
    if (errorCode(e) === 'ENOTREGULAR')
      return { code: 'BLOB_CORRUPT', message: `blob ${ref.digest}: ${(e as Error).message}` };
    return { code: 'BLOB_MISSING', message: `blob ${ref.digest} cannot be read (${errorCode(e)})` };
  }
  try {
    if (opened.size !== ref.size)
      return {
        code: 'BLOB_CORRUPT',
        message: `blob ${ref.digest} holds ${opened.size} bytes, the reference says ${ref.size}`,
      };
    return new Uint8Array(await readExactly(opened.handle, opened.size));
  } catch (e) {
    return { code: 'BLOB_MISSING', message: `blob ${ref.digest} cannot be read (${errorCode(e)})` };
  } finally {
    await opened.handle.close();
  }
}
