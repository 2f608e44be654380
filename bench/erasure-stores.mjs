// Erasure in the SQLite and Postgres stores (spec/ERASURE.md §6.1): (1) erasing one value of a journal of
// S steps, repeated; (2) erasing one subject across a store of N runs × 3 steps, of which every K-th mentions
// it. Postgres runs on a real PostgreSQL started for the run (test/setup/pg-runner.mjs --durable).
// Usage: node bench/erasure-stores.mjs [--runs N] [--steps S] [--every K] [--repeat R] [--only sqlite|postgres]
// (needs npm run build; `npm run bench:erasure-stores` builds first)
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SqliteStore } from '../dist/store/sqlite/index.js';
import { PostgresStore } from '../dist/store/postgres/index.js';
import { eraseMatching, eraseValue } from '../dist/erase.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10000' },
    steps: { type: 'string', default: '1000' },
    every: { type: 'string', default: '100' },
    repeat: { type: 'string', default: '10' },
    only: { type: 'string' },
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
const here = dirname(fileURLToPath(import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-erase-stores-'));
const ms = (t) => Number(process.hrtime.bigint() - t) / 1e6;
const say = (s) => console.log(s);

async function measure(name, makeStore, { size, writers = 8 } = {}) {
  // (1) one value in a journal of STEPS steps
  const store = makeStore('one');
  const j = await store.create('j', { format: 'stepchain/v3' });
  for (let i = 0; i < STEPS; i += 500)
    await j.appendMany(Array.from({ length: Math.min(500, STEPS - i) }, (_, k) => step(i + k, false)));
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
  await store.close();
  times.sort((a, b) => a - b);
  say(
    `${name}: erase one value, journal of ${STEPS} steps: median ${times[times.length >> 1].toFixed(1)} ms, min ${times[0].toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms (${REPEAT} erasures)`,
  );

  // (2) one subject across a store of RUNS runs
  // Built by `writers` concurrent writers (the build is not what is measured; SQLite builds without fsync).
  const builder = makeStore('many', { build: true });
  let t = process.hrtime.bigint();
  let next = 0;
  const one = async (i) => {
    const run = await builder.create(`run-${String(i).padStart(6, '0')}`, { format: 'stepchain/v3' });
    await run.appendMany([step(3 * i, i % EVERY === 0), step(3 * i + 1, false), step(3 * i + 2, false)]);
    await run.close();
  };
  await Promise.all(
    Array.from({ length: writers }, async () => {
      for (let i = next++; i < RUNS; i = next++) {
        await one(i);
      }
    }),
  );
  await builder.close();
  const built = ms(t);
  const many = makeStore('many');
  t = process.hrtime.bigint();
  const report = await eraseMatching(many, {
    matchPath: '/input/customer/email',
    value: SUBJECT,
    reason: 'GDPR Art. 17',
    by: 'bench',
  });
  const took = ms(t);
  await many.close();
  say(
    `${name}: erase one subject across a store of ${RUNS} runs × 3 steps (${Math.ceil(RUNS / EVERY)} mention it): ${report.erased.length} erased, ${report.failed.length} failed, ${(took / 1000).toFixed(2)} s (${(took / RUNS).toFixed(2)} ms per run scanned; store built in ${(built / 1000).toFixed(1)} s${size ? `, ${size()}` : ''})`,
  );
}

try {
  if (values.only !== 'postgres') {
    await measure(
      'SQLite (fsync always)',
      (n, o = {}) => new SqliteStore(join(root, `${n}.db`), { fsync: o.build ? 'none' : 'always' }),
      { size: () => `file ${(statSync(join(root, 'many.db')).size / 1e6).toFixed(1)} MB` },
    );
  }
  if (values.only !== 'sqlite') {
    const runner = fork(join(here, '..', 'test', 'setup', 'pg-runner.mjs'), ['--durable'], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const exited = new Promise((resolve) => runner.once('exit', resolve));
    const msg = await new Promise((resolve, reject) => {
      runner.once('message', resolve);
      runner.once('exit', (code) => reject(new Error(`the PostgreSQL runner exited (code ${code})`)));
    });
    if (!msg.url) throw new Error(msg.error);
    try {
      await measure(
        'Postgres (fsync on, synchronous_commit on)',
        (n) => new PostgresStore({ connectionString: msg.url, schema: `bench_erase_${n}` }),
      );
    } finally {
      if (runner.connected) runner.disconnect();
      await exited;
    }
  }
  say(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; node ${process.version}`,
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
