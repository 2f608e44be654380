/**
 * A run reader's state saved beside the chain (spec/FILE-STORE.md §19; the SQLite and Postgres stores keep
 * it in their run_state table, SQLITE.md §4.2, POSTGRES.md §4.2), so that a process opening a run — each
 * `stepchain effect begin|end|resolve|list` — folds only the records after it instead of the whole run.
 * Derived data: it names the seq and step hash it was folded to, and is used only when the chain's step at
 * that seq has that hash; anything else (absent, unreadable, another shape, another chain) is ignored and
 * the run is folded from its records. Pure (no I/O): the store reads and writes the text.
 */
import type { Json } from '../canonical/json.js';
import { emptyState, type BoundaryAnomaly, type Effect, type ModelCall, type RunState } from './run-state.js';

/** What an outcome record repeats of its start (FORMAT §11.3), for each call still in flight. */
export type Begun = Map<string, { input: Json; model: Json; prompt: Json; tool_call: Json }>;

interface SavedRunState {
  v: 1;
  run_id: string;
  seq: number;
  step_hash: string;
  effects: Effect[];
  models: ModelCall[];
  status: RunState['status'];
  continuation: number | null;
  requested: string[];
  in_flight: number;
  anomalies: BoundaryAnomaly[];
  by_key: [string, string][];
  by_call_id: [string, string][];
  by_intent: [string, string][];
  ended_at: string | null;
  begun: [string, { input: Json; model: Json; prompt: Json; tool_call: Json }][];
  /** How many records folded may be approval records (a kind `approval.*`, or none); absent: not counted. */
  approval_records?: number;
}

/** The text saved for `state`, folded to its last seq, whose step hash is `stepHash`. */
export function saveRunState(
  runId: string,
  state: RunState,
  stepHash: string,
  begun: Begun,
  approvalRecords: number | null = null,
): string {
  const inFlight = (id: string): boolean =>
    state.effects.get(id)?.status === 'started' || state.models.get(id)?.status === 'started';
  const saved: SavedRunState = {
    v: 1,
    run_id: runId,
    seq: state.lastSeq,
    step_hash: stepHash,
    effects: [...state.effects.values()],
    models: [...state.models.values()],
    status: state.status,
    continuation: state.continuation,
    requested: [...state.requested],
    in_flight: state.inFlight,
    anomalies: state.anomalies,
    by_key: [...state.byKey],
    by_call_id: [...state.byCallId],
    by_intent: [...state.byIntent],
    ended_at: state.endedAt,
    begun: [...begun].filter(([id]) => inFlight(id)),
    ...(approvalRecords === null ? {} : { approval_records: approvalRecords }),
  };
  return JSON.stringify(saved);
}

/** The seq and step hash a saved text claims to be folded to, or null when it is not a saved state of `runId`. */
export function savedPoint(text: string, runId: string): { seq: number; step_hash: string; saved: unknown } | null {
  let saved: unknown;
  try {
    saved = JSON.parse(text);
  } catch {
    return null;
  }
  const s = saved as Partial<SavedRunState> | null;
  if (
    s === null ||
    typeof s !== 'object' ||
    s.v !== 1 ||
    s.run_id !== runId ||
    !Number.isSafeInteger(s.seq) ||
    s.seq! < 0 ||
    typeof s.step_hash !== 'string'
  )
    return null;
  return { seq: s.seq!, step_hash: s.step_hash, saved };
}

const isArray = Array.isArray;

/** The count of approval records a saved text claims (`approval_records`), or null when it has none that is a count. */
export function savedApprovalRecords(saved: unknown): number | null {
  const n = (saved as Partial<SavedRunState>).approval_records;
  return Number.isSafeInteger(n) && n! >= 0 ? n! : null;
}

/** The state and in-flight starts of a saved text that `savedPoint` accepted; null when its members are not of their types. */
export function restoreRunState(saved: unknown): { state: RunState; begun: Begun } | null {
  const s = saved as SavedRunState;
  const lists = [s.effects, s.models, s.requested, s.anomalies, s.by_key, s.by_call_id, s.by_intent, s.begun];
  if (
    !lists.every(isArray) ||
    !Number.isSafeInteger(s.in_flight) ||
    !['running', 'completed', 'failed'].includes(s.status)
  )
    return null;
  if (
    !(s.continuation === null || Number.isSafeInteger(s.continuation)) ||
    !(s.ended_at === null || typeof s.ended_at === 'string')
  )
    return null;
  const state = emptyState();
  for (const e of s.effects) {
    if (e === null || typeof e !== 'object' || typeof e.id !== 'string') return null;
    state.effects.set(e.id, e);
  }
  for (const m of s.models) {
    if (m === null || typeof m !== 'object' || typeof m.id !== 'string') return null;
    state.models.set(m.id, m);
  }
  state.status = s.status;
  state.continuation = s.continuation;
  state.requested = new Set(s.requested);
  state.inFlight = s.in_flight;
  state.lastSeq = s.seq;
  state.anomalies = s.anomalies;
  state.byKey = new Map(s.by_key);
  state.byCallId = new Map(s.by_call_id);
  state.byIntent = new Map(s.by_intent);
  state.endedAt = s.ended_at;
  return { state, begun: new Map(s.begun) };
}
