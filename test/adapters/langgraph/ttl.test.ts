/**
 * A time to live per LangGraph thread (spec/RETENTION.md): `saver.prune({ keepDays })` removes the thread
 * namespaces last written before the cutoff, whole, each after its tombstone, and leaves the others — a real
 * graph on the real checkpointer, with threads written at two times.
 */
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { afterEach, expect, test, vi } from 'vitest';
import { MemoryStore } from '../../../src/index.js';
import { StepchainSaver } from '../../../src/adapters/langgraph/index.js';
import { checkTombstone, readTombstones } from '../../../src/retention/index.js';

afterEach(() => {
  vi.useRealTimers();
});

test('threads past their TTL are removed with a tombstone; a thread written since stays and keeps its state', async () => {
  const store = new MemoryStore();
  const saver = new StepchainSaver({ store });
  const app = new StateGraph(MessagesAnnotation)
    .addNode('agent', () => ({ messages: [new AIMessage('noted')] }))
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });
  // Only the clock the journal reads is moved: thread "old" was last written 40 days before thread "new".
  vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-10-01T09:00:00.000Z') });
  await app.invoke({ messages: [new HumanMessage('first')] }, { configurable: { thread_id: 'old' } });
  vi.setSystemTime(new Date('2026-11-10T09:00:00.000Z'));
  await app.invoke({ messages: [new HumanMessage('second')] }, { configurable: { thread_id: 'new' } });
  await store
    .create('unrelated', { run: { agent: 'x' }, createdAt: '2020-01-01T00:00:00.000Z' })
    .then((j) => j.close());

  const result = await saver.prune({ keepDays: 30, now: new Date('2026-11-27T12:00:00.000Z') });
  expect(result.removed.map((t) => t.journal)).toEqual([saver.journalId('old')]);
  expect(result.removed[0]!.reason).toBe('LangGraph thread TTL: 30 days');
  expect(checkTombstone(result.removed[0]).ok).toBe(true);
  expect(await readTombstones(store)).toHaveLength(1);
  // The saver's own view: the expired thread is gone, the other one is intact, the run outside it untouched.
  expect(await saver.getTuple({ configurable: { thread_id: 'old' } })).toBeUndefined();
  const kept = await app.getState({ configurable: { thread_id: 'new' } });
  expect(kept.values.messages.map((m: { content: unknown }) => m.content)).toEqual(['second', 'noted']);
  expect((await store.list()).sort()).toEqual(['_tombstones', saver.journalId('new'), 'unrelated'].sort());
  await saver.close();
});
