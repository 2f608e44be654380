/**
 * Recording OpenAI Agents SDK model calls (docs/openai-agents.md): a `Model` wrapper,
 * because only the SDK's own OpenAI model classes open generation spans — a tracing processor alone would
 * miss every other model. The request's documented fields are recorded (never the abort signal or the
 * SDK's internal tracing parent, which carry timestamps); the answer is the response's output items,
 * usage and response id; a stream is recorded from its `response_done` event, and a stream that throws or
 * is left early is a failed request. `getRetryAdvice` is forwarded, so the SDK's retry settings keep working.
 */
import type { Model, ModelProvider, ModelRequest, ModelResponse, StreamEvent } from '@openai/agents';
import type { Json, ModelCallHandle, ModelOutcome } from '../../index.js';
import { toJournalValue } from '../../runtime.js';
import type { AdapterRun } from './run.js';

/** The request as journal values (converted here: the SDK's items and settings are not typed as JSON). */
export interface ModelRequestFields {
  model: { name: string };
  prompt: Json;
  input: Json;
}

export function requestFields(name: string, request: ModelRequest): ModelRequestFields {
  const prompt: { systemInstructions?: string; input: unknown } = { input: request.input };
  if (request.systemInstructions !== undefined) prompt.systemInstructions = request.systemInstructions;
  const input: Record<string, unknown> = {
    modelSettings: request.modelSettings,
    tools: request.tools,
    handoffs: request.handoffs,
    outputType: request.outputType,
  };
  for (const key of ['previousResponseId', 'conversationId', 'prompt'] as const)
    if (request[key] !== undefined) input[key] = request[key];
  // In the order Run.beginModel converts them, so a refusal names the same field.
  const recordedInput = toJournalValue(input, { field: 'input' });
  return { model: { name }, prompt: toJournalValue(prompt, { field: 'prompt' }), input: recordedInput };
}

/** The usage as plain numbers: the SDK's `Usage` is a class instance carrying per-request entries. */
interface UsageNumbers {
  requests?: number | undefined;
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
}
function usageOf(usage: UsageNumbers | undefined): Record<string, number> | undefined {
  if (usage === undefined) return undefined;
  const out: Record<string, number> = {};
  for (const key of ['requests', 'inputTokens', 'outputTokens', 'totalTokens'] as const)
    if (typeof usage[key] === 'number') out[key] = usage[key];
  return out;
}

interface FunctionCall {
  type: 'function_call';
  callId: string;
  name: string;
  arguments: string;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function complete(
  call: ModelCallHandle,
  response: { output: unknown[]; usage?: UsageNumbers; responseId?: string | undefined; id?: string | undefined },
  recorded: ReadonlySet<string>,
): Promise<void> {
  // The calls the run waits on: those a recorded tool will answer with an effect. Handoffs, hosted tools and
  // tools this recorder does not wrap stay in the result's output items.
  const toolCalls = response.output
    .filter(
      (item): item is FunctionCall =>
        (item as { type?: unknown }).type === 'function_call' && recorded.has((item as FunctionCall).name),
    )
    .map((item) => ({ id: item.callId, name: item.name, arguments: item.arguments }));
  const responseId = response.responseId ?? response.id;
  const usage = usageOf(response.usage);
  try {
    // The SDK's output items are not typed as JSON: converted here, in the order Run.endModel converts.
    const outcome: ModelOutcome = {
      toolCalls: toolCalls.map((c, i) => ({
        ...c,
        arguments: toJournalValue(parsed(c.arguments), { field: `tool_call/${String(i)}/arguments` }),
      })),
      result: toJournalValue(
        { output: response.output, ...(responseId === undefined ? {} : { responseId }) },
        { field: 'result' },
      ),
    };
    if (usage !== undefined) outcome.usage = usage;
    await call.complete(outcome);
  } catch (refused) {
    await call.fail(refused).catch(() => undefined);
    throw refused;
  }
}

/** Where a model call is written (the run of the agent making it) and which tool names are recorded. */
export interface ModelRouting {
  runFor(): Promise<AdapterRun>;
  readonly recordedTools: ReadonlySet<string>;
  /** Throws a tool call's refusal as a repeat of an effect of unknown outcome (EFFECT_PENDING), noted since the last model call. */
  throwRefusal?(): void;
}

class RecordedModel implements Model {
  readonly getRetryAdvice: Model['getRetryAdvice'];

  constructor(
    private readonly inner: Model,
    private readonly name: string,
    private readonly routing: ModelRouting,
  ) {
    if (inner.getRetryAdvice !== undefined) this.getRetryAdvice = inner.getRetryAdvice.bind(inner);
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.routing.throwRefusal?.();
    const call = await (await this.routing.runFor()).beginModel(requestFields(this.name, request));
    let response: ModelResponse;
    try {
      response = await this.inner.getResponse(request);
    } catch (error) {
      await call.fail(error);
      throw error;
    }
    await complete(call, response, this.routing.recordedTools);
    return response;
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    this.routing.throwRefusal?.();
    const call = await (await this.routing.runFor()).beginModel(requestFields(this.name, request));
    let done: Extract<StreamEvent, { type: 'response_done' }>['response'] | undefined;
    let settled = false;
    try {
      for await (const event of this.inner.getStreamedResponse(request)) {
        if (event.type === 'response_done') done = event.response;
        yield event;
      }
      settled = true;
      if (done === undefined) await call.fail(new Error('the model stream ended without a response_done event'));
      else await complete(call, done, this.routing.recordedTools);
    } catch (error) {
      if (!settled) {
        settled = true;
        await call.fail(error);
      }
      throw error;
    } finally {
      // The consumer left the stream early: the request did not finish.
      if (!settled) await call.fail(new Error('the model stream was closed before it finished'));
    }
  }
}

function nameOf(model: Model): string {
  const named = (model as { model?: unknown }).model;
  return typeof named === 'string' ? named : model.constructor.name;
}

export function recordModel(model: Model, routing: ModelRouting, name: string = nameOf(model)): Model {
  return new RecordedModel(model, name, routing);
}

export function recordProvider(provider: ModelProvider, routing: ModelRouting): ModelProvider {
  return {
    async getModel(modelName?: string) {
      const model = await provider.getModel(modelName);
      return recordModel(model, routing, modelName ?? nameOf(model));
    },
  };
}
