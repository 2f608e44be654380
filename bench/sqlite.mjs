// `npm run bench:sqlite` (issue 41): the SQLite store against the file store, in the same run.
// - appends/s to one journal from 1, 4 and 16 writer processes (each its own connections), one awaiting
//   appender per process and 8 per process (group commit); both stores with fsync 'always' (SQLite:
//   synchronous = FULL in WAL mode), and SQLite with 'batch' (synchronous = NORMAL) beside them;
// - verify of a 100 000-step journal: the store's own verify (chain, blobs, its checks), SQLite and file.
// It writes the "SQLite store" section of bench/RESULTS.md (bench/lib/results-section.mjs); `--quick`
// runs shorter and writes RESULTS-quick.md instead.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

import { FileStore } from '../dist/store/index.js';
import { SqliteStore } from '../dist/sqlite.js';
import { makeSteps } from './lib/steps.mjs';
import { writeSection } from './lib/results-section.mjs';
import { fmtRate, fmtRatio, summary } from './lib/stats.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const QUICK = process.argv.includes('--quick');
const OUT = join(here, QUICK ? 'RESULTS-quick.md' : 'RESULTS.md');
const CFG = QUICK
  ? { runMs: 1500, reps: 1, writers: [1, 4, 16], conc: [1, 8], verifyN: 10_000, verifyReps: 1 }
  : { runMs: 4000, reps: 3, writers: [1, 4, 16], conc: [1, 8], verifyN: 100_000, verifyReps: 3 };
const LOAD0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
const log = (s) => process.stderr.write(s + '\n');
const scratch = mkdtempSync(join(tmpdir(), 'stepchain-bench-sqlite-'));
const rows = [];
let serial = 0;

async function runWorkers(argsFor, count) {
  const procs = Array.from({ length: count }, (_, p) =>
    fork(join(here, 'workers', 'sqlite-append-proc.mjs'), argsFor(p), {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
  const next = (p) =>
    new Promise((resolve, reject) => {
      p.once('message', resolve);
      p.once('exit', (code) => code !== 0 && reject(new Error(`a writer exited with ${code}`)));
    });
  await Promise.all(procs.map(next));
  const results = procs.map(next);
  for (const p of procs) p.send('go');
  return Promise.all(results);
}

const KINDS = [
  { kind: 'file', fsync: 'always', label: 'file store, fsync always' },
  { kind: 'sqlite', fsync: 'always', label: 'SQLite, fsync always (synchronous FULL)' },
  { kind: 'sqlite', fsync: 'batch', label: 'SQLite, fsync batch (synchronous NORMAL)' },
];

async function appendFigures() {
  for (const conc of CFG.conc) {
    for (const writers of CFG.writers) {
      for (const k of KINDS) {
        const rates = [];
        for (let r = 0; r < CFG.reps; r++) {
          const id = `w${writers}c${conc}r${r}`;
          const where = join(scratch, k.kind === 'sqlite' ? `append-${serial++}.db` : `append-${serial++}`);
          const setup = k.kind === 'sqlite' ? new SqliteStore(where) : new FileStore(where, { fsync: 'always' });
          await (await setup.create(id)).close();
          const results = await runWorkers(
            (p) => [k.kind, where, id, String(conc), String(CFG.runMs), String(p * 1_000_000), k.fsync],
            writers,
          );
          const done = results.reduce((a, x) => a + x.done, 0);
          rates.push((done * 1000) / Math.max(...results.map((x) => x.ms)));
          const check = await (await setup.open(id, { readOnly: true })).verify();
          if (!check.ok || check.steps !== done)
            throw new Error(`${k.kind} ${id}: ${check.steps} steps (expected ${done}), ok ${check.ok}`);
          if (k.kind === 'sqlite') await setup.close();
        }
        const s = summary(rates);
        rows.push({
          figure: `${writers} process${writers === 1 ? '' : 'es'} × ${conc} awaiting appender${conc === 1 ? '' : 's'}, ${k.label}`,
          ...s,
          unit: 'appends/s',
          key: `${k.kind}-${k.fsync}:${writers}:${conc}`,
        });
        log(`append ${k.label} ${writers}×${conc}: ${fmtRate(s.median)}/s`);
      }
    }
  }
  for (const row of rows) {
    if (!row.key.startsWith('sqlite')) continue;
    const file = rows.find((x) => x.key === `file-always:${row.key.split(':').slice(1).join(':')}`);
    row.ratio = row.median / file.median;
    row.against = 'the file store, same writers';
  }
}

async function verifyFigures() {
  const N = CFG.verifyN;
  const lite = new SqliteStore(join(scratch, 'verify.db'), { fsync: 'none' });
  const files = new FileStore(join(scratch, 'verify'), { fsync: 'none' });
  const lj = await lite.create('big');
  const fj = await files.create('big');
  for (let from = 0; from < N; from += 10_000) {
    const steps = makeSteps(Math.min(10_000, N - from), {}, from);
    await lj.appendMany(steps);
    await fj.appendMany(steps);
  }
  await lj.close();
  await fj.close();
  for (const [label, store, key] of [
    ['file store', files, 'verify-file'],
    ['SQLite', lite, 'verify-sqlite'],
  ]) {
    const rates = [];
    for (let r = 0; r < CFG.verifyReps; r++) {
      const t0 = performance.now();
      const report = await store.verify('big');
      const ms = performance.now() - t0;
      if (!report.ok || report.steps !== N) throw new Error(`${label}: verify ${report.steps} steps, ok ${report.ok}`);
      rates.push((N * 1000) / ms);
    }
    const s = summary(rates);
    rows.push({
      figure: `verify of ${N} steps, ${label} (the store's verify: chain, blobs, its own checks)`,
      ...s,
      unit: 'steps/s',
      key,
    });
    log(`verify ${label}: ${fmtRate(s.median)} steps/s`);
  }
  const v = rows.find((x) => x.key === 'verify-sqlite');
  v.ratio = v.median / rows.find((x) => x.key === 'verify-file').median;
  v.against = 'the file store';
  await lite.close();
  rows.push({
    figure: `database file of ${N} steps (after close: WAL checkpointed)`,
    median: statSync(join(scratch, 'verify.db')).size / N,
    min: null,
    max: null,
    unit: 'bytes/step',
    key: 'size',
  });
}

try {
  await appendFigures();
  await verifyFigures();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
const fmt = (row) => (row.unit === 'bytes/step' ? row.median.toFixed(0) : fmtRate(row.median));
const lines = [
  '## SQLite store (issue 41, `npm run bench:sqlite`)',
  '',
  `Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load average at start ${LOAD0}, at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')}; ` +
    `median of ${CFG.reps} runs of ${CFG.runMs} ms (verify: ${CFG.verifyReps}), min–max beside it. The machine was shared with other work while this ran: read ratios, not absolutes.`,
  '',
  '| figure | median | min–max | unit | ratio |',
  '|---|---:|---:|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.figure} | ${fmt(r)} | ${r.min === null ? '' : `${fmtRate(r.min)}–${fmtRate(r.max)}`} | ${r.unit} | ${r.ratio === undefined ? '' : `${fmtRatio(r.ratio)} of ${r.against}`} |`,
  ),
  '',
];
writeSection(OUT, '## SQLite store (issue 41', lines);
process.stdout.write(lines.join('\n') + '\n');
