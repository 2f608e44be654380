// Listing runs with their status (issue 36; spec/SQLITE.md §4.2, spec/POSTGRES.md §4.2): a SQLite and a
// Postgres store (a real PostgreSQL 18 started for the run, test/setup/pg-runner.mjs) with N runs (default
// 10 000): a third completed, a third interrupted (an effect begun, no outcome), a third running. Measures
// `store.runs({})` — one statement over journals and run_state — and `runs({ status: 'interrupted' })`,
// against the baseline in the same run: what `stepchain runs` did before, each run opened and folded from
// its records (a Run without the saved state). Then the cost of checking one effect in a run of 10 and of
// 10 000 plain steps (open, Run.pendingEffects, close: what each `stepchain effect begin` does first).
// A directory store (FileStore) too: its listing reads each run's saved state (`.run-state.json`,
// FILE-STORE.md §19) when it is current, without opening the journal; measured against the same baseline
// and against what `stepchain runs` did before (each run opened and read from its saved state, Run.refresh).
// Wall time, medians. Not part of `npm test`.
//
//   npm run build && node bench/runs-status.mjs [--n=10000] [--stores=directory,sqlite,postgres]
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore, startRun } from '../dist/index.js';
import { Run } from '../dist/runtime.js';
import { SqliteStore } from '../dist/sqlite.js';
import { PostgresStore } from '../dist/postgres.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const N = Number(process.argv.find((a) => a.startsWith('--n='))?.slice(4) ?? 10_000);
const STORES = (process.argv.find((a) => a.startsWith('--stores='))?.slice(9) ?? 'directory,sqlite,postgres').split(
  ',',
);
const log = (s) => process.stderr.write(s + '\n');
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function timed(fn, reps) {
  const ms = [];
  let out;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    out = await fn();
    ms.push(performance.now() - t);
  }
  return { ms: med(ms), out };
}

async function fill(store) {
  const t0 = performance.now();
  for (let i = 0; i < N; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, N - i) }, async (_, k) => {
        const n = i + k;
        const run = await startRun(store, { runId: `run-${String(n).padStart(6, '0')}`, agent: 'bench' });
        if (n % 3 === 0) await run.complete('ok');
        else if (n % 3 === 1) await run.beginTool({ name: 'pay', args: { n } });
        // A plain step through the Run (a directory store's saved state then names it; a raw journal.append would not).
        else await run.record({ kind: 'step', input: { n } });
        await run.close();
      }),
    );
  }
  return performance.now() - t0;
}

/** The listing before issue 36's rows: each run opened read-only and folded from every record. */
async function foldEach(store) {
  const out = [];
  for (const r of await store.runs({})) {
    const j = await store.open(r.id, { readOnly: true });
    const run = Run.of(j, { savedState: false });
    const pending = (await run.pendingEffects()).length;
    out.push({ id: r.id, status: await run.status(), pending });
    await j.close();
  }
  return out;
}

/** What `stepchain runs` did on a directory store before it read the saved state without opening: each run opened, Run.refresh (saved state + records after it). */
async function openEach(store) {
  const out = [];
  for (const r of await store.runs({})) {
    const j = await store.open(r.id, { readOnly: true });
    const state = await Run.of(j).refresh();
    out.push({ id: r.id, status: state.status });
    await j.close();
  }
  return out;
}

/** Open, read the pending effects, close: the first thing `stepchain effect begin` does (read-only here, as the baseline). */
async function checkOne(store, id) {
  const j = await store.open(id, { readOnly: true });
  const n = (await Run.of(j).pendingEffects()).length;
  await j.close();
  return n;
}

async function effectCheck(store) {
  const rows = [];
  for (const steps of [10, 10_000]) {
    const id = `long-${steps}`;
    const run = await startRun(store, { runId: id });
    await run.beginTool({ name: 'pay', args: { steps } });
    for (let i = 0; i < steps; i += 1000)
      await run.journal.appendMany(Array.from({ length: Math.min(1000, steps - i) }, (_, k) => ({ input: { k } })));
    await run.close();
    const saved = await timed(() => checkOne(store, id), 7);
    const folded = await timed(async () => {
      const j = await store.open(id, { readOnly: true });
      const n = (await Run.of(j, { savedState: false }).pendingEffects()).length;
      await j.close();
      return n;
    }, 3);
    rows.push({ steps, saved: saved.ms, folded: folded.ms });
  }
  return rows;
}

async function measureStore(name, store) {
  log(`${name}: creating ${N} runs…`);
  const createMs = await fill(store);
  const all = await timed(() => store.runs({}), 5);
  const interrupted = await timed(() => store.runs({ status: 'interrupted' }), 5);
  const withProgress = all.out.filter((r) => r.progress !== undefined).length;
  if (withProgress !== all.out.length)
    throw new Error(
      `${name}: ${all.out.length - withProgress} of ${all.out.length} runs listed without their progress`,
    );
  const opened = store instanceof FileStore ? await timed(() => openEach(store), 1) : null;
  log(`${name}: baseline (fold each run)…`);
  const base = await timed(() => foldEach(store), 1);
  const effects = await effectCheck(store);
  return { name, createMs, all, interrupted, opened, base, effects };
}

const load0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-runs-status-'));
const usePg = STORES.includes('postgres');
const runner = !usePg
  ? null
  : fork(join(here, '..', 'test', 'setup', 'pg-runner.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const exited = runner === null ? null : new Promise((resolve) => runner.once('exit', resolve));
const msg =
  runner === null
    ? null
    : await new Promise((resolve, reject) => {
        runner.once('message', resolve);
        runner.once('exit', (code) => reject(new Error(`the PostgreSQL runner exited (code ${code})`)));
      });
if (msg !== null && !msg.url) throw new Error(msg.error);
const results = [];
try {
  if (STORES.includes('directory'))
    results.push(await measureStore('directory', new FileStore(join(dir, 'runs'), { fsync: 'none' })));
  if (STORES.includes('sqlite')) {
    const sqlite = new SqliteStore(join(dir, 'runs.db'), { fsync: 'none' });
    results.push(await measureStore('SQLite', sqlite));
    await sqlite.close();
  }
  if (usePg) {
    const pgStore = new PostgresStore({ connectionString: msg.url, schema: 'bench_runs_status' });
    results.push(await measureStore('Postgres', pgStore));
    await pgStore.close();
  }
} finally {
  if (runner?.connected) runner.disconnect();
  await exited;
  rmSync(dir, { recursive: true, force: true });
}
console.log(
  `runs-status: N = ${N} runs per store, Node ${process.version}, load average ${load0} at the start, ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')} at the end`,
);
console.log(
  '| store | runs created | runs({}) with progress (databases: one query; directory: each saved state, unopened) | runs({ status: interrupted }) | before, directory: each run opened, Run.refresh | baseline: each run opened and folded | speed-up on the baseline |',
);
console.log('|---|---|---|---|---|---|---|');
for (const r of results) {
  console.log(
    `| ${r.name} | ${N} in ${(r.createMs / 1000).toFixed(1)} s | ${r.all.ms.toFixed(0)} ms (${r.all.out.length} runs, median of 5) | ${r.interrupted.ms.toFixed(0)} ms (${r.interrupted.out.length} runs) | ${r.opened ? `${(r.opened.ms / 1000).toFixed(1)} s (1 run)` : '—'} | ${(r.base.ms / 1000).toFixed(1)} s (1 run) | ×${(r.base.ms / r.all.ms).toFixed(0)} |`,
  );
}
console.log('');
console.log(
  '| store | steps in the run | open + pendingEffects + close, from the saved state (a run_state row; directory: .run-state.json) (median of 7) | the same folding every record (median of 3) |',
);
console.log('|---|---|---|---|');
for (const r of results)
  for (const e of r.effects)
    console.log(`| ${r.name} | ${e.steps} | ${e.saved.toFixed(1)} ms | ${e.folded.toFixed(1)} ms |`);
