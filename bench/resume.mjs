// Verify-on-load (issue 36): what reading a run or a LangGraph thread costs now that the reader verifies
// what it reads. For N records on a file store (`fsync: 'none'`), best of 3:
//   - resumeRun with verify: false and with verify (the default: chain, blobs, the store's files);
//   - the LangGraph checkpointer: a fresh StepchainSaver's first getTuple on a thread of N checkpoints (it
//     verifies each line it folds, LANGGRAPH §6), beside reading the same records without verifying
//     (journal.read: the pass the saver made before).
// Run: npm run build && node bench/resume.mjs 100,10000,100000
import { FileStore, startRun, resumeRun } from '../dist/index.js';
import { StepchainSaver } from '../dist/adapters/langgraph/index.js';
import { uuid6 } from '@langchain/langgraph-checkpoint';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function best(fn) {
  const times = [];
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return Math.min(...times).toFixed(1);
}

for (const n of (process.argv[2] ?? '100,10000').split(',').map(Number)) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-resume-'));
  const store = new FileStore(dir, { fsync: 'none' });
  const run = await startRun(store, { runId: 'r' });
  const batch = [];
  for (let i = 0; i < n; i++) batch.push({ input: { i }, result: { ok: true, i } });
  for (let i = 0; i < n; i += 1000) await run.journal.appendMany(batch.slice(i, i + 1000));
  await run.close();
  const t = {};
  for (const verify of [false, true]) {
    t[verify ? 'verify' : 'noverify'] = await best(async () =>
      (await resumeRun(store, 'r', { readOnly: true, verify })).close(),
    );
  }
  // A thread of n checkpoints: one put through the saver, then n − 1 more of the same shape (each a new id).
  const saver = new StepchainSaver({ store });
  const thread = { configurable: { thread_id: 't', checkpoint_ns: '' } };
  const checkpoint = (i) => ({
    v: 4,
    id: uuid6(-3),
    ts: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    channel_values: { step: i, note: `super-step ${i}` },
    channel_versions: { step: i + 1, note: i + 1 },
    versions_seen: {},
  });
  await saver.put(thread, checkpoint(0), { source: 'loop', step: 0, parents: {} }, { step: 1, note: 1 });
  const journal = await saver.journal('t');
  let first;
  for await (const r of journal.read({ from: 0, to: 0 })) first = r;
  const steps = [];
  for (let i = 1; i < n; i++) steps.push({ input: { ...first.input, checkpoint_id: uuid6(-3) }, result: first.result });
  for (let i = 0; i < steps.length; i += 1000) await journal.appendMany(steps.slice(i, i + 1000));
  await saver.close?.();
  const lg = {
    read: await best(async () => {
      const j = await store.open(journal.id, { readOnly: true });
      for await (const r of j.read()) void r;
      await j.close();
    }),
    load: await best(async () => {
      const s = new StepchainSaver({ store });
      const tuple = await s.getTuple(thread);
      if (tuple === undefined) throw new Error('no checkpoint');
      await s.close?.();
    }),
  };
  console.log(`| ${n} | ${t.noverify} ms | ${t.verify} ms | ${lg.read} ms | ${lg.load} ms |`);
}
