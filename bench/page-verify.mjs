// The verification page against the command line on one receipt (issue 45, "the page at CLI speed"): a
// default-format receipt of N steps (default 100 000) verified by dist/page/verify.html in real Chromium
// (@sparticuz/chromium driven by playwright-core, scripts/chromium.mjs) and by `stepchain verify` as a whole
// process, in turn, R times; the page's time is from pressing Verify to its verdict, the CLI's the whole
// process. Target: the page ≤ 1.3× the CLI's wall time, same machine, same run. Both verdicts must be ok.
// Each run's CPU time is taken too (the CLI's from bench/workers/cpu-exit.mjs, the page's from /proc for all of
// Chromium's processes): on a loaded machine a process with more threads gets more of the cores, so there
// the wall-time ratio says more about the scheduler than about either verifier.
//
// It also times the page's own engine (src/page/engine.ts, bundled as the page bundles it) in Node on one
// thread, with node:crypto's SHA-256 and with @noble/hashes' (what a browser gets), in CPU time: what the
// page's per-record work costs apart from the browser.
//
// --page=path measures another build of the page (say, one built from an earlier commit) against the same CLI.
// --keep=path writes the receipt it makes there and leaves it, for later runs with --receipt=path.
// Without --receipt the receipt is made here, in a scratch folder removed at the end: N bench steps
// (bench/lib/steps.mjs) appended to a FileStore journal in the default format, exported with exportReceipt.
//
//   npm run build && node bench/page-verify.mjs [--steps=100000] [--reps=3] [--receipt=path | --keep=path] [--page=path]
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import { chromium } from 'playwright-core';
import { ensureChromium, launchOptions } from '../scripts/chromium.mjs';
import { FileStore, exportReceipt } from '../dist/index.js';
import { makeSteps } from './lib/steps.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const CLI = join(here, '../dist/cli/main.js');
const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const PAGE = pathToFileURL(arg('page', join(here, '../dist/page/verify.html'))).href;
const STEPS = Number(arg('steps', '100000'));
const REPS = Number(arg('reps', '3'));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * CPU seconds (user + system) of every live process below this one, from /proc (Linux): Chromium's browser,
 * GPU and renderer processes, so the page's thread and its workers. Load on the machine moves wall time far
 * more than this; a process that ended is not counted (Chromium's stay up for the whole run).
 */
function chromiumCpu() {
  const children = new Map();
  const cpu = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // it ended meanwhile
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
    const ppid = Number(fields[1]);
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(Number(name));
    cpu.set(Number(name), (Number(fields[11]) + Number(fields[12])) / 100); // utime + stime, clock ticks
  }
  let sum = 0;
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length > 0) {
    const pid = todo.pop();
    sum += cpu.get(pid) ?? 0;
    todo.push(...(children.get(pid) ?? []));
  }
  return sum * 1000;
}

const scratch = mkdtempSync(join(tmpdir(), 'stepchain-page-bench-'));
const load0 = loadavg();
try {
  let receipt = arg('receipt', null);
  if (receipt === null) {
    const store = new FileStore(join(scratch, 'j'), { fsync: 'none' });
    const j = await store.create('page-bench');
    for (let i = 0; i < STEPS; i += 10_000) await j.appendMany(makeSteps(Math.min(10_000, STEPS - i), {}, i));
    receipt = arg('keep', join(scratch, 'receipt.tar.gz'));
    await exportReceipt(j, { out: receipt });
    await j.close();
  }
  if (!existsSync(receipt)) throw new Error(`no receipt at ${receipt}`);

  const browser = await chromium.launch(launchOptions(await ensureChromium()));
  const page = await browser.newPage();
  await page.goto(PAGE);
  await page.waitForFunction(() => document.body.dataset.state === 'idle', null, { timeout: 60_000 });
  const pageCpuMs = [];
  const cliCpuMs = [];
  let lineHash = '';
  let entryHash = '';
  const pageOnce = async () => {
    await page.locator('#form').evaluate((f) => f.reset());
    await page.setInputFiles('#receipt', receipt);
    const cpu0 = chromiumCpu();
    const t = performance.now();
    await page.click('#verify');
    await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), null, {
      timeout: 600_000,
      polling: 50,
    });
    const ms = performance.now() - t;
    pageCpuMs.push(chromiumCpu() - cpu0);
    const ok = await page.evaluate(() => document.getElementById('verdict')?.dataset.ok === 'true');
    if (!ok) throw new Error('the page did not verify the receipt');
    lineHash = await page.evaluate(() => document.body.dataset.lineHash ?? '(not shown: a page before issue 45)');
    entryHash = await page.evaluate(
      () => document.body.dataset.entryHash ?? '(not shown: a page before the second worker; WebCrypto)',
    );
    return ms;
  };
  const cliOnce = () => {
    const t = performance.now();
    // cpu-exit.mjs writes the process's CPU time (all threads) at exit: a few lines of JavaScript, nothing timed.
    const r = spawnSync(process.execPath, ['--import', join(here, 'workers/cpu-exit.mjs'), CLI, 'verify', receipt], {
      encoding: 'utf8',
    });
    const ms = performance.now() - t;
    if (r.status !== 0) throw new Error(`stepchain verify exited ${r.status}: ${r.stderr}`);
    cliCpuMs.push(Number(/cpu-ms ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN));
    return ms;
  };
  const pageMs = [];
  const cliMs = [];
  const ratios = [];
  for (let r = 0; r < REPS; r++) {
    const c = cliOnce();
    const p = await pageOnce();
    cliMs.push(c);
    pageMs.push(p);
    ratios.push(p / c);
    console.error(
      `run ${r + 1}: page ${(p / 1000).toFixed(2)} s, CLI ${(c / 1000).toFixed(2)} s, ${(p / c).toFixed(2)}×`,
    );
  }
  const threads = await page.evaluate(() => navigator.hardwareConcurrency);
  await browser.close();

  // The page's engine in Node, one thread: the same code with each SHA-256 backend.
  const engine = join(scratch, 'engine.mjs');
  await esbuild.build({
    absWorkingDir: join(here, '..'),
    entryPoints: ['src/page/engine.ts'],
    outfile: engine,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    mainFields: ['module', 'main'],
    logLevel: 'warning',
  });
  const engineCpu = (hash) => {
    const code = `${hash === 'noble' ? 'delete process.getBuiltinModule;' : ''}
      const { openAsBlob } = await import('node:fs');
      const { Session } = await import(${JSON.stringify(pathToFileURL(engine).href)});
      const c = process.cpuUsage();
      const r = await new Session().verify({ receipt: await openAsBlob(${JSON.stringify(receipt)}), name: 'r' }, () => {});
      const u = process.cpuUsage(c);
      console.log(JSON.stringify({ ok: r.report?.ok ?? r.ok, cpu: (u.user + u.system) / 1000, lineHash: r.lineHash ?? '?' }));`;
    const out = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout.trim());
  };
  const native = engineCpu('native');
  const noble = engineCpu('noble');

  const f2 = (x) => x.toFixed(2);
  console.log(
    [
      `## The page against the CLI: one ${STEPS.toLocaleString('en')}-step receipt (issue 45)`,
      '',
      `\`node bench/page-verify.mjs\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), Chromium's hardwareConcurrency ${threads}, load average ${load0.map(f2).join(' / ')} at the start, ${loadavg().map(f2).join(' / ')} at the end. ${REPS} runs, CLI then page in turn; medians.`,
      '',
      '| figure | median | runs |',
      '|---|---:|---|',
      `| \`stepchain verify\`, whole process, wall | ${(median(cliMs) / 1000).toFixed(2)} s | ${cliMs.map((x) => (x / 1000).toFixed(2)).join(', ')} |`,
      `| the page in Chromium, Verify to verdict, wall | ${(median(pageMs) / 1000).toFixed(2)} s | ${pageMs.map((x) => (x / 1000).toFixed(2)).join(', ')} |`,
      `| the page in Chromium, Verify to verdict, CPU of all Chromium's processes | ${(median(pageCpuMs) / 1000).toFixed(2)} s | ${pageCpuMs.map((x) => (x / 1000).toFixed(2)).join(', ')} |`,
      `| the page's line hashes | ${lineHash} | |`,
      `| the page's chain-entry digests | ${entryHash} | |`,
      `| **page ÷ CLI**, per pair (target ≤ 1.3×) | **${f2(median(ratios))}×** | ${ratios.map(f2).join(', ')} |`,
      `| \`stepchain verify\`, whole process, CPU | ${(median(cliCpuMs) / 1000).toFixed(2)} s | ${cliCpuMs.map((x) => (x / 1000).toFixed(2)).join(', ')} |`,
      `| **page ÷ CLI in CPU**, medians | **${f2(median(pageCpuMs) / median(cliCpuMs))}×** | |`,
      `| the page's engine in Node, one thread, node:crypto SHA-256, CPU | ${(native.cpu / 1000).toFixed(2)} s | 1 (ok ${native.ok}) |`,
      `| the page's engine in Node, one thread, @noble/hashes SHA-256 (a browser's), CPU | ${(noble.cpu / 1000).toFixed(2)} s | 1 (ok ${noble.ok}, line hashes ${noble.lineHash}); ${f2(noble.cpu / native.cpu)}× the same with node:crypto |`,
    ].join('\n'),
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
