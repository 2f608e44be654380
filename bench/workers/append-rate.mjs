// One figure of bench/speed.mjs's append rows, in a process of its own (as hypercore's is, in
// bench/thirdparty/run.mjs), so that no other section's heap or threads weigh on it: appendMany in batches
// of 256 with fsync none into a fresh journal of the given format, or the bare per-step limit. A warm-up
// run first, then `reps` timed runs; prints one JSON document: wall rates (steps/s) and CPU rates (steps per
// CPU-second, user + system of every thread, the garbage collector's included).
//
//   node bench/workers/append-rate.mjs --mode=v1|v2|limit --steps=51200 --reps=2 --seed=11
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { FileStore } from '../../dist/store/index.js';
import { makeSteps } from '../lib/steps.mjs';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const mode = arg('mode', 'v1');
const n = Number(arg('steps', 51_200));
const reps = Number(arg('reps', 2));
const steps = makeSteps(n, { seed: Number(arg('seed', 11)) });
const BATCH = 256;

/** What any writer of this format must do per step, in a bare loop: validate (an I-JSON round trip) + canonicalize + seal with the envelope + hash. */
function limitPass() {
  let prev = 'sha256:' + '0'.repeat(64);
  for (let i = 0; i < steps.length; i++) {
    const content = canonicalize(JSON.parse(JSON.stringify(steps[i])));
    const line = `{"content":${content},"prev_hash":"${prev}","seq":${i}}`;
    prev = 'sha256:' + createHash('sha256').update(line).digest('hex');
  }
}

async function appendPass() {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-append-'));
  try {
    const journal = await new FileStore(root, { fsync: 'none' }).create('j', { format: `stepchain/${mode}` });
    const c = process.cpuUsage();
    const t = performance.now();
    for (let i = 0; i < n; i += BATCH) await journal.appendMany(steps.slice(i, i + BATCH));
    const ms = performance.now() - t;
    const u = process.cpuUsage(c);
    await journal.close();
    return { ms, cpuMs: (u.user + u.system) / 1000 };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function once() {
  if (mode !== 'limit') return appendPass();
  const c = process.cpuUsage();
  const t = performance.now();
  limitPass();
  const ms = performance.now() - t;
  const u = process.cpuUsage(c);
  return { ms, cpuMs: (u.user + u.system) / 1000 };
}

await once();
const out = { mode, steps: n, wall: [], cpu: [] };
for (let r = 0; r < reps; r++) {
  const { ms, cpuMs } = await once();
  out.wall.push((n * 1000) / ms);
  out.cpu.push((n * 1000) / cpuMs);
}
process.stdout.write(JSON.stringify(out) + '\n');
