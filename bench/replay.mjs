// Pinned replay of a long recording (issue 20): a run journal of 10 000 steps (2 500 model requests and
// 2 500 tool calls, each a started record and its outcome) in a file store, replayed in strict mode —
// replayFrom (verify the chain, read every record, key every outcome) then every request served —
// against reading it (journal.read(), every record) and against verifying it. Paired runs: each replay
// comes right after a read, so the ratio is taken under the same load.
//
//   npm run bench:replay             # writes the "Replay" section of bench/RESULTS.md
//   npm run bench:replay -- --quick  # 2 000 steps; writes that section of bench/RESULTS-quick.md
// bench/run.mjs includes the same section when it writes its results.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../dist/index.js';
import { replayFrom } from '../dist/replay.js';
import { measure } from './lib/stats.mjs';
import { writeSection } from './lib/results-section.mjs';

const HEADING = '## Replay (issue 20)';
const prompt = (i) => [
  { role: 'system', content: 'You are a careful assistant. '.repeat(4) },
  { role: 'user', content: `question ${i % 97}` },
];
const request = (i) => ({
  model: { provider: 'openai.chat', modelId: 'gpt-4o' },
  prompt: prompt(i),
  input: { temperature: 0 },
});
const args = (i) => ({ q: `query ${i % 89}`, limit: 10 });

/** Writes the recording with appendMany (the runtime's records, ids fixed so outcomes can name their start). */
async function recording(store, steps) {
  const run = await store.create('recorded', { run: { agent: 'bench' } });
  const batch = [{ kind: 'run.started', step_id: 'run', input: 'task' }];
  for (let i = 0; batch.length < steps; i++) {
    const m = request(i);
    batch.push({ kind: 'model.started', step_id: `m${i}`, ...m });
    batch.push({
      kind: 'model.completed',
      step_id: `mc${i}`,
      ref: `m${i}`,
      ...m,
      result: { content: [{ type: 'text', text: `answer ${i}` }] },
      tool_call: [{ id: `c${i}`, name: 'lookup', arguments: args(i) }],
      meta: { usage: { inputTokens: 12, outputTokens: 8 }, latency_ms: i % 13 },
    });
    batch.push({
      kind: 'tool.started',
      step_id: `t${i}`,
      tool_call: { name: 'lookup', arguments: args(i), call_id: `c${i}` },
    });
    batch.push({
      kind: 'tool.completed',
      step_id: `tc${i}`,
      ref: `t${i}`,
      tool_call: { name: 'lookup', arguments: args(i), call_id: `c${i}` },
      result: { hits: [i, i + 1, i + 2] },
    });
  }
  for (let at = 0; at < steps; at += 1000) await run.appendMany(batch.slice(at, Math.min(steps, at + 1000)));
  await run.close();
  return Math.floor((steps - 1) / 4);
}

async function readAll(journal) {
  let n = 0;
  for await (const _ of journal.read()) n++;
  return n;
}

async function replayAll(journal, pairs) {
  const replay = await replayFrom(journal);
  for (let i = 0; i < pairs; i++) {
    replay.nextModelResult(request(i));
    replay.nextToolResult({ name: 'lookup', arguments: args(i) });
  }
  if (replay.unserved().length !== 0) throw new Error('bench: the replay left outcomes unserved');
}

export async function replayBench({ quick = false, log = () => undefined } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-replay-'));
  const steps = quick ? 2_001 : 10_001;
  const reps = quick ? 3 : 5;
  try {
    const store = new FileStore(root, { fsync: 'none' });
    log(`replay: writing a ${steps}-step run journal ...`);
    const pairs = await recording(store, steps);
    const journal = await store.open('recorded', { readOnly: true });
    const read = { units: steps, fn: () => readAll(journal) };
    log(`replay: read × ${reps} ...`);
    const readFig = await measure({ reps, units: steps, warmup: 1, fn: read.fn });
    log(`replay: verify × ${reps} ...`);
    const verifyFig = await measure({
      reps,
      units: steps,
      warmup: 1,
      pair: read,
      fn: async () => {
        if (!(await journal.verify()).ok) throw new Error('bench: does not verify');
      },
    });
    log(`replay: replay × ${reps} ...`);
    const replayFig = await measure({ reps, units: steps, warmup: 1, pair: read, fn: () => replayAll(journal, pairs) });
    await journal.close();
    return { steps, pairs, reps, readFig, verifyFig, replayFig };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const ms = (fig) => `${fig.ms.toFixed(0)} ms`;

export function replaySection(r) {
  const L = [HEADING, ''];
  L.push(
    `A run journal of ${r.steps.toLocaleString('en')} records (run.started, then ${r.pairs.toLocaleString('en')} model requests and ${r.pairs.toLocaleString('en')} tool calls, each a started record and its outcome) in a file store. Replay = \`replayFrom\` in strict mode (verify the chain, read every record, key every outcome) and every request served. Ratios of the medians, and from paired runs (each right after a read); on a shared 2-core machine the paired ratios spread widely, so read both.`,
  );
  L.push('');
  L.push(
    '| Operation | Median time | Steps/s | Time / read time (medians) | Time / read time (paired: median, min–max) | Runs |',
  );
  L.push('|---|---:|---:|---:|---:|---:|');
  L.push(
    `| read (\`journal.read()\`, every record) | ${ms(r.readFig)} | ${Math.round(r.readFig.median).toLocaleString('en')} | 1 | 1 | ${r.readFig.runs} |`,
  );
  for (const [name, fig] of [
    ['verify (`journal.verify()`)', r.verifyFig],
    ['**replay** (verify + read + key + serve all)', r.replayFig],
  ]) {
    L.push(
      `| ${name} | ${ms(fig)} | ${Math.round(fig.median).toLocaleString('en')} | **${(r.readFig.median / fig.median).toFixed(2)}×** | ${(1 / fig.pairRatio).toFixed(2)}× (${(1 / fig.pairMax).toFixed(2)}–${(1 / fig.pairMin).toFixed(2)}) | ${fig.runs} |`,
    );
  }
  L.push('');
  return L;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  const r = await replayBench({ quick, log: (m) => process.stderr.write(`${m}\n`) });
  const lines = replaySection(r);
  process.stdout.write(lines.join('\n') + '\n');
  const file = fileURLToPath(new URL(quick ? 'RESULTS-quick.md' : 'RESULTS.md', import.meta.url));
  writeSection(file, HEADING, lines);
  process.stderr.write(`wrote the section into ${file}\n`);
}
