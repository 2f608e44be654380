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
import { documentedFiles, makeCodeDir, rewriteConsoleOutput, ROOT, runDocument } from './docs/blocks.mjs';

const files = process.argv.slice(2).length > 0 ? process.argv.slice(2) : documentedFiles();
const codeDir = makeCodeDir();
let failed = false;
try {
  for (const file of files) {
    let run;
    try {
      run = await runDocument(file, { codeDir });
    } catch (e) {
      // One unreadable file (an unclosed fence, a missing build) must not stop the others.
      failed = true;
      console.error(`${file}: not run: ${e instanceof Error ? e.message : String(e)}`);
      continue;
    }
    const { text, dir, results } = run;
    for (const r of results) {
      if (r.kind === 'code' && r.exit !== 0) {
        failed = true;
        console.error(
          `${file}:${r.block.start + 1}: the ${r.block.lang} block exited ${r.exit}:\n${r.output.trimEnd()}`,
        );
      }
      if (r.kind !== 'console') continue;
      for (const step of r.steps) {
        if (step.exit === step.expectedExit) continue;
        failed = true;
        console.error(
          `${file}:${step.line}: \`${step.command}\` exited ${step.exit}, documented ${step.expectedExit}:\n${step.actual.trimEnd()}`,
        );
      }
    }
    const { text: updated, rewritten } = rewriteConsoleOutput(text, results, dir);
    if (rewritten > 0) {
      writeFileSync(join(ROOT, file), updated);
      console.error(`${file}: ${rewritten} console block(s) rewritten`);
    } else {
      console.error(`${file}: unchanged`);
    }
    rmSync(dir, { recursive: true, force: true });
  }
} finally {
  rmSync(codeDir, { recursive: true, force: true });
}
process.exitCode = failed ? 1 : 0;
