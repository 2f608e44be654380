#!/usr/bin/env node
// Writes every golden vector file in vectors/ from the generators in scripts/vectors/. Run it only when the
// format changes, review the diff, and commit spec, vectors and code together. Regenerating vectors to make
// a failing test pass is never a fix. `--check` compares instead of writing (exit 1 on any difference).
//
// Each generator runs in a process of its own: the library keeps pools of CSPRNG bytes (record seeds, salts)
// across calls, so a generator that pins crypto.getRandomValues would otherwise draw bytes an earlier
// generator left in a pool, and its vectors would depend on which generators ran before it.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const out = fileURLToPath(new URL('../vectors/', import.meta.url));
const check = process.argv.includes('--check');
const one = process.argv[process.argv.indexOf('--one') + 1];

if (process.argv.includes('--one')) await generateOne(one);
else generateAll();

function generateAll() {
  let failed = 0;
  for (const file of readdirSync(here + 'vectors')
    .filter((f) => f.endsWith('.mjs'))
    .sort()) {
    const args = [fileURLToPath(import.meta.url), '--one', file, ...(check ? ['--check'] : [])];
    const child = spawnSync(process.execPath, args, { stdio: 'inherit' });
    if (child.status !== 0) {
      failed++;
      console.error(`${check ? 'check' : 'generation'} failed: scripts/vectors/${file} (exit ${child.status})`);
    }
  }
  if (failed) process.exit(1);
}

async function generateOne(file) {
  const mod = await import(here + 'vectors/' + file);
  const files = await mod.generate();
  let differences = 0;
  for (const [name, doc] of Object.entries(files)) {
    const text = JSON.stringify(doc, null, 2) + '\n';
    if (check) {
      let old = '';
      try {
        old = readFileSync(out + name, 'utf8');
      } catch {}
      if (old !== text) {
        differences++;
        console.error(`differs: vectors/${name}`);
      }
    } else {
      writeFileSync(out + name, text);
      console.error(`wrote vectors/${name} (${doc.cases?.length ?? 0} cases)`);
    }
  }
  if (differences) process.exit(1);
}
