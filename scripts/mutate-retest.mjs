#!/usr/bin/env node
// `node scripts/mutate-retest.mjs <folder> <file.ts,…> <test file,…>`: re-measures, against new tests only,
// the mutants a full `npm run mutate` run of the folder left undetected — minutes instead of the
// folder's 25–45, so a test written from a survivor can be shown to kill it before the next full run.
//
// It mutates the named files with the same mutators and ignorers (stryker.config.mjs) but runs only the
// named test files, then reads the folder's newest full report (reports/mutation/<folder>*.json) and, for
// each mutant that report left undetected (survived or not covered), looks up the same mutant (mutator,
// location, replacement) in the retest. A mutant the full suite did not detect and the new tests do is
// detected by the suite as it now stands, as long as the source has not changed since the full run (the
// script refuses a file whose text differs from the report's). Mutants the full run detected are not
// rerun: tests were only added. It prints each file's score before and after and every mutant still
// undetected; the summary of `npm run mutate` is left alone (it counts full runs only).
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { Stryker } from '@stryker-mutator/core';
import base from '../stryker.config.mjs';

const [folder, files, tests] = process.argv.slice(2);
if (!folder || !files || !tests)
  throw new Error('usage: node scripts/mutate-retest.mjs <folder> <file.ts,…> <test file,…>');
const OUT = 'reports/mutation-retest';
mkdirSync(OUT, { recursive: true });
const sources = files.split(',').map((f) => `src/${folder}/${f}`);

// The newest full report holding each file.
const full = new Map();
for (const entry of readdirSync('reports/mutation')) {
  if (
    !entry.endsWith('.json') ||
    entry.endsWith('.incremental.json') ||
    !(entry === `${folder}.json` || entry.startsWith(`${folder}--`))
  )
    continue;
  const path = `reports/mutation/${entry}`;
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const [file, data] of Object.entries(report.files ?? {})) {
    const mtime = statSync(path).mtimeMs;
    if (sources.includes(file) && (full.get(file)?.mtime ?? -1) < mtime) full.set(file, { ...data, mtime, run: entry });
  }
}
for (const file of sources) {
  if (!full.has(file))
    throw new Error(`${file}: no full report in reports/mutation; run npm run mutate -- ${folder} first`);
  if (full.get(file).source !== readFileSync(file, 'utf8'))
    throw new Error(`${file} changed since its full run (${full.get(file).run}): run it again in full`);
}

const name = `${folder}--${files.replace(/\.ts/g, '')}`;
const config = `${OUT}/${name}.vitest.config.ts`;
writeFileSync(
  config,
  `// Written by scripts/mutate-retest.mjs.
import { defineConfig } from 'vitest/config';
export default defineConfig({ test: { include: ${JSON.stringify(tests.split(','))}, env: { STEPCHAIN_MUTATION: '1', RUNS: '20' }, testTimeout: 60_000, pool: 'forks' } });
`,
);
await new Stryker({
  ...base,
  vitest: { configFile: config, related: false },
  mutate: sources,
  concurrency: 1,
  incremental: false,
  reporters: ['json', 'progress'],
  jsonReporter: { fileName: `${OUT}/${name}.json` },
  // Beside a full run's .stryker-tmp, which it must neither copy nor clean.
  tempDirName: '.stryker-tmp-retest',
  ignorePatterns: ['/.stryker-tmp*', '/reports/mutation', '/dist', '/coverage', '/bench'],
}).runMutationTest();

const retest = JSON.parse(readFileSync(`${OUT}/${name}.json`, 'utf8'));
const key = (m) =>
  `${m.mutatorName}|${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}|${m.replacement}`;
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)}%` : '–');
const lines = [];
for (const file of sources) {
  const now = new Map((retest.files[file]?.mutants ?? []).map((m) => [key(m), m.status]));
  const text = full.get(file).source.split('\n');
  let detected = 0,
    undetected = 0,
    killedNow = 0;
  const left = [];
  for (const m of full.get(file).mutants) {
    if (DETECTED.has(m.status)) detected++;
    if (!UNDETECTED.has(m.status)) continue;
    undetected++;
    if (DETECTED.has(now.get(key(m)))) killedNow++;
    else
      left.push(
        `- ${file}:${m.location.start.line}:${m.location.start.column} ${m.mutatorName}: ${JSON.stringify(text[m.location.start.line - 1].trim().slice(0, 100))} → ${JSON.stringify((m.replacement ?? '').slice(0, 60))}`,
      );
  }
  lines.push(
    `${file}: full run ${pct(detected, detected + undetected)} (${detected} / ${detected + undetected}); with the new tests ${pct(detected + killedNow, detected + undetected)} (${killedNow} more killed, ${left.length} left)`,
    ...left,
  );
}
writeFileSync(`${OUT}/${name}.md`, `${lines.join('\n')}\n`);
console.log(lines.join('\n'));
