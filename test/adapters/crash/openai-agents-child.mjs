// Crash child for test/adapters/crash.test.ts: an Agents SDK run recorded with stepchain/openai-agents
// (the built package, as a user imports it) whose second tool call never returns. It prints
// "in-execute <callId>" from inside that tool's execute and waits there to be killed. argv: <store dir> <run id>.
import { Agent, Runner, setTraceProcessors, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { FileStore, startRun } from 'stepchain';
import { agentsRecorder } from 'stepchain/openai-agents';

const [dir, runId] = process.argv.slice(2);
const store = new FileStore(dir, { fsync: 'always' });
const run = await startRun(store, { runId });
const recorder = agentsRecorder(run, { store });
setTraceProcessors([recorder]);
setTracingDisabled(false);
const weather = recorder.tool({
  name: 'weather', description: 'weather', parameters: z.object({ city: z.string() }),
  execute: async ({ city }, _context, details) => {
    if (city === 'Oslo') {
      process.stdout.write(`in-execute ${details?.toolCall?.callId}\n`);
      await new Promise(() => setInterval(() => undefined, 1000));
    }
    return { city, tempC: 21 };
  },
});
const model = recorder.model(new ScriptedModel([
  [functionCall('weather', { city: 'Paris' }, { callId: 'call-paris' })],
  [functionCall('weather', { city: 'Oslo' }, { callId: 'call-oslo' })],
  [assistantMessage('never')],
]), 'scripted');
await new Runner().run(new Agent({ name: 'bot', instructions: 'answer', model, tools: [weather] }), 'weather?');
