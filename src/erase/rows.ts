/**
 * Erasure in the database stores, SQLite and Postgres (spec/ERASURE.md §6.1): the procedure of the file
 * store (§4) with the bucket replacement swapped for the journal's `rewriteLine` — the row of the target
 * record updated, and the parts nothing references any more deleted, in one transaction under the store's
 * writer lock (SQLite's write lock; Postgres's head row lock). The erasure record is appended first and is
 * the commit point; a process killed after it leaves the erasure pending, completed by `resumeErasures`,
 * which every erase runs first.
 */
import { StoreError } from '../store/errors.js';
import { isLineRewriter, type LineRewriter } from '../store/rewrite.js';
import type { Journal, Store } from '../store/types.js';
import { FORMAT_V3 } from '../record/v3.js';
import { ERASED_MARKER, ERASURE_KIND, erasureInputOf, eraseUnit, type ErasureInput } from '../record/v3/erasure.js';
import {
  appendErasure,
  checkAgain,
  pauseBeforeAgain,
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
  type ErasureFirst,
} from './common.js';
import { decisionVoided } from './decision.js';
import { forEachJournal } from './each-journal.js';
import { lineMatcher, type Found } from './match.js';
import { partReaderOf } from '../record/v3/part-reader.js';

type RowJournal = Journal & LineRewriter;

async function openForErasure(store: Store, id: string): Promise<RowJournal> {
  const journal = await store.open(id);
  if (!isLineRewriter(journal)) {
    await journal.close();
    throw new StoreError(
      'OPTION_INVALID',
      `journal ${id}: this store cannot rewrite a stored line, so nothing can be erased in it (erasure works in file, SQLite and Postgres stores)`,
    );
  }
  return journal;
}

async function lineAt(journal: Journal, seq: number): Promise<string | null> {
  const head = await journal.head();
  if (head === null || seq > head.seq) return null;
  for await (const l of journal.lines({ from: seq, to: seq })) return l.text;
  return null;
}

/** Carries out a recorded erasure in one transaction; returns the parts deleted (none when it was already done). */
async function completeErasure(
  journal: RowJournal,
  stepId: string,
  t: ErasureInput,
): Promise<{ parts_deleted: string[]; wal_truncated?: boolean }> {
  const voided = await decisionVoided(journal, await lineAt(journal, t.target), t.path);
  const done = await journal.rewriteLine(t.target, (line) => {
    const record = JSON.parse(line) as Record<string, unknown>;
    if (hasMarker(record, stepId)) return null;
    const erased = eraseUnit(record, t.path, stepId, t.digest, voided);
    return { line: erased.line.slice(0, -1), parts: erased.parts, beforeCommit: () => fault('in-rewrite') };
  });
  if (done === null) return { parts_deleted: [] };
  fault('after-rewrite');
  return {
    parts_deleted: done.partsDeleted,
    ...(done.walTruncated === undefined ? {} : { wal_truncated: done.walTruncated }),
  };
}

/** What one pass over a journal's lines finds: erasure records, the erasures markers name, and (given a test) matching lines. */
async function scan(
  journal: RowJournal,
  match?: (text: string) => Promise<void>,
): Promise<{ pending: { seq: number; step_id: string; input: ErasureInput }[]; sealedBy: Set<string> }> {
  const pending: { seq: number; step_id: string; input: ErasureInput }[] = [];
  const sealedBy = new Set<string>();
  for await (const { text } of journal.lines()) {
    if (text.includes(`"kind":"${ERASURE_KIND}"`)) {
      const r = JSON.parse(text) as Record<string, unknown>;
      const input = erasureInputOf(r.input);
      if (r.kind === ERASURE_KIND && typeof input !== 'string')
        pending.push({ seq: r.seq as number, step_id: r.step_id as string, input });
    }
    if (text.includes(ERASED_MARKER))
      for (const m of text.matchAll(/"erasure":("[A-Za-z0-9._:-]+")/g)) sealedBy.add(JSON.parse(m[1]!) as string);
    await match?.(text);
  }
  return { pending, sealedBy };
}

async function resumeOpen(
  journal: RowJournal,
  id: string,
  scanned?: Awaited<ReturnType<typeof scan>>,
  stuck: StuckErasure[] = [],
): Promise<ErasureOutcome[]> {
  const { pending, sealedBy } = scanned ?? (await scan(journal));
  const out: ErasureOutcome[] = [];
  for (const p of pending) {
    if (sealedBy.has(p.step_id)) continue;
    const invalid = targetNotEarlier(p);
    if (invalid !== null) {
      stuckOrThrow(invalid, id, p, stuck);
      continue;
    }
    let done: Awaited<ReturnType<typeof completeErasure>>;
    try {
      done = await completeErasure(journal, p.step_id, p.input);
    } catch (e) {
      // One that cannot be carried out stays pending and is reported; it blocks no other erasure.
      stuckOrThrow(e, id, p, stuck);
      continue;
    }
    out.push(outcomeOf(id, p.input, p, done, true));
  }
  return out;
}

/** Completes every erasure journal `id` records but has not carried out (a process killed after the erasure record). */
export async function resumeRowErasures(
  store: Store,
  id: string,
  stuck: StuckErasure[] = [],
): Promise<ErasureOutcome[]> {
  const journal = await openForErasure(store, id);
  try {
    if (journal.genesis.format !== FORMAT_V3) return [];
    return await resumeOpen(journal, id, undefined, stuck);
  } finally {
    await journal.close();
  }
}

/**
 * `stuck`: the caller completed the journal's interrupted erasures already (eraseRowMatching's one pass), and
 * these are the ones it could not carry out.
 */
async function eraseOpen(
  journal: RowJournal,
  id: string,
  req: EraseRequest,
  stuck?: StuckErasure[],
): Promise<ErasureOutcome> {
  if (journal.genesis.format !== FORMAT_V3)
    throw new StoreError(
      'OPTION_INVALID',
      `journal ${id} is ${String(journal.genesis.format)}: only stepchain/v3 records can be erased (their values are committed one by one with salts that can be destroyed)`,
    );
  if (typeof req.reason !== 'string' || req.reason.length === 0)
    throw new StoreError('OPTION_INVALID', 'an erasure needs a reason (--reason TEXT)');
  let cannot = stuck;
  // eslint-disable-next-line @typescript-eslint/no-confusing-void-expression -- checkAgain throws past its limit
  for (let again = 0; ; checkAgain(++again, req)) {
    if (cannot === undefined) await resumeOpen(journal, id, undefined, (cannot = []));
    const known = new Set(cannot.map((s) => s.erasure.step_id));
    const attempt = await appendErasure(journal, req, (seq) => lineAt(journal, seq), known);
    // Another erase of the record was recorded since the check: complete it (a resume), then check afresh.
    if (attempt === 'again') {
      cannot = undefined;
      await pauseBeforeAgain(again + 1);
      continue;
    }
    const { appended, input } = attempt;
    fault('after-record');
    return outcomeOf(id, input, appended, await completeErasure(journal, appended.step_id, input), false);
  }
}

/** Erases the unit at `req.path` of record `req.seq` of journal `id` of a SQLite or Postgres store. */
export async function eraseRowValue(store: Store, id: string, req: EraseRequest): Promise<ErasureOutcome> {
  const journal = await openForErasure(store, id);
  try {
    return await eraseOpen(journal, id, req);
  } finally {
    await journal.close();
  }
}

/** Every value at `matchPath` equal to `value` in every stepchain/v3 journal of a SQLite or Postgres store, erased. */
export async function eraseRowMatching(
  store: Store,
  req: MatchRequest,
  first?: ErasureFirst,
): Promise<StoreErasureReport> {
  const matcher = lineMatcher(req);
  const report: StoreErasureReport = { journals_scanned: 0, journals_not_v3: [], erased: [], failed: [] };
  await forEachJournal(store, report, async (id) => {
    const journal = await openForErasure(store, id);
    try {
      if (journal.genesis.format !== FORMAT_V3) {
        report.journals_not_v3.push(id);
        return;
      }
      // One pass: the journal's interrupted erasures and the lines that match (parts read, erase/match.ts).
      const found: Found[] = [];
      const match = matcher(partReaderOf(journal));
      const scanned = await scan(journal, async (text) => {
        found.push(...(await match(text)));
      });
      const stuck: StuckErasure[] = [];
      const resumed = await resumeOpen(journal, id, scanned, stuck);
      report.erased.push(...resumed);
      const done = new Set(resumed.map((o) => `${o.seq} ${o.path}`));
      for (const f of found.filter((x) => !done.has(`${x.seq} ${x.path}`))) {
        const one = { seq: f.seq, path: f.path, reason: req.reason, by: req.by ?? null };
        try {
          if (f.error !== undefined) throw new Error(f.error);
          const before = (await first?.(id, one)) ?? null;
          if (before !== null) report.erased.push(await eraseOpen(journal, id, before, stuck));
          report.erased.push(await eraseOpen(journal, id, one, stuck));
        } catch (e) {
          report.failed.push({
            journal: id,
            seq: f.seq,
            path: f.path,
            error: e instanceof Error ? e.message : String(e),
          });
        }
      }
    } finally {
      await journal.close();
    }
  });
  return report;
}
