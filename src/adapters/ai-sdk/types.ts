/**
 * The AI SDK types the adapter reads, derived from the `ai` package's own `LanguageModelMiddleware`, so the
 * adapter needs no direct dependency on `@ai-sdk/provider` (which `ai` pins). Types only: nothing here
 * exists at run time.
 */
import type { LanguageModelMiddleware } from 'ai';

export type WrapGenerate = NonNullable<LanguageModelMiddleware['wrapGenerate']>;
export type WrapStream = NonNullable<LanguageModelMiddleware['wrapStream']>;
export type CallOptions = Parameters<WrapGenerate>[0]['params'];
export type ModelInfo = Parameters<WrapGenerate>[0]['model'];
export type GenerateResult = Awaited<ReturnType<WrapGenerate>>;
export type StreamResult = Awaited<ReturnType<WrapStream>>;
export type StreamPart = StreamResult['stream'] extends ReadableStream<infer P> ? P : never;
export type Content = GenerateResult['content'][number];
export type Usage = GenerateResult['usage'];
export type FinishReason = GenerateResult['finishReason'];
