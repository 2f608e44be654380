/**
 * The saved run state a database store keeps in its run_state table (spec/SQLITE.md §4.2, spec/POSTGRES.md
 * §4.2): a run journal's reader state (record/saved-run-state.ts) advanced in the same transaction as the
 * lines it folds, so it is always the state at the head, and the run's status, pending count and end time
 * beside it as columns, so listing runs with their status is one query. The SQL is each store's own.
 */
import { capabilitiesOf, type Genesis } from '../../record/formats.js';
import { kindIsStep } from '../../record/line-members.js';
import { emptyState, foldLine, foldRecord, startOf, type RunState } from '../../record/run-state.js';
import { restoreRunState, savedPoint, saveRunState, type Begun } from '../../record/saved-run-state.js';
import type { StepRecord } from '../../record/seal.js';
import { parseMeta } from '../meta.js';
import { progressOf, statusOfState } from '../run-progress.js';
import { runEntryOf, selectRuns, type RunEntry, type RunFilter, type RunStatus } from '../runs.js';
import type { Store } from '../types.js';

/** A run_state row: the saved state's text and the columns a listing reads. */
export interface RunStateRow {
  seq: number;
  step_hash: string;
  status: RunStatus;
  pending: number;
  ended_at: string | null;
  state: string;
}

/** Whether the store keeps a run_state row for this journal: run journals (stepchain/v2, stepchain/v3). */
export function keepsRunState(genesis: Genesis): boolean {
  return capabilitiesOf(genesis).runRecords;
}

/** What advancing a row needs from the store, all inside the writer's transaction. */
export interface RunStateSource {
  /** The run id (the genesis journal_id). */
  runId: string;
  /** The row as stored, or null. */
  row: { seq: number; step_hash: string; state: string } | null;
  /** The head before the new lines (seq -1 when the chain is empty). */
  head: { seq: number; step_hash: string };
  /** The committed lines 0..to, in seq order: read only when the row is missing or not at the head (a journal from before the table). */
  older(to: number): AsyncIterable<{ seq: number; text: string }>;
  /** A line restored to its record (blobs and parts in place): what a Run folds. */
  restore(text: string, seq: number): Promise<StepRecord>;
}

/**
 * The row after the new lines: the stored state when it is anchored at the head (its seq and step hash the
 * head's), else folded from the committed lines first; then each new line folded. A plain step is folded
 * from its text (kindIsStep); any other record is restored first, so the state holds what a Run reading the
 * journal holds (an argument kept as a blob is the same value, and so the same intent).
 */
export async function advanceRunState(
  src: RunStateSource,
  lines: readonly { seq: number; text: string; hash: string }[],
): Promise<RunStateRow> {
  let state: RunState = emptyState();
  let begun: Begun = new Map();
  let lastHash = src.head.step_hash;
  const point = src.row === null ? null : savedPoint(src.row.state, src.runId);
  const restored =
    point !== null && point.seq === src.head.seq && point.step_hash === src.head.step_hash
      ? restoreRunState(point.saved)
      : null;
  const fold = async (text: string, seq: number): Promise<void> => {
    if (kindIsStep(text)) {
      foldLine(state, text, seq);
      return;
    }
    const r = await src.restore(text, seq);
    foldRecord(state, r);
    const started = startOf(r);
    if (started !== null)
      begun.set(started.step_id, {
        input: started.input,
        model: started.model,
        prompt: started.prompt,
        tool_call: started.tool_call,
      });
  };
  if (restored !== null) ({ state, begun } = restored);
  else if (src.head.seq >= 0) for await (const l of src.older(src.head.seq)) await fold(l.text, l.seq);
  for (const l of lines) {
    await fold(l.text.endsWith('\n') ? l.text.slice(0, -1) : l.text, l.seq);
    lastHash = l.hash;
  }
  return {
    seq: state.lastSeq,
    step_hash: lastHash,
    ...statusOfState(state),
    state: saveRunState(src.runId, state, lastHash, begun),
  };
}

/** A run journal's row as a database store's listing reads it: metadata, head, and run_state columns (null without a row). */
export interface RunMetaRow {
  id: string;
  meta: string;
  head_seq: number;
  seq: number | null;
  status: RunStatus | null;
  pending: number | null;
  ended_at: string | null;
}

/**
 * The listing's entries from its one statement's rows, each with its progress: from the row when it is at
 * the head, running with none pending for a run with no step, else folded from the run's records.
 */
export async function runsOfRows(
  store: Store,
  rows: readonly RunMetaRow[],
  where: (id: string) => string,
  filter: RunFilter,
): Promise<RunEntry[]> {
  const entries: RunEntry[] = [];
  for (const row of rows) {
    const meta = parseMeta(row.meta, where(row.id));
    const entry = runEntryOf(row.id, meta.genesis, meta.lineage);
    if (entry === null) continue;
    if (row.head_seq === -1) entry.progress = { status: 'running', pending: 0, ended_at: null };
    else if (row.seq === row.head_seq && row.status !== null)
      entry.progress = { status: row.status, pending: row.pending ?? 0, ended_at: row.ended_at };
    else entry.progress = await progressOf(store, row.id);
    entries.push(entry);
  }
  return selectRuns(entries, filter);
}
