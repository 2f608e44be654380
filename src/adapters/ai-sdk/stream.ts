/**
 * Recording a streamed AI SDK model call (docs/ai-sdk.md): every part passes through
 * untouched while the answer is assembled beside it — text and reasoning per block, tool calls, files,
 * sources, usage, finish reason, response metadata — and the step is written once, on the first of: the
 * end of the stream, an `error` part, a read that throws, a cancel, or the call's abort signal. The SDK
 * never cancels the provider stream on abort, so the signal is watched here; an ended stream is recorded as
 * a completed step before the consumer sees the stream close, so tools run only after their model step is
 * durable.
 */
import { toolCallOf, type ModelAnswer } from './request.js';
import type { FinishReason, StreamPart, StreamResult, Usage } from './types.js';

/** The assembled answer of one stream, built as parts arrive. */
export class StreamAssembler {
  readonly content: Record<string, unknown>[] = [];
  private readonly open = new Map<string, { text: string }>();
  private usage: Usage | undefined;
  private finishReason: FinishReason | undefined;
  private response: { id?: string | undefined; modelId?: string | undefined; timestamp?: Date | undefined } | undefined;
  /** The first `error` part's error: the stream is then a failed request. */
  error: unknown = undefined;
  sawError = false;

  add(part: StreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'reasoning-start': {
        const block = { type: part.type === 'text-start' ? 'text' : 'reasoning', text: '' };
        this.open.set(`${block.type}:${part.id}`, block);
        this.content.push(block);
        return;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const block = this.open.get(`${part.type === 'text-delta' ? 'text' : 'reasoning'}:${part.id}`);
        if (block !== undefined) block.text += part.delta;
        else this.content.push({ type: part.type === 'text-delta' ? 'text' : 'reasoning', text: part.delta });
        return;
      }
      case 'tool-call':
        this.content.push({ ...part, input: toolCallOf(part).arguments });
        return;
      case 'tool-result':
      case 'tool-approval-request':
      case 'file':
      case 'source':
        this.content.push({ ...part });
        return;
      case 'response-metadata':
        this.response = { id: part.id, modelId: part.modelId, timestamp: part.timestamp };
        return;
      case 'finish':
        this.usage = part.usage;
        this.finishReason = part.finishReason;
        return;
      case 'error':
        if (!this.sawError) this.error = part.error;
        this.sawError = true;
        return;
      default:
        // stream-start, the end markers, tool-input deltas (the tool-call part carries the whole input), raw chunks.
        return;
    }
  }

  answer(): ModelAnswer {
    return {
      result: { content: this.content, response: this.response },
      usage: this.usage,
      finishReason: this.finishReason,
    };
  }
}

/** How a stream ended, told once. */
export type StreamEnd = { kind: 'done'; answer: ModelAnswer } | { kind: 'failed'; error: unknown; answer: ModelAnswer };

/**
 * The provider's stream wrapped: parts pass through as they are; `onEnd` is called exactly once and its
 * promise awaited before the consumer sees the end (so a write error surfaces as the stream's error).
 */
export function recordStream(
  result: StreamResult,
  signal: AbortSignal | undefined,
  onEnd: (end: StreamEnd) => Promise<unknown>,
): StreamResult {
  const assembler = new StreamAssembler();
  const reader = result.stream.getReader();
  let ended: Promise<unknown> | undefined;
  const end = (how: 'done' | 'failed', error?: unknown): Promise<unknown> => {
    ended ??= onEnd(
      how === 'done' && !assembler.sawError
        ? { kind: 'done', answer: assembler.answer() }
        : { kind: 'failed', error: how === 'failed' ? error : assembler.error, answer: assembler.answer() },
    );
    return ended;
  };
  const onAbort = (): void => {
    // Recorded without waiting: the consumer has gone; the write still completes (flush: the run's own).
    void end('failed', signal?.reason ?? new Error('aborted')).catch(() => undefined);
  };
  if (signal?.aborted === true) onAbort();
  else signal?.addEventListener('abort', onAbort, { once: true });
  const stream = new ReadableStream<StreamPart>({
    async pull(controller) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (error) {
        signal?.removeEventListener('abort', onAbort);
        await end('failed', error).catch(() => undefined);
        controller.error(error);
        return;
      }
      if (read.done) {
        signal?.removeEventListener('abort', onAbort);
        try {
          await end('done');
        } catch (error) {
          controller.error(error);
          return;
        }
        controller.close();
        return;
      }
      assembler.add(read.value);
      controller.enqueue(read.value);
    },
    async cancel(reason) {
      signal?.removeEventListener('abort', onAbort);
      await end('failed', reason ?? new Error('stream cancelled')).catch(() => undefined);
      await reader.cancel(reason);
    },
  });
  return { ...result, stream };
}
