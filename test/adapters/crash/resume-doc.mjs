// Runs the resume example of docs/crash-safe-resume.md, as written, on a run the AI SDK crash child left
// with a pending effect. argv: <store dir> <run id>. Prints "executed <city>" per tool execution, the
// prompts the model received (as JSON, one "prompt <json>" line each) and "done".
import { readFileSync } from 'node:fs';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { FileStore, resumeRun } from 'stepchain';
import { recordTools, resumeMessages, stepchainMiddleware } from 'stepchain/ai-sdk';

const [dir, runId] = process.argv.slice(2);
const doc = readFileSync(new URL('../../../docs/crash-safe-resume.md', import.meta.url), 'utf8');
const example = /<!-- resume-example[^>]*-->\n```javascript\n([\s\S]*?)```/.exec(doc)[1];
if (example.trim().split('\n').length > 5) throw new Error('the resume example is longer than 5 lines');
const store = new FileStore(dir, { fsync: 'always' });
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const answers = [
  {
    content: [
      { type: 'tool-call', toolCallId: 'call-oslo-2', toolName: 'weather', input: JSON.stringify({ city: 'Oslo' }) },
    ],
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage,
    warnings: [],
  },
  {
    content: [{ type: 'text', text: 'sunny' }],
    finishReason: { unified: 'stop', raw: undefined },
    usage,
    warnings: [],
  },
];
const model = new MockLanguageModelV3({
  doGenerate: async (options) => {
    process.stdout.write(`prompt ${JSON.stringify(options.prompt)}\n`);
    return answers.shift();
  },
});
const tools = {
  weather: tool({
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      process.stdout.write(`executed ${city}\n`);
      return { city, tempC: 21 };
    },
  }),
};
const AsyncFunction = (async () => {}).constructor;
await new AsyncFunction(
  'store',
  'runId',
  'model',
  'tools',
  'resumeRun',
  'resumeMessages',
  'generateText',
  'wrapLanguageModel',
  'stepchainMiddleware',
  'recordTools',
  'stepCountIs',
  example,
)(
  store,
  runId,
  model,
  tools,
  resumeRun,
  resumeMessages,
  generateText,
  wrapLanguageModel,
  stepchainMiddleware,
  recordTools,
  stepCountIs,
);
process.stdout.write('done\n');
