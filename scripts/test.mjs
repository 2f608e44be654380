// `npm test`. First, side by side, what depends on nothing else: the Prettier check, eslint, the type checks
// and the build (dist/, which the CLI tests spawn); each one's output is printed whole once all have ended, and
// if any failed the tests do not run. Then vitest, then pytest (which runs the built CLI and the .venv), their
// output streamed. Arguments go to vitest (`npm test -- test/cli`).
//
// Why side by side: prettier, eslint and the build are single-threaded, so one after another they leave the
// second core of a two-core machine idle. Measured in the report of the change that made this file
// (bench/RESULTS.md, "npm test").
//
// The Python test environment (.venv, scripts/python-env.mjs) starts with the checks and goes on beside vitest:
// on a fresh clone its install takes minutes, mostly waiting on the network, and only pytest and two vitest
// files use it. Those files run python-env themselves (test/helpers/python-env.ts), which waits for this one
// (it holds .venv.lock) and then finds the environment made; pytest starts once it has ended.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { printJob, runJob, sideBySide } from './side-by-side.mjs';

const require = createRequire(import.meta.url);
const npm = process.env.npm_execpath;
const npmRun = (script) =>
  npm
    ? { name: `npm run ${script}`, command: process.execPath, args: [npm, 'run', '--silent', script] }
    : { name: `npm run ${script}`, command: 'npm', args: ['run', '--silent', script] };

const started = Date.now();
const pythonEnv = runJob({ name: 'python-env', command: process.execPath, args: ['scripts/python-env.mjs'] });
const checked = await sideBySide([npmRun('format:check'), npmRun('lint'), npmRun('typecheck'), npmRun('build')]);
console.log(`checks and build: ${((Date.now() - started) / 1000).toFixed(1)} s`);
if (!checked) {
  console.error('npm test: a check failed (above); the tests did not run');
  await pythonEnv; // not left installing into .venv after this process has gone
  process.exit(1);
}

// Not spawnSync: the event loop keeps reading python-env's output while vitest runs.
const inherited = (command, args) =>
  new Promise((resolve) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('error', (err) => {
      console.error(`npm test: ${command}: ${err.message}`);
      resolve(1);
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
// vitest's package exports no path to its executable: found beside its package.json.
const vitest = join(dirname(require.resolve('vitest/package.json')), 'vitest.mjs');
const vitestCode = await inherited(process.execPath, [vitest, 'run', ...process.argv.slice(2)]);
const python = await pythonEnv;
printJob(python);
if (vitestCode !== 0) process.exit(vitestCode);
if (python.code !== 0) process.exit(python.code);
process.exit(await inherited('.venv/bin/python', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'python/tests']));
