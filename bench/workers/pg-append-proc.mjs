// One writer process of `npm run bench:postgres`: opens the journal in its own store (Postgres: its own
// connections; file: the shared directory and its lock), says "ready", waits for "go", then runs `conc`
// concurrent awaiting appenders for `ms` milliseconds and reports how many appends resolved.
// argv: kind(postgres|postgres-old|file) where id conc ms offset; the Postgres URL comes from STEPCHAIN_PG_URL.
// postgres-old: the same store with the intake off (intake: false), each commit taking the head row itself
// (spec/POSTGRES.md §6.6); postgres-baseline: the intake of the build whose dist/ is STEPCHAIN_BENCH_BASELINE
// (bench/postgres.mjs --baseline). Reports { done, ms, latencies, cpuMs } (ms per resolved append, in the order resolved; the process's
// CPU time while appending).
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FileStore } from '../../dist/store/index.js';
import { PostgresStore as ThisBuild } from '../../dist/postgres.js';
import { makeStep } from '../lib/steps.mjs';

const [kind, where, id, concArg, msArg, offsetArg] = process.argv.slice(2);
const conc = Number(concArg);
const ms = Number(msArg);
const offset = Number(offsetArg);
const PostgresStore =
  kind === 'postgres-baseline'
    ? (await import(pathToFileURL(join(process.env.STEPCHAIN_BENCH_BASELINE, 'postgres.js')).href)).PostgresStore
    : ThisBuild;
const store =
  kind !== 'file'
    ? new PostgresStore({
        connectionString: process.env.STEPCHAIN_PG_URL,
        schema: where,
        connection: { max: 2 },
        lockTimeoutMs: 120_000,
        intake: kind !== 'postgres-old',
      })
    : new FileStore(where, { fsync: 'always', lockTimeoutMs: 120_000 });
const journal = await store.open(id);
await journal.head(); // connect before the clock starts
// Warm-up before the clock: WARM appends per appender on the same journal, so that the timed window measures
// writers in their steady state (code compiled, connections made) rather than 16 processes' first appends.
const warm = Number(process.env.STEPCHAIN_BENCH_WARM ?? 0);
let warmed = 0;
await Promise.all(
  Array.from({ length: conc }, async (_, a) => {
    for (let i = 0; i < warm; i++) {
      await journal.append(makeStep(offset + 500_000 + a * warm + i));
      warmed++;
    }
  }),
);
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
let next = 0;
let done = 0;
const latencies = [];
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const until = t0 + ms;
await Promise.all(
  Array.from({ length: conc }, async () => {
    while (performance.now() < until) {
      const a = performance.now();
      await journal.append(makeStep(offset + next++));
      latencies.push(performance.now() - a);
      done++;
    }
  }),
);
const elapsed = performance.now() - t0;
const used = process.cpuUsage(cpu0);
await journal.close();
if (kind !== 'file') await store.close();
process.send({ done, warmed, ms: elapsed, latencies, cpuMs: (used.user + used.system) / 1000 });
process.disconnect();
