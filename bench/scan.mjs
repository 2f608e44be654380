// `npm run bench:scan`: the per-line cost of verify's line check (issue 25), on the stored lines of
// bench/lib/steps.mjs's ~1.2 KB steps sealed by the writer's own seal (STEP_V1). It prints µs per line, in
// CPU time of this thread, for:
// - JSON.parse of the line, the limit's parse (the reference the scanner is compared with);
// - the limit's whole per-line work: UTF-8 decode, JSON.parse, SHA-256 of the bytes (no file reading);
// - scanCanonical, the strict canonical scan (src/canonical/scan.ts);
// - checkLine, verify's whole per-line check of a decoded line (scan, member rules, markers, step hash);
// - checkLineBytes, the same from the stored bytes (what a worker thread runs per line).
// Every figure is one pass over all the lines; a round runs every figure once, back to back, and the ratios
// are taken within a round (paired), then the median over the rounds, so load on a shared machine moves
// both sides of a ratio together. Options: --lines=<n> (default 20 000), --rounds=<n> (default 9).
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { loadavg } from 'node:os';

import { canonicalJson, scanCanonical } from '../dist/canonical/index.js';
import { checkLine, checkLineBytes } from '../dist/chain/index.js';
import { JOURNAL_V1, STEP_V1, genesisHash, makeGenesis } from '../dist/record/index.js';
import { makeStep } from './lib/steps.mjs';
import { gc, median } from './lib/stats.mjs';

const argv = process.argv.slice(2);
const option = (name, fallback) =>
  Number(argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback);
const LINES = option('lines', 20_000);
const ROUNDS = option('rounds', 9);

/** The stored lines (without their newlines) of a v1 journal of LINES generated steps, as the writer seals them. */
function storedLines() {
  const genesis = makeGenesis({ journalId: 'bench-scan', createdAt: '2026-01-01T00:00:00.000Z' });
  let prevHash = genesisHash(genesis);
  const lines = [];
  for (let seq = 0; seq < LINES; seq++) {
    const step = makeStep(seq);
    const texts = {};
    for (const field of [...STEP_V1.contentFields, 'meta']) texts[field] = canonicalJson(step[field]);
    const sealed = STEP_V1.seal(texts, { seq, stepId: `step-${seq}`, ts: '2026-01-01T00:00:01.000Z', prevHash });
    prevHash = sealed.stepHash;
    lines.push(sealed.line.slice(0, -1));
  }
  return lines;
}

const bytes = storedLines().map((t) => Buffer.from(t));
// Decoded from the bytes, as the verifier gets its lines: flat strings (a sliced string reads slower).
const texts = bytes.map((b) => b.toString('utf8'));
const avgBytes = bytes.reduce((n, b) => n + b.length, 0) / bytes.length;

// Each figure returns something read from every line, so no pass can be optimized away, and checks it:
// a figure measured on lines it rejects would measure the failure path.
let sink = 0;
const FIGURES = {
  parse: () => {
    for (const t of texts) sink += JSON.parse(t).seq;
  },
  limit: () => {
    for (const b of bytes) {
      sink += JSON.parse(b.toString('utf8')).seq;
      sink += createHash('sha256').update(b).digest()[0];
    }
  },
  scan: () => {
    for (const t of texts) {
      const r = scanCanonical(t);
      if (r.defect !== null) throw new Error(`scan: ${r.defect.reason}`);
      sink += r.members.size;
    }
  },
  checkLine: () => {
    for (const t of texts) {
      const f = checkLine(t, JOURNAL_V1);
      if (f.problems.length > 0) throw new Error(`checkLine: ${f.problems[0].message}`);
      sink += f.seq;
    }
  },
  checkLineBytes: () => {
    for (const b of bytes) {
      const f = checkLineBytes(b, JOURNAL_V1);
      if (f.problems.length > 0) throw new Error(`checkLineBytes: ${f.problems[0].message}`);
      sink += f.seq;
    }
  },
};

/** CPU time (user + system, this process) of one pass, in µs per line. */
function cpuPerLine(fn) {
  gc();
  const c = process.cpuUsage();
  fn();
  const u = process.cpuUsage(c);
  return (u.user + u.system) / LINES;
}

for (const fn of Object.values(FIGURES)) fn(); // warm up: the JIT's first passes are not measured runs
const samples = Object.fromEntries(Object.keys(FIGURES).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(FIGURES)) samples[name].push(cpuPerLine(fn));
}

const med = (xs) => median([...xs].sort((a, b) => a - b));
/** Median over rounds of a's time ÷ b's time in the same round. */
const pairedRatio = (a, b) => med(samples[a].map((x, i) => x / samples[b][i]));
const fmt = (us) => `${us.toFixed(2)} µs`;

const rows = [
  ["JSON.parse (the limit's parse)", 'parse', null],
  ['limit per line: decode + JSON.parse + SHA-256', 'limit', null],
  ['scanCanonical (strict canonical scan)', 'scan', 'parse'],
  ["checkLine (verify's per-line check, decoded line)", 'checkLine', 'limit'],
  ["checkLineBytes (decode + checkLine: a worker's per-line work)", 'checkLineBytes', 'limit'],
];
console.log(
  `bench/scan.mjs: ${LINES} stored v1 lines of ${Math.round(avgBytes)} bytes on average, ${ROUNDS} rounds, CPU time of this thread; Node ${process.version}; load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')}`,
);
console.log('');
console.log('| Figure | µs/line (median) | min–max | Ratio (paired, median) |');
console.log('|---|---:|---:|---|');
for (const [label, key, against] of rows) {
  const xs = samples[key];
  const ratio =
    against === null
      ? ''
      : `${pairedRatio(key, against).toFixed(2)}× ${against === 'parse' ? 'JSON.parse' : 'the limit per line'}`;
  console.log(
    `| ${label} | ${fmt(med(xs))} | ${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)} | ${ratio} |`,
  );
}
console.log('');
console.log('Ratios are time ÷ time: below 1× is cheaper than the reference.');
if (sink === 0.5) console.log(''); // keeps `sink` live
