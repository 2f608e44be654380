/**
 * One scripted AI SDK agent run for the adapter tests: the SDK's own mock model
 * (`MockLanguageModelV3` from `ai/test`), two tools, a parallel pair of calls, a tool that throws, a large
 * binary tool result, then a streamed turn. Deterministic: the same script gives the same steps.
 */
import {
  generateText,
  simulateReadableStream,
  stepCountIs,
  streamText,
  tool,
  wrapLanguageModel,
  type LanguageModelMiddleware,
  type ToolSet,
} from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';

type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>;
type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
type StreamPart =
  Awaited<ReturnType<NonNullable<LanguageModelMiddleware['wrapStream']>>>['stream'] extends ReadableStream<infer P>
    ? P
    : never;

export const usage = (input: number, output: number): GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** 256 KiB of bytes: above any blob threshold. */
export const BIG = new Uint8Array(256 * 1024).map((_, i) => (i * 31) % 251);

export function generateScript(): GenerateResult[] {
  return [
    {
      content: [
        { type: 'tool-call', toolCallId: 'call-paris', toolName: 'weather', input: JSON.stringify({ city: 'Paris' }) },
        { type: 'tool-call', toolCallId: 'call-oslo', toolName: 'weather', input: JSON.stringify({ city: 'Oslo' }) },
      ],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      usage: usage(10, 5),
      warnings: [],
    },
    {
      content: [
        { type: 'tool-call', toolCallId: 'call-explode', toolName: 'explode', input: '{}' },
        {
          type: 'tool-call',
          toolCallId: 'call-snapshot',
          toolName: 'snapshot',
          input: JSON.stringify({ size: BIG.length }),
        },
      ],
      finishReason: { unified: 'tool-calls', raw: undefined },
      usage: usage(20, 3),
      warnings: [],
    },
    {
      content: [{ type: 'text', text: 'Paris 21C, Oslo 5C.' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(30, 7),
      warnings: [],
      response: { id: 'resp-3', timestamp: new Date(0), modelId: 'mock-model-id' },
    },
  ];
}

export function streamScript(): StreamPart[][] {
  return [
    [
      { type: 'stream-start', warnings: [] },
      { type: 'response-metadata', id: 'r-s1', modelId: 'mock-stream', timestamp: new Date(0) },
      { type: 'tool-input-start', id: 'call-sum', toolName: 'weather' },
      { type: 'tool-input-delta', id: 'call-sum', delta: '{"city":' },
      { type: 'tool-input-delta', id: 'call-sum', delta: '"Rome"}' },
      { type: 'tool-input-end', id: 'call-sum' },
      { type: 'tool-call', toolCallId: 'call-rome', toolName: 'weather', input: '{"city":"Rome"}' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage(5, 6) },
    ],
    [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't1' },
      { type: 'text-delta', id: 't1', delta: 'Rome is ' },
      { type: 'text-delta', id: 't1', delta: '25C.' },
      { type: 'text-end', id: 't1' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(9, 4) },
    ],
  ];
}

export function scriptedModel(): MockLanguageModelV3 {
  return new MockLanguageModelV3({
    doGenerate: generateScript(),
    doStream: streamScript().map((chunks) => ({
      stream: simulateReadableStream({ chunks, initialDelayInMs: null, chunkDelayInMs: null }),
    })),
  });
}

/** The tools: two that answer, one that throws. */
export function agentTools() {
  return {
    weather: tool({
      description: 'the weather in a city',
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        return { city, tempC: city === 'Paris' ? 21 : city === 'Oslo' ? 5 : 25, at: new Date(0) };
      },
    }),
    explode: tool({
      description: 'always fails',
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error('boom');
      },
    }),
    snapshot: tool({
      description: 'a large binary result',
      inputSchema: z.object({ size: z.number() }),
      execute: async () => {
        return BIG;
      },
    }),
  } satisfies ToolSet;
}

/** The whole scripted conversation through `generateText` then `streamText`; returns the mock (its calls are the provider requests). */
export async function runConversation(
  middleware: LanguageModelMiddleware | undefined,
  tools: ToolSet,
): Promise<{ mock: MockLanguageModelV3; text: string; streamed: string }> {
  const mock = scriptedModel();
  const model = middleware === undefined ? mock : wrapLanguageModel({ model: mock, middleware });
  const first = await generateText({
    model,
    tools,
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    prompt: 'What is the weather in Paris and Oslo?',
  });
  const second = streamText({ model, tools, stopWhen: stepCountIs(4), maxRetries: 0, prompt: 'And in Rome?' });
  let streamed = '';
  for await (const delta of second.textStream) streamed += delta;
  return { mock, text: first.text, streamed };
}
