// `npm test`. First, side by side, what depends on nothing else: the Prettier check, eslint, the type checks,
// the build (dist/, which the CLI tests spawn) and the Python test environment (.venv); each one's output is
// printed whole once all have ended, and if any failed the tests do not run. Then vitest, then pytest (which
// runs the built CLI and the .venv), their output streamed. Arguments go to vitest (`npm test -- test/cli`).
//
// Why side by side: prettier, eslint and the build are single-threaded, so one after another they leave the
// second core of a two-core machine idle, and on a fresh clone the Python environment's install waits mostly
// on the network. Measured in the report of the change that made this file (bench/RESULTS.md, "npm test").
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { sideBySide } from './side-by-side.mjs';

const require = createRequire(import.meta.url);
const npm = process.env.npm_execpath;
const npmRun = (script) =>
  npm
    ? { name: `npm run ${script}`, command: process.execPath, args: [npm, 'run', '--silent', script] }
    : { name: `npm run ${script}`, command: 'npm', args: ['run', '--silent', script] };

const started = Date.now();
const checked = await sideBySide([
  npmRun('format:check'),
  npmRun('lint'),
  npmRun('typecheck'),
  npmRun('build'),
  { name: 'python-env', command: process.execPath, args: ['scripts/python-env.mjs'] },
]);
console.log(`checks and build: ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (!checked) {
  console.error('npm test: a check failed (above); the tests did not run');
  process.exit(1);
}

const step = (command, args) => {
  const r = spawnSync(command, args, { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};
// vitest's package exports no path to its executable: found beside its package.json.
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
step(process.execPath, [vitest, 'run', ...process.argv.slice(2)]);
step('.venv/bin/python', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'python/tests']);
