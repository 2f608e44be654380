/**
 * Recording AI SDK tool executions as tool effects (docs/ai-sdk.md): the intent —
 * tool name, input, the SDK's toolCallId — is durable before `execute` runs; the outcome or the error is
 * written after it. A tool that streams (execute returns an AsyncIterable) is recorded with its last
 * value, the one the SDK hands to the model. The tool's own value is returned unchanged.
 */
import type { ToolExecutionOptions, ToolSet } from 'ai';
import type { EffectHandle } from '../../index.js';
import { noteRecordedTools, type AdapterRun } from './run.js';

type Execute = (input: unknown, options: ToolExecutionOptions) => unknown;

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return value !== null && typeof value === 'object' && Symbol.asyncIterator in value;
}

async function* recordIterable(source: AsyncIterable<unknown>, done: (last: unknown) => Promise<unknown>, failed: (error: unknown) => Promise<unknown>): AsyncGenerator<unknown> {
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

/**
 * Writes the outcome; an outcome the journal refuses (a value JSON cannot represent: VALUE_UNREPRESENTABLE,
 * naming the field) is recorded as the effect's error and thrown, so it is neither lost nor left pending.
 */
async function completeOrFail(effect: EffectHandle, output: unknown): Promise<void> {
  try {
    await effect.complete(output);
  } catch (refused) {
    // If this write fails too, the first error is the one worth reporting.
    await effect.fail(refused).catch(() => undefined);
    throw refused;
  }
}

function recordExecute(run: AdapterRun, name: string, execute: Execute): Execute {
  return async (input, options) => {
    const effect = await run.beginTool({ name, args: input, callId: options.toolCallId });
    let output: unknown;
    try {
      output = await execute(input, options);
    } catch (error) {
      await effect.fail(error);
      throw error;
    }
    if (isAsyncIterable(output)) return recordIterable(output, (last) => completeOrFail(effect, last), (error) => effect.fail(error));
    await completeOrFail(effect, output);
    return output;
  };
}

/**
 * The same tool set, each tool that has an `execute` recording its executions into `run`. Tools without
 * `execute` (answered by the client) and provider-executed tools pass through: the model step records
 * their calls and results.
 */
export function recordTools<T extends ToolSet>(run: AdapterRun, tools: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const execute = tool.execute as Execute | undefined;
    out[name] = execute === undefined ? tool : { ...tool, execute: recordExecute(run, name, execute) };
  }
  noteRecordedTools(run, Object.keys(tools).filter((name) => tools[name]?.execute !== undefined));
  return out as T;
}
