// Runs the project's four type checks side by side (they are independent: each reads its own tsconfig
// and writes nothing), printing each one's output whole once it ends, and fails if any fails. One after
// another they cost the sum of four tsc start-ups; concurrently, on two cores, close to the longest two.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const checks = [
  ['-p', 'tsconfig.json', '--noEmit'],
  ['-p', 'tsconfig.browser.json'],
  ['-p', 'tsconfig.page.json'],
  ['-p', 'tsconfig.page-test.json'],
];

const run = (args) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [tsc, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => out.push(d));
    child.on('error', (err) => resolve({ args, code: 1, text: String(err) }));
    child.on('close', (code, signal) =>
      resolve({ args, code: code ?? 1, text: Buffer.concat(out).toString() + (signal ? `killed by ${signal}\n` : '') }),
    );
  });

const results = await Promise.all(checks.map(run));
for (const { args, code, text } of results) {
  process.stdout.write(`tsc ${args.join(' ')}: ${code === 0 ? 'ok' : `failed (exit ${code})`}\n`);
  if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}
process.exitCode = results.some((r) => r.code !== 0) ? 1 : 0;
