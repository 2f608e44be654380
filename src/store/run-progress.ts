/**
 * A run's progress as a listing shows it (issue 36): its status — interrupted when it is running with
 * effects pending (RUNS.md §5) — its pending count and its end time, from a run reader's state, or folded
 * from a run's records for a store that keeps no run state (or a run whose saved row is behind its head).
 */
import { emptyState, foldRecord, pendingOf, type RunState } from '../record/run-state.js';
import type { RunEntry, RunFilter, RunProgress } from './runs.js';
import type { Store } from './types.js';

/** The status a listing shows: a run not ended with effects pending is interrupted (RUNS.md §5). */
export function statusOfState(state: RunState): RunProgress {
  const pending = pendingOf(state).length;
  return {
    status: state.status === 'running' && pending > 0 ? 'interrupted' : state.status,
    pending,
    ended_at: state.endedAt,
  };
}

/** A run's progress folded from its records, read-only (a run whose row is missing or behind its head). */
export async function progressOf(store: Store, id: string): Promise<RunProgress> {
  const journal = await store.open(id, { readOnly: true });
  try {
    const state = emptyState();
    for await (const r of journal.read()) foldRecord(state, r);
    return statusOfState(state);
  } finally {
    await journal.close();
  }
}

/**
 * The entries with their progress, folded run by run, keeping those of `filter.status`: how a store that
 * keeps no run state (file, memory) applies the filter. Each run is opened read-only, one at a time.
 */
export async function withStatus(store: Store, entries: RunEntry[], filter: RunFilter): Promise<RunEntry[]> {
  if (filter.status === undefined) return entries;
  const out: RunEntry[] = [];
  for (const e of entries) {
    e.progress ??= await progressOf(store, e.id);
    if (e.progress.status === filter.status) out.push(e);
  }
  return out;
}
