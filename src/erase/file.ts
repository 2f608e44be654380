/**
 * Erasure in a file store (spec/ERASURE.md §4): the erasure record is appended first (the commit point),
 * then, under the journal lock, the bucket that holds the erased record is replaced atomically (a sibling
 * temporary file, fsync, rename, directory fsync) by the same bytes with that one line in sealed form, and
 * part files no record references any more are deleted. A process killed in between leaves a journal that
 * verifies (the erasure reported pending) and `resumeErasures` — which every erase runs first — completes it.
 */
import { readdir, readFile, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../store/errors.js';
import { FileStore } from '../store/file/store.js';
import { acquireLock } from '../store/file/lock.js';
import { JournalPaths, RUN_STATE_FILE } from '../store/file/layout.js';
import { listBuckets } from '../store/file/tail.js';
import { writeFileAtomic } from '../store/file/fsutil.js';
import { FilePartStore } from '../store/file/parts.js';
import { FORMAT_V3 } from '../record/v3.js';
import {
  appendErasure,
  checkAgain,
  pauseBeforeAgain,
  erasureStepId,
  fault,
  hasMarker,
  targetNotEarlier,
  outcomeOf,
  stuckOrThrow,
  type StuckErasure,
  type EraseRequest,
  type ErasureOutcome,
  type MatchRequest,
  type StoreErasureReport,
  type Attempt,
  type ErasureFirst,
} from './common.js';
import { decisionVoided } from './decision.js';
import { forEachJournal } from './each-journal.js';
import { lineMatcher, type Found } from './match.js';
import { PartReader } from '../record/v3/part-reader.js';
import {
  ERASURE_KIND,
  ErasureError,
  erasureInputOf,
  eraseUnit,
  ERASED_MARKER,
  type ErasureInput,
} from '../record/v3/erasure.js';
import { sweepDeadStaging } from '../store/file/staging.js';

const STALE_MS = 10_000;

export {
  erasureStepId,
  type StuckErasure,
  type EraseRequest,
  type ErasureOutcome,
  type MatchRequest,
  type StoreErasureReport,
};

async function rawRecord(paths: JournalPaths, seq: number): Promise<{ bucket: number; text: string } | null> {
  const buckets = await listBuckets(paths);
  let first: number | undefined;
  for (const b of buckets) if (b <= seq) first = b;
  if (first === undefined) return null;
  const bytes = await readFile(paths.bucket(first), 'utf8');
  const lines = bytes.split('\n');
  const text = lines[seq - first];
  return text === undefined || text === '' ? null : { bucket: first, text };
}

/**
 * Erases the unit at `req.path` of record `req.seq` of journal `id` (a stepchain/v3 journal of `store`).
 * Completes any interrupted erasure of the journal first, and again whenever another erase of the same
 * record was recorded between this one's check and its append (appendErasure: the check holds at the head
 * the erasure record is appended after).
 */
export async function eraseValue(store: FileStore, id: string, req: EraseRequest): Promise<ErasureOutcome> {
  const paths = new JournalPaths(join(store.root, id));
  // A fork killed before its rename left copies in clear where no journal names them (staging.ts).
  await sweepDeadStaging(store.root);
  // eslint-disable-next-line @typescript-eslint/no-confusing-void-expression -- checkAgain throws past its limit
  for (let again = 0; ; checkAgain(++again, req)) {
    const stuck: StuckErasure[] = [];
    await resumeErasures(store, id, stuck);
    const journal = await store.open(id);
    let attempt: Attempt;
    try {
      if (journal.genesis.format !== FORMAT_V3)
        throw new StoreError(
          'OPTION_INVALID',
          `journal ${id} is ${String(journal.genesis.format)}: only stepchain/v3 records can be erased (their values are committed one by one with salts that can be destroyed)`,
        );
      if (typeof req.reason !== 'string' || req.reason.length === 0)
        throw new StoreError('OPTION_INVALID', 'an erasure needs a reason (--reason TEXT)');
      attempt = await appendErasure(
        journal,
        req,
        async (seq) => (await rawRecord(paths, seq))?.text ?? null,
        new Set(stuck.map((s) => s.erasure.step_id)),
      );
    } finally {
      await journal.close();
    }
    if (attempt === 'again') {
      await pauseBeforeAgain(again + 1);
      continue;
    }
    const { appended, input } = attempt;
    fault('after-record');
    const done = await completeErasure(paths, appended.step_id, input, await voidedIn(store, id, paths, input));
    return outcomeOf(id, input, appended, { parts_deleted: done }, false);
  }
}

/** Whether the erasure touches a signed decision that counts as none (erase/decision.ts): read before the lock. */
async function voidedIn(store: FileStore, id: string, paths: JournalPaths, t: ErasureInput): Promise<boolean> {
  const text = (await rawRecord(paths, t.target))?.text ?? null;
  if (!text?.includes('"kind":"approval.')) return false;
  const journal = await store.open(id);
  try {
    return await decisionVoided(journal, text, t.path);
  } finally {
    await journal.close();
  }
}

/** Carries out a recorded erasure under the journal lock; returns the part files deleted. Idempotent. */
async function completeErasure(
  paths: JournalPaths,
  stepId: string,
  t: ErasureInput,
  voidedDecision: boolean,
): Promise<string[]> {
  const lock = await acquireLock(paths.dir, { timeoutMs: 2 * STALE_MS, staleMs: STALE_MS });
  try {
    const buckets = await listBuckets(paths);
    let first: number | undefined;
    for (const b of buckets) if (b <= t.target) first = b;
    if (first === undefined) throw new StoreError('JOURNAL_CORRUPT', `no bucket holds seq ${t.target}`);
    const file = paths.bucket(first);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const i = t.target - first;
    // A record naming a target the journal does not hold (one appended by hand: verify says ERASURE_MISMATCH)
    // cannot be carried out: it stays pending and is reported, like one naming no unit (ERASURE.md §4.1).
    if (lines[i] === undefined || lines[i] === '')
      throw new ErasureError('ERASURE_TARGET_INVALID', `the journal holds no record at seq ${t.target}`, t.path);
    const record = JSON.parse(lines[i]) as Record<string, unknown>;
    if (hasMarker(record, stepId)) return [];
    const erased = eraseUnit(record, t.path, stepId, t.digest, voidedDecision);
    lines[i] = erased.line.slice(0, -1);
    // Removed before the rewrite as well, so that a process killed between the two leaves no copy behind.
    await rm(join(paths.dir, RUN_STATE_FILE), { force: true });
    await writeFileAtomic(file, lines.join('\n'), { fsyncFile: true, fsyncDir: true });
    // The saved run state (FILE-STORE.md §19) holds the record's values as folded: removed, so a run reader
    // folds the run from its records (the sealed line now) and saves it afresh (ERASURE.md §6.2).
    await rm(join(paths.dir, RUN_STATE_FILE), { force: true });
    fault('after-rewrite');
    return await deleteUnreferencedParts(paths, erased.parts);
  } finally {
    await lock.release();
  }
}

/** Deletes the part files (and their dedupe-index entries) that no line and no other part file references. */
async function deleteUnreferencedParts(paths: JournalPaths, addresses: readonly string[]): Promise<string[]> {
  if (addresses.length === 0) return [];
  const parts = new FilePartStore(paths.dir);
  const referenced = new Set<string>();
  for (const b of await listBuckets(paths)) {
    const text = await readFile(paths.bucket(b), 'utf8');
    for (const a of addresses) if (text.includes(`"digest":"${a}"`)) referenced.add(a);
  }
  for await (const other of parts.list()) {
    if (addresses.includes(other)) continue;
    const text = await readFile(parts.pathOf(other), 'utf8').catch(() => '');
    for (const a of addresses) if (text.includes(`"digest":"${a}"`)) referenced.add(a);
  }
  const deleted: string[] = [];
  for (const a of addresses) {
    if (referenced.has(a)) continue;
    await parts.delete(a);
    deleted.push(a);
  }
  return deleted;
}

const isTemporaryBucket = (name: string): boolean => name.startsWith('.') && name.includes('.jsonl.tmp-');

/**
 * Removes the temporary bucket files a rewrite killed in step 6 left. Under the journal lock, and only then:
 * a live erase writes its temporary file while it holds the lock, and removing it from under that erase would
 * fail its rename (seen racing two erases as processes: the first failed, the second completed its erasure).
 */
async function removeTemporaryBuckets(paths: JournalPaths): Promise<void> {
  const list = async (): Promise<string[]> =>
    (await readdir(paths.buckets).catch(() => [] as string[])).filter(isTemporaryBucket);
  if ((await list()).length === 0) return;
  const lock = await acquireLock(paths.dir, { timeoutMs: 2 * STALE_MS, staleMs: STALE_MS });
  try {
    for (const name of await list()) await unlink(join(paths.buckets, name)).catch(() => {});
  } finally {
    await lock.release();
  }
}

/**
 * Completes every erasure the journal records but has not carried out (a process killed between the
 * erasure record and the rewrite), and removes temporary files an interrupted rewrite left. Returns them.
 */
export async function resumeErasures(
  store: FileStore,
  id: string,
  stuck: StuckErasure[] = [],
): Promise<ErasureOutcome[]> {
  const paths = new JournalPaths(join(store.root, id));
  await removeTemporaryBuckets(paths);
  const pending: { seq: number; step_id: string; input: ErasureInput }[] = [];
  const sealedBy = new Set<string>();
  for (const b of await listBuckets(paths)) {
    for (const text of (await readFile(paths.bucket(b), 'utf8')).split('\n')) {
      if (text === '') continue;
      if (text.includes(`"kind":"${ERASURE_KIND}"`)) {
        const r = JSON.parse(text) as Record<string, unknown>;
        const input = erasureInputOf(r.input);
        if (r.kind === ERASURE_KIND && typeof input !== 'string')
          pending.push({ seq: r.seq as number, step_id: r.step_id as string, input });
      }
      if (text.includes(ERASED_MARKER))
        for (const m of text.matchAll(/"erasure":("[A-Za-z0-9._:-]+")/g)) sealedBy.add(JSON.parse(m[1]!) as string);
    }
  }
  const out: ErasureOutcome[] = [];
  for (const p of pending) {
    if (sealedBy.has(p.step_id)) continue;
    const invalid = targetNotEarlier(p);
    if (invalid !== null) {
      stuckOrThrow(invalid, id, p, stuck);
      continue;
    }
    let deleted: string[];
    try {
      deleted = await completeErasure(paths, p.step_id, p.input, await voidedIn(store, id, paths, p.input));
    } catch (e) {
      // One that cannot be carried out stays pending and is reported; it blocks no other erasure.
      stuckOrThrow(e, id, p, stuck);
      continue;
    }
    out.push(outcomeOf(id, p.input, p, { parts_deleted: deleted }, true));
  }
  return out;
}

/** Finds and erases every value at `matchPath` equal to `value` in every stepchain/v3 journal of the store. */
export async function eraseMatching(
  store: FileStore,
  req: MatchRequest,
  first?: ErasureFirst,
): Promise<StoreErasureReport> {
  const matcher = lineMatcher(req);
  const report: StoreErasureReport = { journals_scanned: 0, journals_not_v3: [], erased: [], failed: [] };
  await sweepDeadStaging(store.root);
  await forEachJournal(store, report, async (id) => {
    const paths = new JournalPaths(join(store.root, id));
    const meta = await readFile(join(paths.dir, 'journal.json'), 'utf8').catch(() => '');
    if (!meta.includes(`"format":"${FORMAT_V3}"`)) {
      report.journals_not_v3.push(id);
      return;
    }
    report.erased.push(...(await resumeErasures(store, id)));
    // A value stored as a part is compared as read from the journal's part files (erase/match.ts).
    const parts = new FilePartStore(paths.dir);
    const match = matcher(new PartReader((a, size) => parts.get(a, size)));
    const found: Found[] = [];
    for (const b of await listBuckets(paths))
      for (const line of (await readFile(paths.bucket(b), 'utf8')).split('\n'))
        if (line !== '') found.push(...(await match(line)));
    for (const f of found) {
      const one = { seq: f.seq, path: f.path, reason: req.reason, by: req.by ?? null };
      try {
        if (f.error !== undefined) throw new Error(f.error);
        const before = (await first?.(id, one)) ?? null;
        if (before !== null) report.erased.push(await eraseValue(store, id, before));
        report.erased.push(await eraseValue(store, id, one));
      } catch (e) {
        report.failed.push({
          journal: id,
          seq: f.seq,
          path: f.path,
          error: e instanceof Error ? e.message : String(e),
        });
      }
    }
  });
  return report;
}
