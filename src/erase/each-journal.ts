/**
 * The journals an erase across a store searches (spec/ERASURE.md §6): every journal of the store, then those
 * that appeared or moved while it ran, until a listing shows none.
 */
import type { Journal } from '../store/types.js';
import type { StoreErasureReport } from './common.js';

/** How many times an erase across a store lists it again for journals that appeared, or moved, while it ran. */
const MAX_LISTINGS = 8;

/** What forEachJournal needs of a store: its journals, and each one's lines read only. */
interface ListedStore {
  list(): Promise<string[]>;
  open(id: string, options: { readOnly: true }): Promise<Journal>;
}

/**
 * Calls `each` for every journal of the store that is not the store's own (`_…`), then lists the store again
 * and calls it for the journals that appeared meanwhile, and again for those that moved while it ran — that
 * hold, past the head read just before their search, a step this erase did not append — until a listing
 * shows none of either (spec/ERASURE.md §6). A fork being made of a journal while the erase ran was not in the
 * first listing, and holds the value when it copied the record before the rewrite; a copy (stepchain copy)
 * creates its target empty and writes it after, so the erase that searched it empty would leave the value
 * its copy then wrote (outsider 14, F4).
 */
export async function forEachJournal(
  store: ListedStore,
  report: StoreErasureReport,
  each: (id: string) => Promise<void>,
): Promise<void> {
  // The head each searched journal had just before its last search (-1: none; null: it could not be read).
  const searched = new Map<string, number | null>();
  for (let listing = 0; listing < MAX_LISTINGS; listing++) {
    const due = await dueJournals(store, searched, report);
    if (due.length === 0) return;
    for (const id of due) {
      if (!searched.has(id)) report.journals_scanned++;
      searched.set(id, await headSeq(store, id));
      // One journal that cannot be searched (unreadable, corrupt) is reported; the others are still erased.
      await each(id).catch((e: unknown) => {
        report.failed.push({ journal: id, seq: -1, path: '', error: e instanceof Error ? e.message : String(e) });
      });
    }
  }
  // Still appearing or moving after every listing: reported, so that the erase never claims a store it could not
  // finish searching.
  for (const id of await dueJournals(store, searched, report))
    report.failed.push({
      journal: id,
      seq: -1,
      path: '',
      error: `journal ${id} was still being written after ${MAX_LISTINGS} searches of the store and may hold the value; erase again once its writer is done`,
    });
}

/** The journals not searched yet, or moved since their last search. */
async function dueJournals(
  store: ListedStore,
  searched: ReadonlyMap<string, number | null>,
  report: StoreErasureReport,
): Promise<string[]> {
  const due: string[] = [];
  for (const id of await store.list()) {
    if (id.startsWith('_') || report.journals_not_v3.includes(id)) continue;
    if (!searched.has(id) || (await movedSince(store, id, searched.get(id)!, report))) due.push(id);
  }
  return due;
}

/** The seq of journal `id`'s head (-1: empty), or null when it cannot be read. */
async function headSeq(store: ListedStore, id: string): Promise<number | null> {
  try {
    const j = await store.open(id, { readOnly: true });
    try {
      return (await j.head())?.seq ?? -1;
    } finally {
      await j.close();
    }
  } catch {
    return null;
  }
}

/**
 * Whether journal `id` holds, past seq `before`, a step that is not an erasure record this erase appended
 * (report.erased). A journal whose head could not be read, or that cannot be read now, is searched again
 * only when its searches have not failed yet (a journal that cannot be searched is reported once).
 */
async function movedSince(
  store: ListedStore,
  id: string,
  before: number | null,
  report: StoreErasureReport,
): Promise<boolean> {
  const unread = !report.failed.some((f) => f.journal === id && f.seq === -1);
  if (before === null) return unread;
  const own = new Set(report.erased.filter((o) => o.journal === id).map((o) => o.erasure.seq));
  try {
    const j = await store.open(id, { readOnly: true });
    try {
      for await (const l of j.lines({ from: before + 1 })) if (!own.has(l.seq)) return true;
      return false;
    } finally {
      await j.close();
    }
  } catch {
    return unread;
  }
}
