// `npm run bench:conversation`: the read commands and publishing on a long conversation (outsider I, F6). A chat agent's prompt
// repeats the whole conversation so far; a stepchain/v3 journal stores each prompt once, as a list part over the
// previous one (spec/PARTS.md §4.2), so the journal grows with what is new. What a reader shows is each prompt in
// full, so `log` and `diff` build n values of up to n messages: their work grows with n² by nature, and what this
// bench watches is its constant. Each row doubles the conversation: a command whose time grows with the journal
// takes about 2× the row before, one that rebuilds each prompt from scratch 4×.
//
// For each size it builds a v3 file journal (FileStore, fsync none) of n model calls, the i-th prompt holding 40 +
// i messages, then times whole `stepchain` processes on it, median of --reps (default 3), peak RSS beside:
// `verify` (the limit the others stand on: every command here verifies first), `log`, `diff` of the journal with
// itself, `export` to a receipt and `verify` of that receipt, `publish` with an e-mail detector (one message in 50
// holds an address) and `verify` of that publication. With `--baseline DIR` (DIR an earlier build's dist/)
// each command also runs on that build, in adjacent runs, and its ratio is printed.
//
//   node bench/long-conversation.mjs [--sizes 1000,2000,4000] [--reps 3] [--baseline DIR]
// Prints a Markdown section for bench/RESULTS.md.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileStore } from '../dist/store/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));
const opt = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
};
const SIZES = opt('sizes', '1000,2000,4000').split(',').map(Number);
const REPS = Number(opt('reps', '3'));
const BASELINE = opt('baseline', null);
const RSS = join(here, 'workers', 'rss-exit.mjs');
const builds = [['this build', join(here, '..', 'dist', 'cli', 'main.js')]];
if (BASELINE !== null) builds.push([`baseline (${BASELINE})`, join(BASELINE, 'cli', 'main.js')]);

async function build(dir, n) {
  const store = new FileStore(dir, { fsync: 'none' });
  const journal = await store.create('j', { format: 'stepchain/v3', createdAt: '2026-01-01T00:00:00.000Z' });
  const messages = [];
  for (let i = 0; i < 40; i++) messages.push({ role: 'user', content: `an earlier message, number ${i}` });
  let batch = [];
  for (let i = 0; i < n; i++) {
    // One message in 50 holds an e-mail address: what the publish row's policy withholds.
    const mail = i % 50 === 0 ? ` write to person${i}@example.com` : '';
    messages.push({ role: i % 2 ? 'assistant' : 'user', content: `turn ${i}: ${'words '.repeat(8)}${mail}` });
    batch.push({
      prompt: [...messages],
      model: 'bench-model',
      result: { text: `answer ${i}` },
      ts: '2026-01-01T00:00:00.000Z',
    });
    if (batch.length === 200) {
      await journal.appendMany(batch);
      batch = [];
    }
  }
  if (batch.length > 0) await journal.appendMany(batch);
  await journal.close();
  return join(dir, 'j');
}

/** One whole process: wall ms and peak RSS (MB); throws unless it exits as `expect` says. */
function timed(cli, args, expect = 0) {
  const t = process.hrtime.bigint();
  const r = spawnSync(process.execPath, ['--import', RSS, cli, ...args], { maxBuffer: 1 << 30, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  if (r.status !== expect) throw new Error(`stepchain ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-400)}`);
  return { ms, rss: Number(/peak-rss-mb ([\d.]+)/.exec(r.stderr)?.[1] ?? NaN) };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const load0 = loadavg()[0];
const rows = [];
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), 'stepchain-conversation-'));
  try {
    const j = await build(dir, n);
    const receipt = join(dir, 'r.tar.gz');
    timed(builds[0][1], ['export', j, '-o', receipt]); // the receipt the last row verifies
    const policy = join(dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ rules: [{ id: 'mail', detectors: ['email'] }] }));
    const publication = join(dir, 'p.tar');
    timed(builds[0][1], ['publish', j, '--policy', policy, '--opt-in', '-o', publication]);
    const commands = [
      ['verify', ['verify', j]],
      ['log', ['log', j]],
      ['diff (the journal with itself)', ['diff', j, j]],
      ['export', ['export', j, '-o', join(dir, 'again.tar.gz')]],
      ['verify of the receipt', ['verify', receipt]],
      ['publish (e-mail detector)', ['publish', j, '--policy', policy, '--opt-in', '-o', join(dir, 'again.tar')]],
      ['verify of the publication', ['verify', publication]],
    ];
    for (const [name, args] of commands) {
      const per = builds.map(() => ({ ms: [], rss: [] }));
      for (let r = 0; r < REPS; r++)
        for (let b = 0; b < builds.length; b++) {
          const k = (b + r) % builds.length; // adjacent runs, rotating which build goes first
          if (name === 'export') rmSync(join(dir, 'again.tar.gz'), { force: true });
          if (name.startsWith('publish')) rmSync(join(dir, 'again.tar'), { force: true });
          const got = timed(builds[k][1], args);
          per[k].ms.push(got.ms);
          per[k].rss.push(got.rss);
        }
      rows.push({ n, name, ms: per.map((p) => median(p.ms)), rss: per.map((p) => median(p.rss)) });
      process.stderr.write(`${n} ${name}: ${per.map((p) => median(p.ms).toFixed(0)).join(' / ')} ms\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const out = [];
out.push(
  `### Long conversations: the read commands and publishing (\`node bench/long-conversation.mjs${process.argv.slice(2).length ? ' ' + process.argv.slice(2).join(' ') : ''}\`)`,
);
out.push('');
out.push(
  `${cpus().length} cores, Node ${process.version}, load average ${load0.toFixed(1)} at the start and ${loadavg()[0].toFixed(1)} at the end. A stepchain/v3 file journal of n model calls, the i-th prompt 40 + i chat messages (stored once each, as list parts; one message in 50 holds an e-mail address, which \`publish\` withholds with the e-mail detector); whole \`stepchain\` processes, median of ${REPS}; *× the size before*: the time against the row with half the calls (≈ 2 where the work grows with the journal, ≈ 4 where with its square).`,
);
out.push('');
const head = ['n', 'command', 'ms', '× the size before', 'peak RSS MB'];
if (BASELINE !== null) head.push('baseline ms', 'this ÷ baseline');
out.push(`| ${head.join(' | ')} |`);
out.push(`|${head.map((h, i) => (i < 2 ? '---' : '---:')).join('|')}|`);
for (const row of rows) {
  const before = rows.find((r) => r.name === row.name && r.n * 2 === row.n);
  const cells = [
    row.n,
    row.name,
    row.ms[0].toFixed(0),
    before ? `${(row.ms[0] / before.ms[0]).toFixed(2)}×` : '',
    row.rss[0].toFixed(0),
  ];
  if (BASELINE !== null) cells.push(row.ms[1].toFixed(0), `${(row.ms[0] / row.ms[1]).toFixed(2)}×`);
  out.push(`| ${cells.join(' | ')} |`);
}
process.stdout.write(out.join('\n') + '\n');
