// `stepchain effect begin` + `effect end` against the run's length (issue 36; FILE-STORE.md §19): a file-store
// run of N plain steps, then 3 begin/end pairs by the CLI, each a process of its own; the best pair's wall
// time with the saved run state, and with it removed before each command (every record folded, as before).
// Run: npm run build && node bench/effect-cost.mjs 1000,100000
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore, startRun } from '../dist/index.js';

const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const cli = (...args) => execFileSync(process.execPath, [CLI, ...args], { encoding: 'utf8' }).trim();

for (const n of (process.argv[2] ?? '1000,100000').split(',').map(Number)) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-effect-'));
  const store = new FileStore(dir, { fsync: 'none' });
  const run = await startRun(store, { runId: 'r' });
  const steps = Array.from({ length: n }, (_, i) => ({ input: { i }, result: { ok: true, i } }));
  for (let i = 0; i < n; i += 1000) await run.journal.appendMany(steps.slice(i, i + 1000));
  await run.refresh();
  await run.close();
  const path = join(dir, 'r');
  const pair = (k, fresh) => {
    if (!fresh) rmSync(join(path, '.run-state.json'), { force: true });
    const t0 = performance.now();
    const id = cli('effect', 'begin', path, '--tool', 'send', '--args', JSON.stringify({ k, fresh }));
    if (!fresh) rmSync(join(path, '.run-state.json'), { force: true });
    cli('effect', 'end', path, id, '--result', '{"sent":true}');
    return performance.now() - t0;
  };
  const best = (fresh) => Math.min(...[0, 1, 2].map((k) => pair(k, fresh))).toFixed(0);
  const saved = best(true);
  const folded = best(false);
  console.log(`| ${n} | ${saved} ms | ${folded} ms |`);
}
