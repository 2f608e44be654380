// Peak memory of `stepchain append --jsonl` (issue 34): a JSONL file of N steps (about 90 bytes each) into a
// fresh journal, the CLI measured by /usr/bin/time -v (maximum resident set size), its output to /dev/null.
// Usage: npm run build && node bench/bulk-append.mjs [--steps=1000000] [--cli=dist/cli/main.js] [--limit-mb=150] [--node-flags=--a,--b]
//          [--store=dir|sqlite|postgres]   (postgres: a throwaway embedded server, test/setup/pg-runner.mjs, durable)
// Prints steps, input size, peak RSS, wall and CPU time and steps/s; exits 1 if the peak is over the limit.
import { execFileSync, fork, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const steps = Number(arg('steps', '1000000'));
const cli = resolve(arg('cli', 'dist/cli/main.js'));
const limitMb = Number(arg('limit-mb', '150'));
// Flags for the measured node (comma-separated), to try V8's settings without changing the CLI.
const nodeFlags = (arg('node-flags', '') ?? '').split(',').filter((f) => f !== '');

const storeKind = arg('store', 'dir');

/** The journal's location in the store measured, and how to let that store go. */
async function journalLocation(dir) {
  if (storeKind === 'dir') return { at: join(dir, 'j'), env: {}, done: async () => {} };
  if (storeKind === 'sqlite') return { at: `sqlite:${join(dir, 'bulk.db')}?journal=j`, env: {}, done: async () => {} };
  if (storeKind !== 'postgres') throw new Error(`--store=${storeKind}: dir, sqlite or postgres`);
  const runner = fork(new URL('../test/setup/pg-runner.mjs', import.meta.url), ['--durable'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise((r) => runner.once('exit', r));
  const m = await new Promise((r) => runner.once('message', r));
  if (m.url === undefined) throw new Error(m.error);
  const u = new URL(m.url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  u.searchParams.set('journal', 'j');
  return {
    at: u.toString(),
    env: { PGPASSWORD: password },
    done: async () => {
      runner.disconnect();
      await exited;
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'stepchain-bulk-'));
const store = await journalLocation(dir);
const env = { ...process.env, ...store.env };
try {
  const input = join(dir, 'steps.jsonl');
  const out = createWriteStream(input);
  for (let i = 0; i < steps; i++) {
    const line = `{"input":{"i":${i},"text":"step ${i} of a bulk import"},"tool_call":{"name":"t"},"result":"ok"}\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r) => out.end(r));
  execFileSync(process.execPath, [cli, 'init', store.at], { stdio: 'ignore', env });
  const started = process.hrtime.bigint();
  const r = spawnSync(
    '/usr/bin/time',
    ['-v', process.execPath, ...nodeFlags, cli, 'append', store.at, '--jsonl', '--file', input],
    { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8', maxBuffer: 1 << 26, env },
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const kb = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1] ?? NaN);
  const mb = kb / 1024;
  const cpu = ['User', 'System'].reduce(
    (t, k) => t + Number(new RegExp(`${k} time \\(seconds\\): ([\\d.]+)`).exec(r.stderr)?.[1] ?? NaN),
    0,
  );
  console.log(
    JSON.stringify({
      cli,
      store: storeKind,
      ...(nodeFlags.length > 0 ? { node_flags: nodeFlags } : {}),
      steps,
      input_mb: +(statSync(input).size / 2 ** 20).toFixed(1),
      exit: r.status,
      peak_rss_mb: +mb.toFixed(1),
      seconds: +seconds.toFixed(1),
      cpu_s: +cpu.toFixed(1),
      steps_per_s: Math.round(steps / seconds),
      limit_mb: limitMb,
    }),
  );
  if (r.status !== 0) console.error(r.stderr.split('\n').slice(0, 5).join('\n'));
  process.exitCode = r.status === 0 && mb <= limitMb ? 0 : 1;
} finally {
  await store.done();
  rmSync(dir, { recursive: true, force: true });
}
