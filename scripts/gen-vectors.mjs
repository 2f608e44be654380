#!/usr/bin/env node
// Writes every golden vector file in vectors/ from the generators in scripts/vectors/. Run it only when the
// format changes, review the diff, and commit spec, vectors and code together. Regenerating vectors to make
// a failing test pass is never a fix. `--check` compares instead of writing (exit 1 on any difference).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const out = fileURLToPath(new URL('../vectors/', import.meta.url));
const check = process.argv.includes('--check');
let differences = 0;
for (const file of readdirSync(here + 'vectors')
  .filter((f) => f.endsWith('.mjs'))
  .sort()) {
  const mod = await import(here + 'vectors/' + file);
  const files = await mod.generate();
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
}
if (check && differences) process.exit(1);
