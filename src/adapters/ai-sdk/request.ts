/**
 * What one AI SDK model call is recorded as (docs/ai-sdk.md): the model, the prompt
 * as the SDK handed it to the provider, the call settings that shape the answer, and, once it is known, the
 * answer — content, tool calls with their parsed input, usage, finish reason and the provider's response
 * metadata. Values that are not I-JSON (Dates, binary file parts) go through the runtime's one conversion
 * rule when the step is written; nothing here copies or rewrites what the provider receives.
 */
import type { Json, ModelToolCall } from '../../index.js';
import { toJournalValue } from '../../runtime.js';
import type { CallOptions, Content, FinishReason, GenerateResult, ModelInfo, Usage } from './types.js';

/** The settings recorded as the step's input: what changes the answer. Headers (credentials) and the abort signal are left out. */
const SETTINGS = [
  'maxOutputTokens',
  'temperature',
  'stopSequences',
  'topP',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'responseFormat',
  'seed',
  'toolChoice',
  'providerOptions',
] as const;

/** The request as journal values (converted here: the SDK's prompt and settings reach the adapter untyped). */
export interface ModelRequestFields {
  model: { provider: string; modelId: string };
  prompt: Json;
  input: Json;
}

export function requestFields(model: ModelInfo, params: CallOptions): ModelRequestFields {
  const input: Record<string, unknown> = {};
  for (const key of SETTINGS) if (params[key] !== undefined) input[key] = params[key];
  if (params.tools !== undefined && params.tools.length > 0) {
    input.tools = params.tools.map((t) =>
      t.type === 'function'
        ? { type: t.type, name: t.name, description: t.description, inputSchema: t.inputSchema }
        : { type: t.type, id: t.id, name: t.name, args: t.args },
    );
  }
  // In the order Run.beginModel converts them, so a refusal names the same field as before.
  const recordedInput = toJournalValue(input, { field: 'input' });
  const prompt = toJournalValue(params.prompt, { field: 'prompt' });
  return { model: { provider: model.provider, modelId: model.modelId }, prompt, input: recordedInput };
}

/** A tool call as the runtime links it to its effect: the SDK's toolCallId is the effect's callId. */
export interface RecordedToolCall {
  id: string;
  name: string;
  /** The parsed JSON input; the raw text when it does not parse (the SDK then reports the call as invalid). */
  arguments: unknown;
}

function parsedInput(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function toolCallOf(part: { toolCallId: string; toolName: string; input: string }): RecordedToolCall {
  return { id: part.toolCallId, name: part.toolName, arguments: parsedInput(part.input) };
}

/**
 * The calls the run waits on before its next continuation point: those the SDK will execute through a
 * recorded tool. Calls the provider executed, or to tools this run does not record, stay in the result.
 */
export function awaitedCalls(content: readonly unknown[], recorded: ReadonlySet<string>): ModelToolCall[] {
  const out: ModelToolCall[] = [];
  for (const part of content as {
    type?: unknown;
    providerExecuted?: unknown;
    toolCallId: string;
    toolName: string;
    input: unknown;
  }[]) {
    if (part.type !== 'tool-call' || part.providerExecuted === true || !recorded.has(part.toolName)) continue;
    const field = `tool_call/${String(out.length)}/arguments`;
    out.push({ id: part.toolCallId, name: part.toolName, arguments: toJournalValue(part.input, { field }) });
  }
  return out;
}

/** The model's answer: what `complete` records as result (tool calls inside it, input parsed), usage and finish reason. */
export interface ModelAnswer {
  result: { content: unknown[]; response?: unknown };
  usage: Usage | undefined;
  finishReason: FinishReason | undefined;
}

/** A content part as recorded: tool calls with their input parsed, everything else as the provider gave it. */
function recordedContent(part: Content): unknown {
  return part.type === 'tool-call' ? { ...part, input: parsedInput(part.input) } : part;
}

export function answerOf(result: GenerateResult): ModelAnswer {
  const response =
    result.response === undefined
      ? undefined
      : { id: result.response.id, modelId: result.response.modelId, timestamp: result.response.timestamp };
  return {
    result: { content: result.content.map(recordedContent), response },
    usage: result.usage,
    finishReason: result.finishReason,
  };
}
