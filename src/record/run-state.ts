/**
 * The run reader (spec/RUNS.md §2, §3): a run's state read from its records: the tool effects and model calls
 * with their outcome or none, the run's own status, and the continuation point — the last seq where every
 * started model call and tool effect, and every tool call a model asked for, has its outcome. Pure: a fold
 * over records in seq order, so the library, the CLI and a verifier's reader agree.
 */
import type { Json } from '../canonical/json.js';
import { canonicalJson } from '../canonical/jcs.js';
import type { StepRecord } from './seal.js';
import type { StepRecordV2 } from './v2.js';
import type { StepRecordV3 } from './v3.js';
import { kindIsStep } from './line-members.js';

// Also here for cli/run-notes.ts, which may import only the internal modules the CLI already uses (test/architecture.test.ts).
export { stepIdOf } from './line-members.js';

/**
 * A record of a run journal (RUNS.md §1): stepchain/v2 and stepchain/v3 records carry the same kind, ref and
 * content members (v3's kinds are v2's and the registry's), so the run reader folds both alike.
 */
export type RunRecord = StepRecordV2 | StepRecordV3;

/** Whether a record read from a journal is a run record (v2 or v3), which has a kind; v1 records do not. */
export function isRunRecord(record: StepRecord | StepRecordV3): record is RunRecord {
  return record.v === 2 || record.v === 3;
}

export type EffectStatus = 'started' | 'completed' | 'failed';

/** The decisions that resolve an effect of unknown outcome (RUNS.md §5). */
export const RESOLUTION_DECISIONS = ['retry', 'done', 'abandon', 'compensated'] as const;
export type ResolutionDecision = (typeof RESOLUTION_DECISIONS)[number];

/** A decision recorded for an effect whose outcome was unknown: its outcome record's `meta.resolution`. */
export interface Resolution {
  decision: ResolutionDecision;
  /** Who or what decided (a person, a policy). */
  by: string;
  reason: string;
}

/** A record's tool call as the runtime writes it (FORMAT §11.3): read without casts through toolCallOf. */
export interface ToolCallValue {
  name: string;
  arguments: Json;
  call_id?: string;
  idempotency_key?: string;
  summary?: string;
}

/** The record's `tool_call` when it is an object with a string `name` (any version, any kind), else null. */
export function toolCallOf(record: Pick<StepRecord, 'tool_call'>): ToolCallValue | null {
  const c = record.tool_call;
  if (c === null || typeof c !== 'object' || Array.isArray(c) || typeof c.name !== 'string') return null;
  const out: ToolCallValue = { name: c.name, arguments: c.arguments ?? null };
  for (const k of ['call_id', 'idempotency_key', 'summary'] as const) if (typeof c[k] === 'string') out[k] = c[k];
  return out;
}

/** A tool effect: its intent, and its outcome once one is recorded. */
export interface Effect {
  /** The step_id of its tool.started record: the effect's durable id. */
  id: string;
  /** The seq of its tool.started record. */
  seq: number;
  tool: string | null;
  args: Json;
  /** The id the model gave the tool call (tool_call.call_id), linking it to the model's request. */
  callId: string | null;
  idempotencyKey: string | null;
  summary: string | null;
  status: EffectStatus;
  startedAt: string;
  endedAt: string | null;
  endSeq: number | null;
  /** endedAt − startedAt, from the records' ts. */
  durationMs: number | null;
  result: Json;
  error: Json;
  /** The decision its outcome records when it was resolved rather than observed (RUNS.md §5), else null. */
  resolution: Resolution | null;
  /** The effect this one retries (`meta.retry_of` of its tool.started record), else null. */
  retryOf: string | null;
}

/** A model request: started, and completed or failed. */
export interface ModelCall {
  id: string;
  seq: number;
  model: Json;
  status: EffectStatus;
  startedAt: string;
  endedAt: string | null;
  endSeq: number | null;
  durationMs: number | null;
  error: Json;
}

/** A record that breaks the boundary rules between records (never thrown: reported). */
export interface BoundaryAnomaly {
  seq: number;
  code: 'OUTCOME_WITHOUT_START' | 'OUTCOME_REPEATED' | 'KIND_MISMATCH' | 'STEP_ID_REPEATED';
  message: string;
}

export interface RunState {
  effects: Map<string, Effect>;
  models: Map<string, ModelCall>;
  status: 'running' | 'completed' | 'failed';
  /** The last seq at which nothing was in flight; null when there is none (no record yet). */
  continuation: number | null;
  /** Tool call ids a model asked for that have no tool outcome yet. */
  requested: Set<string>;
  /** How many model calls and tool effects are started and not ended. */
  inFlight: number;
  /** The last seq folded in; -1 before any. */
  lastSeq: number;
  anomalies: BoundaryAnomaly[];
  /**
   * The index a writer checks a new effect against (RUNS.md §5), kept as records are folded so a check costs
   * the same at any length of run: the last effect begun under each idempotency key, each model call id,
   * and each intent (tool name and canonical arguments, `intentKey`).
   */
  byKey: Map<string, string>;
  byCallId: Map<string, string>;
  byIntent: Map<string, string>;
  /** The ts of run.completed or run.failed, else null. */
  endedAt: string | null;
}

export function emptyState(): RunState {
  return {
    effects: new Map(),
    models: new Map(),
    status: 'running',
    continuation: null,
    requested: new Set(),
    inFlight: 0,
    lastSeq: -1,
    anomalies: [],
    byKey: new Map(),
    byCallId: new Map(),
    byIntent: new Map(),
    endedAt: null,
  };
}

/** The intent of a tool call: its name and the canonical JSON of its arguments (one string, for an index). */
export function intentKey(tool: string, args: Json): string {
  let text: string;
  try {
    text = canonicalJson(args, { refuseReserved: false, maxDepth: 128 });
  } catch {
    text = JSON.stringify(args);
  }
  return `${tool}\u0000${text}`;
}

/** `meta.resolution` of an outcome record when it is one (RUNS.md §5), else null. */
export function resolutionOf(meta: unknown): Resolution | null {
  const r = asObject(asObject(meta)?.resolution);
  if (r === null || typeof r.decision !== 'string' || !(RESOLUTION_DECISIONS as readonly string[]).includes(r.decision))
    return null;
  return { decision: r.decision as ResolutionDecision, by: str(r.by) ?? '', reason: str(r.reason) ?? '' };
}

const asObject = (v: unknown): Record<string, unknown> | null =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const span = (from: string, to: string): number => Date.parse(to) - Date.parse(from);

/** The tool call ids a model.completed record asks for: `tool_call` as a list of {id, …}, or one {id, …}. */
function requestedIds(toolCall: unknown): string[] {
  const list = Array.isArray(toolCall) ? toolCall : toolCall === null ? [] : [toolCall];
  const ids: string[] = [];
  for (const c of list) {
    const id = str(asObject(c)?.id) ?? str(asObject(c)?.call_id);
    if (id !== null) ids.push(id);
  }
  return ids;
}

/**
 * Folds one record into the state (in seq order). Longer than 80 lines because it is one switch over the
 * record kinds, case by case as RUNS.md §2 numbers them (with §5's index and decisions), read side by side with the spec.
 */
export function foldRecord(state: RunState, record: StepRecord | StepRecordV3): void {
  const seq = record.seq;
  state.lastSeq = seq;
  if (isRunRecord(record)) {
    const r = record;
    const call = asObject(r.tool_call);
    const anomaly = (code: BoundaryAnomaly['code'], message: string): void =>
      void state.anomalies.push({ seq, code, message });
    switch (r.kind) {
      case 'tool.started':
        if (repeatsStart(state, r.step_id, r.kind, seq)) break;
        state.effects.set(r.step_id, {
          id: r.step_id,
          seq,
          tool: str(call?.name),
          args: (call?.arguments ?? null) as Json,
          callId: str(call?.call_id),
          idempotencyKey: str(call?.idempotency_key),
          summary: str(call?.summary),
          status: 'started',
          startedAt: r.ts,
          endedAt: null,
          endSeq: null,
          durationMs: null,
          result: null,
          error: null,
          resolution: null,
          retryOf: str(asObject(r.meta)?.retry_of),
        });
        state.inFlight++;
        {
          const key = str(call?.idempotency_key);
          const callId = str(call?.call_id);
          const tool = str(call?.name);
          if (key !== null) state.byKey.set(key, r.step_id);
          if (callId !== null) state.byCallId.set(callId, r.step_id);
          if (tool !== null) state.byIntent.set(intentKey(tool, (call?.arguments ?? null) as Json), r.step_id);
        }
        break;
      case 'tool.updated':
      case 'tool.completed':
      case 'tool.failed': {
        const e = state.effects.get(r.ref ?? '');
        if (e === undefined) {
          anomaly(
            state.models.has(r.ref ?? '') ? 'KIND_MISMATCH' : 'OUTCOME_WITHOUT_START',
            `${r.kind} at seq ${seq} names ${JSON.stringify(r.ref)}, which is no tool effect started before it`,
          );
          break;
        }
        if (e.status !== 'started') {
          anomaly(
            'OUTCOME_REPEATED',
            `${r.kind} at seq ${seq} for effect ${e.id}, which already ended at seq ${e.endSeq}`,
          );
          break;
        }
        if (r.kind === 'tool.updated') {
          const key = str(call?.idempotency_key);
          if (key !== null) state.byKey.set(key, e.id);
          e.idempotencyKey = key ?? e.idempotencyKey;
          e.summary = str(call?.summary) ?? e.summary;
          break;
        }
        e.status = r.kind === 'tool.completed' ? 'completed' : 'failed';
        state.inFlight--;
        e.endedAt = r.ts;
        e.endSeq = seq;
        e.durationMs = span(e.startedAt, r.ts);
        e.result = r.result;
        e.error = r.error;
        e.resolution = resolutionOf(r.meta);
        if (e.callId !== null) state.requested.delete(e.callId);
        break;
      }
      case 'model.started':
        if (repeatsStart(state, r.step_id, r.kind, seq)) break;
        state.models.set(r.step_id, {
          id: r.step_id,
          seq,
          model: r.model,
          status: 'started',
          startedAt: r.ts,
          endedAt: null,
          endSeq: null,
          durationMs: null,
          error: null,
        });
        state.inFlight++;
        break;
      case 'model.completed':
      case 'model.failed': {
        const m = state.models.get(r.ref ?? '');
        if (m === undefined) {
          anomaly(
            state.effects.has(r.ref ?? '') ? 'KIND_MISMATCH' : 'OUTCOME_WITHOUT_START',
            `${r.kind} at seq ${seq} names ${JSON.stringify(r.ref)}, which is no model request started before it`,
          );
          break;
        }
        if (m.status !== 'started') {
          anomaly(
            'OUTCOME_REPEATED',
            `${r.kind} at seq ${seq} for model request ${m.id}, which already ended at seq ${m.endSeq}`,
          );
          break;
        }
        m.status = r.kind === 'model.completed' ? 'completed' : 'failed';
        state.inFlight--;
        m.endedAt = r.ts;
        m.endSeq = seq;
        m.durationMs = span(m.startedAt, r.ts);
        m.error = r.error;
        if (r.kind === 'model.completed') for (const id of requestedIds(r.tool_call)) state.requested.add(id);
        break;
      }
      case 'run.completed':
        if (state.status === 'running') state.endedAt = r.ts;
        state.status = 'completed';
        break;
      case 'run.failed':
        if (state.status === 'running') state.endedAt = r.ts;
        state.status = 'failed';
        break;
      default:
        break;
    }
  }
  settle(state, seq);
}

/**
 * A started record whose step_id already names an effect or a model request of the run: anomaly
 * STEP_ID_REPEATED (RUNS.md §2), and the first one stands — an outcome's `ref` names one thing, so a second
 * start under the id must not replace what the first began (and hide it if it was pending).
 */
function repeatsStart(state: RunState, id: string, kind: string, seq: number): boolean {
  const first = state.effects.get(id) ?? state.models.get(id);
  if (first === undefined) return false;
  const what = state.effects.has(id) ? 'tool effect' : 'model request';
  state.anomalies.push({
    seq,
    code: 'STEP_ID_REPEATED',
    message: `${kind} at seq ${seq} repeats step_id ${JSON.stringify(id)} of the ${what} started at seq ${first.seq}: the first stands, this one is not read`,
  });
  return true;
}

/** After a record at `seq`: the continuation point moves there when nothing is in flight. */
function settle(state: RunState, seq: number): void {
  if (state.requested.size === 0 && state.inFlight === 0) state.continuation = seq;
}

/**
 * Folds one stored line that the chain verifier checked clean (canonical, true to its profile) with its
 * seq. A plain step — most records of a run — changes nothing but the last seq and the continuation, so
 * its kind is read from the text and the line is parsed only for any other kind (a verifier folds every
 * line of a receipt: the parse cost more than the rest of the record's check, measured).
 */
export function foldLine(state: RunState, text: string, seq: number): void {
  if (kindIsStep(text)) {
    state.lastSeq = seq;
    settle(state, seq);
  } else foldRecord(state, JSON.parse(text) as StepRecord);
}

/**
 * foldLine for a line the chain verifier hands an observer (chain/verifier.ts VerifiedLine): where it already
 * read whether the kind is "step", the text is read only when it is not (a step's text is never decoded).
 */
export function foldReadLine(
  state: RunState,
  line: { readonly text: string; readonly kindIsStep?: boolean | undefined },
  seq: number,
): void {
  if (line.kindIsStep === undefined) foldLine(state, line.text, seq);
  else if (line.kindIsStep) {
    state.lastSeq = seq;
    settle(state, seq);
  } else foldRecord(state, JSON.parse(line.text) as StepRecord);
}

/**
 * The record as a run record (v2, or v3 with the same members) when it starts a model request or a tool
 * effect, else null: what a writer keeps of a call in flight, so its outcome repeats it (FORMAT §11.3).
 */
export function startOf(record: StepRecord | StepRecordV3): RunRecord | null {
  return isRunRecord(record) && (record.kind === 'model.started' || record.kind === 'tool.started') ? record : null;
}

/** The state of a whole run from its records. */
export function runState(records: Iterable<StepRecord>): RunState {
  const state = emptyState();
  for (const r of records) foldRecord(state, r);
  return state;
}

/** Effects with no outcome: the "effect unknown after crash" list, in seq order. */
export function pendingOf(state: RunState): Effect[] {
  return [...state.effects.values()].filter((e) => e.status === 'started').sort((a, b) => a.seq - b.seq);
}
