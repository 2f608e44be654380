// Peak memory of `stepchain append --jsonl` (issue 34): a JSONL file of N steps (about 90 bytes each) into a
// fresh journal, the CLI measured by /usr/bin/time -v (maximum resident set size), its output to /dev/null.
// Usage: npm run build && node bench/bulk-append.mjs [--steps=1000000] [--cli=dist/cli/main.js] [--limit-mb=150]
// Prints steps, input size, peak RSS, wall time and steps/s; exits 1 if the peak is over the limit.
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const steps = Number(arg('steps', '1000000'));
const cli = resolve(arg('cli', 'dist/cli/main.js'));
const limitMb = Number(arg('limit-mb', '150'));

const dir = mkdtempSync(join(tmpdir(), 'stepchain-bulk-'));
try {
  const input = join(dir, 'steps.jsonl');
  const out = createWriteStream(input);
  for (let i = 0; i < steps; i++) {
    const line = `{"input":{"i":${i},"text":"step ${i} of a bulk import"},"tool_call":{"name":"t"},"result":"ok"}\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  execFileSync(process.execPath, [cli, 'init', join(dir, 'j')], { stdio: 'ignore' });
  const started = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-v', process.execPath, cli, 'append', join(dir, 'j'), '--jsonl', '--file', input], { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN);
  const mb = kb / 1024;
  console.log(JSON.stringify({ cli, steps, input_mb: +(statSync(input).size / 2 ** 20).toFixed(1), exit: r.status, peak_rss_mb: +mb.toFixed(1), seconds: +seconds.toFixed(1), steps_per_s: Math.round(steps / seconds), limit_mb: limitMb }));
  if (r.status !== 0) console.error(r.stderr.split('\n').slice(0, 5).join('\n'));
  process.exitCode = r.status === 0 && mb <= limitMb ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
