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
import type { Begun } from '../record/saved-run-state.js';
import { StoreError } from '../store/errors.js';
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

/** Whether a record is a resolution (RUNS.md §5): the one record a run that has ended still takes. */
export function isResolution(r: GivenRecord): boolean {
  return (r.kind === 'tool.completed' || r.kind === 'tool.failed') && resolutionOf(r.meta) !== null;
}

/**
 * Throws what a writer refuses of `r` given the run's state (read to the chain's end by the caller's
 * retry loop before a refusal stands); RUN_ENDED is the caller's. `begun`: the started records by id, so
 * that re-sending the very start already recorded (its acknowledgement lost) is answered by the store, not
 * refused.
 */
export function refuseGiven(runId: string, state: RunState, begun: Begun, r: GivenRecord): void {
  const outcome = OUTCOMES[r.kind];
  if (outcome !== undefined) {
    const id = typeof r.ref === 'string' ? r.ref : '';
    const found = outcome === 'tool' ? state.effects.get(id) : state.models.get(id);
    const refused = outcomeRefusal(runId, found, id, outcome);
    if (refused !== null) throw refused;
    return;
  }
  if (r.kind === 'run.completed') {
    const pending = pendingOf(state);
    const unresolved =
      r.meta !== null && typeof r.meta === 'object' && !Array.isArray(r.meta) && 'unresolved' in r.meta;
    if (pending.length > 0 && !unresolved) throw pendingAtCompletion(runId, pending);
    return;
  }
  if (r.kind !== 'tool.started' && r.kind !== 'model.started') return;
  const id = r.step_id;
  if (id !== undefined && (state.effects.has(id) || state.models.has(id))) {
    if (resends(begun.get(id), r)) return;
    const effect = state.effects.get(id);
    if (effect === undefined)
      throw new StoreError('STEP_ID_CONFLICT', `run ${runId}: id ${JSON.stringify(id)} is a model request of the run`, {
        location: { seq: state.models.get(id)!.seq },
        hint: 'start it with a new id, or without one',
      });
    throw effect.status === 'started' ? pendingError(runId, effect, r.kind) : idTaken(runId, effect);
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

/** Whether `r` repeats, member for member, the start recorded under its id. */
function resends(first: ReturnType<Begun['get']>, r: GivenRecord): boolean {
  if (first === undefined) return false;
  const same = (a: unknown, b: Json): boolean => {
    try {
      return (
        canonicalJson(a ?? null, { refuseReserved: false, maxDepth: 128 }) ===
        canonicalJson(b, { refuseReserved: false, maxDepth: 128 })
      );
    } catch {
      return false;
    }
  };
  return (
    same(r.input, first.input) &&
    same(r.model, first.model) &&
    same(r.prompt, first.prompt) &&
    same(r.tool_call, first.tool_call)
  );
}
