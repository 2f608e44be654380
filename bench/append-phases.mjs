// Where appendMany's CPU time goes (issue 25; bench/README.md, "Where appendMany's time goes"): each phase
// of the file store's append path run on its own over the same steps, in batches of 256, CPU time per
// step (user + system, every thread, the garbage collector's included), and the whole appendMany (fsync
// none) beside them; what the phases do not account for is "the rest" (the queue's promise hops, the
// lock's per-batch check, the garbage the phases leave for each other). Not part of `npm run bench`:
//
//   npm run build && node --expose-gc bench/append-phases.mjs [--format=v1|v2] [--steps=20480] [--rounds=5] [--dist=dist]
//
// Each figure is the best of `rounds` runs after a warm-up (on a shared machine, the run other load
// disturbed least). --dist measures another build (a copy of dist/ from another commit) with the same code.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeSteps } from './lib/steps.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const format = `stepchain/${arg('format', 'v1')}`;
const n = Number(arg('steps', 20_480));
const rounds = Number(arg('rounds', 5));
const dist = pathToFileURL(resolve(arg('dist', new URL('../dist', import.meta.url).pathname))).href;
const BATCH = 256;

const load = (p) => import(`${dist}/${p}`);
const { checkStepInput } = await load('record/input.js');
const { writerProfile, makeGenesis, genesisHash } = await load('record/formats.js');
const { prepareSteps } = await load('store/prepare.js');
const { sequenceBatch, NO_STEPS } = await load('store/sequencer.js');
const { IdempotencyWindow } = await load('store/idempotency.js');
const { BucketWriter } = await load('store/file/writer.js');
const { JournalPaths } = await load('store/file/layout.js');
const { FileTreeStorage } = await load('store/file/tree.js');
const { JournalTree } = await load('proofs/index.js');
const { FileStore } = await load('store/index.js');

const steps = makeSteps(n, { seed: 11 });
const batches = [];
for (let i = 0; i < n; i += BATCH) batches.push(steps.slice(i, i + BATCH));
const genesis = makeGenesis({ journalId: 'phases', createdAt: '2026-01-01T00:00:00.000Z', format });
const profile = writerProfile(genesis);
const NOW = '2026-01-01T00:00:01.000Z';

const cpuDone = (c) => {
  const u = process.cpuUsage(c);
  return (u.user + u.system) / n;
};

/**
 * Before each lap, a young-generation collection (untimed): the lap then starts with an empty nursery, so
 * it is charged its own work and allocation but not a collection that earlier phases' garbage triggered.
 * The collector's cost is left to "the rest", where the whole appendMany pays it.
 */
const settle = typeof globalThis.gc === 'function' ? () => globalThis.gc({ type: 'minor' }) : () => {};
if (typeof globalThis.gc !== 'function')
  console.error('run with node --expose-gc: without it, collections land in whichever phase is running');

/** CPU microseconds of `fn()` (sync), added to `into[name]`. */
function lap(into, name, fn) {
  settle();
  const c = process.cpuUsage();
  const out = fn();
  const u = process.cpuUsage(c);
  into[name] = (into[name] ?? 0) + u.user + u.system;
  return out;
}
async function lapAsync(into, name, fn) {
  settle();
  const c = process.cpuUsage();
  const out = await fn();
  const u = process.cpuUsage(c);
  into[name] = (into[name] ?? 0) + u.user + u.system;
  return out;
}

const PREPARE = 'prepare (validate + JCS, flattening, the idempotency key)';
const SEQUENCE = 'sequence (seal: line + SHA-256, ids, results)';
const WINDOW = 'idempotency window';
const WRITE = 'writeLines (encode + write(2), fsync none)';
const TREE = 'Merkle tree (leaf + node hashes, tiles)';
const JCS = '  of prepare: validate + JCS alone (checkStepInput)';
const KEY = '  of prepare: the idempotency key alone (profile.key)';
const WHOLE = 'appendMany, whole (fsync none)';

/**
 * The commit path without the queue and the lock, one batch at a time as a journal runs it (so the heap
 * holds what appendMany's does: one batch in flight), each phase timed on its own.
 */
async function pipeline() {
  const t = {};
  const dir = mkdtempSync(join(tmpdir(), 'stepchain-phases-'));
  const paths = new JournalPaths(dir);
  mkdirSync(paths.buckets, { recursive: true });
  const writer = new BucketWriter(paths, 64 << 20, 'none', 0);
  const window = new IdempotencyWindow(10_000);
  const storage = new FileTreeStorage(dir);
  const tree = new JournalTree(storage);
  await tree.sync({ seq: -1, step_hash: null }, () => (async function* () {})());
  let tail = { bucket: 0, size: 0, seq: -1, hash: genesisHash(genesis) };
  for (const b of batches) {
    const prepared = lap(t, PREPARE, () => prepareSteps(b, 1 << 20, profile));
    const s = lap(t, SEQUENCE, () => sequenceBatch([{ steps: prepared }], tail, NO_STEPS, NOW));
    tail = await lapAsync(t, WRITE, () => writer.writeLines(s.lines, tail));
    lap(t, WINDOW, () => window.committed(s.entries));
    await lapAsync(t, TREE, async () => {
      for (const l of s.lines) tree.add(l.seq, l.hash);
      await tree.flushTiles(4096);
    });
  }
  await writer.closeBucket();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
  return t;
}

/** Two parts of prepare, each on its own (their outputs dropped at once). */
function prepareParts() {
  const t = {};
  for (const b of batches) {
    lap(t, JCS, () => {
      for (const s of b) checkStepInput(s, profile);
    });
    const prepared = prepareSteps(b, 1 << 20, profile);
    lap(t, KEY, () => {
      for (const p of prepared) profile.key(p.texts);
    });
  }
  return t;
}

async function whole() {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-phases-'));
  const journal = await new FileStore(root, { fsync: 'none' }).create('j', { format });
  const t = {};
  // No settling here: the whole appendMany pays its collections, as a caller's does.
  const c = process.cpuUsage();
  await (async () => {
    for (const b of batches) await journal.appendMany(b);
  })();
  const u = process.cpuUsage(c);
  t[WHOLE] = u.user + u.system;
  await journal.close();
  rmSync(root, { recursive: true, force: true });
  return t;
}

/** Best of `rounds` per figure, after a warm-up of each kind of run. */
const results = {};
for (const run of [pipeline, prepareParts, whole]) {
  await run();
  for (let i = 0; i < rounds; i++) {
    for (const [name, us] of Object.entries(await run())) results[name] = Math.min(results[name] ?? Infinity, us / n);
  }
}
const parts = [PREPARE, SEQUENCE, WINDOW, WRITE, TREE];
const sum = parts.reduce((a, k) => a + results[k], 0);
console.log(
  `${format}, ${n} of bench/lib/steps.mjs's steps (seed 11) in batches of ${BATCH}; CPU µs per step, best of ${rounds}; Node ${process.version}; dist ${arg('dist', 'dist')}`,
);
for (const name of [PREPARE, JCS, KEY, SEQUENCE, WINDOW, WRITE, TREE, WHOLE])
  console.log(`${results[name].toFixed(2).padStart(7)} µs  ${name}`);
console.log(
  `${(results[WHOLE] - sum).toFixed(2).padStart(7)} µs  the rest: whole − the five phases (the garbage collector, the queue's promise hops, the lock's checks per batch)`,
);
console.log(JSON.stringify({ format, steps: n, cpuUsPerStep: results, rest: results[WHOLE] - sum }));
