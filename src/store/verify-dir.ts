/**
 * Read-only verification of a journal directory (spec/FORMAT.md §8): the chain across every
 * bucket, every referenced blob, a fork's lineage, and the head cache. It never writes: a torn,
 * uncommitted final line and a stale head cache are warnings (repaired by the next writer), not problems.
 */
import { readFile, readdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Genesis } from '../chain/record.js';
import type { ChainReport, Problem } from '../chain/report.js';
import { ChainVerifier, type BlobRef } from '../chain/verify.js';
import { MAX_LINE_BYTES } from '../canonical/limits.js';
import { isNotFound } from './fsutil.js';
import { LOCK_NAME } from './lock.js';
import { BLOBS_DIR, BUCKETS_DIR, HEAD_FILE, blobFileName, bucketFirstSeq, isQuarantineName, parseHead } from './layout.js';
import { readLineBatches } from './lines.js';
import { lineageProblems } from './lineage.js';
import { blobDefect } from './restore.js';
import type { JournalVerifyOptions, Lineage } from './types.js';

export async function verifyJournalDir(dir: string, meta: { genesis: Genesis; lineage: Lineage | null }, options: JournalVerifyOptions = {}): Promise<ChainReport> {
  const bucketsDir = join(dir, BUCKETS_DIR);
  const extra: Problem[] = [];
  const warnings: Problem[] = [];
  let names: string[] = [];
  try {
    names = await readdir(bucketsDir);
  } catch (e) {
    extra.push({ code: 'JOURNAL_INVALID', message: `cannot list ${BUCKETS_DIR}/ (${(e as NodeJS.ErrnoException).code ?? String(e)})`, location: { file: BUCKETS_DIR } });
  }
  const buckets: Array<[number, string]> = [];
  for (const n of names) {
    const first = bucketFirstSeq(n);
    if (first !== null) buckets.push([first, n]);
    else if (!isQuarantineName(n) && !n.startsWith('.')) {
      extra.push({ code: 'JOURNAL_INVALID', message: `unexpected file ${n} in ${BUCKETS_DIR}/: not a bucket (16-digit seq + ".jsonl") or a quarantine file`, location: { file: n } });
    }
  }
  buckets.sort((a, b) => a[0] - b[0]);

  const pending: Array<{ ref: BlobRef & { field: string }; file: string | undefined; line: number; seq: number | null }> = [];
  let lineageHash: string | null = null;
  let linesSeen = 0;
  const verifier = new ChainVerifier({
    genesis: meta.genesis,
    ...(options.expectHead === undefined ? {} : { expectHead: options.expectHead }),
    onLine: (l) => {
      for (const ref of l.blobs) pending.push({ ref, file: l.file, line: l.line, seq: l.seq });
      if (meta.lineage !== null && l.seq === meta.lineage.from_step) lineageHash = l.step_hash;
    },
  });
  const checked = new Map<string, string | null>();
  const checkBlobs = async (): Promise<void> => {
    for (const p of pending) {
      const key = `${p.ref.digest}/${p.ref.size}`;
      let outcome = checked.get(key);
      if (outcome === undefined) {
        const path = join(dir, BLOBS_DIR, blobFileName(p.ref.digest));
        try {
          const bytes = new Uint8Array(await readFile(path));
          const defect = blobDefect(bytes, p.ref);
          outcome = defect === null ? null : `BLOB_CORRUPT:blob ${p.ref.digest} ${defect}`;
        } catch (e) {
          outcome = isNotFound(e) ? `BLOB_MISSING:blob ${p.ref.digest} is not in ${BLOBS_DIR}/` : `BLOB_MISSING:blob ${p.ref.digest} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
        }
        checked.set(key, outcome);
      }
      if (outcome !== null) {
        const at = outcome.indexOf(':');
        extra.push({
          code: outcome.slice(0, at) as 'BLOB_MISSING' | 'BLOB_CORRUPT',
          message: `${outcome.slice(at + 1)} (referenced by ${p.ref.field})`,
          location: { ...(p.file === undefined ? {} : { file: p.file }), line: p.line, ...(p.seq === null ? {} : { seq: p.seq }), field: p.ref.field },
        });
      }
    }
    pending.length = 0;
  };

  const lastName = buckets.length > 0 ? buckets[buckets.length - 1]![1] : null;
  for (const [, name] of buckets) {
    verifier.beginFile(name);
    try {
      // One await per 64 KiB read, not per line (bench/: journal verify).
      for await (const batch of readLineBatches(join(bucketsDir, name), 0, MAX_LINE_BYTES)) {
        for (const raw of batch) {
          if (raw.tooLong && raw.terminated) verifier.longLine(raw.end - raw.start - 1);
          else if (raw.tooLong) verifier.line(raw.bytes, false);
          else verifier.line(raw.bytes, raw.terminated);
          if (pending.length > 0) await checkBlobs();
          options.onProgress?.(++linesSeen);
        }
      }
    } catch (e) {
      extra.push({ code: 'JOURNAL_INVALID', message: `cannot read bucket ${name} (${(e as NodeJS.ErrnoException).code ?? String(e)})`, location: { file: name } });
    }
  }
  const report = verifier.finish();

  // A torn final line of the last bucket is an uncommitted write, not damage; anywhere else it is.
  const problems: Problem[] = [];
  for (const p of report.problems) {
    if (p.code === 'TRUNCATED_LINE' && p.location.file === lastName) warnings.push(p);
    else problems.push(p);
  }
  problems.push(...extra);

  problems.push(...lineageProblems(meta.genesis, meta.lineage, lineageHash));

  const headPath = join(dir, HEAD_FILE);
  try {
    const cached = parseHead(await readFile(headPath, 'utf8'));
    if (cached === null) {
      warnings.push({ code: 'HEAD_CACHE_STALE', message: `${HEAD_FILE} is unreadable; the next writer rewrites it from the chain`, location: { file: HEAD_FILE } });
    } else if (cached.seq !== report.head_seq || cached.step_hash !== report.head) {
      warnings.push({
        code: 'HEAD_CACHE_STALE',
        message: `${HEAD_FILE} says seq ${cached.seq} ${cached.step_hash}, the chain ends at ${report.head_seq === null ? 'no step' : `seq ${report.head_seq} ${report.head}`}; ${
          existsSync(join(dir, LOCK_NAME)) ? 'a writer holds the lock now and rewrites it when it lets go' : 'the next writer rewrites it'
        }`,
        location: { file: HEAD_FILE },
      });
    }
  } catch (e) {
    if (!isNotFound(e)) {
      warnings.push({ code: 'HEAD_CACHE_STALE', message: `${HEAD_FILE} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`, location: { file: HEAD_FILE } });
    } else if (report.head_seq !== null) {
      warnings.push({ code: 'HEAD_CACHE_STALE', message: `${HEAD_FILE} is missing; the chain ends at seq ${report.head_seq}`, location: { file: HEAD_FILE } });
    }
  }

  return {
    ...report,
    ok: problems.length === 0 && !report.problems_truncated,
    problems,
    warnings: [...report.warnings, ...warnings],
  };
}
