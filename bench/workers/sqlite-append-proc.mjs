// One writer process of `npm run bench:sqlite`: opens the journal in its own store (SQLite: its own
// connections to the shared file; file: the shared directory and its lock), says "ready", waits for "go",
// then runs `conc` concurrent awaiting appenders for `ms` milliseconds and reports how many resolved.
// argv: kind(sqlite|file) where id conc ms offset fsync(always|batch)
import { FileStore } from '../../dist/store/index.js';
import { SqliteStore } from '../../dist/sqlite.js';
import { makeStep } from '../lib/steps.mjs';

const [kind, where, id, concArg, msArg, offsetArg, fsync] = process.argv.slice(2);
const conc = Number(concArg);
const ms = Number(msArg);
const offset = Number(offsetArg);
const store =
  kind === 'sqlite'
    ? new SqliteStore(where, { fsync, lockTimeoutMs: 120_000 })
    : new FileStore(where, { fsync, lockTimeoutMs: 120_000 });
const journal = await store.open(id);
await journal.head(); // open the reader before the clock starts
process.send({ ready: true });
await new Promise((resolve) => process.once('message', resolve));
let next = 0;
let done = 0;
const t0 = performance.now();
const until = t0 + ms;
await Promise.all(
  Array.from({ length: conc }, async () => {
    while (performance.now() < until) {
      await journal.append(makeStep(offset + next++));
      done++;
    }
  }),
);
const elapsed = performance.now() - t0;
await journal.close();
if (kind === 'sqlite') await store.close();
process.send({ done, ms: elapsed });
process.disconnect();
