// The command line as an agent in another language meets it (issue 45, "CLI for agents"): `stepchain append`
// of one step, `stepchain effect begin` and `stepchain effect end`, each a whole process, against `node -e 0`,
// on a run journal of 10 steps and of 10 000 steps (target: ≤ 1.5× `node -e 0`, and no growth with the
// journal). Durability is the CLI's only one: the file store's default, fsync 'always' (the library's
// 'batch' and 'none' are not reachable from the command line). Paired runs, A B A B …, each process's wall
// time from outside and its CPU time (user + system, every thread) as it reports at exit
// (bench/workers/cpu-exit.cjs, preloaded with --require: an ES module preload would load Node's ES module
// loader into every process); ratios per pair, medians. The commands run as `stepchain` does once installed:
// package.json's bin (dist/cli/bin.cjs); `append` through the ES module entry, dist/cli/main.js (how it
// started before the CommonJS bin), is timed in the same run, for before and after.
//
//   npm run build && node bench/cli-startup.mjs [--reps=N] [--steps=10,10000] [--write]
//
// --write puts the table into bench/RESULTS.md between its markers (cli-startup:begin/end).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const CLI = join(here, '../dist/cli/main.js');
/** What `stepchain` runs once installed: package.json's bin (dist/cli/bin.cjs, a CommonJS entry). */
const BIN = join(here, '..', JSON.parse(readFileSync(join(here, '../package.json'), 'utf8')).bin.stepchain);
const CPU_EXIT = join(here, 'workers/cpu-exit.cjs');
const arg = (name, fallback) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const REPS = Number(arg('reps', '11'));
const SIZES = arg('steps', '10,10000').split(',').map(Number);
const WRITE = process.argv.includes('--write');

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** One whole process: wall ms from here, CPU ms as it reports at exit. */
function timed(args, input) {
  const t = performance.now();
  const r = spawnSync(process.execPath, ['--require', CPU_EXIT, ...args], { encoding: 'utf8', input });
  const ms = performance.now() - t;
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return { ms, cpu: Number(/cpu-ms ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN), out: r.stdout };
}

function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`stepchain ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** A run journal of `steps` steps (its run.started record and plain steps of about 250 bytes). */
function runJournal(root, steps) {
  const path = join(root, `run-${steps}`);
  cli('init', path, '--run');
  const lines = Array.from({ length: steps - 1 }, (_, i) =>
    JSON.stringify({
      input: { q: `question ${i}` },
      model: 'm',
      prompt: null,
      tool_call: null,
      result: { i, text: 'lorem ipsum dolor sit amet '.repeat(4) },
    }),
  );
  const file = join(root, `steps-${steps}.jsonl`);
  writeFileSync(file, lines.join('\n') + '\n');
  if (steps > 1) cli('append', path, '--jsonl', '--file', file);
  return path;
}

const STEP = JSON.stringify({
  input: { q: 'one more' },
  model: 'm',
  prompt: null,
  tool_call: null,
  result: { ok: true },
});

/** Paired: `node -e 0`, then the command made by `make(i)`; ratios command ÷ node per pair. */
function paired(make) {
  timed(['-e', '0']);
  timed(...make(-1));
  const wall = [];
  const cpu = [];
  const ms = [];
  const cpuMs = [];
  const base = [];
  for (let i = 0; i < REPS; i++) {
    const a = timed(['-e', '0']);
    const b = timed(...make(i));
    wall.push(b.ms / a.ms);
    cpu.push(b.cpu / a.cpu);
    ms.push(b.ms);
    cpuMs.push(b.cpu);
    base.push(a.cpu);
  }
  return {
    wall: median(wall),
    wallMin: Math.min(...wall),
    wallMax: Math.max(...wall),
    cpu: median(cpu),
    cpuMin: Math.min(...cpu),
    cpuMax: Math.max(...cpu),
    ms: median(ms),
    cpuMs: median(cpuMs),
    baseCpu: median(base),
  };
}

const root = mkdtempSync(join(tmpdir(), 'stepchain-cli-startup-'));
const rows = [];
const load0 = loadavg();
try {
  for (const steps of SIZES) {
    const path = runJournal(root, steps);
    const stepFile = join(root, 'one.json');
    writeFileSync(stepFile, STEP);
    let n = 0;
    const commands = [
      ['`append` of one step', () => [[BIN, 'append', path, '--file', stepFile]]],
      [
        '`append` of one step, through dist/cli/main.js (an ES module entry)',
        () => [[CLI, 'append', path, '--file', stepFile]],
      ],
      // Distinct arguments each time: the same tool and arguments as a pending effect are refused.
      [
        '`effect begin`',
        () => [
          [
            BIN,
            'effect',
            'begin',
            path,
            '--tool',
            'send_email',
            '--args',
            JSON.stringify({ to: 'a@b.example', n: n++ }),
          ],
        ],
      ],
    ];
    // `effect end` needs an effect begun: one per run, begun (untimed) before the pairs.
    const ids = Array.from({ length: REPS + 1 }, (_, i) =>
      cli(
        'effect',
        'begin',
        path,
        '--tool',
        'fetch',
        '--args',
        JSON.stringify({ url: `https://x.example/${i}` }),
      ).trim(),
    );
    commands.push(['`effect end`', (i) => [[BIN, 'effect', 'end', path, ids[i + 1], '--result', '{"status":200}']]]);
    for (const [name, make] of commands) {
      const p = paired(make);
      rows.push({ steps, name, ...p });
      console.error(
        `${steps} steps  ${name}: ${p.ms.toFixed(0)} ms wall, ${p.cpuMs.toFixed(0)} ms CPU; ×node -e 0: wall ${p.wall.toFixed(2)} (${p.wallMin.toFixed(2)}–${p.wallMax.toFixed(2)}), CPU ${p.cpu.toFixed(2)} (${p.cpuMin.toFixed(2)}–${p.cpuMax.toFixed(2)})`,
      );
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}

const load1 = loadavg();
const f2 = (x) => x.toFixed(2);
const lines = [
  '<!-- cli-startup:begin -->',
  '## CLI for agents: `append`, `effect begin`, `effect end` as whole processes (issue 45)',
  '',
  `\`node bench/cli-startup.mjs\`, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), load average ${load0.map(f2).join(' / ')} at the start, ${load1.map(f2).join(' / ')} at the end (a machine shared with other work: read the paired ratios). ${REPS} pairs per row, each a \`node -e 0\` and the command, in turn; medians, min–max of the per-pair ratios. Durability: fsync 'always', the only one the command line uses (the library's 'batch' and 'none' are not reachable from it). The journal's size is at the start; each \`append\` and \`effect\` run adds a step. Target: ≤ 1.5× \`node -e 0\`, flat in the journal's size.`,
  '',
  '| run journal | command | wall | CPU | × `node -e 0`, wall | × `node -e 0`, CPU |',
  '|---:|---|---:|---:|---:|---:|',
  ...rows.map(
    (r) =>
      `| ${r.steps.toLocaleString('en')} steps | ${r.name} | ${r.ms.toFixed(0)} ms | ${r.cpuMs.toFixed(0)} ms | **${f2(r.wall)}×** (${f2(r.wallMin)}–${f2(r.wallMax)}) | **${f2(r.cpu)}×** (${f2(r.cpuMin)}–${f2(r.cpuMax)}) |`,
  ),
  '',
  `\`node -e 0\`: ${median(rows.map((r) => r.baseCpu)).toFixed(0)} ms of CPU (median over the rows).`,
  '<!-- cli-startup:end -->',
];
const table = lines.join('\n');
console.log(table);
if (WRITE) {
  const file = join(here, 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const begin = text.indexOf('<!-- cli-startup:begin -->');
  const end = text.indexOf('<!-- cli-startup:end -->');
  writeFileSync(
    file,
    begin >= 0 && end > begin
      ? text.slice(0, begin) + table + text.slice(end + '<!-- cli-startup:end -->'.length)
      : `${text.trimEnd()}\n\n${table}\n`,
  );
}
