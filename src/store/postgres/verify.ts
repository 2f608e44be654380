/**
 * Verifying a journal held in Postgres, read-only (spec/POSTGRES.md §8): the metadata, the chain over the
 * rows in seq order (bucket labels as file names, so BUCKET_MISNAMED applies as in a directory), every
 * referenced blob, a fork's lineage, and the head row against the chain. Nothing is written and no lock is
 * taken; a writer may append meanwhile, so the chain is read up to the head row as it was at the start.
 */
import { genesisHash } from '../../chain/record.js';
import { ChainVerifier } from '../../chain/verify.js';
import type { ChainReport, Problem, ProblemLocation } from '../../chain/report.js';
import { StoreError } from '../errors.js';
import { bucketName, parseMeta, type JournalMeta } from '../layout.js';
import { lineageProblems } from '../lineage.js';
import { blobDefect } from '../restore.js';
import type { JournalVerifyOptions } from '../types.js';
import { translate } from './errors.js';
import { linesPage, readBlob } from './sql.js';
import type { StoreContext } from './store.js';

interface Snapshot {
  key: number;
  meta: string;
  headSeq: number;
  headHash: string;
  bucketFirst: number;
  bucketSize: number;
  /** Rows past head_seq in the same snapshot: written around the store. */
  beyond: number;
}

export async function verifyJournalRows(ctx: StoreContext, id: string, options: JournalVerifyOptions = {}): Promise<ChainReport> {
  try {
    return await verifyRows(ctx, id, options);
  } catch (e) {
    throw translate(e, ctx.display, `verifying journal ${id}`);
  }
}

async function verifyRows(ctx: StoreContext, id: string, options: JournalVerifyOptions): Promise<ChainReport> {
  const t = ctx.tables;
  // One statement, one snapshot: the head row and the count of rows past it agree with each other.
  const r = await ctx.pool.query<Record<string, unknown>>(
    `SELECT j.key, j.meta, j.head_seq, j.head_hash, j.bucket_first, j.bucket_size,
            (SELECT count(*) FROM ${t.steps} s WHERE s.journal = j.key AND s.seq > j.head_seq) AS beyond
     FROM ${t.journals} j WHERE j.id = $1`,
    [id],
  );
  const row = r.rows[0];
  if (row === undefined) throw new StoreError('JOURNAL_NOT_FOUND', `no journal ${JSON.stringify(id)} in ${ctx.display}`, { hint: 'check the id with list(), or `stepchain doctor`' });
  const snap: Snapshot = {
    key: Number(row.key), meta: String(row.meta), headSeq: Number(row.head_seq), headHash: String(row.head_hash),
    bucketFirst: Number(row.bucket_first), bucketSize: Number(row.bucket_size), beyond: Number(row.beyond),
  };
  const metaFile = `${t.schema}.journals`;
  let meta: JournalMeta;
  try {
    meta = parseMeta(snap.meta, `${metaFile} (id ${id}) meta`);
  } catch (e) {
    const message = e instanceof StoreError ? e.message.replace(/^JOURNAL_INVALID: /, '') : String(e);
    return { ok: false, start_hash: null, start_seq: 0, head: null, head_seq: null, steps: 0, problems: [{ code: 'JOURNAL_INVALID', message, location: { file: metaFile, field: 'meta' } }], warnings: [], problems_truncated: false };
  }

  const problems: Problem[] = [];
  const blobsSeen = new Map<string, string | null>();
  const pendingBlobs: Array<{ digest: string; size: number; field: string; loc: ProblemLocation }> = [];
  let hashAtFrom: string | null = null;
  let rowSeq = 0;
  const verifier = new ChainVerifier({
    genesis: meta.genesis,
    ...(options.expectHead === undefined ? {} : { expectHead: options.expectHead }),
    onLine: (l) => {
      if (meta.lineage !== null && l.seq === meta.lineage.from_step) hashAtFrom = l.step_hash;
      const loc = { ...(l.file === undefined ? {} : { file: l.file }), line: l.line, ...(l.seq === null ? {} : { seq: l.seq }) };
      if (l.seq !== null && l.seq !== rowSeq) {
        problems.push({ code: 'JOURNAL_INVALID', message: `the row with seq ${rowSeq} holds the step with seq ${l.seq}`, location: { ...loc, field: 'seq' } });
      }
      for (const ref of l.blobs) pendingBlobs.push({ digest: ref.digest, size: ref.size, field: ref.field, loc: { ...loc, field: ref.field } });
    },
  });

  let bucket = -1;
  let bucketBytes = 0;
  let count = 0;
  let next = 0;
  while (next <= snap.headSeq) {
    const page = await linesPage(ctx.pool, t, snap.key, next, snap.headSeq);
    if (page.length === 0) break;
    for (const line of page) {
      if (line.bucket !== bucket) {
        bucket = line.bucket;
        bucketBytes = 0;
        verifier.beginFile(bucketName(bucket));
      }
      bucketBytes += line.bytes + 1;
      rowSeq = line.seq;
      verifier.line(line.line, true);
      count++;
      options.onProgress?.(count);
      next = line.seq + 1;
    }
    // Blobs a page references, each read once however often it is referenced.
    for (const ref of pendingBlobs) {
      let defect = blobsSeen.get(ref.digest);
      if (defect === undefined) {
        const found = await readBlob(ctx.pool, t, snap.key, ref.digest, ref.size);
        defect = found === null ? 'missing' : found.bytes === null ? `holds ${found.size} bytes, the reference says ${ref.size}` : blobDefect(found.bytes, ref);
        blobsSeen.set(ref.digest, defect);
      }
      if (defect === 'missing') problems.push({ code: 'BLOB_MISSING', message: `blob ${ref.digest} is not in the store (referenced by ${ref.field})`, location: ref.loc });
      else if (defect !== null) problems.push({ code: 'BLOB_CORRUPT', message: `blob ${ref.digest} ${defect} (referenced by ${ref.field})`, location: ref.loc });
    }
    pendingBlobs.length = 0;
  }
  const report = verifier.finish();
  problems.push(...lineageProblems(meta.genesis, meta.lineage, hashAtFrom).map((p) => ({ ...p, location: { ...p.location, file: metaFile } })));
  // The head row is written in the same transaction as the steps: any disagreement is damage, not a crash.
  const headAt = { file: metaFile, field: 'head_seq' };
  if (snap.beyond > 0) problems.push({ code: 'JOURNAL_INVALID', message: `${snap.beyond} row(s) lie past the head row's seq ${snap.headSeq}: steps were written without the store`, location: headAt });
  if (count !== snap.headSeq + 1) {
    problems.push({ code: 'JOURNAL_INVALID', message: `the head row says the chain ends at seq ${snap.headSeq}, but ${count} row(s) were found up to it`, location: headAt });
  } else if ((count > 0 && report.head !== null && report.head !== snap.headHash) || (count === 0 && snap.headHash !== genesisHash(meta.genesis))) {
    const chain = count === 0 ? `the journal has no step, so it must be the genesis hash ${genesisHash(meta.genesis)}` : `the chain's last step_hash is ${report.head}`;
    problems.push({ code: 'JOURNAL_INVALID', message: `the head row names ${snap.headHash}, but ${chain}`, location: { file: metaFile, field: 'head_hash' } });
  } else if (count > 0 && (snap.bucketFirst !== bucket || snap.bucketSize !== bucketBytes)) {
    problems.push({ code: 'JOURNAL_INVALID', message: `the head row's open bucket is ${snap.bucketFirst} with ${snap.bucketSize} bytes, the rows say ${bucket} with ${bucketBytes}`, location: { file: metaFile, field: 'bucket_size' } });
  }
  const all = [...report.problems, ...problems];
  return { ...report, ok: all.length === 0 && !report.problems_truncated, problems: all };
}
