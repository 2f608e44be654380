/**
 * `stepchain/ai-sdk` end to end against the real `ai` 6 package and its own mock model: a multi-step run
 * with two tools, a parallel pair, a tool error, a large binary result and a streamed turn is recorded;
 * the journal verifies, a receipt exports and verifies, a second identical run diffs as `same`, and the
 * provider requests are exactly those the SDK builds without the middleware (no stepchain field or id).
 * Then the failure paths: a provider error, an `error` part, a throwing stream, an abort, and a value
 * JSON cannot represent.
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { generateText, simulateReadableStream, streamText, wrapLanguageModel, type LanguageModelMiddleware } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { tool } from 'ai';
import { z } from 'zod';
import { describe, expect, test } from 'vitest';
import { exportReceipt, startRun, verifyReceipt, type Run, type StepRecord } from '../../src/index.js';
import { diff } from '../../src/replay.js';
import { adapterStores } from './stores.js';
import { recordTools, stepchainMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { PART_MARKER } from '../../src/record/v3/commit.js';
import { tempDir } from '../helpers/tmp.js';
import { withRefsAsOffsets } from './refs.js';
import { agentTools, BIG, runConversation, usage } from './ai-sdk-fixture.js';
import { all } from '../helpers/outcomes.js';

/** The same suite on the file store and on the SQLite store (one database file). */
const root = tempDir('stepchain-ai-sdk-');
const STORES = adapterStores(root);

describe.each(STORES)('on the %s', (_name, makeStore) => {
  const store = makeStore();

  const records = (run: Run): Promise<StepRecord[]> => all(run.journal.read());

  const kindOf = (r: StepRecord): string => String((r as unknown as { kind?: unknown }).kind);

  /** The provider requests, with the abort signal (a live object, different per call) left out. */
  function requests(mock: MockLanguageModelV3): unknown[] {
    return [...mock.doGenerateCalls, ...mock.doStreamCalls].map(({ abortSignal: _signal, ...rest }) => rest);
  }

  async function recordedRun(
    runId: string,
  ): Promise<{ run: Run; mock: MockLanguageModelV3; text: string; streamed: string }> {
    const run = await startRun(store, { runId, agent: 'weather-bot', labels: { env: 'test' } });
    const { mock, text, streamed } = await runConversation(stepchainMiddleware(run), recordTools(run, agentTools()));
    await run.complete({ text, streamed });
    return { run, mock, text, streamed };
  }

  describe('a recorded AI SDK run', async () => {
    const first = await recordedRun('ai-run-a');
    const second = await recordedRun('ai-run-b');
    const steps = await records(first.run);

    test('the SDK ran the whole script: three generate steps then two streamed ones', () => {
      expect(first.text).toBe('Paris 21C, Oslo 5C.');
      expect(first.streamed).toBe('Rome is 25C.');
      expect(first.mock.doGenerateCalls).toHaveLength(3);
      expect(first.mock.doStreamCalls).toHaveLength(2);
    });

    test('every model call and tool execution is a started record followed by its outcome', () => {
      expect(steps.map(kindOf)).toEqual([
        'run.started',
        'model.started',
        'model.completed',
        'tool.started',
        'tool.started',
        'tool.completed',
        'tool.completed', // the parallel pair
        'model.started',
        'model.completed',
        'tool.started',
        'tool.started',
        'tool.failed',
        'tool.completed', // explode fails, snapshot returns 256 KiB
        'model.started',
        'model.completed',
        'model.started',
        'model.completed', // streamed: a tool call
        'tool.started',
        'tool.completed',
        'model.started',
        'model.completed', // streamed: the text
        'run.completed',
      ]);
    });

    test('a model step records the model, the prompt, the settings, the answer, usage and finish reason', () => {
      const completed = steps.filter((r) => kindOf(r) === 'model.completed');
      expect(completed[0]!.model).toEqual({ provider: 'mock-provider', modelId: 'mock-model-id' });
      expect(completed[0]!.prompt).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris and Oslo?' }] },
      ]);
      expect((completed[0]!.input as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual([
        'weather',
        'explode',
        'snapshot',
      ]);
      expect(completed[0]!.tool_call).toEqual([
        { id: 'call-paris', name: 'weather', arguments: { city: 'Paris' } },
        { id: 'call-oslo', name: 'weather', arguments: { city: 'Oslo' } },
      ]);
      expect(completed[0]!.meta).toEqual({
        finish_reason: 'tool-calls',
        finish_reason_raw: 'tool_calls',
        usage: { inputTokens: { total: 10, noCache: 10 }, outputTokens: { total: 5, text: 5 } },
      });
      expect(completed[2]!.result).toEqual({
        content: [{ type: 'text', text: 'Paris 21C, Oslo 5C.' }],
        response: { id: 'resp-3', modelId: 'mock-model-id', timestamp: '1970-01-01T00:00:00.000Z' },
      });
      // The streamed text is assembled from its deltas; the response metadata's Date is an ISO string.
      expect(completed[4]!.result).toEqual({ content: [{ type: 'text', text: 'Rome is 25C.' }] });
      expect(completed[3]!.result).toMatchObject({
        response: { id: 'r-s1', modelId: 'mock-stream', timestamp: '1970-01-01T00:00:00.000Z' },
      });
      expect(completed[3]!.tool_call).toEqual([{ id: 'call-rome', name: 'weather', arguments: { city: 'Rome' } }]);
    });

    test('tool effects carry the SDK toolCallId, the input, and the outcome or the error', async () => {
      const effects = await first.run.effects();
      expect(effects.map((e) => [e.tool, e.callId, e.status])).toEqual([
        ['weather', 'call-paris', 'completed'],
        ['weather', 'call-oslo', 'completed'],
        ['explode', 'call-explode', 'failed'],
        ['snapshot', 'call-snapshot', 'completed'],
        ['weather', 'call-rome', 'completed'],
      ]);
      const failed = steps.find((r) => kindOf(r) === 'tool.failed') as unknown as { error: unknown };
      expect(failed.error).toMatchObject({ name: 'Error', message: 'boom' });
      const paris = steps.find((r) => kindOf(r) === 'tool.completed') as unknown as { result: unknown };
      expect(paris.result).toEqual({ city: 'Paris', tempC: 21, at: '1970-01-01T00:00:00.000Z' });
    });

    test('the large binary tool result is a content-addressed bytes value, stored once as a part', async () => {
      const snapshot = steps.filter((r) => kindOf(r) === 'tool.completed')[2]!;
      const value = snapshot.result as { type: string; size: number; digest: string; base64: string };
      expect(value).toMatchObject({ type: 'bytes', size: BIG.length });
      expect(Buffer.from(value.base64, 'base64').equals(Buffer.from(BIG))).toBe(true);
      // On disk the line holds a part reference (stepchain/v3, PARTS.md), not 350 KB of base64; reading it back restores the value.
      let line = '';
      for await (const l of first.run.journal.lines({ from: snapshot.seq, to: snapshot.seq })) line = l.text;
      expect(line).toContain(PART_MARKER);
      expect(line.length).toBeLessThan(4096);
      expect((await first.run.journal.get(snapshot.seq))?.result).toEqual(value);
    });

    test('nothing is pending and the continuation point is the last record', async () => {
      expect(await first.run.pendingEffects()).toEqual([]);
      expect((await first.run.continuationPoint()).seq).toBe(steps.length - 1);
    });

    test('the journal verifies, and a receipt exports and verifies', async () => {
      expect((await first.run.journal.verify()).ok).toBe(true);
      const out = join(root, 'ai-run-a.tar.gz');
      await exportReceipt(first.run.journal, { out });
      const report = await verifyReceipt(await readFile(out));
      expect(report.ok, JSON.stringify(report.problems)).toBe(true);
    });

    test('a second identical run diffs as same', async () => {
      // `ref` is the started record's random step_id: compared as the offset it points back (refs.ts).
      const report = await diff(
        await withRefsAsOffsets(first.run.journal),
        await withRefsAsOffsets(second.run.journal),
      );
      expect(report.divergences).toEqual([]);
      expect(report.same).toBe(true);
    });

    test('the provider requests are exactly those the SDK builds without stepchain: no stepchain field, no durable id', async () => {
      const bare = await runConversation(undefined, agentTools());
      expect(isDeepStrictEqual(requests(first.mock), requests(bare.mock))).toBe(true);
      const sent = JSON.stringify(requests(first.mock));
      expect(sent).not.toMatch(/stepchain/i);
      for (const r of steps) expect(sent).not.toContain(r.step_id);
      expect(sent).not.toContain(first.run.runId);
    });
  });

  describe('failures are recorded, never lost', () => {
    const noTools = async (id: string): Promise<Run> => startRun(store, { runId: id });
    const streamModel = (chunks: unknown[], opts: { throwAfter?: boolean } = {}) =>
      new MockLanguageModelV3({
        doStream: async () => {
          const base = simulateReadableStream({
            chunks: chunks as never[],
            initialDelayInMs: null,
            chunkDelayInMs: null,
          });
          if (opts.throwAfter !== true) return { stream: base };
          const reader = base.getReader();
          return {
            stream: new ReadableStream({
              async pull(c) {
                const r = await reader.read();
                if (r.done) c.error(new Error('socket reset'));
                else c.enqueue(r.value);
              },
            }),
          };
        },
      });
    const partial = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 'a' },
      { type: 'text-delta', id: 'a', delta: 'partial ' },
    ];

    test('a provider error is a failed model request, and the error still reaches the caller', async () => {
      const run = await noTools('ai-fail-provider');
      const mock = new MockLanguageModelV3({
        doGenerate: async () => {
          throw new Error('HTTP 500');
        },
      });
      await expect(
        generateText({
          model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
          prompt: 'x',
          maxRetries: 0,
        }),
      ).rejects.toThrow('HTTP 500');
      const rs = await records(run);
      expect(rs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed']);
      expect((rs[2] as unknown as { error: unknown }).error).toMatchObject({ message: 'HTTP 500' });
    });

    test('an error part ends the stream as a failed request with the text that had arrived', async () => {
      const run = await noTools('ai-fail-error-part');
      const model = wrapLanguageModel({
        model: streamModel([
          ...partial,
          { type: 'error', error: new Error('upstream 500') },
          { type: 'finish', finishReason: { unified: 'error', raw: undefined }, usage: usage(1, 1) },
        ]),
        middleware: stepchainMiddleware(run),
      });
      const result = streamText({ model, prompt: 'x', maxRetries: 0, onError: () => undefined });
      for await (const _ of result.fullStream) {
        /* drain */
      }
      const rs = await records(run);
      expect(rs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed']);
      expect(rs[2]!.result).toEqual({ content: [{ type: 'text', text: 'partial ' }] });
      expect((rs[2] as unknown as { error: unknown }).error).toMatchObject({ message: 'upstream 500' });
    });

    test('a stream that throws is a failed request', async () => {
      const run = await noTools('ai-fail-throw');
      const model = wrapLanguageModel({
        model: streamModel(partial, { throwAfter: true }),
        middleware: stepchainMiddleware(run),
      });
      const result = streamText({ model, prompt: 'x', maxRetries: 0, onError: () => undefined });
      await expect(
        (async () => {
          for await (const _ of result.fullStream) {
            /* drain */
          }
        })(),
      ).rejects.toThrow('socket reset');
      const rs = await records(run);
      expect(rs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed']);
      expect((rs[2] as unknown as { error: unknown }).error).toMatchObject({ message: 'socket reset' });
    });

    test('an aborted stream is a failed request (the SDK never cancels the provider stream; the signal is watched)', async () => {
      const run = await noTools('ai-fail-abort');
      const controller = new AbortController();
      // A provider stream that keeps going after the abort (the SDK does not cancel it): 'partial ' then a delta every 2 ms.
      let n = 0;
      const mock = new MockLanguageModelV3({
        doStream: async () => ({
          stream: new ReadableStream({
            async pull(c) {
              if (n < partial.length) c.enqueue(partial[n++] as never);
              else if (n++ < 300) {
                await new Promise((r) => setTimeout(r, 2));
                c.enqueue({ type: 'text-delta', id: 'a', delta: '.' } as never);
              } else c.close();
            },
          }),
        }),
      });
      const result = streamText({
        model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
        prompt: 'x',
        maxRetries: 0,
        abortSignal: controller.signal,
      });
      const seen: string[] = [];
      for await (const part of result.fullStream) {
        seen.push(part.type);
        if (part.type === 'text-delta' && seen.filter((t) => t === 'text-delta').length === 3)
          controller.abort(new Error('user stop'));
      }
      expect(seen).toContain('abort');
      await expect
        .poll(async () => (await records(run)).map(kindOf))
        .toEqual(['run.started', 'model.started', 'model.failed']);
      const rs = await records(run);
      // What had arrived when the signal fired: the first deltas, not the 300 the provider sent after.
      expect((rs[2]!.result as { content: { text: string }[] }).content[0]!.text).toMatch(/^partial \.{2,}$/);
      expect((rs[2]!.result as { content: { text: string }[] }).content[0]!.text.length).toBeLessThan(100);
      expect((rs[2] as unknown as { error: unknown }).error).toMatchObject({ message: 'user stop' });
    });

    test('a tool result JSON cannot represent stays a success: the SDK gets the real value, the journal a marker in its place (RUNS.md §6)', async () => {
      const run = await noTools('ai-fail-value');
      // (A function in a result the SDK itself cannot take: it clones results. test/runtime/resolve.test.ts has those.)
      const cyclic: Record<string, unknown> = { a: 1, ratio: Number.NaN };
      cyclic['self'] = cyclic;
      const tools = recordTools(run, { loop: tool({ inputSchema: z.object({}), execute: async () => cyclic }) });
      const mock = new MockLanguageModelV3({
        doGenerate: [
          {
            content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'loop', input: '{}' }],
            finishReason: { unified: 'tool-calls', raw: undefined },
            usage: usage(1, 1),
            warnings: [],
          },
        ],
      });
      const res = await generateText({
        model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
        tools,
        prompt: 'x',
        maxRetries: 0,
      });
      expect(res.steps[0]!.content.some((p) => p.type === 'tool-error')).toBe(false);
      const toolResult = res.steps[0]!.content.find((p) => p.type === 'tool-result') as
        { output: Record<string, unknown> } | undefined;
      expect(toolResult?.output.a).toBe(1);
      expect(toolResult?.output.ratio).toBeNaN();
      expect(toolResult?.output.self).toBe(toolResult?.output);
      const effects = await run.effects();
      expect(effects.map((e) => e.status)).toEqual(['completed']);
      expect(effects[0]!.result).toEqual({
        a: 1,
        ratio: { unrepresentable: 'the number NaN' },
        self: { unrepresentable: 'a reference back to an enclosing value (a cycle)' },
      });
      expect(await run.pendingEffects()).toEqual([]);
    });
  });
});

export type { LanguageModelMiddleware };
