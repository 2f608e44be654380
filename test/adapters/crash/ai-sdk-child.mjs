// Crash child for test/adapters/crash.test.ts: an AI SDK run recorded with stepchain/ai-sdk (the built
// package, as a user imports it). argv: <store dir> <run id> [mode]. Mode "first" (default) starts the run;
// its second tool call never returns: it prints "in-execute <callId>" from inside that tool's execute and
// waits there to be killed. Mode "rerun" runs the same agent again on the resumed run, every tool
// returning; "rerun-read-only" does so with the tool declared read-only. Each execute prints
// "executed <city>"; the end prints "done <text>" or "refused <code> <pending effect id>" (exit 1).
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { FileStore, resumeRun, startRun } from 'stepchain';
import { recordTools, stepchainMiddleware } from 'stepchain/ai-sdk';

const [dir, runId, mode = 'first'] = process.argv.slice(2);
const store = new FileStore(dir, { fsync: 'always' });
const run = mode === 'first' ? await startRun(store, { runId }) : await resumeRun(store, runId);
const usage = { inputTokens: { total: 1, noCache: 1 }, outputTokens: { total: 1, text: 1 } };
const call = (id, city) => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'weather', input: JSON.stringify({ city }) }],
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
});
const mock = new MockLanguageModelV3({
  doGenerate: [
    call('call-paris', 'Paris'),
    call('call-oslo', 'Oslo'),
    {
      content: [{ type: 'text', text: 'sunny' }],
      finishReason: { unified: 'stop', raw: undefined },
      usage,
      warnings: [],
    },
  ],
});
const weather = tool({
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }, { toolCallId }) => {
    process.stdout.write(`executed ${city}\n`);
    if (city === 'Oslo' && mode === 'first') {
      process.stdout.write(`in-execute ${toolCallId}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    }
    return { city, tempC: 21 };
  },
});
const effects = mode === 'rerun-read-only' ? { weather: { kind: 'read-only' } } : {};
try {
  const { text } = await generateText({
    model: wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) }),
    tools: recordTools(run, { weather }, { effects }),
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    prompt: 'weather?',
  });
  await run.complete(text);
  process.stdout.write(`done ${text}\n`);
} catch (e) {
  process.stdout.write(`refused ${e.code} ${e.pendingEffect}\n`);
  process.exitCode = 1;
}
