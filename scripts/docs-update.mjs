#!/usr/bin/env node
/**
 * `npm run docs:update [-- file.md …]`: runs every console block of README.md and docs/*.md against the
 * build (scripts/docs/blocks.mjs has the convention) and rewrites each command's output with what it
 * printed now, in placeholders (<hash>, <id>, <time>…). A block whose output still matches (after
 * normalizing both) is left byte-identical, so running it twice changes nothing. Commands are never
 * rewritten: a command whose exit code differs from the one documented, or a ts/js block that fails, is
 * reported and the script exits 1 after writing what it could — a person decides what the example shows.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentedFiles, makeCodeDir, normalize, ROOT, runDocument } from './docs/blocks.mjs';

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : documentedFiles();
const codeDir = makeCodeDir();
let failed = false;
try {
  for (const file of files) {
    const { text, dir, results } = await runDocument(file, { codeDir });
    const lines = text.split('\n');
    // Replace from the bottom up so earlier line indexes stay valid.
    const edits = [];
    for (const r of results) {
      if (r.kind === 'code' && r.exit !== 0) {
        failed = true;
        console.error(`${file}:${r.block.start + 1}: the ${r.block.lang} block exited ${r.exit}:\n${r.output.trimEnd()}`);
      }
      if (r.kind !== 'console') continue;
      const body = [];
      let changed = false;
      for (const step of r.steps) {
        if (step.exit !== step.expectedExit) {
          failed = true;
          console.error(`${file}:${step.line}: \`${step.command}\` exited ${step.exit}, documented ${step.expectedExit}:\n${step.actual.trimEnd()}`);
        }
        const documented = step.output.join('\n');
        const actual = normalize(step.actual, dir);
        const keep = normalize(documented, dir) === actual;
        if (!keep) changed = true;
        body.push(...step.command.split('\n').map((l, i) => `${i === 0 ? '$ ' : ''}${l}`));
        const out = keep ? documented.replace(/\n+$/, '') : actual;
        if (out !== '') body.push(...out.split('\n'));
      }
      if (changed) edits.push({ start: r.block.start + 1, end: r.block.end, body });
    }
    for (const e of edits.reverse()) lines.splice(e.start, e.end - e.start, ...e.body);
    if (edits.length > 0) {
      writeFileSync(join(ROOT, file), lines.join('\n'));
      console.error(`${file}: ${edits.length} console block(s) rewritten`);
    } else {
      console.error(`${file}: unchanged`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(codeDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
