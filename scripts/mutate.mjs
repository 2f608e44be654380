#!/usr/bin/env node
// `npm run mutate [-- canonical record chain receipt redact]`: StrykerJS (stryker.config.mjs) over each named folder
// of src/ in turn (all five by default), then a summary of every folder's latest report — the mutation
// score and each surviving mutant — in reports/mutation/SUMMARY.md. One folder at a time so that a long run
// leaves finished folders behind, and one folder can be measured again alone. Each folder keeps its own
// incremental file, so a second run re-tests only mutants whose code or tests changed. Not part of
// `npm test`: the full run takes hours on two cores.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { Stryker } from '@stryker-mutator/core';
import base from '../stryker.config.mjs';

const FOLDERS = ['canonical', 'record', 'chain', 'receipt', 'redact'];
const OUT = 'reports/mutation';
const asked = process.argv.slice(2);
for (const f of asked) if (!FOLDERS.includes(f)) throw new Error(`unknown folder ${f}: one of ${FOLDERS.join(', ')}`);
mkdirSync(OUT, { recursive: true });

for (const folder of asked.length ? asked : FOLDERS) {
  const started = Date.now();
  console.error(`\n=== src/${folder} ===`);
  await new Stryker({
    ...base,
    mutate: [`src/${folder}/**/*.ts`, '!src/**/index.ts'],
    jsonReporter: { fileName: `${OUT}/${folder}.json` },
    htmlReporter: { fileName: `${OUT}/${folder}.html` },
    incrementalFile: `${OUT}/${folder}.incremental.json`,
  }).runMutationTest();
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  writeFileSync(`${OUT}/${folder}.time`, `${minutes}\n`);
}

// The summary covers every folder that has a report, measured now or before.
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
const rows = [];
const survivors = [];
const total = { detected: 0, undetected: 0, ignored: 0, errors: 0 };
for (const folder of FOLDERS) {
  const file = `${OUT}/${folder}.json`;
  if (!existsSync(file)) continue;
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const n = { detected: 0, undetected: 0, ignored: 0, errors: 0 };
  for (const [name, { mutants }] of Object.entries(report.files)) {
    for (const m of mutants) {
      if (DETECTED.has(m.status)) n.detected++;
      else if (UNDETECTED.has(m.status)) {
        n.undetected++;
        const { line, column } = m.location.start;
        survivors.push(`${name}:${line}:${column} ${m.status} ${m.mutatorName}: ${JSON.stringify(m.replacement ?? '')}`);
      } else if (m.status === 'Ignored') n.ignored++;
      else n.errors++;
    }
  }
  for (const k of Object.keys(total)) total[k] += n[k];
  const time = existsSync(`${OUT}/${folder}.time`) ? readFileSync(`${OUT}/${folder}.time`, 'utf8').trim() : '?';
  rows.push(`| src/${folder} | ${score(n)} | ${n.detected} | ${n.undetected} | ${n.ignored} | ${n.errors} | ${time} |`);
}

function score(n) {
  const tested = n.detected + n.undetected;
  return tested ? `${((100 * n.detected) / tested).toFixed(1)}%` : '–';
}

const summary = [
  '| folder | score | detected | survived | ignored | errors | minutes |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...rows,
  `| all | ${score(total)} | ${total.detected} | ${total.undetected} | ${total.ignored} | ${total.errors} | |`,
  '',
  'Score: detected (killed or timed out) over detected plus undetected (survived or not covered).',
  'Ignored: message text and load-time-only (static) mutants; see stryker.config.mjs.',
  '',
  `## Surviving mutants (${survivors.length})`,
  '',
  ...survivors.map((s) => `- ${s}`),
  '',
].join('\n');
writeFileSync(`${OUT}/SUMMARY.md`, summary);
console.log(summary.split('\n## ')[0]);
console.log(`${survivors.length} surviving mutants: ${OUT}/SUMMARY.md`);
