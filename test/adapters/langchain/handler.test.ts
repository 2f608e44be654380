/**
 * The LangChain callback handler on real LangChain code, offline: a tool-calling agent (`createAgent`
 * with LangChain's scriptable fake chat model) whose model asks for two tools at once and then for one
 * that throws; streamed tokens assembled into the final message; a failing model. Each run is a stepchain
 * run that verifies, and a second identical run diffs as the same.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Annotation, Command, END, MemorySaver, START, StateGraph, interrupt } from '@langchain/langgraph';
import { createAgent } from 'langchain';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { FileStore, MemoryStore, type Run, type StepRecord } from '../../../src/index.js';
import { diff } from '../../../src/replay.js';
import { StepchainCallbackHandler, resumeBaseMessages } from '../../../src/adapters/langchain/index.js';
import { tempDir } from '../../helpers/tmp.js';

const root = tempDir('stepchain-langchain-');
let n = 0;

function agent(osloC = 5) {
  const weather = tool(
    async ({ city }: { city: string }) => JSON.stringify({ city, tempC: city === 'Paris' ? 21 : osloC }),
    {
      name: 'weather',
      description: 'current weather',
      schema: z.object({ city: z.string() }),
    },
  );
  const explode = tool(
    async (): Promise<string> => {
      throw new Error('boom');
    },
    { name: 'explode', description: 'always fails', schema: z.object({}) },
  );
  const model = fakeModel()
    .respondWithTools([
      { name: 'weather', args: { city: 'Paris' }, id: 'c1' },
      { name: 'weather', args: { city: 'Oslo' }, id: 'c2' },
    ])
    .respondWithTools([{ name: 'explode', args: {}, id: 'c3' }])
    .respond(new AIMessage('Paris 21C, Oslo 5C.'));
  return createAgent({ model, tools: [weather, explode] });
}

async function records(run: Run): Promise<StepRecord[]> {
  const out: StepRecord[] = [];
  for await (const r of run.journal.read()) out.push(r);
  return out;
}

const kindOf = (r: StepRecord): string => (r.v !== 1 ? r.kind : 'v1');

async function recordAgentRun(store: FileStore, osloC = 5) {
  const handler = new StepchainCallbackHandler({ store, agent: 'weather-agent', labels: { env: 'test' } });
  const out = await agent(osloC).invoke({ messages: [new HumanMessage('weather?')] }, { callbacks: [handler] });
  const runs = await handler.runs();
  return { out, runs };
}

describe('a tool-calling agent recorded through callbacks', () => {
  test('model requests and tool effects are recorded as boundaries, the tool error as a failed effect, and the run verifies', async () => {
    const store = new FileStore(`${root}/s${n++}`, { fsync: 'none' });
    const { out, runs } = await recordAgentRun(store);
    expect(out.messages.at(-1)?.content).toBe('Paris 21C, Oslo 5C.');
    expect(runs).toHaveLength(1);
    const run = runs[0]!;
    expect(run.identity).toEqual({ agent: 'weather-agent', labels: { env: 'test' } });
    const recs = await records(run);
    const kinds = recs.map(kindOf);
    expect(kinds[0]).toBe('run.started');
    expect(kinds.at(-1)).toBe('run.completed');
    expect(kinds.filter((k) => k === 'model.started')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'model.completed')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'tool.started')).toHaveLength(3);
    expect(kinds.filter((k) => k === 'tool.completed')).toHaveLength(2);
    expect(kinds.filter((k) => k === 'tool.failed')).toHaveLength(1);

    // The first model request asked for the two weather calls; each effect names its call and its outcome.
    const firstModel = recs.find((r) => kindOf(r) === 'model.completed')!;
    expect(firstModel.tool_call).toEqual([
      { id: 'c1', name: 'weather', arguments: { city: 'Paris' } },
      { id: 'c2', name: 'weather', arguments: { city: 'Oslo' } },
    ]);
    expect(firstModel.prompt).toEqual([{ role: 'human', content: 'weather?' }]);
    const effects = await run.effects();
    expect(effects.map((e) => [e.tool, e.callId, e.status])).toEqual([
      ['weather', 'c1', 'completed'],
      ['weather', 'c2', 'completed'],
      ['explode', 'c3', 'failed'],
    ]);
    expect(effects[0]!.args).toEqual({ city: 'Paris' });
    expect(effects[0]!.result).toMatchObject({
      role: 'tool',
      tool_call_id: 'c1',
      content: '{"city":"Paris","tempC":21}',
      status: 'success',
    });
    expect(effects[2]!.error).toMatchObject({ message: 'boom' });
    expect(await run.pendingEffects()).toEqual([]);
    // Started records are numbered in the run, so identical runs name them alike.
    expect(
      recs.filter((r) => kindOf(r).endsWith('.started') && kindOf(r) !== 'run.started').map((r) => r.step_id),
    ).toEqual(['model-1', 'tool-2', 'tool-3', 'model-4', 'tool-5', 'model-6']);
    expect((await run.journal.verify()).problems).toEqual([]);
  });

  test('a second identical run diffs as the same', async () => {
    const store = new FileStore(`${root}/s${n++}`, { fsync: 'none' });
    const a = (await recordAgentRun(store)).runs[0]!;
    const b = (await recordAgentRun(store)).runs[0]!;
    expect(a.runId).not.toBe(b.runId);
    const report = await diff(a.journal, b.journal);
    expect(report.divergences).toEqual([]);
    expect(report.same).toBe(true);
    // …and the diff is not blind: a run whose tool answered differently diverges at that tool's outcome.
    const c = (await recordAgentRun(store, 6)).runs[0]!;
    const changed = await diff(a.journal, c.journal);
    expect(changed.same).toBe(false);
    const at = changed.divergences[0]!;
    expect(JSON.stringify(at)).toContain('tempC');
  });
});

describe('models on their own', () => {
  test('streamed tokens are assembled into the recorded message', async () => {
    const store = new MemoryStore();
    const handler = new StepchainCallbackHandler({ store });
    const model = new FakeListChatModel({ responses: ['It says HI'] });
    let text = '';
    for await (const chunk of await model.stream([new HumanMessage('read it')], { callbacks: [handler] }))
      text += String(chunk.content);
    expect(text).toBe('It says HI');
    const [run] = await handler.runs();
    const recs = await records(run!);
    expect(recs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.completed', 'run.completed']);
    const done = recs[2]!;
    expect(done.result).toMatchObject({ role: 'ai', content: 'It says HI' });
    expect(done.meta).toMatchObject({ streamed_tokens: 10 });
  });

  test('a model that throws leaves a failed request and a failed run', async () => {
    const store = new MemoryStore();
    const handler = new StepchainCallbackHandler({ store });
    const model = fakeModel().alwaysThrow(new Error('rate limited'));
    await expect(model.invoke([new HumanMessage('hi')], { callbacks: [handler] })).rejects.toThrow('rate limited');
    const [run] = await handler.runs();
    const recs = await records(run!);
    expect(recs.map(kindOf)).toEqual(['run.started', 'model.started', 'model.failed', 'run.failed']);
    expect(recs[2]!.v !== 1 && recs[2]!.error).toMatchObject({ name: 'Error', message: 'rate limited' });
  });
});

describe('the run tree', () => {
  test('an agent called as a tool records into a child run that names its parent', async () => {
    const store = new MemoryStore();
    const handler = new StepchainCallbackHandler({ store });
    const inner = createAgent({ model: fakeModel().respond(new AIMessage('inner answer')), tools: [] });
    const ask = tool(
      async ({ q }: { q: string }) =>
        String((await inner.invoke({ messages: [new HumanMessage(q)] })).messages.at(-1)!.content),
      {
        name: 'ask',
        description: 'ask the inner agent',
        schema: z.object({ q: z.string() }),
      },
    );
    const outer = createAgent({
      model: fakeModel()
        .respondWithTools([{ name: 'ask', args: { q: 'x' }, id: 'a1' }])
        .respond(new AIMessage('done')),
      tools: [ask],
    });
    await outer.invoke({ messages: [new HumanMessage('go')] }, { callbacks: [handler] });
    const [parent, child] = await handler.runs();
    expect(child!.identity).toEqual({ parent_run_id: parent!.runId });
    expect((await records(child!)).map(kindOf)).toEqual([
      'run.started',
      'model.started',
      'model.completed',
      'run.completed',
    ]);
    const effects = await parent!.effects();
    expect(effects.map((e) => [e.tool, e.status, e.result])).toEqual([
      ['ask', 'completed', expect.objectContaining({ content: 'inner answer' })],
    ]);
  });

  test('an interrupted graph and its resume are two runs; the resume command and unrepresentable state are recorded, not fatal', async () => {
    const store = new MemoryStore();
    const handler = new StepchainCallbackHandler({ store });
    const State = Annotation.Root({ v: Annotation<string>(), when: Annotation<unknown>() });
    const graph = new StateGraph(State)
      .addNode('ask', () => ({ v: interrupt<string, string>('ok?'), when: Number.NaN }))
      .addEdge(START, 'ask')
      .addEdge('ask', END)
      .compile({ checkpointer: new MemorySaver() });
    const cfg = { configurable: { thread_id: 't' }, callbacks: [handler] };
    await graph.invoke({ v: '' }, cfg);
    const final = await graph.invoke(new Command({ resume: 'yes' }), cfg);
    expect(final.v).toBe('yes');
    const [first, resumed] = await handler.runs();
    expect((await records(first!)).map(kindOf)).toEqual(['run.started', 'run.completed']);
    const recs = await records(resumed!);
    expect(recs[0]!.input).toMatchObject({ command: { resume: 'yes' } });
    expect(recs.at(-1)!.result).toEqual({ unrepresentable: expect.stringContaining('VALUE_UNREPRESENTABLE') });
  });
});

test("stepIds: 'langchain' names each started record by its LangChain run id, to match a trace", async () => {
  const store = new MemoryStore();
  const handler = new StepchainCallbackHandler({ store, stepIds: 'langchain' });
  const seen: string[] = [];
  const model = fakeModel().respond(new AIMessage('hi'));
  await model.invoke([new HumanMessage('hello')], {
    callbacks: [handler, { handleChatModelStart: (_l: unknown, _m: unknown, runId: string) => void seen.push(runId) }],
  });
  const [run] = await handler.runs();
  const recs = await records(run!);
  expect(recs[1]!.step_id).toBe(seen[0]);
  expect(run!.runId).toBe(seen[0]);
});

describe('resumeBaseMessages (issue 36): the messages to continue a run from', () => {
  test("at the continuation point: the last request's messages, the answer, and each tool outcome as a ToolMessage; an agent runs on from them", async () => {
    const store = new FileStore(`${root}/resume`, { fsync: 'none' });
    const { runs } = await recordAgentRun(store);
    const messages = await resumeBaseMessages(runs[0]!);
    expect(messages.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'tool', 'ai', 'tool', 'ai']);
    expect(
      messages
        .filter((m) => m.getType() === 'tool')
        .map((m) => (m as unknown as { tool_call_id: string }).tool_call_id),
    ).toEqual(['c1', 'c2', 'c3']);
    expect((messages[1] as AIMessage).tool_calls?.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(messages.at(-1)!.content).toBe('Paris 21C, Oslo 5C.');
    const next = createAgent({ model: fakeModel().respond(new AIMessage('Still sunny.')), tools: [] });
    const out = await next.invoke({ messages: [...messages, new HumanMessage('and now?')] });
    expect(out.messages.at(-1)!.content).toBe('Still sunny.');
    for (const r of runs) await r.close(); // every write done before the folder is removed
  });
});
