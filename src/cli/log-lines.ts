/**
 * What `stepchain log` prints for each record, for people: a finished step (v1, or a v2 `step`) as a header
 * and its prompt, call and result; a run journal's lifecycle record (spec/FORMAT.md §11.3) as one line that
 * says what happened — the model as provider/model id, a tool call with its arguments, an outcome with its
 * result or error; a LangGraph record (spec/LANGGRAPH.md §5) as its thread and checkpoint. Every value from
 * content passes through `inline` (safe-text.ts) before it is styled. Formatting only: the records come
 * verified from the library.
 */
import type { Json, StepRecord } from '../index.js';
import { renderValue, shorten } from '../diff/summary.js';
import { toolNameOf } from '../format.js';
import { isRunRecord } from '../record/run-state.js';
import type { Output } from './output.js';
import { inline } from './safe-text.js';

type JsonObject = Record<string, Json>;
const isObject = (v: unknown): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * What a log line shows as the step's tool: the record profile's tool name (what redaction policies match,
 * REDACTION.md §4), else, for display only, the name in the shapes of common chat APIs (`tool`, `function`).
 */
export function toolLabel(toolCall: Json): string {
  const name = toolNameOf(toolCall);
  if (name !== null) return name;
  if (isObject(toolCall)) {
    const n = toolCall.tool ?? toolCall.function;
    if (typeof n === 'string') return n;
    if (isObject(n) && typeof n.name === 'string') return n.name;
  }
  return toolCall === null ? '—' : 'tool';
}

/**
 * The model, as people name it: a string is itself; the adapters' objects — `{provider, modelId}` (AI SDK),
 * `{name}` (OpenAI Agents), `{provider, name}` (LangChain) — are `provider/id`; anything else is its JSON.
 */
export function modelLabel(model: Json, max: number): string {
  if (typeof model === 'string') return shorten(model, max);
  if (isObject(model)) {
    const id = [model.modelId, model.name, model.id, model.model].find((v): v is string => typeof v === 'string');
    if (id !== undefined)
      return shorten(typeof model.provider === 'string' && model.provider !== '' ? `${model.provider}/${id}` : id, max);
  }
  return renderValue(model, max);
}

/** An error as one phrase: `Name: message` for the usual error object, else its JSON. */
export function errorText(error: Json, max: number): string {
  if (typeof error === 'string') return shorten(error, max);
  if (isObject(error) && typeof error.message === 'string') {
    return shorten(
      typeof error.name === 'string' && error.name !== '' ? `${error.name}: ${error.message}` : error.message,
      max,
    );
  }
  return renderValue(error, max);
}

/**
 * What the prompt is, in one line. A string is itself. A chat array's last message is often not the
 * prompt at all — in a tool turn it is the previous tool's result — so it is named by count and last role,
 * then the last user message, which is what was asked.
 */
export function describePrompt(prompt: Json, max: number): string {
  if (typeof prompt === 'string') return shorten(prompt.replace(/\s+/g, ' '), max);
  if (Array.isArray(prompt) && prompt.length > 0 && prompt.every((m) => isObject(m) && typeof m.role === 'string')) {
    const messages = prompt as JsonObject[];
    const lastRole = messages[messages.length - 1]!.role as string;
    let asked: JsonObject | undefined;
    for (let i = messages.length - 1; i >= 0 && asked === undefined; i--)
      if (messages[i]!.role === 'user') asked = messages[i];
    const head = `${messages.length} message${messages.length === 1 ? '' : 's'}, the last from ${lastRole}`;
    if (asked === undefined) return shorten(head, max);
    const text = messageText(asked.content ?? null);
    return shorten(`${head}; last user message: ${text.replace(/\s+/g, ' ')}`, max);
  }
  return renderValue(prompt, max);
}

/** A chat message's content as text: a string, or the text parts of a content array. */
function messageText(content: Json): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.flatMap((p) => (isObject(p) && typeof p.text === 'string' ? [p.text] : []));
    if (texts.length > 0) return texts.join(' ');
  }
  return renderValue(content, 200);
}

/** The text parts of a content array (`{type: 'text' | 'output_text', text}`), or none. */
function textParts(content: Json | undefined): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((p) =>
    isObject(p) && typeof p.text === 'string' && (p.type === undefined || p.type === 'text' || p.type === 'output_text')
      ? [p.text]
      : [],
  );
}

/**
 * A model's answer: its text where the recorded result has the shape of a framework's answer — the AI SDK's
 * `{content: [parts]}`, the OpenAI Agents SDK's `{output: [items with content]}` — and '' when such an
 * answer holds no text (only tool calls, which the record's tool_call names); else the result's JSON.
 */
export function answerText(result: Json, max: number): string {
  if (isObject(result) && (Array.isArray(result.output) || Array.isArray(result.content))) {
    const texts = Array.isArray(result.output)
      ? result.output.flatMap((item) => (isObject(item) ? textParts(item.content) : []))
      : textParts(result.content);
    return texts.length > 0 ? renderValue(texts.join(' '), max) : '';
  }
  return renderValue(result, max);
}

/** A tool call as `name({"arg":…})`, its idempotency key after it. */
function callText(call: Json, max: number): string {
  const args = isObject(call) && 'arguments' in call ? renderValue(call.arguments, max) : null;
  const key = isObject(call) && typeof call.idempotency_key === 'string' ? `  key ${call.idempotency_key}` : '';
  return `${toolLabel(call)}${args === null ? '' : `(${args})`}${key}`;
}

/** The tool calls a model answered with (model.completed's tool_call: an array of calls), named. */
function modelCalls(calls: Json, max: number): string {
  if (calls === null) return '';
  const list = Array.isArray(calls) ? calls : [calls];
  if (list.length === 0) return '';
  return `tool call${list.length === 1 ? '' : 's'}: ${shorten(list.map((c) => callText(c, max)).join(', '), max)}`;
}

/** A stored value of LANGGRAPH §4, parsed when it is JSON text, for a few of its members. */
function storedJson(v: Json | undefined): JsonObject | null {
  if (!isObject(v) || v.type !== 'json' || typeof v.text !== 'string') return null;
  try {
    const parsed = JSON.parse(v.text) as unknown;
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

const text = (v: Json | undefined): string | null => (typeof v === 'string' ? v : null);

/**
 * A LangGraph record (LANGGRAPH §5) in one line, or null when the step is not one: its thread (and
 * namespace), the checkpoint, and what the record holds — a checkpoint's source, step, parent and channels;
 * a batch of writes' task and channels.
 */
export function langGraphLine(step: StepRecord, max: number): { kind: string; text: string } | null {
  const input = step.input;
  if (!isObject(input) || typeof input.kind !== 'string' || !input.kind.startsWith('langgraph.')) return null;
  const ns = text(input.checkpoint_ns);
  const thread = `thread ${text(input.thread_id) ?? '?'}${ns ? ` (namespace ${ns})` : ''}`;
  const checkpoint = `checkpoint ${text(input.checkpoint_id) ?? '?'}`;
  const result = isObject(step.result) ? step.result : {};
  if (input.kind === 'langgraph.checkpoint') {
    const meta = storedJson(input.metadata);
    const source =
      meta && typeof meta.source === 'string'
        ? `, ${meta.source}${typeof meta.step === 'number' ? ` step ${meta.step}` : ''}`
        : '';
    const p = isObject(input.parent) ? input.parent : null;
    const parent =
      p === null ? '' : typeof p.seq === 'number' ? `, parent at seq ${p.seq}` : `, parent ${String(p.checkpoint_id)}`;
    const channels = isObject(result.channel_values) ? Object.keys(result.channel_values) : [];
    return {
      kind: input.kind,
      text: shorten(
        `${thread}: ${checkpoint}${source}${parent}; channels ${channels.length ? channels.join(', ') : 'none'}`,
        max,
      ),
    };
  }
  if (input.kind === 'langgraph.writes') {
    const writes = Array.isArray(result.writes)
      ? result.writes.flatMap((w) => (isObject(w) && typeof w.channel === 'string' ? [w.channel] : []))
      : [];
    const task = text(input.task_path) || text(input.task_id) || '?';
    return {
      kind: input.kind,
      text: shorten(
        `${thread}: writes to ${writes.length ? writes.join(', ') : 'no channel'} by task ${task}, for ${checkpoint}`,
        max,
      ),
    };
  }
  return { kind: input.kind, text: shorten(thread, max) };
}

/** What a lifecycle record (FORMAT §11.3) says, in one phrase (its kind is printed before it). */
function lifecycleText(step: StepRecord & { kind: string; error?: Json }, max: number): string {
  const model = step.model === null ? '' : `${modelLabel(step.model, 40)}  `;
  const error = (): string => `error ${errorText(step.error ?? null, max)}`;
  switch (step.kind) {
    case 'run.started':
      return step.input === null ? '' : `input ${renderValue(step.input, max)}`;
    case 'run.completed':
      return `→ ${renderValue(step.result, max)}`;
    case 'model.started':
      return `${model}prompt: ${describePrompt(step.prompt, max)}`;
    case 'model.completed': {
      const said = [answerText(step.result, max), modelCalls(step.tool_call, max)].filter((part) => part !== '');
      return `${model}→ ${said.length > 0 ? said.join('; ') : renderValue(step.result, max)}`;
    }
    case 'tool.started':
      return callText(step.tool_call, max);
    case 'tool.updated':
    case 'tool.completed':
      return `${toolLabel(step.tool_call)} → ${renderValue(step.result, max)}`;
    case 'tool.failed':
      return `${toolLabel(step.tool_call)}  ${error()}`;
    case 'run.failed':
    case 'model.failed':
      return `${model}${error()}`;
    default:
      return renderValue(step.result, max);
  }
}

/**
 * The text `log` prints for one verified record: `seq hash  time  what`, one line, or for a finished step
 * a header (model, tool) and its prompt, call and result.
 */
export function logEntry(out: Output, step: StepRecord, width: number, pending: boolean): string {
  const at = `${out.style('yellow', `${String(step.seq).padStart(4)} ${step.step_hash.slice(7, 19)}`)}  ${out.style('dim', inline(step.ts))}`;
  const mark = pending ? `  ${out.style(['yellow', 'bold'], 'PENDING — outcome unknown')}` : '';
  const max = Math.max(30, width - 16);
  const graph = langGraphLine(step, Math.max(160, width));
  if (graph !== null) return `${at}  ${out.style('magenta', inline(graph.kind))}  ${inline(graph.text)}${mark}`;
  const kind = isRunRecord(step) ? step.kind : 'step';
  if (kind !== 'step') {
    const what = inline(lifecycleText(step as StepRecord & { kind: string }, max));
    return `${at}  ${out.style('magenta', inline(kind))}${what ? `  ${what}` : ''}${mark}`;
  }
  const lines = [
    `${at}  ${out.style('bold', inline(modelLabel(step.model, 40)))}  ${out.style('cyan', inline(toolLabel(step.tool_call)))}${mark}`,
  ];
  if (step.prompt !== null) lines.push(`       prompt: ${inline(describePrompt(step.prompt, max))}`);
  if (step.tool_call !== null) lines.push(`       call:   ${inline(renderValue(step.tool_call, max))}`);
  lines.push(`       result: ${inline(renderValue(step.result, max))}`);
  return lines.join('\n');
}
