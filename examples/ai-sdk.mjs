// Recording a Vercel AI SDK agent with stepchain/ai-sdk — runnable offline: the model is the SDK's own
// mock (`MockLanguageModelV3`), so swap in a real provider model (e.g. openai('gpt-4o')) and nothing else
// changes. Run it: `npm run build && node examples/ai-sdk.mjs [store-dir]`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { FileStore, startRun } from 'stepchain';
import { recordTools, stepchainMiddleware } from 'stepchain/ai-sdk';

const usage = { inputTokens: { total: 20, noCache: 20 }, outputTokens: { total: 9, text: 9 } };
const provider = new MockLanguageModelV3({
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
const weather = tool({
  description: 'the weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});

// The setup: a run in a store, the model wrapped with the middleware, the tools recorded.
const store = new FileStore(process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'stepchain-example-')), 'runs'));
const run = await startRun(store, { agent: 'weather-bot', labels: { env: 'example' } });
const model = wrapLanguageModel({ model: provider, middleware: stepchainMiddleware(run) });
const { text } = await generateText({
  model,
  tools: recordTools(run, { weather }),
  stopWhen: stepCountIs(5),
  prompt: 'Weather in Paris?',
});
await run.complete({ text });

for await (const r of run.journal.read())
  console.log(`${String(r.seq).padStart(2)} ${r.kind}${r.tool_call?.name ? ` ${r.tool_call.name}` : ''}`);
const report = await run.journal.verify();
console.log(`answer: ${text}`);
console.log(`run ${run.runId}: ${report.steps} records, verified ${report.ok ? 'ok' : 'NOT ok'}, head ${report.head}`);
await run.close();
