/**
 * Reading the GenAI semantic conventions (v1.37, with the older names spec/OTEL.md §3 lists) off one span:
 * what the span is (an agent invocation, a model call, a tool execution, or something else), and the values
 * the mapping records. Every attribute read is noted, so the ones the mapping does not use are kept whole
 * in the record's meta (§2).
 */
import { inexactNumber } from '../format.js';
import type { OtelSpan } from './otlp.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type Operation = 'agent' | 'model' | 'tool' | 'other';

const MODEL_OPERATIONS = new Set(['chat', 'text_completion', 'generate_content', 'embeddings']);
const AGENT_OPERATIONS = new Set(['invoke_agent']);
/** The Vercel AI SDK's top-level calls (its `ai.operationId`): one agent invocation each. */
const AI_SDK_CALLS = new Set(['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject']);

/** A span's attributes with the names read so far remembered. */
export class SpanReader {
  readonly used = new Set<string>();
  constructor(readonly span: OtelSpan) {}

  /** The first of `names` the span has (a newer name before the older ones), noted as used — each one present is. */
  get(...names: string[]): Json | undefined {
    let found: Json | undefined;
    for (const n of names) {
      const v = this.span.attributes[n];
      if (v === undefined) continue;
      this.used.add(n);
      if (found === undefined) found = v;
    }
    return found;
  }

  string(...names: string[]): string | undefined {
    const v = this.get(...names);
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined;
  }

  /** A value the conventions send as a JSON string (messages, arguments, results): parsed when it parses. */
  structured(...names: string[]): Json | undefined {
    const v = this.get(...names);
    return typeof v === 'string' ? parseJson(v) : v;
  }

  /** OpenLLMetry's older indexed form (`gen_ai.prompt.0.role`, `gen_ai.prompt.0.content`, …) as a list of messages. */
  indexed(prefix: string): Json[] | undefined {
    const out: Record<string, Json>[] = [];
    for (const [key, value] of Object.entries(this.span.attributes)) {
      const m = /^(\d{1,6})\.(.+)$/.exec(key.startsWith(`${prefix}.`) ? key.slice(prefix.length + 1) : '');
      if (m === null) continue;
      this.used.add(key);
      const at = Number(m[1]);
      (out[at] ??= {})[m[2]!] =
        typeof value === 'string' && (m[2] === 'arguments' || m[2]!.endsWith('.arguments')) ? parseJson(value) : value;
    }
    const messages = out.filter((m) => m !== undefined);
    return messages.length === 0 ? undefined : messages;
  }

  /** The attributes not read, as they came. */
  unused(): Record<string, Json> {
    const out: Record<string, Json> = {};
    for (const [k, v] of Object.entries(this.span.attributes)) if (!this.used.has(k)) out[k] = v;
    return out;
  }
}

/**
 * A value sent as JSON text, parsed; the text itself where it does not parse, or where it holds a number the journal
 * would store as another (stored-numbers.ts: tool arguments naming account 9007199254740993 stay that text, never
 * the …992 JSON.parse reads; a tool in another language reads …993).
 */
export function parseJson(text: string): Json {
  try {
    const value = JSON.parse(text) as Json;
    return inexactNumber(text) === -1 ? value : text;
  } catch {
    return text;
  }
}

/** What a span is (§1, the table's first column). */
export function operationOf(span: OtelSpan): Operation {
  const a = span.attributes;
  const op = a['gen_ai.operation.name'];
  if (typeof op === 'string') {
    if (AGENT_OPERATIONS.has(op)) return 'agent';
    if (MODEL_OPERATIONS.has(op)) return 'model';
    if (op === 'execute_tool') return 'tool';
  }
  const aiOp = a['ai.operationId'];
  if (typeof aiOp === 'string') {
    if (AI_SDK_CALLS.has(aiOp)) return 'agent';
    if (aiOp.endsWith('.doGenerate') || aiOp.endsWith('.doStream')) return 'model';
    if (aiOp === 'ai.toolCall') return 'tool';
  }
  const kind = a['traceloop.span.kind'];
  if (kind === 'agent') return 'agent';
  if (kind === 'tool') return 'tool';
  if (typeof a['llm.request.type'] === 'string') return 'model';
  return 'other';
}

/** The tool calls a model's output asks for: `tool_call` parts of the output messages, or the AI SDK's list. */
export function toolCallsOf(output: Json | undefined, aiSdkCalls: Json | undefined): Json[] | null {
  const calls: Json[] = [];
  if (Array.isArray(output)) {
    for (const message of output) {
      const parts =
        message !== null && typeof message === 'object' && !Array.isArray(message) ? message.parts : undefined;
      if (!Array.isArray(parts)) continue;
      for (const p of parts) {
        if (p !== null && typeof p === 'object' && !Array.isArray(p) && p.type === 'tool_call')
          calls.push({ id: p.id ?? null, name: p.name ?? null, arguments: p.arguments ?? null });
      }
    }
  }
  if (Array.isArray(aiSdkCalls)) {
    for (const c of aiSdkCalls) {
      if (c === null || typeof c !== 'object' || Array.isArray(c)) continue;
      const args = c.input ?? c.args ?? null;
      calls.push({
        id: c.toolCallId ?? null,
        name: c.toolName ?? null,
        arguments: typeof args === 'string' ? parseJson(args) : args,
      });
    }
  }
  return calls.length === 0 ? null : calls;
}
