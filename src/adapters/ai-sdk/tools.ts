/**
 * Recording AI SDK tool executions as tool effects (docs/ai-sdk.md): the intent —
 * tool name, input, the SDK's toolCallId — is durable before `execute` runs; the outcome or the error is
 * written after it. A tool that streams (execute returns an AsyncIterable) is recorded with its last
 * value, the one the SDK hands to the model. The tool's own value is returned unchanged. Inside `execute`,
 * `currentEffect()` gives the run and the effect. A call that would repeat an effect of unknown outcome is
 * refused (EFFECT_PENDING), or handled as the tool's declared effect class says (RecordToolsOptions).
 */
import type { ToolExecutionOptions, ToolSet } from 'ai';
import {
  beginEffect,
  Run,
  RuntimeError,
  toJournalValue,
  withEffect,
  type EffectClass,
  type EffectHandle,
} from '../../runtime.js';
import { noteRecordedTools, noteRefusal, type AdapterRun } from './run.js';

type Execute = (input: unknown, options: ToolExecutionOptions) => unknown;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

async function* recordIterable(
  source: AsyncIterable<unknown>,
  done: (last: unknown) => Promise<unknown>,
  failed: (error: unknown) => Promise<unknown>,
): AsyncGenerator {
  let last: unknown;
  try {
    for await (const value of source) {
      last = value;
      yield value;
    }
  } catch (error) {
    await failed(error);
    throw error;
  }
  await done(last);
}

function recordExecute(run: AdapterRun, name: string, execute: Execute, effectClass: EffectClass | undefined): Execute {
  return async (input, options) => {
    let effect: EffectHandle;
    try {
      const args = toJournalValue(input, { field: 'tool_call/arguments' });
      effect = await beginEffect(run, { name, args, callId: options.toolCallId }, effectClass);
    } catch (error) {
      if (error instanceof RuntimeError && error.code === 'EFFECT_PENDING') noteRefusal(run, error);
      throw error;
    }
    // An idempotent call whose key completed: the recorded result, and the tool does not run again.
    if (effect.status === 'completed') return effect.result;
    let output: unknown;
    try {
      output = await (isRun(run) ? withEffect(run, effect, () => execute(input, options)) : execute(input, options));
    } catch (error) {
      await effect.fail(error);
      throw error;
    }
    // What the journal cannot represent is recorded as markers (RUNS.md §6); the SDK gets the real value.
    if (isAsyncIterable(output))
      return recordIterable(
        output,
        (last) => effect.complete(last),
        (error) => effect.fail(error),
      );
    await effect.complete(output);
    return output;
  };
}

function isRun(run: AdapterRun): run is Run {
  return run instanceof Run;
}

export interface RecordToolsOptions {
  /**
   * What kind of effect each tool has (by name), deciding what happens to its effect when a crash left its
   * outcome unknown (RUNS.md §5): read-only and idempotent ones are retried, compensatable ones
   * compensated first; undeclared tools are irreversible: the call is refused until the effect is resolved.
   */
  effects?: Record<string, EffectClass>;
}

/**
 * The same tool set, each tool that has an `execute` recording its executions into `run`. Tools without
 * `execute` (answered by the client) and provider-executed tools pass through: the model step records
 * their calls and results.
 */
export function recordTools<T extends ToolSet>(run: AdapterRun, tools: T, options: RecordToolsOptions = {}): T {
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as Execute | undefined;
    out[name] =
      execute === undefined ? tool : { ...tool, execute: recordExecute(run, name, execute, options.effects?.[name]) };
  }
  noteRecordedTools(
    run,
    Object.keys(tools).filter((name) => tools[name]?.execute !== undefined),
  );
  return out as T;
}
