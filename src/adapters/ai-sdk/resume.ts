/**
 * Resuming an AI SDK agent after a crash: the `ModelMessage[]` to continue from, at the run's continuation
 * point (spec/RUNS.md §3) — the last recorded request's prompt, the model's answer to it, and a tool
 * message with each tool call's recorded outcome (a resolved effect's too, RUNS.md §5). Pass it as
 * `messages` to generateText/streamText on the resumed run.
 */
import type { ModelMessage } from 'ai';
import { resumeHistory, type Run } from '../../runtime.js';

interface Part {
  type?: unknown;
  text?: unknown;
  toolCallId?: unknown;
  toolName?: unknown;
  input?: unknown;
}

/** The history to continue `run` from: [] when no model call completed before the continuation point. */
export async function resumeMessages(run: Pick<Run, 'continuationPoint'>): Promise<ModelMessage[]> {
  const { answer, outcomes } = await resumeHistory(run);
  if (answer === null) return [];
  // The prompt as the SDK handed it to the provider: the same roles and parts a ModelMessage list has.
  const messages = [...((Array.isArray(answer.prompt) ? answer.prompt : []) as unknown as ModelMessage[])];
  const content = ((answer.result as { content?: unknown } | null)?.content ?? []) as Part[];
  const parts: Exclude<Extract<ModelMessage, { role: 'assistant' }>['content'], string> = [];
  for (const p of content) {
    if (p.type === 'text' && typeof p.text === 'string') parts.push({ type: 'text', text: p.text });
    else if (p.type === 'tool-call' && typeof p.toolCallId === 'string' && typeof p.toolName === 'string')
      parts.push({ type: 'tool-call', toolCallId: p.toolCallId, toolName: p.toolName, input: p.input });
  }
  if (parts.length > 0) messages.push({ role: 'assistant', content: parts });
  const results: Extract<ModelMessage, { role: 'tool' }>['content'] = [];
  for (const r of outcomes) {
    const call = r.tool_call as { call_id?: unknown; name?: unknown } | null;
    if (typeof call?.call_id !== 'string' || typeof call.name !== 'string') continue;
    const message = (r.error as { message?: unknown } | null)?.message;
    results.push({
      type: 'tool-result',
      toolCallId: call.call_id,
      toolName: call.name,
      output:
        r.kind === 'tool.completed'
          ? { type: 'json', value: r.result }
          : { type: 'error-text', value: typeof message === 'string' ? message : 'the tool failed' },
    });
  }
  if (results.length > 0) messages.push({ role: 'tool', content: results });
  return messages;
}
