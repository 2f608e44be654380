/**
 * Erasure in any store (spec/ERASURE.md): the file store by atomic replacement of a bucket (file.ts), the
 * SQLite and Postgres stores by an update of the record's row in one transaction (rows.ts). One call
 * whatever the store.
 */
import { FileStore } from '../store/file/store.js';
import type { Journal, Store } from '../store/types.js';
import { placesOf, valueAt } from './elsewhere.js';
import {
  eraseMatching as eraseFileMatching,
  eraseValue as eraseFileValue,
  resumeErasures as resumeFileErasures,
} from './file.js';
import { eraseRowMatching, eraseRowValue, resumeRowErasures } from './rows.js';
import { digestErasureFirst } from './approval-digest.js';
import type { EraseRequest, ErasureOutcome, MatchRequest, StoreErasureReport, StuckErasure } from './common.js';

export {
  erasureStepId,
  type StuckErasure,
  type EraseRequest,
  type ErasureOutcome,
  type MatchRequest,
  type StoreErasureReport,
} from './common.js';

/**
 * Erases the unit at `req.path` of record `req.seq` of journal `id` (a stepchain/v3 journal of `store`),
 * keeping every step hash, the head and every checkpoint valid. Completes any interrupted erasure first.
 */
export async function eraseValue(store: Store, id: string, req: EraseRequest): Promise<ErasureOutcome> {
  // A pre-v2 request's unsalted digest of its presented call goes first (spec/ERASURE.md §6.4).
  const digest = await digestErasureFirst(store, id, req);
  if (digest !== null) await eraseOne(store, id, digest);
  const value = await valueOf(store, id, req);
  const done = await eraseOne(store, id, req);
  const places = value === undefined ? [] : await withJournal(store, id, (j) => placesOf(j, value, req));
  return places.length === 0 ? done : { ...done, elsewhere: places };
}

/** The value an erase is about to remove (undefined when the record holds none there, or is not there). */
function valueOf(store: Store, id: string, req: EraseRequest): Promise<unknown> {
  return withJournal(store, id, async (j) => {
    for await (const l of j.lines({ from: req.seq, to: req.seq })) return valueAt(JSON.parse(l.text), req.path);
    return undefined;
  }).catch(() => undefined);
}

async function withJournal<T>(store: Store, id: string, f: (j: Journal) => Promise<T>): Promise<T> {
  const j = await store.open(id, { readOnly: true });
  try {
    return await f(j);
  } finally {
    await j.close();
  }
}

/** The erases under way in this process, by store and journal: the last one's end (oneAtATime). */
const underWay = new WeakMap<Store, Map<string, Promise<unknown>>>();

/**
 * Erases of one journal through one store, one at a time in this process. Run together, each erase of a record
 * that another one recorded first went back and checked again (ERASURE.md §4 step 4), and of 24 erases of
 * distinct members of one record on SQLite, 7 went back more than 16 times and gave up (outsider J). Erases in
 * other processes still meet as §4 says; they pause before each go-back (pauseBeforeAgain).
 */
function oneAtATime<T>(store: Store, id: string, erase: () => Promise<T>): Promise<T> {
  let journals = underWay.get(store);
  if (journals === undefined) underWay.set(store, (journals = new Map<string, Promise<unknown>>()));
  const run = (journals.get(id) ?? Promise.resolve()).then(erase, erase);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  journals.set(id, settled);
  void settled.then(() => {
    if (journals.get(id) === settled) journals.delete(id);
  });
  return run;
}

function eraseOne(store: Store, id: string, req: EraseRequest): Promise<ErasureOutcome> {
  return oneAtATime(store, id, () =>
    store instanceof FileStore ? eraseFileValue(store, id, req) : eraseRowValue(store, id, req),
  );
}

/**
 * Completes every erasure journal `id` records but has not carried out; returns them. One that cannot be
 * carried out (its target holds no such unit) is pushed onto `stuck` and blocks nothing.
 */
export function resumeErasures(store: Store, id: string, stuck: StuckErasure[] = []): Promise<ErasureOutcome[]> {
  return store instanceof FileStore ? resumeFileErasures(store, id, stuck) : resumeRowErasures(store, id, stuck);
}

/** Finds and erases every value at `req.matchPath` equal to `req.value` in every stepchain/v3 journal of the store. */
export function eraseMatching(store: Store, req: MatchRequest): Promise<StoreErasureReport> {
  // A pre-v2 request's unsalted digest of its presented call goes first, as for one value (spec/ERASURE.md §6.4).
  const first = (id: string, one: EraseRequest): Promise<EraseRequest | null> => digestErasureFirst(store, id, one);
  return store instanceof FileStore ? eraseFileMatching(store, req, first) : eraseRowMatching(store, req, first);
}
