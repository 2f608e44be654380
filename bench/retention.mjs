// `npm run bench:retention` (issue 40): pruning half of a store of 10 000 runs, on the file store and SQLite
// (fsync 'always', the default), with the time to fill the store beside it as the baseline of the same run:
// prune reads each run once and removes it, so it should cost about what writing the run cost. Erasure of
// one subject across a store waits for the v3 record format (spec/RETENTION.md, docs/design/format-v3.md §9).
// Writes the "Retention" section of bench/RESULTS.md; `--quick` runs 1 000 runs into RESULTS-quick.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';

import { FileStore } from '../dist/store/index.js';
import { SqliteStore } from '../dist/sqlite.js';
import { prune, readTombstones } from '../dist/retention.js';
import { writeSection } from './lib/results-section.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const QUICK = process.argv.includes('--quick');
const OUT = join(here, QUICK ? 'RESULTS-quick.md' : 'RESULTS.md');
const RUNS = QUICK ? 1_000 : 10_000;
const STEPS = 5;
const DAY = 86_400_000;
const NOW = new Date('2026-11-27T12:00:00.000Z');
const LOAD0 = loadavg()
  .map((x) => x.toFixed(2))
  .join(' / ');
const log = (s) => process.stderr.write(s + '\n');
const scratch = mkdtempSync(join(tmpdir(), 'stepchain-bench-retention-'));
const rows = [];

async function measure(name, store) {
  let t = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const age = i % 2 === 0 ? 400 : 3;
    const j = await store.create(`run-${String(i).padStart(5, '0')}`, {
      run: { agent: 'bench' },
      createdAt: new Date(NOW.getTime() - (age + 1) * DAY),
    });
    await j.appendMany(
      Array.from({ length: STEPS }, (_, s) => ({
        step_id: `s${s}`,
        ts: new Date(NOW.getTime() - age * DAY),
        input: { q: `question ${i}.${s}` },
        result: { a: 'x'.repeat(200) },
      })),
    );
    await j.close();
  }
  const fill = performance.now() - t;
  t = performance.now();
  const result = await prune(store, { keepDays: 180, now: NOW });
  const pruneMs = performance.now() - t;
  if (result.removed.length !== RUNS / 2 || (await readTombstones(store)).length !== RUNS / 2)
    throw new Error(`${name}: pruned ${result.removed.length}`);
  rows.push({ name, fill, pruneMs });
  log(`${name}: filled ${RUNS} runs in ${(fill / 1000).toFixed(1)} s, pruned half in ${(pruneMs / 1000).toFixed(1)} s`);
}

try {
  await measure('directory (file store)', new FileStore(join(scratch, 'dir')));
  const sqlite = new SqliteStore(join(scratch, 'runs.db'));
  await measure('SQLite', sqlite);
  await sqlite.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

const lines = [
  `## Retention (issue 40): pruning half of a store of ${RUNS.toLocaleString('en')} runs`,
  '',
  `${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), load ${LOAD0} at the start; runs of ${STEPS} steps (~1.4 KB each), fsync 'always'. \`npm run bench:retention\`.`,
  'Baseline: writing the same store (one create + one appendMany per run), in the same run.',
  '',
  '| store | fill (baseline) | prune half | prune per removed run | prune ÷ fill per run |',
  '|---|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.name} | ${(r.fill / 1000).toFixed(1)} s | ${(r.pruneMs / 1000).toFixed(1)} s | ${(r.pruneMs / (RUNS / 2)).toFixed(2)} ms | ${(r.pruneMs / (RUNS / 2) / (r.fill / RUNS)).toFixed(2)}× |`,
  ),
  '',
  'Each removal reads and verifies the run (tree root, head, last checkpoint), appends its tombstone durably (64 per commit), re-reads',
  "the head and removes the run; on a directory the removal's rename, directory fsync and delete dominate.",
  '',
];
writeSection(OUT, '## Retention (issue 40', lines);
log(`wrote ${OUT}`);
