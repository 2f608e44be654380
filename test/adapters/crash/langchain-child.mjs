// Crash child for test/adapters/crash.test.ts: a LangChain agent (createAgent, LangChain's scriptable fake
// chat model) recorded with stepchain/langchain (the built package, as a user imports it). argv: <store
// dir> <run id> [mode]. Mode "first" (default) records a new run; its second tool call never returns: it
// prints "in-execute <callId>" from inside the tool and waits there to be killed. Mode "rerun" runs the same
// agent again with the handler resuming into the run (`resume`), every tool returning; "rerun-read-only"
// does so with the tool declared read-only. Each tool call prints "executed <city>"; the end prints
// "done <text>" or "refused <code> <pending effect id>" (exit 1).
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { createAgent } from 'langchain';
import { z } from 'zod';
import { FileStore, resumeRun } from 'stepchain';
import { StepchainCallbackHandler } from 'stepchain/langchain';

const [dir, runId, mode = 'first'] = process.argv.slice(2);
const store = new FileStore(dir, { fsync: 'always' });
const weather = tool(
  async ({ city }, config) => {
    process.stdout.write(`executed ${city}\n`);
    if (city === 'Oslo' && mode === 'first') {
      process.stdout.write(`in-execute ${config?.toolCall?.id ?? 'call-oslo'}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    }
    return JSON.stringify({ city, tempC: 21 });
  },
  { name: 'weather', description: 'current weather', schema: z.object({ city: z.string() }) },
);
const model = fakeModel()
  .respondWithTools([{ name: 'weather', args: { city: 'Paris' }, id: 'call-paris' }])
  .respondWithTools([{ name: 'weather', args: { city: 'Oslo' }, id: 'call-oslo' }])
  .respond(new AIMessage('sunny'));
const handler = new StepchainCallbackHandler({
  store,
  runId: () => runId,
  ...(mode === 'first' ? {} : { resume: await resumeRun(store, runId) }),
  ...(mode === 'rerun-read-only' ? { effects: { weather: { kind: 'read-only' } } } : {}),
});
/** The runtime's refusal, wherever LangChain wrapped it. */
const refusalOf = (e) => {
  for (let k = 0; k < 8 && e; k++, e = e.cause) if (e.code === 'EFFECT_PENDING' || e.code === 'EFFECT_EXISTS') return e;
  return null;
};
try {
  const out = await createAgent({ model, tools: [weather] }).invoke(
    { messages: [new HumanMessage('weather?')] },
    { callbacks: [handler] },
  );
  await handler.flush();
  process.stdout.write(`done ${out.messages.at(-1).content}\n`);
} catch (e) {
  const r = refusalOf(e);
  if (r === null) throw e;
  process.stdout.write(`refused ${r.code} ${r.pendingEffect}\n`);
  process.exitCode = 1;
}
