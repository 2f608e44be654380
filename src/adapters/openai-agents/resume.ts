/**
 * Resuming an Agents SDK agent after a crash: the input items to continue from, at the run's continuation
 * point (spec/RUNS.md §3) — the last recorded request's input, the model's output items, and a
 * function_call_result item with each tool call's recorded outcome (a resolved effect's too, RUNS.md §5).
 * Pass it as the input of `run(agent, items)` on the resumed run.
 */
import type { AgentInputItem } from '@openai/agents';
import { resumeHistory, type Run } from '../../runtime.js';

/** The items to continue `run` from: [] when no model call completed before the continuation point. */
export async function resumeInput(run: Pick<Run, 'continuationPoint'>): Promise<AgentInputItem[]> {
  const { answer, outcomes } = await resumeHistory(run);
  if (answer === null) return [];
  const input = (answer.prompt as { input?: unknown } | null)?.input;
  const items: AgentInputItem[] =
    typeof input === 'string'
      ? [{ role: 'user', content: input }]
      : Array.isArray(input)
        ? [...(input as unknown as AgentInputItem[])]
        : [];
  const output = (answer.result as { output?: unknown } | null)?.output;
  if (Array.isArray(output)) items.push(...(output as unknown as AgentInputItem[]));
  for (const r of outcomes) {
    const call = r.tool_call as { call_id?: unknown; name?: unknown } | null;
    if (typeof call?.call_id !== 'string' || typeof call.name !== 'string') continue;
    const message = (r.error as { message?: unknown } | null)?.message;
    const text =
      r.kind === 'tool.completed'
        ? typeof r.result === 'string'
          ? r.result
          : JSON.stringify(r.result)
        : `error: ${typeof message === 'string' ? message : 'the tool failed'}`;
    items.push({
      type: 'function_call_result',
      name: call.name,
      callId: call.call_id,
      status: 'completed',
      output: { type: 'text', text },
    });
  }
  return items;
}
