#!/usr/bin/env node
// The LangGraph checkpointer (issue 19): latency of one `put` followed by `getTuple` of the thread's latest
// checkpoint — what a graph does at every super-step — for StepchainSaver on the file store (fsync always
// and none) and on the memory store, against LangGraph's own MemorySaver measured in the same run, on the
// same checkpoints. Run through `npm run bench:langgraph` (`--quick` for a smoke run). It replaces only its
// own section of bench/RESULTS.md (or RESULTS-quick.md), between the markers below.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { MemorySaver, uuid6 } from '@langchain/langgraph-checkpoint';
import { FileStore, MemoryStore } from '../dist/index.js';
import { StepchainSaver } from '../dist/adapters/langgraph/index.js';
import { gc } from './lib/stats.mjs';

const quick = process.argv.includes('--quick');
const STEPS = quick ? 60 : 300;
const REPS = quick ? 2 : 5;
const here = fileURLToPath(new URL('.', import.meta.url));
const OUT = join(here, quick ? 'RESULTS-quick.md' : 'RESULTS.md');
const BEGIN = '<!-- section: langgraph (bench/langgraph.mjs) -->';
const END = '<!-- /section: langgraph -->';
const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-langgraph-'));

/** Super-step i of a chat thread: the messages channel grows by one ~300-byte message, a counter moves. */
function superStep(i, parentMessages) {
  const messages = [...parentMessages, { role: i % 2 ? 'ai' : 'human', content: `message ${i} `.repeat(25) }];
  const checkpoint = {
    v: 4,
    id: uuid6(-3),
    ts: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    channel_values: { messages, step: i },
    channel_versions: { messages: i + 1, step: i + 1 },
    versions_seen: { agent: { messages: i } },
  };
  return {
    checkpoint,
    messages,
    metadata: { source: 'loop', step: i, parents: {} },
    newVersions: { messages: i + 1, step: i + 1 },
  };
}

/** One run: STEPS super-steps on a fresh thread; returns the per-step latencies (ms) of put + getTuple. */
async function run(saver, thread) {
  let config = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  let messages = [];
  const lat = [];
  for (let i = 0; i < STEPS; i++) {
    const s = superStep(i, messages);
    messages = s.messages;
    const t = performance.now();
    config = await saver.put(config, s.checkpoint, s.metadata, s.newVersions);
    const tuple = await saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    lat.push(performance.now() - t);
    if (tuple?.checkpoint.id !== s.checkpoint.id || tuple.checkpoint.channel_values.messages.length !== i + 1)
      throw new Error(`wrong tuple at step ${i}`);
  }
  return lat;
}

const quantile = (s, q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];

const savers = [
  { name: 'MemorySaver (LangGraph)', make: () => new MemorySaver() },
  { name: 'StepchainSaver, memory store', make: () => new StepchainSaver({ store: new MemoryStore() }) },
  {
    name: 'StepchainSaver, file store, fsync none',
    make: (r) => new StepchainSaver({ store: new FileStore(join(root, `none-${r}`), { fsync: 'none' }) }),
  },
  {
    name: 'StepchainSaver, file store, fsync always',
    make: (r) => new StepchainSaver({ store: new FileStore(join(root, `always-${r}`), { fsync: 'always' }) }),
  },
];

const results = savers.map((s) => ({ ...s, medians: [], p95s: [] }));
const load0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
try {
  // Interleaved: each repetition runs every saver once, so the machine's load falls on all of them alike.
  for (let r = -1; r < REPS; r++) {
    for (const res of results) {
      const saver = res.make(r);
      gc();
      const lat = (await run(saver, `bench-${r}`)).sort((a, b) => a - b);
      await saver.close?.();
      if (r < 0) continue; // warm-up
      res.medians.push(quantile(lat, 0.5));
      res.p95s.push(quantile(lat, 0.95));
      process.stderr.write(
        `${res.name}: median ${quantile(lat, 0.5).toFixed(3)} ms, p95 ${quantile(lat, 0.95).toFixed(3)} ms\n`,
      );
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = med(results[0].medians);
const L = [BEGIN, '## LangGraph checkpointer: put + getTuple (issue 19)', ''];
L.push(
  `Written by \`bench/langgraph.mjs\` (${quick ? 'quick' : 'full'} mode, ${new Date().toISOString()}, load average ${load0} at start, ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')} at end).`,
);
L.push(
  `One figure = one \`put\` then \`getTuple\` of the latest checkpoint, as at every super-step of a graph; a thread of ${STEPS} super-steps whose messages channel grows by one ~300-byte message per step; ${REPS} runs per saver, interleaved, after one warm-up each. Median and p95 are per run; the table gives their median over the runs and the spread of the run medians.`,
);
L.push('');
L.push('| Saver | Median latency | Spread of run medians | p95 | vs MemorySaver (medians) |');
L.push('|---|---:|---:|---:|---:|');
for (const r of results) {
  const m = med(r.medians);
  L.push(
    `| ${r.name} | ${m.toFixed(3)} ms | ${Math.min(...r.medians).toFixed(3)}–${Math.max(...r.medians).toFixed(3)} ms | ${med(r.p95s).toFixed(3)} ms | ${(m / base).toFixed(1)}× |`,
  );
}
L.push('');
L.push(
  'MemorySaver keeps serialized rows in a JavaScript object; StepchainSaver canonicalizes and hashes a record per `put` and appends it to a journal (in `always` mode durably: one fsync per put), and `getTuple` first asks the journal for its head so that records other processes appended are seen.',
);
L.push(END);
const section = L.join('\n');

const current = existsSync(OUT) ? readFileSync(OUT, 'utf8') : '';
const at = current.indexOf(BEGIN);
const next =
  at >= 0
    ? current.slice(0, at) + section + current.slice(current.indexOf(END, at) + END.length)
    : `${current.trimEnd()}\n\n${section}\n`;
writeFileSync(OUT, next);
process.stderr.write(`wrote its section of ${OUT}\n`);
