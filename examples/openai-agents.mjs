// Recording an OpenAI Agents SDK workflow with stepchain/openai-agents — runnable offline: the models are
// the SDK's own fake (`ScriptedModel`), and the recorder replaces the trace processors, so nothing is sent
// anywhere. With a real model, pass `recorder.model(new OpenAIResponsesModel(...))` or
// `new Runner({ modelProvider: recorder.provider(new OpenAIProvider()) })`.
// Run it: `npm run build && node examples/openai-agents.mjs [store-dir]`.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, run as runAgent, setTraceProcessors } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import { FileStore, startRun } from 'stepchain';
import { agentsRecorder } from 'stepchain/openai-agents';

// The setup: a run in a store, a recorder registered as the trace processor.
const store = new FileStore(process.argv[2] ?? join(mkdtempSync(join(tmpdir(), 'stepchain-example-')), 'runs'));
const run = await startRun(store, { agent: 'triage', labels: { env: 'example' } });
const recorder = agentsRecorder(run, { store });
setTraceProcessors([recorder]);

const weather = recorder.tool({
  name: 'weather',
  description: 'the weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, tempC: 21 }),
});
const specialist = new Agent({
  name: 'specialist',
  instructions: 'answer with the weather',
  tools: [weather],
  model: recorder.model(
    new ScriptedModel([
      [functionCall('weather', { city: 'Paris' }, { callId: 'call-1' })],
      [assistantMessage('It is 21°C in Paris.')],
    ]),
    'scripted',
  ),
});
const triage = Agent.create({
  name: 'triage',
  instructions: 'route to the specialist',
  handoffs: [specialist],
  model: recorder.model(
    new ScriptedModel([[functionCall('transfer_to_specialist', {}, { callId: 'h-1' })]]),
    'scripted',
  ),
});
const result = await runAgent(triage, 'Weather in Paris?');
await recorder.flush();
await run.complete(result.finalOutput);

for (const r of [run, ...recorder.childRuns()]) {
  const report = await r.journal.verify();
  const parent = r.identity.parent_run_id ? `, child of ${r.identity.parent_run_id}` : '';
  console.log(
    `run ${r.runId} (${r.identity.agent}${parent}): ${report.steps} records, verified ${report.ok ? 'ok' : 'NOT ok'}`,
  );
  for await (const rec of r.journal.read())
    console.log(`  ${String(rec.seq).padStart(2)} ${rec.kind}${rec.tool_call?.name ? ` ${rec.tool_call.name}` : ''}`);
}
console.log(`answer: ${result.finalOutput}`);
