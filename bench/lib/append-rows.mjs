// bench/speed.mjs's append rows (issue 25): appendMany in batches of 256 with fsync none, in journals of
// both formats (stepchain/v1, and stepchain/v2, the run journal `stepchain init` creates), against the bare
// per-step CPU limit and against hypercore's batched append on the same steps (bench/thirdparty). Every
// figure comes from a fresh process of its own (bench/workers/append-rate.mjs, bench/thirdparty/run.mjs),
// and the four processes run back to back once per pair, so each ratio is taken between adjacent runs.
// Within a process: one warm-up run, then the best of `inner` runs (on a shared machine, the run other load
// disturbed least).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { median, summary } from './stats.mjs';

const bench = fileURLToPath(new URL('..', import.meta.url));
const SEED = 11;
const FORMATS = ['v1', 'v2'];

function child(args, cwd) {
  const r = spawnSync(process.execPath, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

const best = (xs) => Math.max(...xs);
const spread = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: median(s), min: s[0], max: s[s.length - 1] };
};

/**
 * Measures and records the rows through `row(section, name, stat, unit, against, ratio)`; returns the
 * paired ratios for the caller's notes. `steps` per run, `pairs` pairs, `inner` timed runs per process.
 */
export function appendRows({ steps, pairs, inner = 2, row, notes, log }) {
  const tpDir = join(bench, 'thirdparty');
  const hypercore = existsSync(join(tpDir, 'node_modules/hypercore/package.json'));
  if (!hypercore)
    notes.push('hypercore not measured: bench/thirdparty has no node_modules (`npm ci --prefix bench/thirdparty`).');
  const worker = join(bench, 'workers/append-rate.mjs');
  const runs = { limit: [], hc: [], hcCpu: [], v1: [], v2: [] };
  const ratios = { v1: { limit: [], hc: [], hcCpu: [] }, v2: { limit: [], hc: [], hcCpu: [] } };
  let version = '';
  for (let p = 0; p < pairs; p++) {
    log?.(`append: pair ${p + 1} of ${pairs} (limit, v1, v2${hypercore ? ', hypercore' : ''}; ${steps} steps each)`);
    const limit = best(child([worker, '--mode=limit', `--steps=${steps}`, `--reps=${inner}`, `--seed=${SEED}`]).cpu);
    runs.limit.push(limit);
    const mine = {};
    for (const f of FORMATS) {
      const r = child([worker, `--mode=${f}`, `--steps=${steps}`, `--reps=${inner}`, `--seed=${SEED}`]);
      mine[f] = { wall: best(r.wall), cpu: best(r.cpu) };
      runs[f].push(mine[f]);
      ratios[f].limit.push(mine[f].cpu / limit);
    }
    if (!hypercore) continue;
    const tp = child(
      [join(tpDir, 'run.mjs'), '--append-only', `--steps=${steps}`, `--reps=${inner}`, `--seed=${SEED}`],
      tpDir,
    );
    version = tp.versions.hypercore;
    const hc = { wall: best(tp.hypercore.append), cpu: best(tp.hypercore.appendCpu) };
    runs.hc.push(hc.wall);
    runs.hcCpu.push(hc.cpu);
    for (const f of FORMATS) {
      ratios[f].hc.push(mine[f].wall / hc.wall);
      ratios[f].hcCpu.push(mine[f].cpu / hc.cpu);
    }
  }
  row(
    'append',
    'per-step CPU limit: JSON round trip + canonicalize + seal + SHA-256, bare loop',
    summary(runs.limit),
    'steps/CPU-s',
  );
  for (const f of FORMATS) {
    row(
      'append',
      `appendMany, stepchain/${f}, batches of 256, fsync none (CPU per step)`,
      summary(runs[f].map((x) => x.cpu)),
      'steps/CPU-s',
      'per-step CPU limit (paired runs)',
      spread(ratios[f].limit),
    );
  }
  if (hypercore) {
    row('append', `hypercore ${version}: append, batches of 256 (wall)`, summary(runs.hc), 'steps/s');
    row(
      'append',
      `hypercore ${version}: append, batches of 256 (CPU per step, every thread)`,
      summary(runs.hcCpu),
      'steps/CPU-s',
    );
    for (const f of FORMATS) {
      row(
        'append',
        `appendMany, stepchain/${f}, batches of 256, fsync none (wall)`,
        summary(runs[f].map((x) => x.wall)),
        'steps/s',
        'hypercore append, wall (paired runs)',
        spread(ratios[f].hc),
      );
      row(
        'append',
        `appendMany, stepchain/${f}, batches of 256, fsync none (CPU per step)`,
        summary(runs[f].map((x) => x.cpu)),
        'steps/CPU-s',
        'hypercore append, CPU per step (paired runs)',
        spread(ratios[f].hcCpu),
      );
    }
  }
  const mid = (xs) => median([...xs].sort((a, b) => a - b));
  const fmt = (xs) => `${mid(xs).toFixed(2)}×`;
  for (const f of FORMATS) {
    const below =
      hypercore && mid(ratios[f].hc) < 0.5
        ? ' Below the target: where the time goes is in bench/README.md, "Where appendMany\'s time goes".'
        : '';
    notes.push(
      `Append, stepchain/${f}: appendMany at ${fmt(ratios[f].limit)} the per-step CPU limit${hypercore ? `, ${fmt(ratios[f].hc)} hypercore's batched append in wall time and ${fmt(ratios[f].hcCpu)} in CPU time per step` : ''} (medians of ${pairs} paired runs; target ≥ 0.5× hypercore).${below}`,
    );
  }
  return ratios;
}
