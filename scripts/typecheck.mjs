// Runs the project's four type checks side by side (they are independent: each reads its own tsconfig
// and writes nothing), printing each one's output whole once it ends, and fails if any fails. One after
// another they cost the sum of four tsc start-ups; concurrently, on two cores, close to the longest two.
import { createRequire } from 'node:module';
import { sideBySide } from './side-by-side.mjs';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const checks = [
  ['-p', 'tsconfig.json', '--noEmit'],
  ['-p', 'tsconfig.browser.json'],
  ['-p', 'tsconfig.page.json'],
  ['-p', 'tsconfig.page-test.json'],
];

const ok = await sideBySide(
  checks.map((args) => ({ name: `tsc ${args.join(' ')}`, command: process.execPath, args: [tsc, ...args] })),
);
process.exitCode = ok ? 0 : 1;
