// Deterministic replay tests (docs/replay-testing.md): record an AI SDK agent once, then in CI
// replay it against its recorded journal — no live model, no live tools — and assert the agent still asks
// exactly what it asked. Runnable offline (the model is the SDK's mock): `npm run build &&
// npx vitest run --config examples/vitest.config.mjs`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { expect, test } from 'vitest';
import { z } from 'zod';
import { FileStore, startRun } from 'stepchain';
import { replayFrom } from 'stepchain/replay';
import { recordTools, replayModel, replayTools, stepchainMiddleware } from 'stepchain/ai-sdk';
import { expectSameRun } from 'stepchain/testing';

// The agent under test: the code whose regressions the replay catches.
const weather = tool({
  description: 'the weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
async function agent(run, model, tools, question = 'Weather in Paris?') {
  const wrapped = wrapLanguageModel({ model, middleware: stepchainMiddleware(run) });
  const { text } = await generateText({
    model: wrapped,
    tools: recordTools(run, tools),
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    prompt: question,
  });
  await run.complete({ text });
  return text;
}

const usage = { inputTokens: { total: 20, noCache: 20 }, outputTokens: { total: 9, text: 9 } };
const liveModel = () =>
  new MockLanguageModelV3({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Paris"}' }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'It is 21°C in Paris.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      },
    ],
  });

const store = new FileStore(join(mkdtempSync(join(tmpdir(), 'stepchain-replay-')), 'runs'));
// Recorded once (in a real project: a journal or receipt committed beside the test).
const recorded = await startRun(store, { runId: 'recorded', input: 'Weather in Paris?' });
await agent(recorded, liveModel(), { weather });

test('the agent replays its recorded run exactly, with no live model or tool', async () => {
  const replay = await replayFrom(recorded.journal); // verifies the recording first
  const run = await startRun(store, { input: replay.runInput, labels: replay.labels });
  const text = await agent(run, replayModel(replay), replayTools(replay, { weather }));
  expect(text).toBe('It is 21°C in Paris.');
  await expectSameRun(recorded.journal, run.journal); // throws with the first divergence
});

test('a changed prompt fails at the first request that differs, with the field diff', async () => {
  const replay = await replayFrom(recorded.journal);
  const run = await startRun(store, { input: replay.runInput });
  await expect(
    agent(run, replayModel(replay), replayTools(replay, { weather }), 'Weather in Paris, please?'),
  ).rejects.toThrow('/prompt/0/content/0/text');
});
