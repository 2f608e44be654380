#!/usr/bin/env node
// The secret detectors' cost on hostile text (spec/REDACTION.md §4): the timing that the unit tests leave out
// (test/redact/detectors.test.ts, test/hardening/fuzz.test.ts check the same inputs finish, unbounded by a
// stopwatch). For each family it prints the time per MiB (and against plain prose, measured in the same
// run), and the growth from 1 to 4 MiB, which is the figure with a limit: a linear scan grows about 4x, a
// quadratic one 16x.
// Run after `npm run build`: `node --expose-gc bench/detectors.mjs` (`npm run bench:detectors`).
import { performance } from 'node:perf_hooks';
import { DETECTOR_IDS, findSecrets } from '../dist/redact/index.js';
import { gc } from './lib/stats.mjs';

const MiB = 1 << 20;
const REPS = 7;
/** Growth from 1 to 4 MiB above this is reported as super-linear (linear is 4, quadratic 16). */
const GROWTH_LIMIT = 8;

const fill = (unit, size) => unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
const FAMILIES = [
  ['plain prose (baseline)', (n) => fill('The agent called the weather tool for Paris and got 18.5 degrees. ', n)],
  ['runs of key characters', (n) => fill('a', n)],
  ['many sk- prefixes', (n) => fill('sk-', n)],
  ['many eyJ without dots', (n) => fill('eyJ', n)],
  ['eyJ segments with one dot', (n) => fill('eyJ' + 'a'.repeat(50) + '.', n)],
  ['many @', (n) => fill('a@', n)],
  ['local part then @ without domain', (n) => fill('a', n - 1) + '@'],
  ['BEGIN without END', (n) => fill('-----BEGIN PRIVATE KEY-----', n)],
  ['bearer words', (n) => fill('Bearer ', n)],
];

function msFor(text) {
  findSecrets(text, DETECTOR_IDS); // warm-up: the regex engine compiles a pattern natively after a few uses
  const times = [];
  for (let r = 0; r < REPS; r++) {
    gc();
    const t0 = performance.now();
    findSecrets(text, DETECTOR_IDS);
    times.push(performance.now() - t0);
  }
  return Math.min(...times); // the least disturbed run: on a shared machine noise only ever adds time
}

let base = null;
let failed = 0;
console.log('| family | ms per MiB | vs prose | 1 → 4 MiB growth |\n|---|---:|---:|---:|');
for (const [name, make] of FAMILIES) {
  const one = msFor(make(MiB));
  const four = msFor(make(4 * MiB));
  base ??= one;
  const ratio = one / base;
  const growth = four / one;
  const bad = growth > GROWTH_LIMIT;
  if (bad) failed++;
  console.log(
    `| ${name} | ${one.toFixed(1)} | ${ratio.toFixed(2)}× | ${growth.toFixed(2)}× (limit ${GROWTH_LIMIT}×)${bad ? ' **over**' : ''} |`,
  );
}
if (failed)
  console.log(
    `\n${failed} over the growth limit. Single runs of a few ms are noisy on a shared machine: rerun before believing it.`,
  );
