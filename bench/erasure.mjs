// Erasure in stepchain/v3 journals (spec/ERASURE.md), file store: (1) erasing one value of a journal of
// S steps, repeated; (2) erasing one subject across a store of N runs, of which every K-th mentions it.
// Usage: node bench/erasure.mjs [--runs N] [--steps S] [--every K] [--repeat R]   (needs npm run build)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FileStore } from '../dist/store/index.js';
import { eraseMatching, eraseValue } from '../dist/erase/file.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1000' },
    steps: { type: 'string', default: '1000' },
    every: { type: 'string', default: '100' },
    repeat: { type: 'string', default: '20' },
  },
});
const RUNS = Number(values.runs),
  STEPS = Number(values.steps),
  EVERY = Number(values.every),
  REPEAT = Number(values.repeat);
const SUBJECT = 'alice.liddell@example.org';
const step = (i, withSubject) => ({
  input: {
    customer: { email: withSubject ? SUBJECT : `user${i}@example.org`, id: `c-${i}` },
    note: 'Please look at the overdue invoice and write back before Friday.',
  },
  tool_call: { name: 'lookup', arguments: { q: `c-${i}` } },
  result: { plan: 'pro', status: 200 },
});
const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-erase-'));
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
try {
  // (1) one value in a journal of STEPS steps
  const store = new FileStore(join(root, 'one'), { fsync: 'always' });
  const j = await store.create('j', { format: 'stepchain/v3' });
  await j.appendMany(Array.from({ length: STEPS }, (_, i) => step(i, false)));
  await j.close();
  const times = [];
  for (let r = 0; r < REPEAT; r++) {
    const t = process.hrtime.bigint();
    await eraseValue(store, 'j', {
      seq: Math.floor((r * STEPS) / REPEAT),
      path: '/input/customer/email',
      reason: 'bench',
    });
    times.push(ms(t));
  }
  times.sort((a, b) => a - b);
  console.log(
    `erase one value, journal of ${STEPS} steps (fsync always): median ${times[times.length >> 1].toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms (${REPEAT} erasures)`,
  );

  // (2) one subject across a store of RUNS runs
  const many = new FileStore(join(root, 'many'), { fsync: 'none' });
  let t = process.hrtime.bigint();
  for (let i = 0; i < RUNS; i++) {
    const run = await many.create(`run-${String(i).padStart(6, '0')}`, { format: 'stepchain/v3' });
    await run.appendMany([step(3 * i, i % EVERY === 0), step(3 * i + 1, false), step(3 * i + 2, false)]);
    await run.close();
  }
  const built = ms(t);
  t = process.hrtime.bigint();
  const report = await eraseMatching(new FileStore(join(root, 'many'), { fsync: 'always' }), {
    matchPath: '/input/customer/email',
    value: SUBJECT,
    reason: 'GDPR Art. 17',
    by: 'bench',
  });
  const took = ms(t);
  console.log(
    `erase one subject across a store of ${RUNS} runs × 3 steps (${Math.ceil(RUNS / EVERY)} mention it): ${report.erased.length} erased, ${report.failed.length} failed, ${(took / 1000).toFixed(2)} s (${(took / RUNS).toFixed(2)} ms per run scanned; store built in ${(built / 1000).toFixed(1)} s)`,
  );
  console.log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; node ${process.version}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
