#!/usr/bin/env node
// Diff throughput (issue 5): two 100 000-step runs, identical and diverging at the last step, diffed from
// their stored lines, against the baseline of reading and parsing those same lines. Prints the ratio next
// to its limit. Run after `npm run build`: `node --expose-gc bench/diff.mjs [--quick]`.
import { performance } from 'node:perf_hooks';
import { diff } from '../dist/diff/index.js';
import { canonicalJson } from '../dist/canonical/jcs.js';
import { makeStep } from './lib/steps.mjs';
import { gc, median } from './lib/stats.mjs';

const quick = process.argv.includes('--quick');
const N = quick ? 20_000 : 100_000;
const REPS = quick ? 3 : 5;
/** diff may take at most this many times as long as reading and parsing both runs. */
const LIMIT = 8;
const HASH = 'sha256:' + '0'.repeat(64);

/** Stored lines of a run (canonical records; placeholder hashes: diff does not verify). */
function lines(journal, n, change) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const step = makeStep(i);
    if (change && i === n - 1) step.result.total += 1;
    const rec = {
      v: 1,
      seq: i,
      step_id: `${journal}-${i}`,
      ts: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      prev_hash: HASH,
      ...step,
      step_hash: HASH,
    };
    out[i] = canonicalJson(rec);
  }
  return out;
}

/** A ChainSource over lines held in memory: what a journal's reader yields, without the disk. */
function source(texts) {
  return {
    genesis: { format: 'stepchain/v1', journal_id: 'bench', created_at: '2026-01-01T00:00:00.000Z' },
    async head() {
      return { seq: texts.length - 1, step_hash: HASH };
    },
    async *lines() {
      for (let i = 0; i < texts.length; i++) yield { segment: '0000000000000000.jsonl', seq: i, text: texts[i] };
    },
    async blob() {
      return null;
    },
  };
}

/** The baseline: read both runs through the same async iteration and JSON.parse every line. */
async function readBoth(x, y) {
  let n = 0;
  for (const s of [source(x), source(y)]) for await (const l of s.lines()) n += JSON.parse(l.text).seq >= 0 ? 1 : 0;
  return n;
}

async function time(fn) {
  const ms = [];
  let out;
  for (let r = 0; r < REPS; r++) {
    gc();
    const t0 = performance.now();
    out = await fn();
    ms.push(performance.now() - t0);
  }
  return { ms: median(ms.sort((p, q) => p - q)), out };
}

const a = lines('a', N);
const b = lines('b', N);
const c = lines('c', N, true);
const bytes = a.reduce((s, t) => s + t.length + 1, 0);
console.log(
  `diff bench: 2 runs × ${N.toLocaleString('en')} steps, ${(bytes / N).toFixed(0)} bytes per line, median of ${REPS}`,
);

const base = await time(() => readBoth(a, b));
const same = await time(() => diff(source(a), source(b)));
const end = await time(() => diff(source(a), source(c), { all: true }));
if (!same.out.same) throw new Error('identical runs reported as different');
if (end.out.divergences.length !== 1 || end.out.divergences[0].seq_a !== N - 1)
  throw new Error('the last-step divergence was not found');

let failed = false;
const row = (name, t) => {
  const ratio = t.ms / base.ms;
  const ok = ratio <= LIMIT;
  failed ||= !ok;
  console.log(
    `${name.padEnd(34)} ${t.ms.toFixed(0).padStart(7)} ms  ${((2 * N) / t.ms).toFixed(0).padStart(5)}k steps/s  ${ratio.toFixed(2)}× read+parse (limit ${LIMIT}×) ${ok ? 'ok' : 'OVER'}`,
  );
};
console.log(
  `${'read + JSON.parse both runs'.padEnd(34)} ${base.ms.toFixed(0).padStart(7)} ms  ${((2 * N) / base.ms).toFixed(0).padStart(5)}k steps/s  baseline`,
);
row('diff, identical', same);
row('diff --all, diverging at the end', end);
process.exitCode = failed ? 1 : 0;
