// What the framework adapters add to a model call (issue 18): the AI SDK's own mock model through
// `generateText`, bare and with stepchain/ai-sdk (the middleware and the recorded tools) writing to a run
// in a file store, with fsync none and always. Each recorded model call is two appends (model.started
// before the provider is called, model.completed after) and each tool call two more (intent, outcome).
// Paired runs: each recorded run comes right after a bare one, so the ratio is taken under the same load.
// CPU time (process.cpuUsage, this process's user + system) is reported beside the wall time: on a shared
// machine it is the steadier figure, and it is what the adapter and the runtime cost the agent's process.
//
//   npm run bench:adapters             # writes the "Adapter overhead" section of bench/RESULTS.md
//   npm run bench:adapters -- --quick  # smaller; writes that section of bench/RESULTS-quick.md
// bench/run.mjs includes the same section when it writes its results.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { FileStore, MemoryStore, startRun } from '../dist/index.js';
import { recordTools, stepchainMiddleware } from '../dist/adapters/ai-sdk/index.js';
import { measure, median } from './lib/stats.mjs';
import { writeSection } from './lib/results-section.mjs';

const usage = { inputTokens: { total: 12, noCache: 12 }, outputTokens: { total: 8, text: 8 } };
const text = (t) => ({
  content: [{ type: 'text', text: t }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});
const toolCall = (i) => ({
  content: [{ type: 'tool-call', toolCallId: `c${i}`, toolName: 'lookup', input: JSON.stringify({ q: `query ${i}` }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => ({ q, hits: [1, 2, 3] }) });

/** One conversation: `tools` false → one model call answering with text; true → a tool call, the tool, then the answer (two model calls). */
async function conversation(run, i, tools) {
  const mock = new MockLanguageModelV3({
    doGenerate: tools ? [toolCall(i), text(`answer ${i}`)] : [text(`answer ${i}`)],
  });
  const model = run === null ? mock : wrapLanguageModel({ model: mock, middleware: stepchainMiddleware(run) });
  const toolSet = tools ? (run === null ? { lookup } : recordTools(run, { lookup })) : undefined;
  await generateText({
    model,
    tools: toolSet,
    stopWhen: stepCountIs(4),
    maxRetries: 0,
    prompt: `question ${i}: ${'context '.repeat(50)}`,
  });
}

/** `fn` with the CPU time of each call (ms, user + system) pushed to `into`. */
function cpuTimed(into, fn) {
  return async (...args) => {
    const start = process.cpuUsage();
    const done = await fn(...args);
    const used = process.cpuUsage(start);
    into.push((used.user + used.system) / 1000);
    return done;
  };
}

const medianOf = (xs) => median([...xs].sort((a, b) => a - b));

/** Measures the overhead; returns the section's rows. */
export async function adapterOverhead({ quick = false, log = () => undefined } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-adapters-'));
  const reps = quick ? 3 : 5;
  const calls = { memory: quick ? 100 : 200, none: quick ? 100 : 200, always: quick ? 30 : 60 };
  const rows = [];
  try {
    let n = 0;
    // The memory store first: the adapter and the runtime without the file system.
    for (const fsync of ['memory', 'none', 'always']) {
      const store = fsync === 'memory' ? new MemoryStore() : new FileStore(join(root, fsync), { fsync });
      for (const tools of [false, true]) {
        const K = calls[fsync];
        const modelCalls = K * (tools ? 2 : 1);
        log(
          `adapters: fsync ${fsync}, ${tools ? 'tool loop' : 'one model call'}, ${K} conversations × ${reps} runs ...`,
        );
        const cpu = { bare: [], rec: [] };
        const bare = {
          units: modelCalls,
          fn: cpuTimed(cpu.bare, async () => {
            for (let i = 0; i < K; i++) await conversation(null, i, tools);
          }),
        };
        const bareFig = await measure({ reps, units: modelCalls, warmup: 1, fn: bare.fn });
        const recFig = await measure({
          reps,
          units: modelCalls,
          warmup: 1,
          pair: bare,
          setup: async () => startRun(store, { runId: `bench-${n++}` }),
          fn: cpuTimed(cpu.rec, async (run) => {
            for (let i = 0; i < K; i++) await conversation(run, i, tools);
          }),
          teardown: (run) => run.close(),
        });
        const msBare = 1000 / bareFig.median;
        const msRec = 1000 / recFig.median;
        // The first run of each list is a warm-up; every later one is a measured run (the bare ones also as pairs).
        const cpuBare = medianOf(cpu.bare.slice(1)) / modelCalls;
        const cpuRec = medianOf(cpu.rec.slice(1)) / modelCalls;
        rows.push({
          fsync,
          shape: tools ? 'tool call, tool, answer (2 model calls, 1 tool)' : 'one model call, text answer',
          appends: tools ? 3 : 2,
          msBare,
          msRec,
          added: msRec - msBare,
          cpuBare,
          cpuRec,
          cpuAdded: cpuRec - cpuBare,
          ratio: recFig.pairRatio,
          ratioMin: recFig.pairMin,
          ratioMax: recFig.pairMax,
          runs: recFig.runs,
          K,
        });
        log(`  wall ${ms(msBare)} → ${ms(msRec)} ms, CPU ${ms(cpuBare)} → ${ms(cpuRec)} ms per model call`);
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return rows;
}

/** The figures of the runtime that read each record back (commit c520e92), measured by this script before the change. */
const BEFORE = {
  commit: 'commit c520e92',
  when: 'measured 2026-11-23 right after the figures above, load average 12–15',
  rows: [
    { store: 'MemoryStore', shape: 'one model call', wall: '4.806', cpu: '1.009' },
    { store: 'MemoryStore', shape: 'tool loop', wall: '2.332', cpu: '0.707' },
    { store: 'file, none', shape: 'one model call', wall: '32.4', cpu: '8.803' },
    { store: 'file, none', shape: 'tool loop', wall: '32.1', cpu: '10.6' },
    { store: 'file, always', shape: 'one model call', wall: '24.4', cpu: '8.767' },
    { store: 'file, always', shape: 'tool loop', wall: '49.2', cpu: '14.3' },
  ],
};

const ms = (x) => (x >= 10 ? x.toFixed(1) : x.toFixed(3));

/** The section as markdown lines (heading included). */
export function adapterSection(rows) {
  const L = ['## Adapter overhead (issue 18)', ''];
  L.push(
    '`generateText` with the AI SDK\'s mock model (`MockLanguageModelV3`), bare and recorded with `stepchain/ai-sdk` (middleware + recorded tools) into a run in a MemoryStore or a file store. Per model call: the median time of a run divided by its model calls. "Added" = recorded − bare; the throughput ratio comes from paired runs (each recorded run right after a bare one).',
  );
  L.push('');
  L.push(
    '| Store (fsync) | Conversation | Appends per model call | Bare, per model call | Recorded, per model call | Added per model call | CPU added per model call (bare → recorded) | Recorded / bare throughput (paired) | Runs × conversations |',
  );
  L.push('|---|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows)
    L.push(
      `| ${r.fsync === 'memory' ? 'MemoryStore' : `file, ${r.fsync}`} | ${r.shape} | ${r.appends} | ${ms(r.msBare)} ms | ${ms(r.msRec)} ms | **${ms(r.added)} ms** | **${ms(r.cpuAdded)} ms** (${ms(r.cpuBare)} → ${ms(r.cpuRec)}) | ${r.ratio.toFixed(2)}× (${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}) | ${r.runs} × ${r.K} |`,
    );
  L.push('');
  L.push(
    'Where the time goes: the MemoryStore rows are the adapter and the runtime without the file system. Each runtime record (`Run.record`) is one append: the Run folds the record into its state from what it asked for and what the append returned (seq, hashes, `ts`), and reads the journal only for records another writer appended — a gap before its seq, or an outcome refused with `HEAD_MOVED` because the chain moved (spec/FILE-STORE.md §17). Appends that follow each other keep the file store\'s lock (`lockLingerMs`), so a recorded model call costs its appends and their fsyncs, no lock acquisition or tail re-read per record. CPU time is this process\'s (user + system), the steadier figure on a shared machine: wall figures here move by several ms from run to run under other load (a negative "added" is such noise), so compare CPU.',
  );
  L.push('');
  L.push(
    `Before (${BEFORE.commit}: every record an append followed by a read-back of the head and the new records, which also let the lock lapse between appends; the same script, ${BEFORE.when}), added per model call, wall / CPU: ${BEFORE.rows.map((r) => `${r.store}, ${r.shape}: ${r.wall} / ${r.cpu} ms`).join('; ')}.`,
  );
  L.push('');
  return L;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const rows = await adapterOverhead({ quick, log: (m) => process.stderr.write(`${m}\n`) });
  const lines = adapterSection(rows);
  process.stdout.write(lines.join('\n') + '\n');
  const file = fileURLToPath(new URL(quick ? 'RESULTS-quick.md' : 'RESULTS.md', import.meta.url));
  writeSection(file, '## Adapter overhead (issue 18)', lines);
  process.stderr.write(`wrote the section into ${file}\n`);
}
