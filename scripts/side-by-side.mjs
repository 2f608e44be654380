// Runs commands side by side, each one's output (stdout and stderr together) collected and printed whole
// once it ends, in the order given, with its exit status and its time; resolves to whether all succeeded.
// Used by scripts/typecheck.mjs (the four tsc checks) and scripts/test.mjs (the checks before the tests).
import { spawn } from 'node:child_process';

/** @typedef {{ name: string, command: string, args: string[] }} Job */

/** Runs one job to its end; never rejects (a spawn error is a failure with its message as output). */
export function runJob({ name, command, args }) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    const end = (code, text) => resolve({ name, code, text, seconds: (Date.now() - started) / 1000 });
    child.on('error', (err) => end(1, String(err)));
    child.on('close', (code, signal) =>
      end(code ?? 1, Buffer.concat(out).toString() + (signal ? `killed by ${signal}\n` : '')),
    );
  });
}

/** Prints what runJob resolved to: the job's name, status and time, then its output. */
export function printJob({ name, code, text, seconds }) {
  process.stdout.write(`${name}: ${code === 0 ? 'ok' : `failed (exit ${code})`} (${seconds.toFixed(1)} s)\n`);
  if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** Runs `jobs` side by side and prints each one's output when all have ended; true when all exited 0. */
export async function sideBySide(jobs) {
  const results = await Promise.all(jobs.map(runJob));
  for (const result of results) printJob(result);
  return results.every((r) => r.code === 0);
}
