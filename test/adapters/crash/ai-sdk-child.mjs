// Crash child for test/adapters/crash.test.ts: an AI SDK run recorded with stepchain/ai-sdk (the built
// package, as a user imports it) whose second tool call never returns. It prints "in-execute <callId>"
// from inside that tool's execute and waits there to be killed. argv: <store dir> <run id>.
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { FileStore, startRun } from 'stepchain';
import { recordTools, stepchainMiddleware } from 'stepchain/ai-sdk';

const [dir, runId] = process.argv.slice(2);
const run = await startRun(new FileStore(dir, { fsync: 'always' }), { runId });
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const call = (id, city) => ({ content: [{ type: 'tool-call', toolCallId: id, toolName: 'weather', input: JSON.stringify({ city }) }], finishReason: { unified: 'tool-calls', raw: undefined }, usage, warnings: [] });
const mock = new MockLanguageModelV3({ doGenerate: [call('call-paris', 'Paris'), call('call-oslo', 'Oslo'), { content: [{ type: 'text', text: 'never' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }] });
const weather = tool({
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }, { toolCallId }) => {
    if (city === 'Oslo') {
      process.stdout.write(`in-execute ${toolCallId}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    }
    return { city, tempC: 21 };
  },
});
await generateText({ model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }), tools: recordTools(run, { weather }), stopWhen: stepCountIs(5), maxRetries: 0, prompt: 'weather?' });
