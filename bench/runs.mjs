// Listing runs at scale (spec/FILE-STORE.md §14): a file store with N run journals (default 10 000) in 100
// conversations, each run with a parent; measures store.list({ conversationId }) and list({ parentRunId })
// with the run index, the first listing after the index is lost (it rebuilds it from every journal's
// metadata), and, as the baseline in the same run, opening every journal to read its genesis. Wall time,
// median of 5 (listing is I/O: readdir and one file read). Not part of `npm test`.
//
//   npm run build && node bench/runs.mjs [--n=10000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, startRun } from '../dist/index.js';
import { median } from './lib/stats.mjs';

const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 10_000);
const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-runs-'));
const store = new FileStore(root, { fsync: 'none' });
const t0 = performance.now();
for (let i = 0; i < N; i += 50) {
  await Promise.all(
    Array.from({ length: Math.min(50, N - i) }, async (_, k) => {
      const n = i + k;
      const run = await startRun(store, {
        runId: `run-${String(n).padStart(6, '0')}`,
        conversationId: `conv-${n % 100}`,
        parentRunId: `orch-${n % 1000}`,
        agent: 'bench',
        labels: { shard: String(n % 7) },
      });
      await run.close();
    }),
  );
}
const createMs = performance.now() - t0;
async function timed(fn, reps = 5) {
  const ms = [];
  let out;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    out = await fn();
    ms.push(performance.now() - t);
  }
  return { ms: median(ms), out };
}
const byConv = await timed(() => store.list({ conversationId: 'conv-42' }));
const byParent = await timed(() => store.list({ parentRunId: 'orch-7' }));
const all = await timed(() => store.runs({}));
rmSync(join(root, '.runs.jsonl'));
const rebuildT = performance.now();
await store.list({ conversationId: 'conv-42' });
const rebuildMs = performance.now() - rebuildT;
const naive = await timed(async () => {
  const ids = await store.list();
  const out = [];
  for (const id of ids) {
    const j = await store.open(id, { readOnly: true });
    if (j.genesis.run?.conversation_id === 'conv-42') out.push(j);
    await j.close();
  }
  return out;
}, 3);
console.log(`runs: ${N} run journals created in ${(createMs / 1000).toFixed(1)} s`);
console.log(`list({ conversationId }) → ${byConv.out.length} runs: ${byConv.ms.toFixed(1)} ms (median of 5)`);
console.log(`list({ parentRunId })    → ${byParent.out.length} runs: ${byParent.ms.toFixed(1)} ms`);
console.log(`runs({}) → ${all.out.length} entries: ${all.ms.toFixed(1)} ms`);
console.log(`first listing without the index (rebuilds it from ${N} metadata files): ${rebuildMs.toFixed(0)} ms`);
console.log(
  `baseline, opening every journal to read its genesis: ${naive.ms.toFixed(0)} ms (median of 3); index speed-up ×${(naive.ms / byConv.ms).toFixed(0)}`,
);
rmSync(root, { recursive: true, force: true });
