/**
 * Resuming a LangChain agent after a crash: the messages to continue from, at the run's continuation point
 * (spec/RUNS.md §3) — the last recorded request's messages, the model's answer, and a ToolMessage with
 * each tool call's recorded outcome (a resolved effect's too, RUNS.md §5). Pass them as the agent's
 * `messages` on the next invocation.
 */
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { resumeHistory, type Run } from '../../runtime.js';
import type { MessageValue } from './values.js';

function messageOf(m: MessageValue): BaseMessage | null {
  const content = m.content as string;
  const name = m.name === undefined ? {} : { name: m.name };
  switch (m.role) {
    case 'human':
      return new HumanMessage({ content, ...name });
    case 'system':
      return new SystemMessage({ content, ...name });
    case 'ai':
      return new AIMessage({
        content,
        ...name,
        tool_calls: (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.name,
          args: (c.args ?? {}) as Record<string, unknown>,
          type: 'tool_call' as const,
        })),
      });
    case 'tool':
      return new ToolMessage({
        content,
        tool_call_id: m.tool_call_id ?? '',
        ...name,
        ...(m.status === 'error' ? { status: 'error' as const } : {}),
      });
    default:
      return null;
  }
}

const isMessage = (v: unknown): v is MessageValue =>
  v !== null && typeof v === 'object' && typeof (v as { role?: unknown }).role === 'string';

/** The messages to continue `run` from: [] when no model call completed before the continuation point. */
export async function resumeBaseMessages(run: Pick<Run, 'continuationPoint'>): Promise<BaseMessage[]> {
  const { answer, outcomes } = await resumeHistory(run);
  if (answer === null) return [];
  // One chat prompt is recorded as its message list; LangChain's batch form as a list of lists (the first is continued).
  const prompt = Array.isArray(answer.prompt) && Array.isArray(answer.prompt[0]) ? answer.prompt[0] : answer.prompt;
  const values: MessageValue[] = Array.isArray(prompt) ? (prompt as unknown[]).filter(isMessage) : [];
  if (isMessage(answer.result)) values.push(answer.result);
  for (const r of outcomes) {
    const call = r.tool_call as { call_id?: unknown; name?: unknown } | null;
    if (typeof call?.call_id !== 'string') continue;
    const out = r.result as { content?: unknown } | null;
    const message = (r.error as { message?: unknown } | null)?.message;
    const content =
      r.kind === 'tool.completed'
        ? isMessage(out)
          ? out.content
          : typeof out === 'string'
            ? out
            : JSON.stringify(out)
        : `Error: ${typeof message === 'string' ? message : 'the tool failed'}`;
    values.push({
      role: 'tool',
      content,
      tool_call_id: call.call_id,
      ...(typeof call.name === 'string' ? { name: call.name } : {}),
      ...(r.kind === 'tool.failed' ? { status: 'error' } : {}),
    });
  }
  return values.map(messageOf).filter((m): m is BaseMessage => m !== null);
}
