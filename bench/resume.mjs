// resumeRun with and without verify-on-load (issue 36): a file-store run of N plain steps, the best of 3 opens
// each way (read-only). Run: npm run build && node bench/resume.mjs 100,10000,100000
import { FileStore, startRun, resumeRun } from '../dist/index.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
for (const n of (process.argv[2] ?? '100,10000').split(',').map(Number)) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-resume-'));
  const store = new FileStore(dir, { fsync: 'none' });
  const run = await startRun(store, { runId: 'r' });
  const batch = [];
  for (let i = 0; i < n; i++) batch.push({ input: { i }, result: { ok: true, i } });
  for (let i = 0; i < n; i += 1000) await run.journal.appendMany(batch.slice(i, i + 1000));
  await run.close();
  const t = {};
  for (const verify of [false, true]) {
    const times = [];
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      const r = await resumeRun(store, 'r', { readOnly: true, verify });
      times.push(performance.now() - t0);
      await r.close();
    }
    t[verify ? 'verify' : 'noverify'] = Math.min(...times).toFixed(1);
  }
  console.log(`${n} steps: resumeRun without verify ${t.noverify} ms, with verify ${t.verify} ms`);
}
