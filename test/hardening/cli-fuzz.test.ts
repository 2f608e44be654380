/**
 * The CLI's argument handling under random argv (issue 8): the built dist/cli/main.js is spawned with
 * random verbs, options, values and stdin, in a scratch directory holding a real journal, a receipt and a
 * key. Whatever it is given it exits 0, 1 or 2, by itself (no signal, no hang), and never prints a stack
 * trace or the "looks like a bug" line. Child processes are slow, so this runs a few dozen cases normally
 * (20× in long mode).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { tempDir } from '../helpers/tmp.js';
import { CLI, LONG, TEST_TIMEOUT, runNode, runs } from './support.js';

const dir = tempDir('stepchain-clifuzz-');
const cwd = join(dir, 'work');
mkdirSync(cwd);

beforeAll(async () => {
  const init = await runNode([CLI, 'init', 'j'], { cwd });
  expect(init.code, init.stderr).toBe(0);
  for (let i = 0; i < 3; i++) {
    const a = await runNode([CLI, 'append', 'j'], {
      cwd,
      input: JSON.stringify({ input: { i }, result: 'r'.repeat(i * 10) }),
    });
    expect(a.code, a.stderr).toBe(0);
  }
  expect((await runNode([CLI, 'keygen', '-o', 'k.key'], { cwd })).code).toBe(0);
  expect((await runNode([CLI, 'export', 'j', '-o', 'r.tar.gz', '--sign', 'k.key'], { cwd })).code).toBe(0);
  expect((await runNode([CLI, 'fork', 'j', '--from-step', '1', 'f'], { cwd })).code).toBe(0);
});

const VERBS = [
  'init',
  'append',
  'log',
  'show',
  'head',
  'verify',
  'export',
  'diff',
  'fork',
  'keygen',
  'help',
  'verfy',
  '',
];
const OPTIONS = [
  '--json',
  '--debug',
  '--help',
  '-h',
  '--version',
  '-V',
  '--from',
  '--to',
  '-o',
  '--out',
  '--head',
  '--pubkey',
  '--sign',
  '--file',
  '--jsonl',
  '--all',
  '--ignore',
  '--envelope',
  '--from-step',
  '--bucket-bytes',
  '--blob-threshold',
  '--',
  '-',
  '--from=1',
  '--to=-1',
  '--no-json',
  '---',
  '-xyz',
  '--json=1',
];
// Only names inside the scratch directory: the CLI writes where it is told (init, export, keygen, fork).
const VALUES = [
  'j',
  'f',
  'r.tar.gz',
  'k.key',
  'k.key.pub',
  'missing',
  'new-j',
  'out.tar',
  'out.tar.gz',
  '0',
  '1',
  '-1',
  '2.5',
  '1e3',
  '99999999999999999999',
  'NaN',
  'sha256:' + '0'.repeat(64),
  'sha256:zz',
  '/input',
  '/**',
  '~',
  'é',
  '\u2028',
  ' ',
  '',
  'j/buckets',
  'j/journal.json',
  '.',
];
const arg = fc.oneof(
  fc.constantFrom(...OPTIONS),
  fc.constantFrom(...VALUES),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes('\0') && !s.includes('..') && !s.startsWith('/')),
);
const argv = fc
  .tuple(fc.constantFrom(...VERBS), fc.array(arg, { maxLength: 6 }))
  .map(([v, rest]) => (v === '' ? rest : [v, ...rest]));
const stdin = fc.oneof(
  fc.constant(''),
  fc.constant('{"input":1}'),
  fc.constant('{"input":1}\n{"result":2}\n'),
  fc.string({ maxLength: 40 }),
  fc.constant('{"__proto__":{"x":1}}'),
);

describe('the CLI under random argv', () => {
  test(
    'always exits 0, 1 or 2 by itself, with no stack trace',
    async () => {
      await fc.assert(
        fc.asyncProperty(argv, stdin, async (args, input) => {
          const r = await runNode([CLI, ...args], { cwd, input, timeoutMs: 20_000 });
          const what = `stepchain ${JSON.stringify(args)} <<< ${JSON.stringify(input)}\nexit ${r.code} ${r.signal}\n${r.stderr}`;
          expect(r.signal, what).toBeNull();
          expect([0, 1, 2], what).toContain(r.code);
          if (!args.includes('--debug')) expect(r.stderr, what).not.toMatch(/\n\s+at .*\(?(file:|node:|\/)/);
          expect(r.stderr, what).not.toMatch(/looks like a bug/);
          if (args.includes('--json') && r.stdout.trim() !== '' && !args.includes('--help') && !args.includes('-h')) {
            // A --json run prints JSON documents on stdout (each starting at a line's start), never anything else.
            for (const doc of r.stdout.trim().split(/\n(?=[{[])/)) expect(() => JSON.parse(doc), what).not.toThrow();
          }
        }),
        { numRuns: runs(30) },
      );
    },
    LONG ? TEST_TIMEOUT : 300_000,
  );
});
