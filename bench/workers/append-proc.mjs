// One of the benchmark's "4 processes on one journal": opens the journal, waits for "go", then runs
// `conc` concurrent awaiting appenders until it has appended `count` steps, and reports its time.
import { FileStore } from '../../dist/store/index.js';
import { makeStep } from '../lib/steps.mjs';

const [root, id, mode, countArg, concArg, offsetArg] = process.argv.slice(2);
const count = Number(countArg);
const conc = Number(concArg);
const offset = Number(offsetArg);
const store = new FileStore(root, { fsync: mode, lockTimeoutMs: 120_000 });
const journal = await store.open(id);
const steps = Array.from({ length: count }, (_, k) => makeStep(offset + k));
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
const t0 = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: conc }, async () => {
    while (next < count) await journal.append(steps[next++]);
  }),
);
const ms = performance.now() - t0;
await journal.close();
process.send({ done: true, ms });
process.disconnect();
