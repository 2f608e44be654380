// stepchain's benchmark harness (issue 9). Run through `npm run bench` (full) or `npm run bench:quick`.
// Every figure is the median of several runs with the spread (min–max), printed with its ratio to a
// reference measured in the same run, on the same lines:
// - the limit: read + JSON.parse + SHA-256 (node:crypto) of each stored line, nothing else;
// - the naive baseline (bench/naive.mjs): lock per append, canonicalize, hash, append, fsync, release;
//   verify by parse, re-canonicalize, re-hash.
// It writes bench/RESULTS.md (full) or bench/RESULTS-quick.md (quick); never edit those by hand.
import { fork, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

import { FileStore } from '../dist/store/index.js';
import { exportReceipt, verifyReceiptFile } from '../dist/receipt/index.js';
import { diff } from '../dist/diff/index.js';
import { genesisHash } from '../dist/record/index.js';
// The backend is chosen inside the library (node:crypto in Node) and exported from no entry point: the
// bench reaches the internal module to measure the portable hash for contrast.
import { sha256Backend, setSha256Backend, nobleBackend, nodeBackend } from '../dist/canonical/sha256.js';
import { NaiveJournal, naiveVerify } from './naive.mjs';
import { makeStep, makeSteps } from './lib/steps.mjs';
import { fastFill } from './lib/fast-journal.mjs';
import { fmtRate, fmtRatio, gc, measure, summary } from './lib/stats.mjs';
import { commitmentsSection, renderCommitments, spliceCommitments } from './commitments.mjs';
import { adapterOverhead, adapterSection } from './adapters.mjs';
import { replayBench, replaySection } from './replay.mjs';
import { limitPass } from './lib/limit.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const argv = process.argv.slice(2);
const QUICK = argv.includes('--quick');
/** `--section=commitments`: measure only that section and rewrite only its block of the results file. */
const SECTION = argv.find((a) => a.startsWith('--section='))?.slice(10) ?? null;
const outArg = argv.find((a) => a.startsWith('--out='));
const OUT = outArg ? outArg.slice(6) : join(here, QUICK ? 'RESULTS-quick.md' : 'RESULTS.md');

/** Sizes per mode. Durable single-step appends are bounded by fsync latency, so they get few steps. */
const CFG = QUICK
  ? {
      N: 5_000,
      warm: 3,
      reps: 3,
      publishReps: 3,
      appendReps: 2,
      single: { always: 50, batch: 200, none: 300 },
      conc: { always: 800, batch: 1600, none: 1600 },
      procs: { always: 200, batch: 400, none: 400 },
      naive: { fsync: 100, nofsync: 300 },
      heavyReps: 3,
      blobN: 32,
      blobReps: 2,
      rss: false,
      big: 0,
      tp: 5_000,
      tpReps: 2,
      batched: 5_000,
      gz: false,
    }
  : {
      N: 100_000,
      warm: 1,
      reps: 5,
      publishReps: 2,
      heavyReps: 3,
      appendReps: 3,
      single: { always: 400, batch: 2000, none: 4000 },
      conc: { always: 6400, batch: 16_000, none: 16_000 },
      procs: { always: 1600, batch: 4000, none: 4000 },
      naive: { fsync: 400, nofsync: 2000 },
      blobN: 256,
      blobReps: 3,
      rss: true,
      big: 1_000_000,
      tp: 50_000,
      tpReps: 3,
      batched: 50_000,
      gz: true,
    };
const BULK_BATCH = 10_000;
const BLOB_BYTES = 100_000;

const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-'));
const started = Date.now();
const LOAD0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
const figures = [];
const notes = [];
let nextId = 0;

function log(msg) {
  process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${msg}\n`);
}

/** Records a figure. `ref` is the figure (or number) it is compared against; `higher` says which way is better. */
/** A figure's ratio to its reference: from paired adjacent runs when measured so, else of the medians. */
function ratioOf(f) {
  return f.pairRatio !== undefined ? f.pairRatio : f.median / f.ref.median;
}

function record(section, name, stat, unit, ref = null, note = '') {
  const f = { id: nextId++, section, name, ...stat, unit, ref, note };
  figures.push(f);
  const ratio = ref
    ? ` ${fmtRatio(ratioOf(f))} ${ref.label ?? ref.name}${f.pairRatio !== undefined ? ' (paired runs)' : ''}`
    : '';
  log(`${section} | ${name}: ${fmtRate(stat.median)} ${unit} (${fmtRate(stat.min)}–${fmtRate(stat.max)})${ratio}`);
  return f;
}

// ------------------------------------------------------------------------------------------ journals

async function bulkFill(store, id, n, { seed = 1, lastSeed = seed } = {}) {
  const journal = await store.create(id, { createdAt: '2026-01-01T00:00:00.000Z', journalId: `bench-${id}` });
  let ms = 0;
  for (let i = 0; i < n; i += BULK_BATCH) {
    const k = Math.min(BULK_BATCH, n - i);
    const steps = makeSteps(k, { seed }, i);
    if (i + k === n && lastSeed !== seed) steps[k - 1] = makeStep(n - 1, { seed: lastSeed });
    gc();
    const t0 = performance.now();
    await journal.appendMany(steps);
    ms += performance.now() - t0;
  }
  await journal.close();
  return (n * 1000) / ms;
}

function bucketFiles(storeRoot, id) {
  const dir = join(storeRoot, id, 'buckets');
  return readdirSync(dir)
    .filter((n) => n.endsWith('.jsonl'))
    .sort()
    .map((n) => join(dir, n));
}

function bytesOf(files) {
  return files.reduce((a, f) => a + statSync(f).size, 0);
}

// --------------------------------------------------------------------------------------- the limit

// The limit (read each bucket in 1 MiB chunks, JSON.parse and SHA-256 every line) is bench/lib/limit.mjs's limitPass.

// ------------------------------------------------------------------------------------------ appends

/**
 * Appends `n` generated steps to a fresh journal with `feed`, timed from its first call to its last
 * acknowledgement (setup and the check stay outside), then verifies that the journal holds exactly them.
 */
async function timedAppend({ mode, dir, seed, n, blobBytes = 0, offset = 0, label }, feed) {
  const store = new FileStore(join(root, dir), { fsync: mode });
  const id = `j${nextId++}`;
  const journal = await store.create(id);
  const steps = makeSteps(n, { seed, blobBytes }, offset);
  gc();
  const t0 = performance.now();
  await feed(journal, steps);
  const ms = performance.now() - t0;
  await journal.close();
  const report = await (await store.open(id, { readOnly: true })).verify();
  if (!report.ok || report.steps !== n)
    throw new Error(`${label}: journal does not verify (${report.steps} steps, ${report.problems[0]?.message})`);
  return { rate: (n * 1000) / ms, store, id };
}

/** `appenders` concurrent callers, each awaiting its append before the next. */
function appendRun(mode, appenders, n, { blobBytes = 0, offset = 0 } = {}) {
  return timedAppend(
    { mode, dir: `append-${mode}`, seed: 7, n, blobBytes, offset, label: `append ${mode}×${appenders}` },
    async (journal, steps) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: appenders }, async () => {
          while (next < n) await journal.append(steps[next++]);
        }),
      );
    },
  );
}

/** appendMany in batches of `batch` steps, one batch at a time. */
async function batchedRun(mode, n, batch) {
  const run = await timedAppend(
    { mode, dir: `batched-${mode}`, seed: 11, n, label: `appendMany ${mode} in batches of ${batch}` },
    async (journal, steps) => {
      for (let i = 0; i < n; i += batch) await journal.appendMany(steps.slice(i, i + batch));
    },
  );
  return run.rate;
}

async function procRun(mode, procs, perProc, conc) {
  const storeRoot = join(root, `procs-${mode}`);
  const id = `p${nextId++}`;
  const journal = await new FileStore(storeRoot, { fsync: mode }).create(id);
  await journal.close();
  const children = Array.from({ length: procs }, (_, p) =>
    fork(
      join(here, 'workers/append-proc.mjs'),
      [storeRoot, id, mode, String(perProc), String(conc), String(p * perProc)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
    ),
  );
  const ready = children.map(
    (c) =>
      new Promise((resolve, reject) => {
        c.once('message', resolve);
        c.once('error', reject);
      }),
  );
  await Promise.all(ready);
  const done = children.map(
    (c) =>
      new Promise((resolve, reject) => {
        c.once('message', resolve);
        c.once('exit', (code) => (code ? reject(new Error(`append process exited with ${code}`)) : undefined));
      }),
  );
  const t0 = performance.now();
  for (const c of children) c.send('go');
  await Promise.all(done);
  const ms = performance.now() - t0;
  await Promise.all(
    children.map((c) => new Promise((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', resolve)))),
  );
  const report = await (await new FileStore(storeRoot).open(id, { readOnly: true })).verify();
  if (!report.ok || report.steps !== procs * perProc)
    throw new Error(`${procs} processes ${mode}: journal does not verify (${report.steps} steps)`);
  return (procs * perProc * 1000) / ms;
}

async function naiveAppendRun(n, fsync, blobBytes = 0) {
  const path = join(root, `naive-${nextId++}.jsonl`);
  const g = genesisHash({ format: 'stepchain/v1', journal_id: 'naive', created_at: '2026-01-01T00:00:00.000Z' });
  const journal = new NaiveJournal(path, g, { fsync });
  const steps = makeSteps(n, { seed: 7, blobBytes });
  gc();
  const t0 = performance.now();
  for (const s of steps) await journal.append(s);
  const ms = performance.now() - t0;
  const check = naiveVerify([path], g);
  if (!check.ok || check.steps !== n) throw new Error('naive journal does not verify');
  rmSync(path, { force: true });
  return (n * 1000) / ms;
}

// --------------------------------------------------------------------------------------- children

function childJson(args, options = {}) {
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 24, ...options });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function ensureThirdParty() {
  const dir = join(here, 'thirdparty');
  if (
    existsSync(join(dir, 'node_modules/hypercore/package.json')) &&
    existsSync(join(dir, 'node_modules/sonic-boom/package.json'))
  )
    return true;
  log(
    'third-party: installing hypercore and sonic-boom into bench/thirdparty (npm install --prefix bench/thirdparty) ...',
  );
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const r = spawnSync(npm, ['install', '--prefix', dir, '--no-audit', '--no-fund'], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' / ');
    log(`third-party: cannot install (offline?): ${why}. Skipping the comparison.`);
    notes.push(`Third-party comparison skipped: \`npm install --prefix bench/thirdparty\` failed (${why}).`);
    return false;
  }
  return true;
}

// ------------------------------------------------------------------------------------------ the run

/** The commitments section alone (issue 21), spliced into the existing results file. */
async function commitmentsOnly() {
  log(`section commitments; scratch ${root}`);
  const result = await commitmentsSection({ root, N: QUICK ? 5_000 : 20_000, reps: QUICK ? 2 : 3, record });
  const when = `Measured ${new Date().toISOString()} by \`npm run bench:commitments\` (load average ${LOAD0} at start, ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')} at the end; ${cpus().length} cores, Node ${process.version})`;
  const section = renderCommitments(result, figures, { fmtRate, fmtRatio, ratioOf, when });
  writeFileSync(
    OUT,
    spliceCommitments(existsSync(OUT) ? readFileSync(OUT, 'utf8') : '# stepchain benchmark results\n', section),
  );
  log(`wrote the commitments section of ${OUT}`);
}

async function main() {
  if (SECTION === 'commitments') return commitmentsOnly();
  if (SECTION !== null) throw new Error(`unknown section ${SECTION}; the one section that runs alone is commitments`);
  log(`mode ${QUICK ? 'quick' : 'full'}; scratch ${root}; SHA-256 backend ${sha256Backend().name}`);
  if (sha256Backend().name !== 'node:crypto')
    throw new Error('node:crypto SHA-256 is not in effect: the library should choose it inside Node');
  const store = new FileStore(join(root, 'main'), { fsync: 'none' });
  const N = CFG.N;

  // Journals: the main run, an identical second run and one that diverges at its last step.
  log(
    `building journals of ${N} steps (a: appendMany in batches of ${BULK_BATCH}, fsync none; b, c: bench/lib/fast-journal.mjs) ...`,
  );
  const bulk = [
    await bulkFill(store, 'a', N),
    await bulkFill(store, 'bulk1', Math.min(N, 20_000)),
    await bulkFill(store, 'bulk2', Math.min(N, 20_000)),
  ];
  await fastFill(store, 'b', N, { genesisHash });
  await fastFill(store, 'c', N, { genesisHash, lastSeed: 99 });
  for (const id of ['b', 'c']) {
    const r = await (await store.open(id, { readOnly: true })).verify();
    if (!r.ok || r.steps !== N) throw new Error(`generated journal ${id} does not verify`);
  }
  const filesA = bucketFiles(store.root, 'a');
  const filesB = bucketFiles(store.root, 'b');
  const bytesA = bytesOf(filesA);
  const lineBytes = bytesA / N;
  const G = { a: (await store.open('a', { readOnly: true })).genesis };
  const gHash = genesisHash(G.a);

  // The limit and the baseline.
  const limit = record(
    'verify',
    'limit: read + JSON.parse + SHA-256 per line',
    await measure({ reps: CFG.reps, units: N, warmup: CFG.warm, fn: () => limitPass(filesA) }),
    'steps/s',
  );
  const pairLimit = { units: N, fn: () => limitPass(filesA) };
  limit.label = 'limit';
  const parseOnly = record(
    'verify',
    'read + JSON.parse per line (no hash)',
    await measure({
      reps: CFG.reps,
      units: N,
      warmup: CFG.warm,
      pair: pairLimit,
      fn: () => limitPass(filesA, { hash: false }),
    }),
    'steps/s',
    limit,
  );
  const naiveV = record(
    'verify',
    'naive verify: parse + canonicalize + SHA-256',
    await measure({
      reps: CFG.heavyReps,
      units: N,
      pair: pairLimit,
      fn: () => {
        const r = naiveVerify(filesA, gHash);
        if (!r.ok || r.steps !== N) throw new Error('naive verify disagrees with the store');
        return r.steps;
      },
    }),
    'steps/s',
    limit,
  );
  naiveV.label = 'naive';

  // Journal verify (read-only open, the public API).
  const journalA = await store.open('a', { readOnly: true });
  const verify = record(
    'verify',
    'journal verify (journal.verify())',
    await measure({
      reps: CFG.reps,
      units: N,
      warmup: CFG.warm,
      pair: pairLimit,
      fn: async () => {
        const r = await journalA.verify();
        if (!r.ok || r.steps !== N) throw new Error(`journal verify: ${r.problems[0]?.message}`);
        return r.steps;
      },
    }),
    'steps/s',
    limit,
  );
  verify.vsNaive = verify.median / naiveV.median;
  setSha256Backend(nobleBackend);
  record(
    'verify',
    'journal verify with @noble/hashes SHA-256 (for contrast)',
    await measure({ reps: 2, units: N, pair: pairLimit, fn: async () => (await journalA.verify()).steps }),
    'steps/s',
    limit,
  );
  setSha256Backend(nodeBackend);

  // Receipts: export (uncompressed tar, and .tar.gz in the full run) and verify.
  const tarPath = join(root, 'a.tar');
  const pairVerify = { units: N, fn: async () => (await journalA.verify()).steps };
  const exp = record(
    'receipt',
    'export receipt (.tar)',
    await measure({
      reps: CFG.heavyReps,
      units: N,
      pair: pairVerify,
      fn: async () => {
        rmSync(tarPath, { force: true });
        await exportReceipt(journalA, { out: tarPath });
      },
    }),
    'steps/s',
    verify,
    'ratio < 1 is slower than verify',
  );
  exp.label = 'journal verify';
  const rv = record(
    'receipt',
    'receipt verify (.tar, verifyReceiptFile)',
    await measure({
      reps: CFG.heavyReps,
      units: N,
      warmup: CFG.warm,
      pair: pairLimit,
      fn: async () => {
        const r = await verifyReceiptFile(tarPath);
        if (!r.ok) throw new Error(`receipt verify: ${r.problems[0]?.message}`);
        return r.steps;
      },
    }),
    'steps/s',
    limit,
  );
  if (CFG.gz) {
    const gzPath = join(root, 'a.tar.gz');
    record(
      'receipt',
      'export receipt (.tar.gz, gzip -9)',
      await measure({
        reps: 1,
        units: N,
        fn: async () => {
          rmSync(gzPath, { force: true });
          await exportReceipt(journalA, { out: gzPath });
        },
      }),
      'steps/s',
      verify,
    );
    record(
      'receipt',
      'receipt verify (.tar.gz)',
      await measure({ reps: 1, units: N, pair: pairLimit, fn: async () => (await verifyReceiptFile(gzPath)).steps }),
      'steps/s',
      limit,
    );
  }

  // Publish (src/redact): a redacted, re-anchored receipt; one rule redacts every step's user id.
  if (existsSync(join(here, '../dist/redact/index.js'))) {
    const redact = await import('../dist/redact/index.js');
    if (typeof redact.publish === 'function') {
      try {
        const pubPath = join(root, 'pub.tar');
        const policy = { rules: [{ id: 'user-id', paths: ['/input/user/id'] }] };
        record(
          'receipt',
          'publish: redact one value per step + receipt (.tar)',
          await measure({
            reps: CFG.publishReps,
            units: N,
            pair: pairVerify,
            fn: async () => {
              rmSync(pubPath, { force: true });
              const r = await redact.publish(journalA, { out: pubPath, policy, optIn: true });
              if (r.redactions !== N) throw new Error(`publish redacted ${r.redactions} values, expected ${N}`);
            },
          }),
          'steps/s',
          verify,
        );
        if (typeof redact.verifyPublishedFile === 'function') {
          try {
            record(
              'receipt',
              'published receipt verify (verifyPublishedFile)',
              await measure({
                reps: CFG.publishReps,
                units: N,
                pair: pairLimit,
                fn: async () => {
                  const r = await redact.verifyPublishedFile(pubPath);
                  if (!r.ok)
                    throw new Error(
                      `the published receipt does not verify: ${r.problems[0]?.code} ${r.problems[0]?.message}`,
                    );
                },
              }),
              'steps/s',
              limit,
            );
          } catch (e) {
            notes.push(`Published receipt verify not measured: ${e.message.split('\n')[0]}`);
          }
        }
      } catch (e) {
        notes.push(`Publish not measured: src/redact's publish failed here (${e.message.split('\n')[0]}).`);
      }
    } else notes.push('Publish not measured: src/redact exports no `publish` yet.');
  } else notes.push('Publish not measured: src/redact is not built.');

  // Diff of two N-step runs: identical, and diverging at the last step; against reading both runs.
  const journalB = await store.open('b', { readOnly: true });
  const journalC = await store.open('c', { readOnly: true });
  const both = [...filesA, ...filesB];
  const limit2 = record(
    'diff',
    `limit on both runs: read + JSON.parse + SHA-256 (${N} + ${N} lines)`,
    await measure({ reps: CFG.reps, units: N, warmup: CFG.warm, fn: async () => (await limitPass(both)) / 2 }),
    'step pairs/s',
  );
  const pairLimit2 = { units: N, fn: async () => (await limitPass(both)) / 2 };
  limit2.label = 'limit';
  record(
    'diff',
    'read + JSON.parse of both runs',
    await measure({
      reps: CFG.reps,
      units: N,
      pair: pairLimit2,
      fn: async () => (await limitPass(both, { hash: false })) / 2,
    }),
    'step pairs/s',
    limit2,
  );
  const dSame = record(
    'diff',
    'diff, identical runs',
    await measure({
      reps: CFG.heavyReps,
      units: N,
      warmup: CFG.warm,
      pair: pairLimit2,
      fn: async () => {
        const r = await diff(journalA, journalB);
        if (!r.same || r.compared.a !== N) throw new Error('diff of identical runs found a divergence');
      },
    }),
    'step pairs/s',
    limit2,
  );
  record(
    'diff',
    'diff, runs diverging at the last step',
    await measure({
      reps: CFG.heavyReps,
      units: N,
      pair: pairLimit2,
      fn: async () => {
        const r = await diff(journalA, journalC);
        if (r.same || r.divergences.length !== 1) throw new Error('diff missed the divergence at the last step');
      },
    }),
    'step pairs/s',
    limit2,
  );

  // Appends: single awaiting appender, 32 in-process appenders, 4 processes × 8 appenders; per fsync mode.
  // Each run measures its own time (setup and the verification check stay outside it).
  const fixRate = async (reps, run) => {
    const rates = [];
    for (let r = 0; r < reps; r++) rates.push(await run(r));
    return summary(rates);
  };
  const naiveFs = record(
    'append',
    'naive: lock + canonicalize + hash + append + fsync, per step',
    await fixRate(CFG.appendReps, () => naiveAppendRun(CFG.naive.fsync, true)),
    'steps/s',
  );
  naiveFs.label = 'naive (fsync)';
  const naiveNo = record(
    'append',
    'naive without fsync',
    await fixRate(CFG.appendReps, () => naiveAppendRun(CFG.naive.nofsync, false)),
    'steps/s',
  );
  naiveNo.label = 'naive (no fsync)';
  const appendFig = {};
  for (const mode of ['always', 'batch', 'none']) {
    const ref = mode === 'always' ? naiveFs : naiveNo;
    appendFig[`single-${mode}`] = record(
      'append',
      `single awaiting appender, fsync ${mode}`,
      await fixRate(CFG.appendReps, async () => (await appendRun(mode, 1, CFG.single[mode])).rate),
      'steps/s',
      ref,
    );
    appendFig[`conc-${mode}`] = record(
      'append',
      `32 concurrent appenders (group commit), fsync ${mode}`,
      await fixRate(CFG.appendReps, async () => (await appendRun(mode, 32, CFG.conc[mode])).rate),
      'steps/s',
      ref,
    );
    appendFig[`procs-${mode}`] = record(
      'append',
      `4 processes × 8 appenders on one journal, fsync ${mode}`,
      await fixRate(CFG.appendReps, () => procRun(mode, 4, CFG.procs[mode] / 4, 8)),
      'steps/s',
      ref,
    );
  }
  record('append', `bulk appendMany (batches of ${BULK_BATCH}), fsync none`, summary(bulk), 'steps/s', naiveNo);

  // The 100 KB-result variant: blobs.
  const naiveBlob = record(
    'blobs',
    'naive, 100 KB results inline, fsync',
    await fixRate(CFG.blobReps, () => naiveAppendRun(Math.min(CFG.blobN, 64), true, BLOB_BYTES)),
    'steps/s',
  );
  naiveBlob.label = 'naive (fsync)';
  let blobJournal = null;
  record(
    'blobs',
    '32 concurrent appenders, 100 KB results (blobs), fsync always',
    await fixRate(CFG.blobReps, async () => {
      const r = await appendRun('always', 32, CFG.blobN, { blobBytes: BLOB_BYTES });
      blobJournal = r;
      return r.rate;
    }),
    'steps/s',
    naiveBlob,
  );
  const bj = await blobJournal.store.open(blobJournal.id, { readOnly: true });
  const blobFiles = bucketFiles(blobJournal.store.root, blobJournal.id);
  const blobDir = join(blobJournal.store.root, blobJournal.id, 'blobs', 'sha256');
  const blobLimitFn = async () => {
    const n = await limitPass(blobFiles);
    for (const f of readdirSync(blobDir)) {
      const bytes = readFileSync(join(blobDir, f));
      JSON.parse(bytes.toString('utf8'));
      createHash('sha256').update(bytes).digest();
    }
    return n;
  };
  const blobLimit = record(
    'blobs',
    'limit: read + JSON.parse + SHA-256 of the lines and of the blob files',
    await measure({ reps: CFG.reps, units: CFG.blobN, warmup: CFG.warm, fn: blobLimitFn }),
    'steps/s',
  );
  blobLimit.label = 'limit';
  record(
    'blobs',
    'journal verify with blobs',
    await measure({
      reps: CFG.reps,
      units: CFG.blobN,
      warmup: CFG.warm,
      pair: { units: CFG.blobN, fn: blobLimitFn },
      fn: async () => {
        const r = await bj.verify();
        if (!r.ok) throw new Error('blob journal does not verify');
        return r.steps;
      },
    }),
    'steps/s',
    blobLimit,
  );

  // Third-party comparison, in its own folder and process.
  let tp = null;
  if (ensureThirdParty()) {
    try {
      log(`third-party: hypercore and sonic-boom on ${CFG.tp} steps ...`);
      tp = childJson([join(here, 'thirdparty/run.mjs'), `--steps=${CFG.tp}`, `--reps=${CFG.tpReps}`], {
        cwd: join(here, 'thirdparty'),
      });
      const hcA = record(
        'third party',
        `hypercore ${tp.versions.hypercore}: append, batches of 256 (no fsync per batch)`,
        summary(tp.hypercore.append),
        'steps/s',
        naiveNo,
      );
      hcA.label = 'hypercore append';
      const hcV = record(
        'third party',
        `hypercore ${tp.versions.hypercore}: full audit of the stored core`,
        summary(tp.hypercore.audit),
        'steps/s',
        limit,
      );
      record(
        'third party',
        `sonic-boom ${tp.versions['sonic-boom']}: plain JSONL, no integrity`,
        summary(tp.sonicboom.write),
        'steps/s',
        naiveNo,
      );
      tp.hcA = hcA;
      tp.hcV = hcV;
      // Like for like: stepchain fed as hypercore is, in batches of 256, with and without an fsync per batch.
      // (stepchain still validates, canonicalizes and hashes each step object; hypercore takes bytes.)
      for (const mode of ['none', 'always']) {
        tp[`batched-${mode}`] = record(
          'third party',
          `stepchain appendMany, batches of 256, fsync ${mode}`,
          await fixRate(CFG.tpReps, async () => batchedRun(mode, CFG.batched, 256)),
          'steps/s',
          hcA,
        );
      }
    } catch (e) {
      notes.push(`Third-party comparison failed: ${e.message.split('\n')[0]}`);
      log(`third-party: failed: ${e.message}`);
      tp = null;
    }
  }

  // Peak RSS of verify and export, each in a process of its own (full mode: 100k vs 1M steps).
  const rss = [];
  if (CFG.rss) {
    const idle = childJson([join(here, 'workers/rss.mjs'), 'idle', store.root, 'a']);
    rss.push({ label: 'idle Node process (for scale)', steps: 0, ...idle });
    log(`building a journal of ${CFG.big} steps for the memory figures ...`);
    await fastFill(store, 'big', CFG.big, { genesisHash });
    for (const [id, n] of [
      ['a', N],
      ['big', CFG.big],
    ]) {
      const v = childJson(['--expose-gc', join(here, 'workers/rss.mjs'), 'verify', store.root, id]);
      if (!v.ok || v.steps !== n) throw new Error(`verify of ${id} in a child failed`);
      rss.push({ label: `journal verify, ${n} steps`, ...v });
      const tar = join(root, `${id}-rss.tar`);
      const x = childJson([join(here, 'workers/rss.mjs'), 'export', store.root, id, tar]);
      rss.push({ label: `export receipt, ${n} steps`, ...x });
      rmSync(tar, { force: true });
      for (const r of rss.slice(-2))
        log(`memory | ${r.label}: peak RSS ${r.maxRssMB.toFixed(0)} MB, ${fmtRate((r.steps * 1000) / r.ms)} steps/s`);
    }
  } else {
    notes.push('Peak RSS at 100 000 vs 1 000 000 steps is measured in the full run only.');
  }

  // ---------------------------------------------------------------------------------------- targets
  const ratio = (a, b) => (a.ref === b ? ratioOf(a) : a.median / b.median);
  const targets = [];
  const target = (name, value, pass, shown) => targets.push({ name, value, pass, shown });
  target(
    'journal verify ≥ 50% of the limit',
    ratio(verify, limit),
    ratio(verify, limit) >= 0.5,
    `${fmtRatio(ratio(verify, limit))} of the limit`,
  );
  target(
    'receipt verify ≥ 40% of the limit',
    ratio(rv, limit),
    ratio(rv, limit) >= 0.4,
    `${fmtRatio(ratio(rv, limit))} of the limit`,
  );
  const c32 = appendFig['conc-always'];
  target(
    '32 appenders, fsync always ≥ 10× naive',
    ratio(c32, naiveFs),
    ratio(c32, naiveFs) >= 10,
    `${fmtRatio(ratio(c32, naiveFs))} naive (fsync)`,
  );
  if (tp) {
    const like = tp['batched-none'];
    target(
      '32 appenders, fsync always ≥ hypercore batched append',
      ratio(c32, tp.hcA),
      ratio(c32, tp.hcA) >= 1,
      `${fmtRatio(ratio(c32, tp.hcA))} hypercore (like for like, appendMany in batches of 256 without fsync: ${fmtRatio(ratio(like, tp.hcA))})`,
    );
  } else target('32 appenders, fsync always ≥ hypercore batched append', NaN, null, 'not measured');
  const s1 = appendFig['single-always'];
  target(
    'single awaiting appender, fsync always ≥ 2× naive',
    ratio(s1, naiveFs),
    ratio(s1, naiveFs) >= 2,
    `${fmtRatio(ratio(s1, naiveFs))} naive (fsync)`,
  );
  const expTime = 1 / ratioOf(exp);
  target('export time ≤ 2× verify time', expTime, expTime <= 2, `${fmtRatio(expTime)} verify time`);
  const diffTime = 1 / ratioOf(dSame);
  target(
    'diff of identical runs ≤ 2× the limit’s time',
    diffTime,
    diffTime <= 2,
    `${fmtRatio(diffTime)} the limit's time`,
  );
  if (rss.length) {
    const peak = Math.max(
      ...rss.filter((r) => r.steps === CFG.big && !r.label.startsWith('receipt')).map((r) => r.maxRssMB),
    );
    target('peak RSS of verify and export at 1M steps < 150 MB', peak, peak < 150, `${peak.toFixed(0)} MB`);
    const growth = Math.max(
      ...['journal verify', 'export receipt'].map((k) => {
        const small = rss.find((r) => r.label === `${k}, ${N} steps`).maxRssMB;
        const large = rss.find((r) => r.label === `${k}, ${CFG.big} steps`).maxRssMB;
        return large - small;
      }),
    );
    target('RSS flat from 100k to 1M steps (grows < 20 MB)', growth, growth < 20, `+${growth.toFixed(1)} MB`);
  } else {
    target('peak RSS at 1M steps < 150 MB, flat from 100k', NaN, null, 'full run only');
  }

  const commitments = await commitmentsSection({ root, N: Math.min(N, 20_000), reps: CFG.appendReps, record });
  const adapters = await adapterOverhead({ quick: QUICK, log });
  const replay = await replayBench({ quick: QUICK, log });
  writeResults({ lineBytes, bytesA, N, targets, rss, tp, commitments, adapters, replay });
  log(`wrote ${OUT}`);
}

// ------------------------------------------------------------------------------------------ report

function writeResults({ lineBytes, N, targets, rss, tp, commitments, adapters, replay }) {
  const cpu = cpus();
  const L = [];
  L.push('# stepchain benchmark results');
  L.push('');
  L.push('Written by `bench/run.mjs` — do not edit by hand; rerun `npm run bench` (or `npm run bench:quick`) instead.');
  L.push('');
  L.push(`- Date: ${new Date().toISOString()}`);
  L.push(`- Mode: **${QUICK ? 'quick' : 'full'}** (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  L.push(
    `- Machine: ${cpu.length} cores, ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${process.platform} ${process.arch}`,
  );
  L.push(
    `- Load average when the run ended (1/5/15 min): ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' / ')} (at start: ${LOAD0}) — other work on the machine widens the spreads`,
  );
  L.push(`- Node ${process.version}; SHA-256 backend in effect for stepchain: ${sha256Backend().name}`);
  L.push(
    `- Steps: deterministic (bench/lib/steps.mjs); stored lines average ${lineBytes.toFixed(0)} bytes; ${N} steps per verify/diff figure`,
  );
  L.push(
    `- Every figure: the median of the runs shown, spread = min–max over those runs. Ratios come from this same run: "paired runs" ratios are the median of per-run ratios to the reference run just before (see Notes), the others compare medians.`,
  );
  L.push('');
  L.push('## Targets (issue 9)');
  L.push('');
  L.push('| Target | Measured | Result |');
  L.push('|---|---|---|');
  for (const t of targets)
    L.push(`| ${t.name} | ${t.shown} | ${t.pass === null ? 'not measured' : t.pass ? '**pass**' : '**FAIL**'} |`);
  L.push('');
  L.push('## Figures');
  L.push('');
  L.push('| Section | Figure | Median | Spread (min–max) | Runs | Ratio | Against |');
  L.push('|---|---|---:|---:|---:|---:|---|');
  for (const f of figures.filter((x) => x.section !== 'commitments')) {
    const r = f.ref
      ? fmtRatio(ratioOf(f)) + (f.pairRatio !== undefined ? ` (${fmtRatio(f.pairMin)}–${fmtRatio(f.pairMax)})` : '')
      : '1×';
    const against = f.ref
      ? `${f.ref.label ?? f.ref.name}${f.pairRatio !== undefined ? ', paired runs' : ''}`
      : f.label
        ? `(this is the ${f.label})`
        : '';
    L.push(
      `| ${f.section} | ${f.name} | ${fmtRate(f.median)} ${f.unit} | ${fmtRate(f.min)}–${fmtRate(f.max)} | ${f.runs} | ${r} | ${against} |`,
    );
  }
  if (rss.length) {
    L.push('');
    L.push('## Peak memory (each operation in a process of its own)');
    L.push('');
    L.push('| Operation | Steps | Peak RSS | Time | Throughput |');
    L.push('|---|---:|---:|---:|---:|');
    for (const r of rss)
      L.push(
        `| ${r.label} | ${r.steps} | ${r.maxRssMB.toFixed(1)} MB | ${(r.ms / 1000).toFixed(1)} s | ${r.steps ? fmtRate((r.steps * 1000) / r.ms) + ' steps/s' : '–'} |`,
      );
  }
  if (tp) {
    L.push('');
    L.push(
      `Third party (bench/thirdparty, ${tp.steps} steps of the same payloads as JSON text): hypercore ${tp.versions.hypercore}, sonic-boom ${tp.versions['sonic-boom']}.`,
    );
  }
  L.push('');
  L.push(...adapterSection(adapters));
  L.push(...replaySection(replay));
  L.push('## Notes');
  L.push('');
  L.push(
    '- The limit reads the bucket files in 1 MiB chunks and does JSON.parse and node:crypto SHA-256 of every line: what any verifier must at least do. Ratios of verify figures are against it (1× = as fast as the limit).',
  );
  L.push(
    '- Append figures in mode `always` are compared with the naive baseline that fsyncs every step; `batch` and `none` with the naive baseline without fsync. In `batch` mode an append resolves before the deferred fsync.',
  );
  L.push(
    '- "4 processes × 8 appenders": four Node processes, each with eight concurrent awaiting appenders, on one journal directory (the journal lock serializes their commits).',
  );
  L.push(
    '- "paired runs": each run of the figure came right after a run of its reference, and the ratio shown is the median of the per-pair ratios (with their min–max): adjacent runs share the machine\'s load, so this ratio is steadier than a ratio of medians. The medians themselves are still shown.',
  );
  L.push(
    "- Export ratio = export throughput / verify throughput (0.5× means export takes twice as long as verify). The diff limit is the limit over both runs' lines.",
  );
  for (const n of notes) L.push(`- ${n}`);
  L.push('');
  L.push(renderCommitments(commitments, figures, { fmtRate, fmtRatio, ratioOf, when: 'Measured in this run' }));
  L.push('');
  // Sections other bench scripts write into this file (bench/langgraph.mjs) are kept as they are.
  const kept = existsSync(OUT)
    ? (readFileSync(OUT, 'utf8').match(/<!-- section: [^>]*-->[\s\S]*?<!-- \/section: [^>]*-->/g) ?? [])
    : [];
  for (const k of kept) L.push(k, '');
  // bench/speed.mjs (issue 25) owns the block between its markers: kept as it was.
  const speed = existsSync(OUT)
    ? /<!-- speed:begin -->[\s\S]*<!-- speed:end -->/.exec(readFileSync(OUT, 'utf8'))
    : null;
  if (speed) L.push(speed[0], '');
  writeFileSync(OUT, L.join('\n'));
}

try {
  await main();
} finally {
  rmSync(root, { recursive: true, force: true });
}
