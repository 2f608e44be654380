/**
 * What the LangChain callback handler records of LangChain's own objects (spec/LANGCHAIN.md §3): a message
 * is its role, content and tool-call fields — never its volatile ids or class plumbing — so two identical
 * runs record identical values. Everything else passes through unchanged; turning values into I-JSON
 * (Dates, binary, Errors…) is the runtime's one rule, `toJournalValue`, applied by the run when it records.
 */
import { isBaseMessage, type BaseMessage } from '@langchain/core/messages';
import type { ModelToolCall } from '../../index.js';
import { toJournalValue } from '../../runtime.js';

/** A message's tool calls as the model step lists them, arguments converted as Run.endModel converts them. */
export function toolCallsOf(calls: NonNullable<MessageValue['tool_calls']>): ModelToolCall[] {
  return calls.map((c, i) => ({
    ...(c.id === undefined ? {} : { id: c.id }),
    name: c.name,
    arguments: toJournalValue(c.args, { field: `tool_call/${String(i)}/arguments` }),
  }));
}

/** The recorded form of a message. */
export interface MessageValue {
  role: string;
  content: unknown;
  name?: string;
  tool_calls?: { id: string | undefined; name: string; args: unknown }[];
  tool_call_id?: string;
  status?: string;
}

export function messageValue(m: BaseMessage): MessageValue {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- getType() is what every @langchain/core 1.x the adapter supports answers the same way
  const out: MessageValue = { role: m.getType(), content: m.content };
  if (typeof m.name === 'string') out.name = m.name;
  const calls = (m as { tool_calls?: { id?: string; name: string; args: unknown }[] }).tool_calls;
  if (Array.isArray(calls) && calls.length > 0)
    out.tool_calls = calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
  const tool = m as { tool_call_id?: unknown; status?: unknown };
  if (typeof tool.tool_call_id === 'string') out.tool_call_id = tool.tool_call_id;
  if (typeof tool.status === 'string') out.status = tool.status;
  return out;
}

/** LangGraph's `Command` (resume, update, goto), recognized by shape: this entry does not import LangGraph. */
function commandValue(v: object): Record<string, unknown> | null {
  const c = v as { lg_name?: unknown; resume?: unknown; update?: unknown; goto?: unknown; graph?: unknown };
  if (c.lg_name !== 'Command') return null;
  return {
    command: { resume: plainValue(c.resume), update: plainValue(c.update), goto: plainValue(c.goto), graph: c.graph },
  };
}

/**
 * Messages (and LangGraph commands) anywhere inside plain arrays and objects become their recorded form;
 * other values are left as they are.
 */
export function plainValue(v: unknown, depth = 0): unknown {
  // eslint-disable-next-line @typescript-eslint/no-deprecated -- isBaseMessage also takes messages built by another copy of @langchain/core
  if (isBaseMessage(v)) return messageValue(v);
  if (depth > 64 || v === null || typeof v !== 'object') return v;
  const command = commandValue(v);
  if (command !== null) return command;
  if (Array.isArray(v)) return v.map((x) => plainValue(x, depth + 1));
  if (Object.getPrototypeOf(v) !== Object.prototype && Object.getPrototypeOf(v) !== null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = plainValue(x, depth + 1);
  return out;
}

/** A tool's input as the model gave it: the parsed JSON when it is JSON text, else the text. */
export function toolArgs(input: string): unknown {
  try {
    return JSON.parse(input) as unknown;
  } catch {
    return input;
  }
}
