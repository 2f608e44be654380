/**
 * Listing runs (spec/FORMAT.md §11.1, spec/FILE-STORE.md): the identity a run journal's genesis carries, as a store lists
 * it, and the one filter and order every store applies — so a file store, a memory store and a database
 * answer `list({ conversationId })` alike. Chronological order is a guarantee: by the genesis created_at,
 * then by journal id. Pure.
 */
import { capabilitiesOf, RUN_FORMATS, type Genesis } from '../record/formats.js';
import type { RunIdentity } from '../record/v2.js';
import type { Lineage } from './types.js';

/** Which runs to list: every given member must match (labels: each given label). */
export interface RunFilter {
  conversationId?: string;
  parentRunId?: string;
  agent?: string;
  labels?: Record<string, string>;
  /**
   * Only runs with this status. A store that keeps run state (SQLite, Postgres) applies it in its query; one
   * that does not (file, memory) folds each run to apply it (and then sets `progress` on what it returns).
   */
  status?: RunStatus;
}

/** A run's status as a listing shows it: interrupted is running with effects pending (RUNS.md §5). */
export type RunStatus = 'running' | 'completed' | 'failed' | 'interrupted';
export const RUN_STATUSES: readonly RunStatus[] = ['running', 'completed', 'failed', 'interrupted'];

/** A run's status, its pending effects and its end time (the ts of run.completed or run.failed). */
export interface RunProgress {
  status: RunStatus;
  pending: number;
  ended_at: string | null;
}

/** One run as a store lists it: its journal id, its genesis identity, and the journal it was forked from. */
export interface RunEntry {
  id: string;
  /** The genesis journal_id: the run id (a fork keeps its parent's). */
  run_id: string;
  created_at: string;
  run: RunIdentity;
  /** The parent journal's id when this journal is a fork (lineage.parent_journal), else null. */
  fork_of: string | null;
  /**
   * Its status: read in the listing's own query where the store keeps run state (SQLite, Postgres); from the
   * run's saved state when it is current in a directory store (FILE-STORE.md §19); otherwise only when
   * `status` was filtered on.
   */
  progress?: RunProgress;
}

/**
 * The run formats as an SQL list of string literals, for the row stores' run listings: built from this
 * implementation's constants (RUN_FORMATS), never from input, so quoting them inline is safe.
 */
export const RUN_FORMAT_LIST = RUN_FORMATS.map((f) => `'${f}'`).join(', ');

/** The run entry of a journal, or null when it is not a run journal (format stepchain/v1; v2 and v3 journals are runs). */
export function runEntryOf(id: string, genesis: Genesis, lineage: Lineage | null): RunEntry | null {
  if (!capabilitiesOf(genesis).runRecords) return null;
  return {
    id,
    run_id: genesis.journal_id,
    created_at: genesis.created_at,
    run: (genesis as { run: RunIdentity }).run,
    fork_of: lineage?.parent_journal ?? null,
  };
}

export function matchesRun(entry: RunEntry, filter: RunFilter): boolean {
  if (filter.conversationId !== undefined && entry.run.conversation_id !== filter.conversationId) return false;
  if (filter.parentRunId !== undefined && entry.run.parent_run_id !== filter.parentRunId) return false;
  if (filter.agent !== undefined && entry.run.agent !== filter.agent) return false;
  if (filter.status !== undefined && entry.progress !== undefined && entry.progress.status !== filter.status)
    return false;
  if (filter.labels !== undefined)
    for (const [k, v] of Object.entries(filter.labels)) if (entry.run.labels?.[k] !== v) return false;
  return true;
}

/** The matching entries in chronological order (created_at, then id). */
export function selectRuns(entries: Iterable<RunEntry>, filter: RunFilter = {}): RunEntry[] {
  const out: RunEntry[] = [];
  for (const e of entries) if (matchesRun(e, filter)) out.push(e);
  return out.sort((a, b) =>
    a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0,
  );
}
