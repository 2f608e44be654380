/**
 * Replaying an AI SDK agent from its recorded run (spec/REPLAY.md; docs/replay-testing.md):
 * `replayModel(replay)` is a LanguageModelV3 that answers each call — generate or stream — with the
 * recorded answer its request matches; `replayTools(replay, tools)` answers each tool execution with the
 * recorded result (or throws the recorded error). Where the mode sends a request live, the live model or
 * tool given here answers it. Wrap both with the recorder (`stepchainMiddleware`, `recordTools`) to write
 * the replay's own journal, then compare the two runs with `expectSameRun`.
 */
import { APICallError, type ToolExecutionOptions, type ToolSet } from 'ai';
import type { Json } from '../../index.js';
import { ReplayError, type Replay, type ReplayAnswer } from '../../replay.js';
import { requestFields } from './request.js';
import type { CallOptions, Content, GenerateResult, ModelInfo, StreamPart, StreamResult } from './types.js';

export interface ReplayModelOptions {
  /** Answers requests the mode sends live (lenient, record-missing). */
  live?: ModelInfo;
  /** The provider and model id the replay model reports (default: the first recorded request's). */
  provider?: string;
  modelId?: string;
}

type JsonRecord = Record<string, Json>;

/** A recorded content part back as the SDK's: tool-call input as JSON text, file data as base64. */
function contentOf(part: JsonRecord): Content {
  if (part.type === 'tool-call')
    return {
      ...part,
      input: typeof part.input === 'string' ? part.input : JSON.stringify(part.input),
    } as unknown as Content;
  if (part.type === 'file' && part.data !== null && typeof part.data === 'object' && !Array.isArray(part.data)) {
    return { ...part, data: part.data.base64 } as unknown as Content;
  }
  return part as unknown as Content;
}

function responseOf(result: JsonRecord): GenerateResult['response'] {
  const r = result.response as JsonRecord | undefined;
  if (r === undefined || r === null) return undefined;
  return {
    ...(typeof r.id === 'string' ? { id: r.id } : {}),
    ...(typeof r.modelId === 'string' ? { modelId: r.modelId } : {}),
    ...(typeof r.timestamp === 'string' ? { timestamp: new Date(r.timestamp) } : {}),
  };
}

const NO_USAGE = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

function generateResultOf(answer: Extract<ReplayAnswer, { source: 'recorded' }>): GenerateResult {
  const result = (answer.result ?? {}) as JsonRecord;
  const meta = answer.meta ?? {};
  const content = Array.isArray(result.content) ? (result.content as JsonRecord[]).map(contentOf) : [];
  const response = responseOf(result);
  return {
    content,
    finishReason: {
      unified: (typeof meta.finish_reason === 'string'
        ? meta.finish_reason
        : 'stop') as GenerateResult['finishReason']['unified'],
      raw: typeof meta.finish_reason_raw === 'string' ? meta.finish_reason_raw : undefined,
    },
    usage: (meta.usage ?? NO_USAGE) as unknown as GenerateResult['usage'],
    warnings: [],
    ...(response === undefined ? {} : { response }),
  };
}

/** The recorded error of a failed request, thrown again: retryable provider errors stay retryable. */
function recordedFailure(error: Json): Error {
  const e = (error ?? {}) as JsonRecord;
  const message = typeof e.message === 'string' ? e.message : 'the recorded request failed';
  if (e.isRetryable === true || e.name === 'AI_APICallError') {
    return new APICallError({
      message,
      url: typeof e.url === 'string' ? e.url : 'replay:',
      requestBodyValues: null,
      isRetryable: e.isRetryable === true,
      ...(typeof e.statusCode === 'number' ? { statusCode: e.statusCode } : {}),
    });
  }
  const out = new ReplayError(
    'REPLAY_RECORDED_FAILURE',
    `${typeof e.name === 'string' ? e.name : 'Error'}: ${message}`,
    { hint: 'the recorded run failed here too' },
  );
  out.recordedError = error;
  return out;
}

/** The recorded answer as the parts a provider would have streamed; the recorder assembles them back. */
function streamOf(answer: Extract<ReplayAnswer, { source: 'recorded' }>): StreamResult {
  const done = generateResultOf(answer);
  const parts: StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (done.response !== undefined) parts.push({ type: 'response-metadata', ...done.response });
  done.content.forEach((part, i) => {
    const id = String(i);
    if (part.type === 'text' || part.type === 'reasoning') {
      const kind = part.type;
      parts.push(
        { type: `${kind}-start`, id },
        { type: `${kind}-delta`, id, delta: part.text },
        { type: `${kind}-end`, id },
      );
    } else {
      parts.push(part);
    }
  });
  if (answer.error !== null) parts.push({ type: 'error', error: recordedFailure(answer.error) });
  else parts.push({ type: 'finish', finishReason: done.finishReason, usage: done.usage });
  return {
    stream: new ReadableStream<StreamPart>({
      start(c) {
        for (const p of parts) c.enqueue(p);
        c.close();
      },
    }),
  };
}

function liveModel(options: ReplayModelOptions): ModelInfo {
  if (options.live === undefined)
    throw new ReplayError(
      'REPLAY_LIVE_MISSING',
      'the replay sends this request live, and replayModel was given no live model',
      { hint: 'pass replayModel(replay, { live: model }), or replay in strict mode' },
    );
  return options.live;
}

/** A LanguageModelV3 that answers from the recording (see the module comment). */
export function replayModel(replay: Replay, options: ReplayModelOptions = {}): ModelInfo {
  const recorded = (replay.recordedModel ?? {}) as JsonRecord;
  const model = {
    specificationVersion: 'v3' as const,
    provider: options.provider ?? (typeof recorded.provider === 'string' ? recorded.provider : 'stepchain-replay'),
    modelId: options.modelId ?? (typeof recorded.modelId === 'string' ? recorded.modelId : 'replay'),
    supportedUrls: {},
    async doGenerate(params: CallOptions): Promise<GenerateResult> {
      const answer = replay.nextModelResult(requestFields(model, params));
      if (answer.source === 'live') return liveModel(options).doGenerate(params);
      if (answer.error !== null) throw recordedFailure(answer.error);
      return generateResultOf(answer);
    },
    async doStream(params: CallOptions): Promise<StreamResult> {
      const answer = replay.nextModelResult(requestFields(model, params));
      if (answer.source === 'live') return liveModel(options).doStream(params);
      return streamOf(answer);
    },
  };
  return model;
}

type Execute = (input: unknown, options: ToolExecutionOptions) => unknown;

/**
 * The tools with each `execute` answered from the recording: the recorded result, or the recorded error
 * thrown. The tools' own `execute` runs only where the mode sends a call live.
 */
export function replayTools<T extends ToolSet>(replay: Replay, tools: T): T {
  const out: Record<string, unknown> = {};
  for (const [name, tool] of Object.entries(tools)) {
    const own = (tool as { execute?: Execute }).execute;
    const execute: Execute = async (input, opts) => {
      const answer = replay.nextToolResult({ name, arguments: input });
      if (answer.source === 'live') {
        if (own === undefined)
          throw new ReplayError('REPLAY_LIVE_MISSING', `tool ${name} goes live and has no execute`);
        return own(input, opts);
      }
      if (answer.error !== null) {
        const e = answer.error as JsonRecord;
        // The recorded error's own members come back too, so the replay records the same error object.
        const { message, name, ...rest } = e;
        const error = Object.assign(
          new Error(typeof message === 'string' ? message : 'the recorded tool call failed'),
          rest,
        );
        if (typeof name === 'string') error.name = name;
        throw error;
      }
      return answer.result;
    };
    out[name] = { ...tool, execute };
  }
  return out as T;
}
