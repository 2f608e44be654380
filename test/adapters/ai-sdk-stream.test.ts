/**
 * The AI SDK stream recorder on its own (src/adapters/ai-sdk/stream.ts): whatever the provider streams and
 * however its text is cut into deltas, the consumer receives exactly the provider's parts, and the step is
 * told once, with the text and tool calls assembled — `done`, or `failed` when an error part came.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { recordStream, type StreamEnd } from '../../src/adapters/ai-sdk/stream.js';

type Part = Record<string, unknown> & { type: string };

function source(parts: Part[]): ReadableStream<never> {
  return new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(p as never);
      c.close();
    },
  });
}

async function drain(stream: ReadableStream<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  const reader = stream.getReader();
  for (;;) {
    const r = await reader.read();
    if (r.done) return out;
    out.push(r.value);
  }
}

/** Text blocks cut into deltas, tool calls between them, maybe an error part, then finish. */
const script = fc.record({
  blocks: fc.array(fc.array(fc.string({ maxLength: 8 }), { minLength: 1, maxLength: 6 }), { maxLength: 4 }),
  calls: fc.array(fc.record({ city: fc.string({ maxLength: 6 }) }), { maxLength: 3 }),
  error: fc.boolean(),
});

describe('recordStream', () => {
  test('passes every part through unchanged and tells the assembled answer exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(script, async ({ blocks, calls, error }) => {
        const parts: Part[] = [{ type: 'stream-start', warnings: [] }];
        blocks.forEach((deltas, b) => {
          parts.push({ type: 'text-start', id: `t${b}` });
          for (const delta of deltas) parts.push({ type: 'text-delta', id: `t${b}`, delta });
          parts.push({ type: 'text-end', id: `t${b}` });
          const call = calls[b];
          if (call !== undefined)
            parts.push({ type: 'tool-call', toolCallId: `c${b}`, toolName: 'weather', input: JSON.stringify(call) });
        });
        if (error) parts.push({ type: 'error', error: new Error('upstream') });
        parts.push({ type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: {} });

        const ends: StreamEnd[] = [];
        const wrapped = recordStream({ stream: source(parts) }, undefined, async (end) => {
          ends.push(end);
        });
        expect(await drain(wrapped.stream)).toEqual(parts);
        expect(ends).toHaveLength(1);
        const end = ends[0]!;
        expect(end.kind).toBe(error ? 'failed' : 'done');
        const content = end.answer.result.content as { type: string; text?: string; input?: unknown }[];
        expect(content.filter((p) => p.type === 'text').map((p) => p.text)).toEqual(blocks.map((d) => d.join('')));
        expect(content.filter((p) => p.type === 'tool-call').map((p) => p.input)).toEqual(
          calls.slice(0, blocks.length),
        );
      }),
      { numRuns: 100 },
    );
  });

  test('a cancel by the consumer is a failed end, told once', async () => {
    const ends: StreamEnd[] = [];
    const never = new ReadableStream<never>({
      start(c) {
        c.enqueue({ type: 'text-start', id: 'a' } as never);
      },
    });
    const wrapped = recordStream({ stream: never }, undefined, async (end) => {
      ends.push(end);
    });
    const reader = wrapped.stream.getReader();
    await reader.read();
    await reader.cancel(new Error('gone'));
    expect(ends.map((e) => e.kind)).toEqual(['failed']);
  });
});
