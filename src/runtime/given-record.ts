/**
 * The rules a run's writer keeps between records (spec/RUNS.md §1, §5), for a record a caller hands over
 * whole: Run.record, and through it the CLI's `append` on a run journal. beginTool, endTool, endModel and
 * complete build their records under the same rules; a record given whole used to be checked only for
 * RUN_ENDED, so a shell agent appending its own tool.started and tool.completed got none of them (an
 * outsider's finding: a second outcome, a repeat of a pending effect, run.completed with effects pending and
 * records after the run's end were all appended).
 */
import type { Json } from '../canonical/json.js';
import { canonicalJson } from '../canonical/jcs.js';
import {
  intentKey,
  pendingOf,
  resolutionOf,
  toolCallOf,
  type Effect,
  type ModelCall,
  type RunState,
} from '../record/run-state.js';
import type { StepRecord } from '../record/seal.js';
import { StoreError } from '../store/errors.js';
import type { AppendResult, Journal } from '../store/types.js';
import { RuntimeError } from './errors.js';

/** What a record given whole carries that the rules read. */
export interface GivenRecord {
  kind: string;
  step_id?: string | undefined;
  ref?: string | null | undefined;
  input?: unknown;
  model?: unknown;
  prompt?: unknown;
  tool_call?: unknown;
  meta?: unknown;
}

/** The refusal to begin what would repeat `pending` (RUNS.md §5). */
export function pendingError(runId: string, pending: Effect, asked: string): RuntimeError {
  const key = pending.idempotencyKey === null ? '' : `, idempotency key ${JSON.stringify(pending.idempotencyKey)}`;
  const call = pending.callId === null ? '' : `, call id ${JSON.stringify(pending.callId)}`;
  const error = new RuntimeError(
    'EFFECT_PENDING',
    `run ${runId}: ${JSON.stringify(asked)} would repeat effect ${pending.id} (${JSON.stringify(pending.tool ?? '?')} at seq ${pending.seq}${call}${key}), whose outcome is unknown`,
    {
      location: { seq: pending.seq },
      hint: `check with the tool's provider whether it happened, then resolve it: run.resolveEffect(${JSON.stringify(pending.id)}, { retry } | { done, result } | { abandon }, { reason }) or stepchain effect resolve <journal> ${pending.id} (--retry | --done --result JSON | --abandon) --reason TEXT`,
    },
  );
  error.pendingEffect = pending.id;
  return error;
}

/** The refusal to begin a new effect under the id of one that already has an outcome (RUNS.md §5). */
export function idTaken(runId: string, e: Effect): StoreError {
  const how = e.resolution === null ? e.status : `${e.status} (resolved: ${e.resolution.decision})`;
  return new StoreError(
    'STEP_ID_CONFLICT',
    `run ${runId}: id ${JSON.stringify(e.id)} is effect ${JSON.stringify(e.tool ?? '?')} at seq ${e.seq}, which ${how} at seq ${e.endSeq}: a new effect needs a new id`,
    {
      location: { seq: e.seq },
      hint:
        e.resolution?.decision === 'retry' || e.status === 'failed'
          ? `begin the retry without an id or with a new one; it records retry_of ${JSON.stringify(e.id)} when it matches by call id, key, or tool and arguments`
          : 'begin it with a new id, or without one',
    },
  );
}

/** The refusal to complete a run while effects are pending (RUNS.md §5), naming them. */
export function pendingAtCompletion(runId: string, pending: readonly Effect[]): RuntimeError {
  const list = pending.map((e) => `${e.id} (${JSON.stringify(e.tool ?? '?')}, seq ${e.seq})`).join(', ');
  const refused = new RuntimeError(
    'EFFECT_PENDING',
    `run ${runId} has ${pending.length} effect${pending.length === 1 ? '' : 's'} of unknown outcome: ${list}`,
    {
      location: { seq: pending[0]!.seq },
      hint: 'resolve each (run.resolveEffect, or stepchain effect resolve), or complete with { leavePending: true } to record them as unresolved',
    },
  );
  refused.pendingEffect = pending[0]!.id;
  return refused;
}

/** The refusal of an outcome for an id with no started record of its kind, or one that has its outcome already. */
export function outcomeRefusal(
  runId: string,
  found: Effect | ModelCall | undefined,
  id: string,
  what: 'tool' | 'model',
): RuntimeError | null {
  const noun = what === 'tool' ? 'tool effect' : 'model request';
  if (found === undefined)
    return new RuntimeError('EFFECT_UNKNOWN', `run ${runId} has no ${noun} ${JSON.stringify(id)}`, {
      hint: `list them with ${what === 'tool' ? 'run.effects()' : "the journal's records"}`,
    });
  if (found.status !== 'started')
    return new RuntimeError(
      'EFFECT_ALREADY_ENDED',
      `${noun} ${JSON.stringify(id)} of run ${runId} already has its outcome (${found.status} at seq ${found.endSeq})`,
      {
        location: { seq: found.endSeq ?? found.seq },
        hint: 'an outcome is recorded once; read it with run.effects()',
      },
    );
  return null;
}

const OUTCOMES: Record<string, 'tool' | 'model'> = {
  'tool.updated': 'tool',
  'tool.completed': 'tool',
  'tool.failed': 'tool',
  'model.completed': 'model',
  'model.failed': 'model',
};

/**
 * Whether a record is a resolution (RUNS.md §5): the one record a run that has ended still takes. Its
 * `meta.resolution` as the table has it — a decision of the four, `by` and `reason` non-empty — on the kind
 * its decision takes (`done`: tool.completed; the others tool.failed).
 */
export function isResolution(r: GivenRecord): boolean {
  const resolution = resolutionOf(r.meta);
  if (resolution === null || resolution.by === '' || resolution.reason === '') return false;
  return r.kind === (resolution.decision === 'done' ? 'tool.completed' : 'tool.failed');
}

/**
 * RUN_ENDED for `r` on a run that has ended (`status`), saying what a resolution needs where `r` carries a
 * `meta.resolution` that is not one (RUNS.md §5: the one record an ended run still takes); null for a resolution.
 */
export function endedRefusal(runId: string, status: RunState['status'], r: GivenRecord): RuntimeError | null {
  if (status === 'running' || isResolution(r)) return null;
  const meta = r.meta !== null && typeof r.meta === 'object' ? (r.meta as Record<string, unknown>) : null;
  if (meta === null || !('resolution' in meta)) return runEnded(runId, status, r.kind);
  return new RuntimeError(
    'RUN_ENDED',
    `run ${runId} has ${status}; it still takes a resolution of a pending effect, and this one is not well formed: meta.resolution needs a decision (retry, done, abandon or compensated), a non-empty by and a non-empty reason, on a tool.completed for done and a tool.failed for the others`,
    {
      hint: 'or record it with stepchain effect resolve <journal> <id> (--retry | --done --result JSON | --abandon | --compensated) --reason TEXT --by WHO',
    },
  );
}

/** RUN_ENDED: the run has its run.completed or run.failed record, and takes nothing more (`what` was asked). */
export function runEnded(runId: string, status: 'completed' | 'failed', what: string): RuntimeError {
  return new RuntimeError(
    'RUN_ENDED',
    `run ${runId} has ${status} (its run.${status} record); nothing more is appended to it (asked: ${what})`,
    { hint: 'start a new run (startRun), with parentRunId naming this one to continue its work' },
  );
}

/** The refusal of run.completed whose `meta.unresolved` is not the list of the pending effects' ids. */
function unresolvedRefusal(runId: string, pending: readonly Effect[], meta: unknown): RuntimeError | null {
  const unresolved =
    meta !== null && typeof meta === 'object' && !Array.isArray(meta)
      ? (meta as Record<string, unknown>).unresolved
      : undefined;
  if (unresolved === undefined) return pending.length > 0 ? pendingAtCompletion(runId, pending) : null;
  const listed = Array.isArray(unresolved) ? unresolved : null;
  const ids = pending.map((e) => e.id);
  if (
    listed !== null &&
    listed.length === ids.length &&
    listed.every((x) => typeof x === 'string') &&
    ids.every((id) => listed.includes(id))
  )
    return null;
  const error = new RuntimeError(
    'EFFECT_PENDING',
    `run ${runId}: meta.unresolved must list the ids of the effects pending now, each once (${ids.length === 0 ? 'none is pending' : ids.map((id) => JSON.stringify(id)).join(', ')})`,
    {
      ...(pending.length > 0 ? { location: { seq: pending[0]!.seq } } : {}),
      hint: 'list exactly the pending effects (stepchain effect list --pending), or resolve them first',
    },
  );
  if (pending.length > 0) error.pendingEffect = pending[0]!.id;
  return error;
}

/**
 * Throws what a writer refuses of `r` given the run's state (read to the chain's end by the caller's
 * retry loop before a refusal stands); RUN_ENDED is the caller's, and so is answering a re-send
 * (committedResend).
 */
export function refuseGiven(runId: string, state: RunState, r: GivenRecord): void {
  const outcome = OUTCOMES[r.kind];
  if (outcome !== undefined) {
    const id = typeof r.ref === 'string' ? r.ref : '';
    const found = outcome === 'tool' ? state.effects.get(id) : state.models.get(id);
    const refused = outcomeRefusal(runId, found, id, outcome);
    if (refused !== null) throw refused;
    return;
  }
  if (r.kind === 'run.completed') {
    const refused = unresolvedRefusal(runId, pendingOf(state), r.meta);
    if (refused !== null) throw refused;
    return;
  }
  if (r.kind !== 'tool.started' && r.kind !== 'model.started') return;
  const id = r.step_id;
  if (id !== undefined && (state.effects.has(id) || state.models.has(id))) {
    const effect = state.effects.get(id);
    if (effect === undefined)
      throw new StoreError('STEP_ID_CONFLICT', `run ${runId}: id ${JSON.stringify(id)} is a model request of the run`, {
        location: { seq: state.models.get(id)!.seq },
        hint: 'start it with a new id, or without one',
      });
    const call = toolCallOf({ tool_call: (r.tool_call ?? null) as Json });
    if (effect.status === 'started') throw pendingError(runId, effect, call?.name ?? r.kind);
    // Completed with the same intent: the effect it names, as effect begin --id answers (RUNS.md §5).
    if (
      effect.status === 'completed' &&
      call !== null &&
      effect.tool !== null &&
      intentKey(call.name, call.arguments) === intentKey(effect.tool, effect.args)
    )
      throw new RuntimeError(
        'EFFECT_EXISTS',
        `run ${runId}: id ${JSON.stringify(id)} is effect ${JSON.stringify(effect.tool)} at seq ${effect.seq}, which completed at seq ${effect.endSeq} with this tool and these arguments: it is not begun again`,
        {
          location: { seq: effect.seq },
          hint: 'read its result (stepchain effect list, run.effects()); a new effect needs a new id',
        },
      );
    throw idTaken(runId, effect);
  }
  if (r.kind === 'model.started') return;
  const call = toolCallOf({ tool_call: (r.tool_call ?? null) as Json });
  if (call === null) return;
  for (const pendingId of [
    call.call_id === undefined ? undefined : state.byCallId.get(call.call_id),
    call.idempotency_key === undefined ? undefined : state.byKey.get(call.idempotency_key),
    state.byIntent.get(intentKey(call.name, call.arguments)),
  ]) {
    const e = pendingId === undefined ? undefined : state.effects.get(pendingId);
    if (e?.status === 'started') throw pendingError(runId, e, call.name);
  }
}

/**
 * How far back a refused record is looked for as a re-send: the store's default idempotency window
 * (FILE-STORE.md §10), within which the store answers an identical step_id with the step it holds.
 */
const RESEND_WINDOW = 10_000;
const CONTENT = ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error', 'meta'] as const;

/** Whether two records hold the same content fields and meta (canonical forms; absent: the writer's default). */
export function sameContent(a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  const text = (r: Record<string, unknown>, k: (typeof CONTENT)[number]): string => {
    const v = r[k] ?? (k === 'kind' ? 'step' : k === 'meta' ? {} : null);
    try {
      return canonicalJson(v, { refuseReserved: false, maxDepth: 128 });
    } catch {
      return '\u0000unreadable';
    }
  };
  return CONTENT.every((k) => text(a, k) === text(b, k));
}

/**
 * The step a refused record re-sends: one of the journal's last RESEND_WINDOW steps up to `lastSeq` with its
 * step_id and the same content, else null. An agent that crashed before it saw its acknowledgement re-sends
 * the very record, which the rules would now refuse (its outcome stands, its start is pending): the store
 * answers such a retry with the step it holds (FILE-STORE.md §10), and so does this (an outsider's finding).
 */
export async function committedResend(
  journal: Journal,
  r: GivenRecord & { ts?: unknown },
  lastSeq: number,
): Promise<AppendResult | null> {
  if (r.step_id === undefined || lastSeq < 0) return null;
  for await (const stored of journal.read({ from: Math.max(0, lastSeq - RESEND_WINDOW + 1), to: lastSeq })) {
    const s = stored as StepRecord & Record<string, unknown>;
    if (s.step_id !== r.step_id) continue;
    const ts = r.ts instanceof Date ? r.ts.toISOString() : r.ts;
    if (!sameContent(s, r as unknown as Record<string, unknown>) || (ts !== undefined && ts !== s.ts)) return null;
    return { seq: s.seq, step_id: s.step_id, step_hash: s.step_hash, prev_hash: s.prev_hash, ts: s.ts };
  }
  return null;
}

/** Whether an error is a refusal by the run's rules (which a re-send may meet), not a failure of the store. */
export function isRuleRefusal(e: unknown): boolean {
  return e instanceof RuntimeError || (e instanceof StoreError && e.code === 'STEP_ID_CONFLICT');
}
