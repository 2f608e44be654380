#!/usr/bin/env node
// `npm run mutate [-- canonical record/seal.ts receipt/verify.ts,tar-reader.ts …]`: StrykerJS
// (stryker.config.mjs) over each named folder of src/, or files in one, in turn (all five folders by default), then a summary of the latest result
// for every file — each folder's mutation score and each surviving mutant — in reports/mutation/SUMMARY.md.
// One target at a time so that a long run leaves finished targets behind, and one folder or file can be
// measured again alone. Each target keeps its own incremental file, so a second run re-tests only mutants
// whose code or tests changed. `--summary` only rewrites the summary. Not part of `npm test`: the full
// run takes hours on two cores.
// `--tests=test/chain/**/*.test.ts,…` runs each mutant against those test files only (globs, within the
// mutation set's exclusions): faster, and a lower bound on the full set's score; such a run's report is
// named `<target>@limited` so the summary's "from runs" column shows it. `--concurrency=N` sets the number
// of test runners (default 2, stryker.config.mjs), e.g. 1 when two runs share two cores.
import { mkdirSync, readFileSync, writeFileSync, existsSync, readdirSync, statSync } from 'node:fs';
import { Stryker } from '@stryker-mutator/core';
import base from '../stryker.config.mjs';

const FOLDERS = ['canonical', 'record', 'chain', 'receipt', 'redact'];
const OUT = 'reports/mutation';
const args = process.argv.slice(2);
const summaryOnly = args.includes('--summary');
const option = (name) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const tests = option('tests');
const concurrency = option('concurrency');
if (concurrency !== undefined && !/^[1-9][0-9]*$/.test(concurrency))
  throw new Error(`--concurrency=${concurrency}: a positive whole number`);
const asked = args.filter((a) => !a.startsWith('--'));
for (const a of args) {
  if (a.startsWith('--') && a !== '--summary' && !a.startsWith('--tests=') && !a.startsWith('--concurrency=')) {
    throw new Error(`unknown option ${a}: --summary, --tests=<glob,…>, --concurrency=<n>`);
  }
}
// test/mutation/vitest.config.ts reads this: the test runners Stryker starts inherit the environment.
if (tests !== undefined) process.env.STEPCHAIN_MUTATION_TESTS = tests;
for (const t of asked) {
  const [folder, files] = t.split('/');
  if (
    !FOLDERS.includes(folder) ||
    (files !== undefined && !files.split(',').every((f) => f.endsWith('.ts') && existsSync(`src/${folder}/${f}`)))
  ) {
    throw new Error(
      `unknown target ${t}: a folder (${FOLDERS.join(', ')}) or files in one, e.g. record/seal.ts or receipt/verify.ts,tar.ts`,
    );
  }
}
mkdirSync(OUT, { recursive: true });

/** A target's report name: `receipt`, or `receipt--verify,tar` for src/receipt/verify.ts and tar.ts. */
const reportName = (target) =>
  target.replace(/\.ts(?=,|$)/g, '').replace('/', '--') + (tests === undefined ? '' : '@limited');
/** The files a target mutates: a folder's, but its index.ts; or the ones named. */
function mutateOf(target) {
  const [folder, files] = target.split('/');
  return files === undefined ? sourcesOf(folder) : files.split(',').map((f) => `src/${folder}/${f}`);
}
function sourcesOf(folder) {
  return readdirSync(`src/${folder}`)
    .filter((f) => f.endsWith('.ts') && f !== 'index.ts')
    .map((f) => `src/${folder}/${f}`);
}

for (const target of summaryOnly ? [] : asked.length ? asked : FOLDERS) {
  const name = reportName(target);
  const started = Date.now();
  console.error(`\n=== src/${target} ===`);
  const mutate = mutateOf(target);
  await new Stryker({
    ...base,
    ...(concurrency === undefined ? {} : { concurrency: Number(concurrency) }),
    mutate,
    jsonReporter: { fileName: `${OUT}/${name}.json` },
    htmlReporter: { fileName: `${OUT}/${name}.html` },
    incrementalFile: `${OUT}/${name}.incremental.json`,
  }).runMutationTest();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  writeFileSync(`${OUT}/${name}.time`, `${minutes}\n`);
  // Which files the run measured: one without mutants is in no report, yet measured.
  writeFileSync(`${OUT}/${name}.files`, `${mutate.join('\n')}\n`);
}

// The summary takes, for each source file, its mutants from the newest report that holds it, measured
// now or before; a file no report holds is listed as not measured.
const newest = new Map(); // source file -> { mutants, run, mtime }
for (const entry of readdirSync(OUT)) {
  if (!entry.endsWith('.json') || entry.endsWith('.incremental.json')) continue;
  const path = `${OUT}/${entry}`;
  const mtime = statSync(path).mtimeMs;
  const report = JSON.parse(readFileSync(path, 'utf8'));
  if (!report.files) continue;
  const name = entry.slice(0, -'.json'.length);
  const run = `${name} (${new Date(mtime).toISOString().slice(0, 16)}Z)`;
  const listed = existsSync(`${OUT}/${name}.files`)
    ? readFileSync(`${OUT}/${name}.files`, 'utf8').split('\n').filter(Boolean)
    : [];
  for (const file of listed) if (!newest.has(file)) newest.set(file, { mutants: [], source: '', run, mtime: -1 });
  for (const [file, { mutants, source }] of Object.entries(report.files)) {
    if ((newest.get(file)?.mtime ?? -1) < mtime) newest.set(file, { mutants, source, run, mtime });
  }
}

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const zero = () => ({ detected: 0, timeout: 0, undetected: 0, ignored: 0, errors: 0 });
const rows = [];
const survivors = [];
const unmeasured = [];
const total = zero();
for (const folder of FOLDERS) {
  const sources = sourcesOf(folder);
  const n = zero();
  const runs = new Set();
  const missing = [];
  for (const file of sources) {
    const found = newest.get(file);
    if (!found) {
      missing.push(file);
      continue;
    }
    runs.add(found.run);
    for (const m of found.mutants) {
      if (DETECTED.has(m.status)) n.detected++;
      if (m.status === 'Timeout') n.timeout++;
      else if (UNDETECTED.has(m.status)) {
        n.undetected++;
        const { line, column } = m.location.start;
        const was = excerpt(found.source, m.location);
        survivors.push(
          `${file}:${line}:${column} ${m.status} ${m.mutatorName}: ${JSON.stringify(was)} → ${JSON.stringify(m.replacement ?? '')}`,
        );
      } else if (m.status === 'Ignored') n.ignored++;
      else if (!DETECTED.has(m.status)) n.errors++;
    }
  }
  unmeasured.push(...missing);
  for (const k of Object.keys(total)) total[k] += n[k];
  const measured = `${sources.length - missing.length}/${sources.length}`;
  rows.push(
    `| src/${folder} | ${score(n)} | ${n.detected} | ${n.timeout} | ${n.undetected} | ${n.ignored} | ${n.errors} | ${measured} | ${[...runs].join(', ')} |`,
  );
}

/** The mutated code, on one line and at most 80 characters. */
function excerpt(source, { start, end }) {
  const lines = source.split('\n').slice(start.line - 1, end.line);
  lines[lines.length - 1] = lines[lines.length - 1].slice(0, end.column - 1);
  lines[0] = lines[0].slice(start.column - 1);
  const text = lines.map((l) => l.trim()).join(' ');
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function score(n) {
  const tested = n.detected + n.undetected;
  return tested ? `${((100 * n.detected) / tested).toFixed(1)}%` : '–';
}

const summary = [
  '| folder | score | detected | of which timed out | undetected | ignored | errors | files measured | from runs |',
  '|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ...rows,
  `| all measured | ${score(total)} | ${total.detected} | ${total.timeout} | ${total.undetected} | ${total.ignored} | ${total.errors} | | |`,
  '',
  'Score: detected (killed or timed out) over detected plus undetected (survived or not covered).',
  'Ignored: message text and load-time-only (static) mutants; see stryker.config.mjs.',
  '',
  `## Not measured (${unmeasured.length})`,
  '',
  ...unmeasured.map((f) => `- ${f}`),
  '',
  `## Surviving mutants (${survivors.length})`,
  '',
  ...survivors.map((s) => `- ${s}`),
  '',
].join('\n');
writeFileSync(`${OUT}/SUMMARY.md`, summary);
console.log(summary.split('\n## Surviving')[0]);
console.log(`${survivors.length} surviving mutants: ${OUT}/SUMMARY.md`);
