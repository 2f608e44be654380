// stepchain/v3 against v1 and v2 on the bench's ordinary ~1.2 KB steps (issue 32's targets; spec/FORMAT.md
// §14; docs/design/format-v3.md §12), side by side in one run:
//   1. append CPU per step (appendMany in batches of 1000, fsync none, a file journal): v1, v2, v3, in
//      interleaved rounds, CPU time of this process (process.cpuUsage) over the appends, median of rounds;
//   2. `stepchain verify` of 100 000 steps as a whole process (default threads, and --threads 1 and 2)
//      against the v1 line limit (a bare Node process reading, parsing and hashing each stored v1 line once,
//      bench/workers/limit-proc.mjs), paired runs, median time ratio;
//   3. committed units per step (what the v3 walk hashes), and the stored line's size.
// Run: npm run build && node --expose-gc bench/v3.mjs [--steps N] [--rounds R] [--only append|verify]
// [--threads 1,2,4] [--hypercore PAIRS]. Prints a Markdown section. `--only verify` runs just the verify rows (default threads,
// then the thread curve of `--threads`), e.g. to rerun them on a quiet machine; `--only append` just the
// append rows. `--hypercore 3` adds issue 45's comparison: appendMany in batches of 256 (fsync none) of v1 and
// v3 (the default format) against hypercore's batched append (bench/thirdparty, `npm ci --prefix
// bench/thirdparty`), each a fresh process (bench/workers/append-rate.mjs, bench/thirdparty/run.mjs), paired.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { FileStore } from '../dist/store/index.js';
import { commitRecord, newSeed } from '../dist/record/v3/commit.js';
import { makeSteps } from './lib/steps.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const CLI = join(here, '../dist/cli/main.js');
const CPU_EXIT = join(here, 'workers/cpu-exit.mjs');
const LIMIT = join(here, 'workers/limit-proc.mjs');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : Number(process.argv[i + 1]);
};
const APPEND_N = arg('--append-steps', 4000);
const VERIFY_N = arg('--steps', 100_000);
const ROUNDS = arg('--rounds', 5);
const textArg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : process.argv[i + 1];
};
const ONLY = textArg('--only', 'all');
const HC_PAIRS = arg('--hypercore', 0);
if (!['all', 'append', 'verify'].includes(ONLY)) throw new Error('--only append|verify');
const THREADS = textArg('--threads', '1,2,4')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const BATCH = 1000;
const FORMATS = { v1: 'stepchain/v1', v2: 'stepchain/v2', v3: 'stepchain/v3' };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (x, d = 2) => x.toFixed(d);
const range = (xs, d = 2) => `${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)}`;

const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-v3-'));
const store = new FileStore(root, { fsync: 'none' });
let serial = 0;

async function fill(format, steps) {
  const id = `${format.slice(-2)}-${serial++}`;
  const j = await store.create(id, { format, journalId: `bench-${id}`, createdAt: '2026-01-01T00:00:00.000Z' });
  globalThis.gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < steps.length; i += BATCH) await j.appendMany(steps.slice(i, i + BATCH));
  const cpu = process.cpuUsage(c0);
  const ms = performance.now() - t0;
  await j.close();
  return { id, cpuUs: (cpu.user + cpu.system) / steps.length, wallUs: (ms * 1000) / steps.length };
}

function timeProcess(args) {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--import', CPU_EXIT, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 400)}`);
  return { ms, cpu: Number(/cpu-ms ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN) };
}

const load0 = loadavg()[0];
const out = [];
const say = (s = '') => out.push(s);

// 1. Append CPU per step.
const steps = makeSteps(APPEND_N, { seed: 32 });
const cpu = { v1: [], v2: [], v3: [] };
if (ONLY !== 'verify') {
  await fill(FORMATS.v1, steps.slice(0, 1000)); // warm-up
  await fill(FORMATS.v2, steps.slice(0, 1000));
  await fill(FORMATS.v3, steps.slice(0, 1000));
}
for (let r = 0; r < (ONLY === 'verify' ? 0 : ROUNDS); r++) {
  const order = ['v1', 'v2', 'v3'];
  for (let k = 0; k < r % 3; k++) order.push(order.shift());
  for (const v of order) cpu[v].push((await fill(FORMATS[v], steps)).cpuUs);
  process.stderr.write(
    `append round ${r + 1}/${ROUNDS}: v1 ${fmt(cpu.v1.at(-1))} µs, v2 ${fmt(cpu.v2.at(-1))} µs, v3 ${fmt(cpu.v3.at(-1))} µs\n`,
  );
}
const ratio = (v) => cpu[v].map((x, i) => x / cpu.v1[i]);

// 3. Units per step and line sizes.
let units = 0;
for (const s of steps.slice(0, 1000))
  units += commitRecord(
    {
      error: null,
      input: s.input ?? null,
      model: s.model ?? null,
      prompt: s.prompt ?? null,
      result: s.result ?? null,
      tool_call: s.tool_call ?? null,
      ...(s.meta ? { meta: s.meta } : {}),
    },
    newSeed(),
    { units: true },
  ).units.length;
const lineBytes = (id) => {
  const dir = join(root, id, 'buckets');
  let bytes = 0;
  for (const f of readdirSync(dir)) bytes += statSync(join(dir, f)).size;
  return bytes;
};

// 2. Whole-process verify of VERIFY_N steps.
const big = makeSteps(ONLY === 'append' ? 1000 : VERIFY_N, { seed: 33 });
const j1 = await fill(FORMATS.v1, big);
const j3 = await fill(FORMATS.v3, big);
const dir1 = join(root, j1.id);
const dir3 = join(root, j3.id);
const variants =
  ONLY === 'append'
    ? []
    : [['default threads', []], ...THREADS.map((n) => [`--threads ${n}`, ['--threads', String(n)]])];
const rows = [];
for (const [name, extra] of variants) {
  const lim = [];
  const v3 = [];
  const v1 = [];
  const cpu3 = [];
  const cpu1 = [];
  for (let r = 0; r < Math.max(3, Math.ceil(ROUNDS / 2)); r++) {
    lim.push(timeProcess([LIMIT, dir1]).ms);
    const a = timeProcess([CLI, 'verify', dir3, '--json', ...extra]);
    v3.push(a.ms);
    cpu3.push(a.cpu);
    const b = timeProcess([CLI, 'verify', dir1, '--json', ...extra]);
    v1.push(b.ms);
    cpu1.push(b.cpu);
  }
  const ratios = lim.map((l, i) => l / v3[i]);
  const ratios1 = lim.map((l, i) => l / v1[i]);
  rows.push({
    name,
    lim: median(lim),
    v3: median(v3),
    v1: median(v1),
    ratio: median(ratios),
    ratios,
    ratio1: median(ratios1),
    ratios1,
    cpu3: median(cpu3),
    cpu1: median(cpu1),
  });
  process.stderr.write(
    `verify ${name}: limit ${fmt(median(lim), 0)} ms, v3 ${fmt(median(v3), 0)} ms (${fmt(median(ratios))}×), v1 ${fmt(median(v1), 0)} ms (${fmt(median(ratios1))}×)\n`,
  );
}
const hc = HC_PAIRS > 0 ? hypercoreRows(HC_PAIRS) : null;
const load1 = loadavg()[0];

say('## stepchain/v3: append and verify against v1 (issue 32 targets; `node --expose-gc bench/v3.mjs`)');
say();
say(
  `${availableParallelism()} cores, Node ${process.versions.node}, load average ${fmt(load0, 1)} at the start and ${fmt(load1, 1)} at the end (a machine shared by other jobs: CPU time is the figure for append, paired runs for verify). Bench steps: \`makeSteps\` (bench/lib/steps.mjs, ~1.2 KB each), **${fmt(units / 1000, 1)} committed units per step** on average (members, elements and chunks, the 7 slots included). Stored line: v1 ${fmt(lineBytes(j1.id) / big.length, 0)} B, v3 ${fmt(lineBytes(j3.id) / big.length, 0)} B per step.`,
);
say();
if (ONLY !== 'verify') appendTable();
if (ONLY !== 'append') verifyTable();
if (hc !== null) hypercoreTable(hc);
process.stdout.write(out.join('\n') + '\n');
rmSync(root, { recursive: true, force: true });

function appendTable() {
  say(
    `### Append CPU per step (appendMany in batches of ${BATCH}, fsync none, ${APPEND_N} steps, ${ROUNDS} interleaved rounds)`,
  );
  say();
  say('| format | CPU µs per step, median (min–max) | ÷ v1, median of rounds (min–max) | target |');
  say('|---|---:|---:|---|');
  say(`| v1 | ${fmt(median(cpu.v1))} (${range(cpu.v1)}) | 1 | |`);
  say(`| v2 | ${fmt(median(cpu.v2))} (${range(cpu.v2)}) | ${fmt(median(ratio('v2')))}× (${range(ratio('v2'))}) | |`);
  say(
    `| v3 | ${fmt(median(cpu.v3))} (${range(cpu.v3)}) | **${fmt(median(ratio('v3')))}×** (${range(ratio('v3'))}) | ≤ 2× v1 |`,
  );
  say();
}

function verifyTable() {
  say(`### \`stepchain verify\` of ${VERIFY_N} steps, whole process, against the v1 line limit`);
  say();
  say(
    "The limit: a bare Node process that reads the v1 journal's bucket files, JSON.parses and SHA-256es each line once (bench/workers/limit-proc.mjs). Ratio = limit time ÷ verify time, median of paired runs (min–max); target for v3 ≥ 0.8× with its default threads.",
  );
  say();
  say(
    '| threads | limit ms | v3 verify ms | **v3 ÷ limit** | v1 verify ms | v1 ÷ limit | CPU ms of all threads: v1, v3 |',
  );
  say('|---|---:|---:|---:|---:|---:|---:|');
  for (const r of rows)
    say(
      `| ${r.name} | ${fmt(r.lim, 0)} | ${fmt(r.v3, 0)} | **${fmt(r.ratio)}×** (${range(r.ratios)}) | ${fmt(r.v1, 0)} | ${fmt(r.ratio1)}× (${range(r.ratios1)}) | ${fmt(r.cpu1, 0)}, ${fmt(r.cpu3, 0)} |`,
    );
  say();
  say(
    "v3's default `verify` runs the fast tier (FORMAT §14.7 A: B and the step hash, two SHA-256 calls per record); `--deep` adds the unit tree (§14.7 B) and is not part of this target. Rows with more threads than cores are oversubscribed: they show the cost of extra threads, not scaling.",
  );
}

/** Issue 45's append comparison: v1 and v3 appendMany against hypercore's batched append, paired processes. */
function hypercoreRows(pairs) {
  const tp = join(here, 'thirdparty');
  const child = (args, cwd) => {
    const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 400)}`);
    return JSON.parse(r.stdout.trim().split('\n').pop());
  };
  const best = (xs) => Math.max(...xs);
  const rates = { v1: [], v3: [], hc: [] };
  let version = '';
  for (let p = 0; p < pairs; p++) {
    for (const f of ['v1', 'v3']) {
      const r = child([join(here, 'workers/append-rate.mjs'), `--mode=${f}`, '--steps=25600', '--reps=2', '--seed=11']);
      rates[f].push({ wall: best(r.wall), cpu: best(r.cpu) });
    }
    const h = child([join(tp, 'run.mjs'), '--append-only', '--steps=25600', '--reps=2', '--seed=11'], tp);
    version = h.versions.hypercore;
    rates.hc.push({ wall: best(h.hypercore.append), cpu: best(h.hypercore.appendCpu) });
    process.stderr.write(
      `hypercore pair ${p + 1}/${pairs}: v1 ${fmt(rates.v1.at(-1).wall, 0)}, v3 ${fmt(rates.v3.at(-1).wall, 0)}, hypercore ${fmt(rates.hc.at(-1).wall, 0)} steps/s\n`,
    );
  }
  return { rates, version, pairs };
}

function hypercoreTable({ rates, version, pairs }) {
  say();
  say(
    `### appendMany against hypercore ${version}'s batched append (issue 45; batches of 256, fsync none, 25 600 steps, ${pairs} paired fresh processes, best of 2 runs each)`,
  );
  say();
  say(
    '| | steps/s (wall), median | steps per CPU-s, median | ÷ hypercore, wall (min–max) | ÷ hypercore, CPU (min–max) |',
  );
  say('|---|---:|---:|---:|---:|');
  const hcWall = rates.hc.map((x) => x.wall);
  const hcCpu = rates.hc.map((x) => x.cpu);
  say(`| hypercore | ${fmt(median(hcWall), 0)} | ${fmt(median(hcCpu), 0)} | 1 | 1 |`);
  for (const f of ['v1', 'v3']) {
    const w = rates[f].map((x, i) => x.wall / hcWall[i]);
    const c = rates[f].map((x, i) => x.cpu / hcCpu[i]);
    say(
      `| stepchain/${f}${f === 'v3' ? ' (the default format)' : ''} | ${fmt(median(rates[f].map((x) => x.wall)), 0)} | ${fmt(median(rates[f].map((x) => x.cpu)), 0)} | **${fmt(median(w))}×** (${range(w)}) | ${fmt(median(c))}× (${range(c)}) |`,
    );
  }
  say();
  say('Target (issue 45): the default format ≥ 0.5× hypercore.');
}
