// Third-party comparison (issue 9), run by bench/run.mjs in a child process so these modules resolve from
// bench/thirdparty/node_modules and never from the main lockfile. Same payloads as the stepchain figures
// (bench/lib/steps.mjs, JSON text of each step):
// - hypercore 10, the established JavaScript signed append-only log: append in batches of 256 (hypercore
//   does not fsync per batch), then a full audit of a freshly opened core (core.core.audit(): re-hashes
//   every block and every Merkle tree node from storage);
// - sonic-boom, pino's writer: plain JSONL with no integrity at all, the ceiling for "write a line".
// Prints one JSON document on stdout: { hypercore: {...}, sonicboom: {...} } with per-run rates (hypercore's
// append also in steps per CPU-second, user + system of every thread). --append-only measures hypercore's
// append alone (bench/speed.mjs); --seed=N picks the steps (bench/lib/steps.mjs; default 1).
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeSteps } from '../lib/steps.mjs';

const require = createRequire(import.meta.url);
const Hypercore = require('hypercore');
const SonicBoom = require('sonic-boom');

const arg = (name, dflt) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`));
  return a ? Number(a.split('=')[1]) : dflt;
};
const n = arg('steps', 20000);
const reps = arg('reps', 3);
const blobBytes = arg('blob', 0);
const appendOnly = process.argv.includes('--append-only');
const payloads = makeSteps(n, { blobBytes, seed: arg('seed', 1) }).map((s) => Buffer.from(JSON.stringify(s)));
const BATCH = 256;

async function hypercoreRun() {
  const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-hc-'));
  try {
    let core = new Hypercore(dir);
    await core.ready();
    const cpu = process.cpuUsage();
    let t = performance.now();
    for (let i = 0; i < n; i += BATCH) await core.append(payloads.slice(i, i + BATCH));
    const appendMs = performance.now() - t;
    const used = process.cpuUsage(cpu);
    await core.close();
    const appendCpu = (n * 1e6) / (used.user + used.system);
    if (appendOnly) return { append: (n * 1000) / appendMs, appendCpu, audit: null };
    core = new Hypercore(dir);
    await core.ready();
    if (core.length !== n) throw new Error(`hypercore holds ${core.length} blocks, expected ${n}`);
    t = performance.now();
    const corrections = await core.core.audit();
    const auditMs = performance.now() - t;
    if (corrections.blocks !== 0 || corrections.tree !== 0) throw new Error(`hypercore audit corrected ${JSON.stringify(corrections)}`);
    await core.close();
    return { append: (n * 1000) / appendMs, appendCpu, audit: (n * 1000) / auditMs };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function sonicRun() {
  const dir = mkdtempSync(join(tmpdir(), 'stepchain-bench-sb-'));
  try {
    const dest = new SonicBoom({ dest: join(dir, 'log.jsonl'), minLength: 8 * 1024, sync: false, mkdir: true });
    await new Promise((resolve) => dest.once('ready', resolve));
    const t = performance.now();
    for (const p of payloads) {
      // pino's hot path: serialize the object, write the line.
      dest.write(p.toString() + '\n');
    }
    await new Promise((resolve, reject) => {
      dest.once('close', resolve);
      dest.once('error', reject);
      dest.end();
    });
    return (n * 1000) / (performance.now() - t);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = { versions: { hypercore: require('hypercore/package.json').version, 'sonic-boom': require('sonic-boom/package.json').version }, steps: n, blobBytes, hypercore: { append: [], appendCpu: [], audit: [] }, sonicboom: { write: [] } };
for (let r = 0; r < reps; r++) {
  const h = await hypercoreRun();
  out.hypercore.append.push(h.append);
  out.hypercore.appendCpu.push(h.appendCpu);
  if (appendOnly) continue;
  out.hypercore.audit.push(h.audit);
  out.sonicboom.write.push(await sonicRun());
}
process.stdout.write(JSON.stringify(out) + '\n');
