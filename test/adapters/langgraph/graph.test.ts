/**
 * A real LangGraph graph on StepchainSaver over the file store, end to end: a model that calls a tool, a
 * tool node, an interrupt and its resume, then time travel (a replay from an older checkpoint, which forks
 * the thread). The thread's journal is exported as a receipt that verifies; the fork shows up in it as a
 * checkpoint pointing back at an older record, with every line before it unchanged. The same scenario on
 * LangGraph's MemorySaver gives the same run.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { tool } from '@langchain/core/tools';
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt, isInterrupted } from '@langchain/langgraph';
import { MemorySaver, type BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { FileStore, exportReceipt, verifyReceipt, type StepRecord, type StoredLine } from '../../../src/index.js';
import { StepchainSaver, readThread } from '../../../src/adapters/langgraph/index.js';
import { tempDir } from '../../helpers/tmp.js';

const root = tempDir('stepchain-langgraph-graph-');

async function scenario(saver: BaseCheckpointSaver) {
  const lookup = tool(async ({ q }: { q: string }) => `result for ${q}`, {
    name: 'lookup',
    description: 'look up',
    schema: z.object({ q: z.string() }),
  });
  const model = fakeModel()
    .respondWithTools([{ name: 'lookup', args: { q: 'x' }, id: 't1' }])
    .respond(new AIMessage('draft'))
    .respond(new AIMessage('draft 2'));
  const app = new StateGraph(MessagesAnnotation)
    .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages)] }))
    .addNode('tools', new ToolNode([lookup]))
    .addNode('review', (s) => ({
      messages: [new HumanMessage(`reviewer: ${interrupt<string, string>(String(s.messages.at(-1)!.content))}`)],
    }))
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (s) => (toolsCondition(s) === 'tools' ? 'tools' : 'review'), ['tools', 'review'])
    .addEdge('tools', 'agent')
    .addEdge('review', END)
    .compile({ checkpointer: saver });
  const cfg = { configurable: { thread_id: 'thread-1' } };
  const first = await app.invoke({ messages: [new HumanMessage('q')] }, cfg);
  const resumed = await app.invoke(new Command({ resume: 'ok' }), cfg);
  const history = [];
  for await (const h of app.getStateHistory(cfg)) history.push(h);
  const old = history.find((h) => h.next.includes('agent') && h.metadata?.step === 2)!;
  const forked = await app.invoke(null, old.config);
  const forkResumed = await app.invoke(new Command({ resume: 'fork-ok' }), cfg);
  const sources = [];
  for await (const h of app.getStateHistory(cfg)) sources.push(h.metadata?.source);
  return {
    outcome: {
      interrupted: isInterrupted(first),
      resumed: resumed.messages.map((m) => m.content),
      forkInterrupted: isInterrupted(forked),
      forkResumed: forkResumed.messages.map((m) => m.content),
      historyBeforeFork: history.length,
      sources,
    },
    forkedFrom: String(old.config.configurable?.checkpoint_id),
  };
}

describe('a LangGraph graph on the stepchain checkpointer', () => {
  test('tool node, interrupt, resume and a fork: the same run as on MemorySaver, a receipt that verifies, the fork recorded as a fork', async () => {
    const store = new FileStore(join(root, 'store'), { fsync: 'none' });
    const saver = new StepchainSaver({ store });
    const onStepchain = await scenario(saver);
    const onMemory = await scenario(new MemorySaver());
    expect(onStepchain.outcome).toEqual(onMemory.outcome);
    expect(onStepchain.outcome.interrupted).toBe(true);
    expect(onStepchain.outcome.resumed.at(-1)).toBe('reviewer: ok');
    expect(onStepchain.outcome.forkResumed.at(-1)).toBe('reviewer: fork-ok');

    const journal = (await saver.journal('thread-1'))!;
    const out = join(root, 'thread-1.tar');
    await exportReceipt(journal, { out });
    const lines: string[] = [];
    const report = await verifyReceipt(await readFile(out), { onLine: (l) => void lines.push(l.text) });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.scope).toBe('complete');
    expect({ seq: report.head_seq, step_hash: report.head }).toEqual(await journal.head());

    // The auditor's view, from the receipt's own lines: the thread's checkpoints as a tree.
    const tree = await readThread(lines.map((t) => JSON.parse(t) as StepRecord));
    expect(tree.every((c) => c.parent_ok)).toBe(true);
    const forks = tree.filter((c) => c.fork);
    expect(forks).toHaveLength(1);
    expect(forks[0]!.parent_checkpoint_id).toBe(onStepchain.forkedFrom);
    expect(forks[0]!.source).toBe('fork');
    const parent = tree.find((c) => c.checkpoint_id === onStepchain.forkedFrom)!;
    expect(parent.seq).toBeLessThan(forks[0]!.seq);
    // Every checkpoint of the tree is one LangGraph still lists, and the other way round.
    const listed = [];
    for await (const t of saver.list({ configurable: { thread_id: 'thread-1' } }))
      listed.push(t.config.configurable?.checkpoint_id);
    expect(new Set(listed)).toEqual(new Set(tree.map((c) => c.checkpoint_id)));
    await saver.close();
  });

  test('a fork appends and never edits: the lines before it stay byte-identical, and put names the head it was taken at', async () => {
    const store = new FileStore(join(root, 'store2'), { fsync: 'none' });
    const saver = new StepchainSaver({ store });
    const cfg = { configurable: { thread_id: 't', checkpoint_ns: '' } };
    const meta = (step: number, source: 'input' | 'loop' | 'fork') => ({ source, step, parents: {} });
    const cp = (id: string) => ({
      v: 4,
      id,
      ts: '2026-11-23T00:00:00.000Z',
      channel_values: { n: id },
      channel_versions: { n: Number(id.slice(-1)) },
      versions_seen: {},
    });
    const a = await saver.put(cfg, cp('00000001'), meta(-1, 'input'), { n: 1 });
    const b = await saver.put(a, cp('00000002'), meta(0, 'loop'), { n: 2 });
    await saver.put(b, cp('00000003'), meta(1, 'loop'), { n: 3 });
    expect(b.configurable).toMatchObject({
      checkpoint_id: '00000002',
      stepchain_seq: 1,
      stepchain_journal: saver.journalId('t'),
    });
    const journal = (await saver.journal('t'))!;
    const before = await collect(journal.lines());
    expect(b.configurable?.stepchain_head).toBe(JSON.parse(before[1]!.text).step_hash);
    expect(await saver.head(b)).toEqual({ journal: journal.id, seq: 1, step_hash: b.configurable?.stepchain_head });

    const f = await saver.put(a, cp('00000004'), meta(1, 'fork'), { n: 4 });
    const after = await collect(journal.lines());
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after).toHaveLength(before.length + 1);
    expect((await saver.getTuple(cfg))?.config.configurable?.checkpoint_id).toBe('00000004');
    expect((await saver.getTuple(f))?.parentConfig?.configurable?.checkpoint_id).toBe('00000001');
    const tree = await readThread(journal.read());
    expect(tree.map((c) => [c.checkpoint_id, c.parent_checkpoint_id, c.fork])).toEqual([
      ['00000001', null, false],
      ['00000002', '00000001', false],
      ['00000003', '00000002', false],
      ['00000004', '00000001', true],
    ]);
    expect((await journal.verify()).problems).toEqual([]);
    await saver.close();
  });
});

async function collect(it: AsyncIterable<StoredLine>): Promise<StoredLine[]> {
  const out: StoredLine[] = [];
  for await (const l of it) out.push(l);
  return out;
}
