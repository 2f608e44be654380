/**
 * One scripted OpenAI Agents SDK workflow for the adapter tests: the SDK's
 * own fake model (`ScriptedModel` from `@openai/agents/testing`), a triage agent with an input guardrail
 * handing off to a specialist, which calls two tools in a parallel pair, a tool that throws, a tool with a
 * large binary result and a researcher agent used as a tool; then a streamed run. No network: every agent
 * has a Model instance and the recorder replaces the trace processors (so the OpenAI exporter is gone).
 */
import { Agent, Runner, setTraceProcessors, setTracingDisabled } from '@openai/agents';
import { assistantMessage, functionCall, ScriptedModel } from '@openai/agents/testing';
import { z } from 'zod';
import type { AgentsRecorder } from '../../src/adapters/openai-agents/index.js';

/** 96 KiB of bytes: above the default blob threshold (64 KiB). */
export const BIG = new Uint8Array(96 * 1024).map((_, i) => (i * 17) % 253);

export interface Workflow {
  finalOutput: unknown;
  streamedOutput: unknown;
  lastAgent: string | undefined;
  models: ScriptedModel[];
}

/** Runs the scripted workflow; with a recorder, every model and tool goes through it (tracing on unless told). */
export async function runWorkflow(
  recorder: AgentsRecorder | undefined,
  options: { tracing?: boolean } = {},
): Promise<Workflow> {
  setTraceProcessors(recorder === undefined ? [] : [recorder]);
  setTracingDisabled(options.tracing === false); // vitest sets NODE_ENV=test, which turns tracing off
  const model = (m: ScriptedModel) => (recorder === undefined ? m : recorder.model(m, 'scripted'));
  const defineTool: AgentsRecorder['tool'] =
    recorder === undefined ? (await import('@openai/agents')).tool : recorder.tool;

  const weather = defineTool({
    name: 'weather',
    description: 'the weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      return { city, tempC: city === 'Paris' ? 21 : 5, at: new Date(0) };
    },
  });
  const explode = defineTool({
    name: 'explode',
    description: 'always fails',
    parameters: z.object({}),
    execute: async (): Promise<string> => {
      throw new Error('boom');
    },
  });
  const snapshot = defineTool({
    name: 'snapshot',
    description: 'a large binary result',
    parameters: z.object({}),
    execute: async () => {
      return { mediaType: 'application/octet-stream', bytes: BIG };
    },
  });

  const researcherModel = new ScriptedModel([[assistantMessage('Paris is in France.')]]);
  const researcher = new Agent({ name: 'researcher', instructions: 'research', model: model(researcherModel) });
  const researcherTool = researcher.asTool({ toolName: 'ask_researcher', toolDescription: 'ask the researcher' });
  const specialistModel = new ScriptedModel([
    [
      functionCall('weather', { city: 'Paris' }, { callId: 'w1' }),
      functionCall('weather', { city: 'Oslo' }, { callId: 'w2' }),
    ],
    [
      functionCall('explode', {}, { callId: 'x1' }),
      functionCall('snapshot', {}, { callId: 's1' }),
      functionCall('ask_researcher', { input: 'where is Paris?' }, { callId: 'r1' }),
    ],
    [assistantMessage('Paris 21C, Oslo 5C; Paris is in France.')],
  ]);
  const specialist = new Agent({
    name: 'specialist',
    instructions: 'answer',
    model: model(specialistModel),
    tools: [weather, explode, snapshot, recorder === undefined ? researcherTool : recorder.wrapTool(researcherTool)],
  });
  const triageModel = new ScriptedModel([[functionCall('transfer_to_specialist', {}, { callId: 'h1' })]]);
  const triage = Agent.create({
    name: 'triage',
    instructions: 'route',
    model: model(triageModel),
    handoffs: [specialist],
    inputGuardrails: [
      { name: 'no_secrets', execute: async () => ({ tripwireTriggered: false, outputInfo: { checked: true } }) },
    ],
  });
  const runner = new Runner({ workflowName: 'weather' });
  const result = await runner.run(triage, 'What is the weather in Paris and Oslo?');

  const summarizerModel = new ScriptedModel([[assistantMessage('All done.')]]);
  const summarizer = new Agent({ name: 'summarizer', instructions: 'summarize', model: model(summarizerModel) });
  const streamed = await runner.run(summarizer, 'Summarize.', { stream: true });
  for await (const _ of streamed) {
    /* drain */
  }
  await streamed.completed;
  await recorder?.flush();
  setTracingDisabled(false);
  return {
    finalOutput: result.finalOutput,
    streamedOutput: streamed.finalOutput,
    lastAgent: result.lastAgent?.name,
    models: [triageModel, specialistModel, researcherModel, summarizerModel],
  };
}
