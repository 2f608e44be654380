// A LangGraph graph whose checkpoints are a stepchain journal: run it, pause at an interrupt, resume,
// then export the thread as a receipt and verify it offline. Run: node examples/langgraph-checkpointer.mjs [dir]
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Annotation, Command, END, START, StateGraph, interrupt } from '@langchain/langgraph';
import { FileStore, exportReceipt, verifyReceipt } from 'stepchain';
import { StepchainSaver, readThread } from 'stepchain/langgraph';

const dir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'stepchain-langgraph-'));
const checkpointer = new StepchainSaver({ store: new FileStore(join(dir, 'journals')) });

const State = Annotation.Root({ draft: Annotation(), verdict: Annotation() });
const app = new StateGraph(State)
  .addNode('write', () => ({ draft: 'Refund order 1042' }))
  .addNode('review', (s) => ({ verdict: interrupt({ approve: s.draft }) }))
  .addEdge(START, 'write')
  .addEdge('write', 'review')
  .addEdge('review', END)
  .compile({ checkpointer });

const thread = { configurable: { thread_id: 'order-1042' } };
await app.invoke({}, thread); // stops at the interrupt
const done = await app.invoke(new Command({ resume: 'approved' }), thread);
console.log('verdict:', done.verdict);

const journal = await checkpointer.journal('order-1042');
const out = join(dir, 'order-1042.tar');
await exportReceipt(journal, { out });
const report = await verifyReceipt(await readFile(out));
console.log('receipt valid:', report.ok, '| head:', report.head);
const checkpoints = await readThread(journal.read());
console.log('checkpoints:', checkpoints.map((c) => c.source).join(' → '));
await checkpointer.close();
