/**
 * Running a tool as a recorded effect, with the recovery policy its class declares (spec/RUNS.md §5)
 * and its run and effect visible to the tool's body. The adapters run every recorded tool through here, so
 * the AI SDK, the Agents SDK and LangChain decide alike what happens to an effect of unknown outcome:
 * read-only and idempotent ones are retried (the retry recorded, decided by the policy), a compensatable
 * one is compensated first, an irreversible one — the default — is refused until a person decides.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Json } from '../canonical/json.js';
import { RuntimeError } from './errors.js';
import type { BeginToolOptions, EffectHandle, Run } from './run.js';
import { setEnclosingRun } from './start.js';

/** What kind of side effect a tool has: decides what is done with its effect when its outcome is unknown. */
export type EffectClass =
  /** No side effect: a pending one is resolved `retry` (by policy:read-only) and the tool runs again. */
  | { kind: 'read-only' }
  /**
   * Its provider deduplicates by a key: the key is recorded with the intent (tool_call.idempotency_key); a
   * pending one is resolved `retry` (by policy:idempotent) and resent with the same key; one that completed
   * under the key is not run again: its recorded result is returned.
   */
  | { kind: 'idempotent'; key: (args: unknown) => string }
  /**
   * Can be undone: a pending one is compensated — `compensate(its recorded arguments)` runs as an effect of
   * its own — then resolved `compensated` naming that effect, and the tool runs again.
   */
  | { kind: 'compensatable'; compensate: (args: Json) => unknown }
  /** The default: a pending one stays pending and the call is refused (EFFECT_PENDING) until it is resolved. */
  | { kind: 'irreversible' };

/** What a tool's body can see of the run recording it. */
export interface EffectScope {
  run: Run;
  effect: EffectHandle;
}

const scope = new AsyncLocalStorage<EffectScope>();
setEnclosingRun(() => scope.getStore()?.run.runId);

/** The run and effect of the recorded tool whose body is executing (through runEffect), else undefined. */
export function currentEffect(): EffectScope | undefined {
  return scope.getStore();
}

/** The part of a Run that runs a tool: beginning it, and (for the policies) resolving a pending one. */
export type EffectRun = Pick<Run, 'beginTool'> & Partial<Pick<Run, 'resolveEffect' | 'effects'>>;

const POLICY_REASON: Record<'read-only' | 'idempotent', string> = {
  'read-only': 'declared read-only: running it again changes nothing',
  idempotent: 'declared idempotent: resent with the same idempotency key, which its provider deduplicates by',
};

/**
 * Begins the effect of a tool call, applying its class's policy when a pending effect stands in the way
 * (RUNS.md §5): the handle, `status: 'completed'` when an idempotent call's key already completed (then the tool
 * must not run). Refusals the policy does not cover are thrown (EFFECT_PENDING).
 */
export async function beginEffect(
  run: EffectRun,
  call: BeginToolOptions,
  effectClass?: EffectClass,
): Promise<EffectHandle> {
  const options: BeginToolOptions = { ...call };
  if (effectClass?.kind === 'idempotent' && options.idempotencyKey === undefined)
    options.idempotencyKey = effectClass.key(call.args);
  // Each pending effect in the way is resolved once; a bound keeps a policy from looping on a journal that keeps refusing.
  for (let tries = 0; ; tries++) {
    try {
      return await run.beginTool(options);
    } catch (e) {
      const pending = e instanceof RuntimeError && e.code === 'EFFECT_PENDING' ? e.pendingEffect : undefined;
      if (
        pending === undefined ||
        tries >= 8 ||
        effectClass === undefined ||
        effectClass.kind === 'irreversible' ||
        run.resolveEffect === undefined
      )
        throw e;
      if (effectClass.kind === 'compensatable') {
        const args = (await run.effects?.())?.find((x) => x.id === pending)?.args ?? null;
        const undo = await run.beginTool({
          name: `${call.name}.compensate`,
          args: { effect: pending, arguments: args },
        });
        try {
          await undo.complete(await effectClass.compensate(args));
        } catch (failure) {
          await undo.fail(failure).catch(() => undefined);
          throw failure;
        }
        await run.resolveEffect(
          pending,
          { compensated: true, compensation: undo.id },
          { by: 'policy:compensatable', reason: `compensated by effect ${undo.id} before running ${call.name} again` },
        );
      } else {
        await run.resolveEffect(
          pending,
          { retry: true },
          { by: `policy:${effectClass.kind}`, reason: POLICY_REASON[effectClass.kind] },
        );
      }
    }
  }
}

/**
 * Runs `execute` as a recorded effect: intent durable first (beginEffect), the body run with its run and
 * effect visible (currentEffect), then its outcome. The body's own value is returned unchanged, whatever
 * the journal could record of it (RUNS.md §6); a completed idempotent call returns its recorded result without
 * running the body.
 */
export async function runEffect<T>(
  run: EffectRun,
  call: BeginToolOptions,
  execute: () => T | Promise<T>,
  effectClass?: EffectClass,
): Promise<T | Json | undefined> {
  const effect = await beginEffect(run, call, effectClass);
  if (effect.status === 'completed') return effect.result;
  let output: T;
  try {
    output = await (isRun(run) ? scope.run({ run, effect }, execute) : execute());
  } catch (error) {
    await effect.fail(error);
    throw error;
  }
  await effect.complete(output);
  return output;
}

/** Runs `fn` with `run` and `effect` as the current effect (for adapters that call the tool body themselves). */
export function withEffect<T>(run: Run, effect: EffectHandle, fn: () => T): T {
  return scope.run({ run, effect }, fn);
}

function isRun(run: EffectRun): run is Run {
  return typeof (run as Run).runId === 'string' && typeof (run as Run).journal === 'object';
}
