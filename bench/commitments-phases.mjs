// Where a stepchain/v2 record's extra time goes (issue 21): per-step CPU microseconds of each phase of the
// append and verify paths, v1 against v2 on the same generated steps. Each phase runs in memory (no file
// I/O) so its figure is the code's own cost; each format runs in its own child process (as a journal's
// verifier does: one format), v1 and v2 alternating, and every figure is the median of CPU time
// (process.cpuUsage: user + system), which other load on a shared machine disturbs far less than wall
// time. `npm run bench:commitments` writes the table into its section of bench/RESULTS.md;
// `node bench/commitments-phases.mjs` prints it alone, and `--paths` measures the section's four paths
// end to end (file store, .tar receipts) by CPU time, v1 and v2 alternating in one process.
import { makeSteps } from './lib/steps.mjs';
import { prepareSteps } from '../dist/store/prepare.js';
import { sequenceBatch, NO_STEPS } from '../dist/store/sequencer.js';
import { checkLine } from '../dist/chain/line.js';
import { ChainVerifier } from '../dist/chain/verifier.js';
import { makeGenesis, genesisHash, formatOf, writerProfile } from '../dist/record/formats.js';
import { receiptBytes, verifyReceipt } from '../dist/receipt/index.js';
import { MemoryStore } from '../dist/store/index.js';
import { emptyState, foldLine } from '../dist/record/run-state.js';
import { scanCanonical } from '../dist/canonical/scan.js';

const NOW = '2026-01-01T00:00:00.000Z';

/**
 * CPU time of one run. No forced GC before it, unlike lib/stats.mjs's measure: measured here, a full
 * collection (global.gc) before each run made the per-line check 2.5× slower on the runs after it.
 */
async function cpuMicrosAsync(fn) {
  const c0 = process.cpuUsage();
  await fn();
  const c = process.cpuUsage(c0);
  return c.user + c.system;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** The lines a journal of `format` holds for `steps`, sealed by the shared prepare and sequencer. */
function linesOf(format, steps) {
  const genesis = makeGenesis({ journalId: `phases-${format.slice(-2)}`, createdAt: NOW, format });
  const profile = writerProfile(genesis);
  const prepared = prepareSteps(steps, 1 << 30, profile);
  const batch = sequenceBatch([{ steps: prepared }], { seq: -1, hash: genesisHash(genesis) }, NO_STEPS, NOW);
  return { genesis, profile, lines: batch.lines.map((l) => l.text.slice(0, -1)) };
}

/** The phases of one format (`k`: v1 or v2) over `n` steps, `reps` runs each: { phase: median µs/step }. */
async function phasesOf(k, { n, reps }) {
  const steps = makeSteps(n, { seed: 21 });
  const v = linesOf(k === 'v1' ? 'stepchain/v1' : 'stepchain/v2', steps);
  const format = formatOf(v.genesis);
  const store = new MemoryStore();
  const j = await store.create(`r-${k}`, { createdAt: NOW, journalId: `r-${k}`, format: v.genesis.format });
  await j.appendMany(steps);
  const receipt = await receiptBytes(j);
  const bytes = v.lines.map((line) => Buffer.from(line));
  const spans = v.lines.map((line) => scanCanonical(line, { maxDepth: 64 }).members);
  const prepared = prepareSteps(steps, 1 << 30, v.profile);
  const phases = [
    [PHASES[0], () => prepareSteps(steps, 1 << 30, v.profile)],
    [PHASES[1], () => sequenceBatch([{ steps: prepared }], { seq: -1, hash: genesisHash(v.genesis) }, NO_STEPS, NOW)],
    [
      PHASES[2],
      () => {
        for (const line of v.lines) checkLine(line, format);
      },
    ],
    [
      PHASES[3],
      () => {
        for (let i = 0; i < spans.length; i++) v.profile.stepHashOf(v.lines[i], spans[i].get('step_hash'), spans[i]);
      },
    ],
    [
      PHASES[4],
      () => {
        const cv = new ChainVerifier({ genesis: v.genesis });
        cv.beginSegment('b');
        for (const line of bytes) cv.line(line, true);
        const r = cv.finish();
        if (!r.ok) throw new Error(`chain ${k}: ${r.problems[0]?.message}`);
      },
    ],
    [
      PHASES[5],
      () => {
        if (k === 'v1') return;
        const s = emptyState();
        v.lines.forEach((line, seq) => foldLine(s, line, seq));
      },
    ],
    [
      PHASES[6],
      async () => {
        const rep = await verifyReceipt(receipt);
        if (!rep.ok) throw new Error(`receipt ${k}: ${rep.problems[0]?.message}`);
      },
    ],
  ];
  const out = {};
  for (const [name, fn] of phases) {
    for (let w = 0; w < 3; w++) await fn();
    const t = [];
    for (let r = 0; r < reps; r++) t.push((await cpuMicrosAsync(fn)) / n);
    out[name] = median(t);
  }
  return out;
}

const PHASES = [
  'prepare (checkStepInput, JCS of each field, idempotency key)',
  'seal (sequenceBatch: envelope, salts, slot digests, step hash, line)',
  'per-line check (checkLine: scan, member rules, markers, step hash)',
  '  of which the step hash (profile.stepHashOf)',
  'chain verify in memory (decode, per-line check, links)',
  'run reader (a v2 receipt\'s "does not prove": foldLine)',
  'receipt verify in memory (verifyReceipt of the .tar bytes)',
];

/**
 * Measures every phase for v1 and v2 over `n` steps: each format in its own child process (a process that
 * checks both formats runs polymorphic code, slower for v1 than a v1 journal's own verifier), v1 and v2
 * alternating `pairs` times, `reps` runs per phase in each. Returns rows of [phase, v1 µs/step, v2 µs/step].
 */
export async function measurePhases({ n = 3000, reps = 5, pairs = 2 } = {}) {
  const { execFileSync } = await import('node:child_process');
  const self = new URL(import.meta.url).pathname;
  const runs = { v1: [], v2: [] };
  for (let p = 0; p < pairs; p++) {
    for (const k of ['v1', 'v2']) {
      const out = execFileSync(process.execPath, ['--expose-gc', self, `--only=${k}`, `--n=${n}`, `--reps=${reps}`], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      runs[k].push(JSON.parse(out));
    }
  }
  return PHASES.map((name) => [name, median(runs.v1.map((r) => r[name])), median(runs.v2.map((r) => r[name]))]);
}

/**
 * The four paths of the commitments section end to end, by CPU time: append (appendMany in batches of 1000,
 * fsync none), journal verify, receipt verify (.tar) and published receipt verify, v1 and v2 alternating.
 * Returns rows of [path, v1 µs/step, v2 µs/step, median of the per-pair ratios v1 time ÷ v2 time].
 */
export async function measurePaths({ root, n = 5000, reps = 5 }) {
  const { FileStore } = await import('../dist/store/index.js');
  const { exportReceipt, verifyReceiptFile } = await import('../dist/receipt/index.js');
  const redact = await import('../dist/redact/index.js');
  const { writeFile } = await import('node:fs/promises');
  const { join } = await import('node:path');
  const store = new FileStore(join(root, 'paths'), { fsync: 'none' });
  const steps = makeSteps(n, { seed: 21 });
  const formats = { v1: 'stepchain/v1', v2: 'stepchain/v2' };
  let id = 0;
  const fill = async (k) => {
    const j = await store.create(`${k}-${id++}`, { createdAt: NOW, journalId: `paths-${k}`, format: formats[k] });
    for (let i = 0; i < steps.length; i += 1000) await j.appendMany(steps.slice(i, i + 1000));
    await j.close();
    return j.id;
  };
  const ids = { v1: await fill('v1'), v2: await fill('v2') };
  const journals = {
    v1: await store.open(ids.v1, { readOnly: true }),
    v2: await store.open(ids.v2, { readOnly: true }),
  };
  const tar = (k) => join(root, `paths-${k}.tar`);
  for (const k of ['v1', 'v2']) await exportReceipt(journals[k], { out: tar(k) });
  const policy = redact.compilePolicy({
    rules: [
      { id: 'user-id', paths: ['/input/user/id'] },
      { id: 'prompts', paths: ['/prompt'] },
    ],
  });
  const pub = (k) => join(root, `paths-pub-${k}.tar`);
  await redact.publish(journals.v1, { out: pub('v1'), policy: policy.document, optIn: true });
  const { writeReceipt } = await import('../dist/receipt/writer.js');
  const parts = [];
  for await (const c of writeReceipt((await redact.planCommittedPublication(journals.v2, { policy })).plan))
    parts.push(Buffer.from(c));
  await writeFile(pub('v2'), Buffer.concat(parts));
  const ok = (what, r) => {
    if (!r.ok) throw new Error(`${what}: ${r.problems[0]?.message}`);
  };
  const paths = [
    ['append (appendMany, batches of 1000, fsync none)', (k) => fill(k)],
    ['journal verify', async (k) => ok('verify', await journals[k].verify())],
    ['receipt verify (.tar)', async (k) => ok('receipt', await verifyReceiptFile(tar(k)))],
    ['published receipt verify', async (k) => ok('published', await redact.verifyPublishedFile(pub(k)))],
  ];
  const rows = [];
  for (const [name, fn] of paths) {
    await fn('v1');
    await fn('v2');
    const t = { v1: [], v2: [] };
    const ratios = [];
    for (let r = 0; r < reps; r++) {
      const a = await cpuMicrosAsync(() => fn('v1'));
      const b = await cpuMicrosAsync(() => fn('v2'));
      t.v1.push(a / n);
      t.v2.push(b / n);
      ratios.push(a / b);
    }
    rows.push([name, median(t.v1), median(t.v2), median(ratios)]);
  }
  for (const k of ['v1', 'v2']) await journals[k].close();
  return rows;
}

export function renderPaths(rows) {
  const L = [
    '| Path (CPU µs per step, paired runs) | v1 | v2 | v2 rate ÷ v1 rate (median of pairs) |',
    '|---|---:|---:|---:|',
  ];
  for (const [name, a, b, r] of rows) L.push(`| ${name} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${r.toFixed(2)}× |`);
  return L.join('\n');
}

/** A ratio needs a measurable v1 phase: under 0.05 µs (v1's run reader does nothing) it would be noise. */
export function renderPhases(rows) {
  const L = [
    '| Phase (CPU µs per step, median of paired runs) | v1 | v2 | v2 − v1 | v2 ÷ v1 |',
    '|---|---:|---:|---:|---:|',
  ];
  for (const [name, a, b] of rows)
    L.push(
      `| ${name} | ${a.toFixed(2)} | ${b.toFixed(2)} | ${b - a >= 0 ? '+' : ''}${(b - a).toFixed(2)} | ${a >= 0.05 ? (b / a).toFixed(2) + '×' : '–'} |`,
    );
  return L.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const n = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 3000);
  const reps = Number(process.argv.find((a) => a.startsWith('--reps='))?.slice(7) ?? 5);
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
  if (only !== undefined) process.stdout.write(JSON.stringify(await phasesOf(only, { n, reps })));
  else if (process.argv.includes('--paths')) {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const root = mkdtempSync(join(tmpdir(), 'stepchain-paths-'));
    try {
      console.log(renderPaths(await measurePaths({ root, n, reps })));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  } else console.log(renderPhases(await measurePhases({ n, reps })));
}
