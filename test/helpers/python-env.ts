/**
 * The Python interpreter of the tests that run Python agents (test/otel/python.test.ts, docs/otel.md's example):
 * $STEPCHAIN_PYTHON as given, else <repo>/.venv/bin/python once scripts/python-env.mjs has made .venv. `npm test`
 * starts that setup beside vitest (a fresh clone's install takes minutes); the one started here waits for it
 * (.venv.lock) and then finds the environment made, so a test waits only as long as the install has left to run.
 * Run on its own (`npx vitest run test/otel/python.test.ts`), it sets .venv up itself.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** How long a test may wait for the environment: a fresh install on a loaded machine, with room. */
export const PYTHON_ENV_TIMEOUT_MS = 900_000;

export async function pythonInterpreter(): Promise<string> {
  if (process.env.STEPCHAIN_PYTHON !== undefined) return process.env.STEPCHAIN_PYTHON;
  const output: Buffer[] = [];
  const code = await new Promise<number>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/python-env.mjs')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => output.push(d));
    child.stderr.on('data', (d: Buffer) => output.push(d));
    child.on('error', () => resolve(1));
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0)
    throw new Error(`scripts/python-env.mjs exited ${code} setting up .venv:\n${Buffer.concat(output).toString()}`);
  return join(ROOT, '.venv/bin/python');
}
