/**
 * Every example in README.md and docs/*.md is executed (issue 37): each console block's commands run against
 * the build (dist/cli/main.js as `stepchain`) in a fresh directory per file, and their output must be the
 * block's, up to the placeholders of scripts/docs/blocks.mjs (ids, times, hashes, sizes); each ts/js block is
 * run: it must exit 0 (test/docs/typecheck.test.ts type-checks them).
 * The convention is in CONTRIBUTING.md; `npm run docs:update` rewrites console output after a deliberate change.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import {
  blockKind, documentedFiles, makeCodeDir, makeWorkdir, normalize, parseBlocks, parseConsole, rewriteConsoleOutput, runCommand,
  ROOT, runDocument, type ConsoleResult,
} from '../../scripts/docs/blocks.mjs';
import { PYTHON_ENV_TIMEOUT_MS, pythonInterpreter } from '../helpers/python-env.js';

const codeDir = makeCodeDir();
afterAll(() => rmSync(codeDir, { recursive: true, force: true }));
// Code blocks that use Postgres (`ts needs=postgres`) get the suite's throwaway server (test/setup/postgres.ts)
// as DATABASE_URL, in a schema of their own; the suite always has one, so they are never skipped here.
const pgUrl = process.env.STEPCHAIN_PG_URL;
if (pgUrl === undefined) throw new Error('test/docs needs the Postgres server of test/setup/postgres.ts (STEPCHAIN_PG_URL)');
const pgEnv = { DATABASE_URL: `${pgUrl}?schema=docs_${process.pid}` };

describe('the block convention', () => {
  test('commands, continuation lines, expected exit codes and output are read as documented', () => {
    const [block] = parseBlocks(['```console', '$ stepchain head runs/a', '2 sha256:x', '$ stepchain verify b \\', '  --json # exit 1', 'out', '```'].join('\n'));
    expect(blockKind(block!)).toBe('console');
    expect(parseConsole(block!)).toEqual([
      { command: 'stepchain head runs/a', line: 2, expectedExit: 0, output: ['2 sha256:x'] },
      { command: 'stepchain verify b \\\n  --json # exit 1', line: 4, expectedExit: 1, output: ['out'] },
    ]);
    expect(blockKind(parseBlocks('```json file=step.json\n{}\n```')[0]!)).toBe('file');
    expect(blockKind(parseBlocks('```sh\nnpm ci\n```')[0]!)).toBe('shown');
  });

  test.each([
    ['2026-11-21T22:54:37.490Z', '<time>'],
    ['journal_id 0a2193cf-3bc3-40fb-9e3e-a585298b5fd7)', 'journal_id <id>)'],
    ['head sha256:029c81a4267ccd64f4bc42dba8b7f52d1f7c1c0057945a49ec4a867a4045af94', 'head sha256:<hash>'],
    ['   0 9d4671f14f5f  gpt-4o', '   0 <hex>  gpt-4o'],
    ['wrote receipt.tar.gz (1857 bytes, gzip)', 'wrote receipt.tar.gz (<n> bytes, gzip)'],
    ['root CK3Pz7kM5kuvzN+pvPAAovkSsWZOmPO2NvTGxkzzTkc=', 'root <base64>'],
    ['a.example/t/ab+c1cc2caa+ARdL/D2hc+O5g6TZ+3/PR4RkDAiTmsFRWnNsg7F0qlV4', 'a.example/t/ab+<keyhash>+<key>'],
    ['3 steps, 2 redactions', '3 steps, 2 redactions'],
    ['step 12 of 30 at seq 123456789012', 'step 12 of 30 at seq 123456789012'],
  ])('normalize(%j) is %j', (raw, placeholder) => {
    expect(normalize(raw)).toBe(placeholder);
    expect(normalize(placeholder)).toBe(placeholder);
  });

  test('a command whose output differs from its block is caught, and one that matches is not', async () => {
    const dir = makeWorkdir();
    try {
      const { exit, output } = await runCommand('stepchain init runs/x', dir);
      expect(exit).toBe(0);
      expect(normalize(output, dir)).toBe(normalize('created journal runs/x (journal_id 0a2193cf-3bc3-40fb-9e3e-a585298b5fd7)'));
      expect(normalize(output, dir)).not.toBe(normalize('created journal runs/y (journal_id 0a2193cf-3bc3-40fb-9e3e-a585298b5fd7)'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm run docs:update (rewriteConsoleOutput)', () => {
  const text = ['# t', '```console', '$ stepchain head runs/a', '2 sha256:029c81a4267ccd64f4bc42dba8b7f52d1f7c1c0057945a49ec4a867a4045af94', '$ stepchain a \\', '  --b', 'old text', '```', 'after', ''].join('\n');
  const [block] = parseBlocks(text);
  const result = (first: string, second: string): ConsoleResult => ({
    block: block!, kind: 'console',
    steps: parseConsole(block!).map((s, i) => ({ ...s, exit: 0, actual: i === 0 ? first : second })),
  });

  test('keeps a block whose output still matches byte for byte, real values included', () => {
    const r = result('2 sha256:1111111111111111111111111111111111111111111111111111111111111111\n', 'old text\n');
    expect(rewriteConsoleOutput(text, [r], '/tmp/x')).toEqual({ text, rewritten: 0 });
  });

  test('rewrites changed output in placeholders, keeps the commands, and is idempotent', () => {
    const r = result('2 sha256:1111111111111111111111111111111111111111111111111111111111111111\n', 'new text at 2026-11-27T10:00:00.000Z\n');
    const once = rewriteConsoleOutput(text, [r], '/tmp/x');
    expect(once.rewritten).toBe(1);
    expect(once.text).toBe(text.replace('old text', 'new text at <time>'));
    const [again] = parseBlocks(once.text);
    const r2: ConsoleResult = { ...r, block: again!, steps: parseConsole(again!).map((s, i) => ({ ...s, exit: 0, actual: r.steps[i]!.actual })) };
    expect(rewriteConsoleOutput(once.text, [r2], '/tmp/x')).toEqual({ text: once.text, rewritten: 0 });
  });
});

/** Whether a document's console blocks run `python` (docs/otel.md's agent): the test environment's, made first. */
function runsPython(file: string): boolean {
  return parseBlocks(readFileSync(join(ROOT, file), 'utf8')).some(
    (b) => blockKind(b) === 'console' && parseConsole(b).some((s) => /(^|[\s;&|])python3?\s/.test(s.command)),
  );
}

// Files share nothing, so they run side by side (each in its own directory); blocks within a file in order.
describe.each(documentedFiles())('%s', (file) => {
  const python = runsPython(file);
  test.concurrent('every console block prints what it shows, and every ts/js block runs', async () => {
    if (python) await pythonInterpreter();
    const { dir, results } = await runDocument(file, { codeDir, env: pgEnv });
    try {
      const failures: string[] = [];
      for (const r of results) {
        if (r.kind === 'code') {
          if (r.exit !== 0) failures.push(`${file}:${r.block.start + 1}: the ${r.block.lang} block exited ${r.exit}:\n${r.output}`);
          continue;
        }
        for (const step of r.steps) {
          if (step.exit !== step.expectedExit) failures.push(`${file}:${step.line}: \`${step.command}\` exited ${step.exit}, the block says ${step.expectedExit}:\n${step.actual}`);
          const shown = normalize(step.output.join('\n'), dir);
          const printed = normalize(step.actual, dir);
          if (shown !== printed) failures.push(`${file}:${step.line}: \`${step.command}\` printed (normalized):\n${printed}\n--- the block shows (normalized):\n${shown}\n(npm run docs:update rewrites it)`);
        }
      }
      expect(failures.join('\n\n')).toBe('');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A whole document's blocks, dozens of CLI processes run side by side with the other documents': on a loaded
    // 2-core machine (a fresh clone's npm test beside other jobs) the longest took over the suite's 60 s. One that
    // runs Python may first wait for the Python environment's install, which npm test runs beside vitest.
  }, 240_000 + (python ? PYTHON_ENV_TIMEOUT_MS : 0));
});
