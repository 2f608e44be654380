// Crash child for test/adapters/crash.test.ts: an Agents SDK run recorded with stepchain/openai-agents (the
// built package, as a user imports it). argv: <store dir> <run id> [mode]. Mode "first" (default) starts the
// run; its second tool call never returns: it prints "in-execute <callId>" from inside that tool's execute
// and waits there to be killed. Mode "rerun" runs the same agent again on the resumed run, every tool
// returning; "rerun-read-only" does so with the tool declared read-only; "resume" resolves the lost call as
// done and continues from resumeInput (printing "input <json>" with the items the model received). Each execute prints
// "executed <city>"; the end prints "done <text>" or "refused <code> <pending effect id>" (exit 1).
import { Agent, Runner, setTraceProcessors, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { FileStore, resumeRun, startRun } from 'stepchain';
import { agentsRecorder, resumeInput } from 'stepchain/openai-agents';

const [dir, runId, mode = 'first'] = process.argv.slice(2);
const store = new FileStore(dir, { fsync: 'always' });
const run = mode === 'first' ? await startRun(store, { runId }) : await resumeRun(store, runId);
const recorder = agentsRecorder(run, {
  store,
  effects: mode === 'rerun-read-only' ? { weather: { kind: 'read-only' } } : {},
});
setTraceProcessors([recorder]);
setTracingDisabled(false);
const weather = recorder.tool({
  name: 'weather',
  description: 'weather',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }, _context, details) => {
    process.stdout.write(`executed ${city}\n`);
    if (city === 'Oslo' && mode === 'first') {
      process.stdout.write(`in-execute ${details?.toolCall?.callId}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    }
    return { city, tempC: 21 };
  },
});
const model = recorder.model(
  new ScriptedModel([
    [functionCall('weather', { city: 'Paris' }, { callId: 'call-paris' })],
    [functionCall('weather', { city: 'Oslo' }, { callId: 'call-oslo' })],
    [assistantMessage('sunny')],
  ]),
  'scripted',
);
let input = 'weather?';
let agentModel = model;
if (mode === 'resume') {
  for (const e of await run.pendingEffects())
    await run.resolveEffect(
      e.id,
      { done: true, result: { city: 'Oslo', tempC: 5 } },
      { reason: 'the weather log has it', by: 'test' },
    );
  input = await resumeInput(run);
  agentModel = recorder.model(new ScriptedModel([[assistantMessage('sunny')]]), 'scripted');
}
try {
  const result = await new Runner().run(
    new Agent({ name: 'bot', instructions: 'answer', model: agentModel, tools: [weather] }),
    input,
  );
  if (mode === 'resume') process.stdout.write(`input ${JSON.stringify(input)}\n`);
  await recorder.flush();
  await run.complete(result.finalOutput);
  process.stdout.write(`done ${result.finalOutput}\n`);
} catch (e) {
  process.stdout.write(`refused ${e.code} ${e.pendingEffect}\n`);
  process.exitCode = 1;
}
