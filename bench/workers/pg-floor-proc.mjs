// One writer process of `bench/postgres-floor.mjs`: the least any design of a Postgres store asks of a writer
// process, in raw SQL on one connection, nothing of stepchain, nothing chained. Its `conc` awaiting appenders
// put what they append in one queue; one loop sends everything queued as one statement, waits for its answer,
// resolves those appenders, and sends the next (group commit inside the process, as the store does), so each
// round trip carries as many appends as were waiting.
// argv: what(select|insert-async|insert) table conc ms.
// - select: `SELECT $1::text` of the queued payloads — a round trip that writes nothing;
// - insert-async: an INSERT of the queued rows, committed with synchronous_commit off — written, not durable;
// - insert: the same INSERT committed with the server's synchronous_commit (on) — durable, every process
//   flushing on its own, so the server's WAL batches the processes' flushes.
// Reports { done, ms, cpuMs } like bench/workers/pg-append-proc.mjs.
import pg from 'pg';
import { makeStep } from '../lib/steps.mjs';

const [what, table, concArg, msArg] = process.argv.slice(2);
const conc = Number(concArg);
const ms = Number(msArg);
const client = new pg.Client({ connectionString: process.env.STEPCHAIN_PG_URL });
await client.connect();
if (what === 'insert-async') await client.query('SET synchronous_commit = off');
// The payload of a step as the intake would carry it (about as long as a stored line).
const payload = JSON.stringify(makeStep(1));

let queue = [];
let sending = null;
async function sendLoop() {
  while (queue.length > 0) {
    const batch = queue;
    queue = [];
    const texts = batch.map(() => payload);
    if (what === 'select') await client.query('SELECT count(*) FROM unnest($1::text[])', [texts]);
    else await client.query(`INSERT INTO ${table} (payload) SELECT * FROM unnest($1::text[])`, [texts]);
    for (const resolve of batch) resolve();
  }
  sending = null;
}
const append = () =>
  new Promise((resolve) => {
    queue.push(resolve);
    sending ??= sendLoop();
  });

for (let i = 0; i < 20; i++) await append(); // warm: the statement prepared, the code compiled
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
let done = 0;
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const until = t0 + ms;
await Promise.all(
  Array.from({ length: conc }, async () => {
    while (performance.now() < until) {
      await append();
      done++;
    }
  }),
);
const elapsed = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await client.end();
process.send({ done, ms: elapsed, cpuMs: (cpu.user + cpu.system) / 1000 });
process.disconnect();
