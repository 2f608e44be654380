// The Python package beside the TypeScript library on the same machine, in the same run (issue 42): writer
// appends/s (each append awaited before the next, as an agent appends; fsync 'none' and 'always', formats
// stepchain/v1, v2 and v3) and verifier steps/s over journal directories the TypeScript writer made (stepchain/v1,
// and stepchain/v3 in its fast and deep tiers). With
// --bernstein=PYTHON, also the peer bernstein's (Python) journal, measured the same way by bench/python-peer.py.
// Not part of `npm test`.
//
//   npm run build && node scripts/python-env.mjs && node bench/python.mjs [--n=2000] [--verify-steps=20000]
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../dist/index.js';

const arg = (name, dflt) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? dflt;
const N = Number(arg('n', 2000));
const VERIFY_STEPS = Number(arg('verify-steps', 20_000));
const here = fileURLToPath(new URL('.', import.meta.url));
const python = join(here, '..', '.venv', 'bin', 'python');
const step = (i) => ({
  input: { i, q: 'what is the weather in Oslo' },
  model: 'gpt-4o',
  prompt: 'You are a helpful agent.',
  tool_call: { name: 'weather', arguments: { city: 'Oslo' } },
  result: { temp: 4, unit: 'C' },
});

async function tsAppends(n, fsync, format) {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-ts-'));
  const store = new FileStore(root, { fsync });
  const j = await store.create('j', format === 'stepchain/v1' ? {} : { format });
  const t = performance.now();
  for (let i = 0; i < n; i++) await j.append(step(i));
  const s = (performance.now() - t) / 1000;
  await j.close();
  rmSync(root, { recursive: true, force: true });
  return n / s;
}

function py(...args) {
  return JSON.parse(
    execFileSync(python, [join(here, 'python.py'), ...args], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop(),
  );
}

const rows = [];
for (const [fsync, n] of [
  ['none', N],
  ['always', Math.max(50, Math.floor(N / 10))],
]) {
  for (const format of ['stepchain/v1', 'stepchain/v2', 'stepchain/v3']) {
    const ts = await tsAppends(n, fsync, format);
    const p = py('append', String(n), fsync, format).appends_per_s;
    rows.push(
      `| appends/s, ${format}, fsync ${fsync} (${n} appends) | ${ts.toFixed(0)} | ${p.toFixed(0)} | ${(p / ts).toFixed(2)} |`,
    );
  }
}
// One journal per format the TypeScript writer made, verified by both (v3: the fast tier, then the deep one).
for (const [format, deep] of [
  ['stepchain/v1', false],
  ['stepchain/v3', false],
  ['stepchain/v3', true],
]) {
  const root = mkdtempSync(join(tmpdir(), 'stepchain-bench-verify-'));
  const store = new FileStore(root, { fsync: 'none' });
  const j = await store.create('j', format === 'stepchain/v1' ? {} : { format });
  for (let i = 0; i < VERIFY_STEPS; i += 1000)
    await j.appendMany(Array.from({ length: Math.min(1000, VERIFY_STEPS - i) }, (_, k) => step(i + k)));
  await j.close();
  const t = performance.now();
  const report = await (await store.open('j', { readOnly: true })).verify(deep ? { deep } : {});
  const tsMs = performance.now() - t;
  if (!report.ok) throw new Error(`the TypeScript ${format} journal does not verify`);
  const pv = py('verify', join(root, 'j'), ...(deep ? ['deep'] : []));
  const tsRate = VERIFY_STEPS / (tsMs / 1000);
  rows.push(
    `| verify steps/s (${VERIFY_STEPS} steps, ${format}${format === 'stepchain/v3' ? (deep ? ', deep tier' : ', fast tier') : ''}, one journal) | ${tsRate.toFixed(0)} | ${pv.steps_per_s.toFixed(0)} | ${(pv.steps_per_s / tsRate).toFixed(2)} |`,
  );
  rmSync(root, { recursive: true, force: true });
}
const peer = arg('bernstein', null);
if (peer !== null) {
  const b = JSON.parse(
    execFileSync(peer, [join(here, 'python-peer.py'), String(VERIFY_STEPS)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop(),
  );
  rows.push(
    `| bernstein 3.23.0 journal (Python): appends/s (no fsync, ${VERIFY_STEPS} appends) / verify steps/s | — | ${b.appends_per_s.toFixed(0)} / ${b.steps_per_s.toFixed(0)} | — |`,
  );
}
console.log('| measure | TypeScript | Python | Python / TypeScript |');
console.log('|---|---|---|---|');
for (const r of rows) console.log(r);
