/**
 * Soak: two erases of nested units (`/result/customer/email` and `/result/customer`) started together as
 * real `stepchain erase` processes, many times, on a file store journal, the file store across the store
 * (--match-path) and a SQLite store (spec/ERASURE.md §4 step 4, §6.3). After every race: the journal
 * verifies, no erasure is pending or stuck, and each erase either happened or was refused with
 * ERASURE_TARGET_INVALID having written nothing. Not part of npm test (each round starts two processes);
 * test/erase/erase-race.test.ts holds the deterministic races, Postgres included.
 *
 *   npm run build && node scripts/soak-erase-race.mjs [--rounds N] [--gated]
 *
 * Ungated, the processes race as they start (CLI start-up jitter decides how often both check before either
 * appends); --gated holds both at the test gate after their check and lets them go within 0–4 ms of each
 * other, so every round is a race of two checked erases.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { FileStore } from '../dist/store/file/store.js';
import { SqliteStore } from '../dist/store/sqlite/index.js';
import { resumeErasures } from '../dist/erase.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '20' }, gated: { type: 'boolean' } } });
const rounds = Number(values.rounds);
const CLI = new URL('../dist/cli/main.js', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'stepchain-soak-erase-race-'));
const CUSTOMER = { email: 'ivan.race@example.org', plan: 'pro' };

function erase(args, gate) {
  const env = { ...process.env, NO_COLOR: '1' };
  if (gate) env.STEPCHAIN_TEST_ERASE_GATE = gate;
  const r = { exited: false };
  r.done = new Promise((resolve) =>
    execFile(
      process.execPath,
      [CLI, 'erase', ...args, '--reason', 'soak', '--json'],
      { env },
      (error, stdout, stderr) => {
        r.exited = true;
        resolve({ code: error ? error.code : 0, out: stdout + stderr });
      },
    ),
  );
  return r;
}

const only = process.env.SOAK_ONLY;
const kinds = [
  { name: 'file', store: () => new FileStore(mkdtempSync(join(root, 'f-'))), at: (s, id) => join(s.root, id) },
  {
    name: 'file --match-path',
    store: () => new FileStore(mkdtempSync(join(root, 'm-'))),
    at: (s, id) => join(s.root, id),
    outer: (s) => [s.root, '--match-path', '/result/customer', '--value', JSON.stringify(CUSTOMER)],
  },
  {
    name: 'sqlite',
    store: () => new SqliteStore(join(mkdtempSync(join(root, 's-')), 'store.db')),
    at: (s, id) => `sqlite:${s.file}?journal=${id}`,
  },
];

let failures = 0;
for (const kind of kinds.filter((k) => only === undefined || k.name === only)) {
  const tally = { inner: 0, outer: 0, bad: 0 };
  for (let n = 0; n < rounds; n++) {
    const store = kind.store();
    const id = 'r';
    const j = await store.create(id, { format: 'stepchain/v3' });
    await j.append({ input: { q: 'who' }, result: { customer: CUSTOMER } });
    await j.close();
    const at = kind.at(store, id);
    const gates = values.gated ? mkdtempSync(join(root, 'g-')) : null;
    const inner = erase([at, '--seq', '0', '--path', '/result/customer/email'], gates && join(gates, 'inner'));
    const outer = erase(
      kind.outer ? kind.outer(store) : [at, '--seq', '0', '--path', '/result/customer'],
      gates && join(gates, 'outer'),
    );
    if (gates) {
      const ready = async (g, r) => {
        while (!existsSync(`${g}.ready`) && !r.exited) await delay(2);
      };
      await Promise.all([ready(join(gates, 'inner'), inner), ready(join(gates, 'outer'), outer)]);
      const [a, b] = Math.random() < 0.5 ? ['inner', 'outer'] : ['outer', 'inner'];
      writeFileSync(join(gates, a), '');
      await delay(Math.floor(Math.random() * 5));
      writeFileSync(join(gates, b), '');
    }
    const [i, o] = [await inner.done, await outer.done];
    const report = await store.verify(id);
    const stuck = [];
    await resumeErasures(store, id, stuck);
    const erased = report.warnings.filter((w) => w.code === 'VALUE_ERASED').map((w) => w.location.path);
    const pending = report.warnings.some((w) => w.code === 'ERASURE_PENDING');
    const lost = erased[0] === '/result/customer/email' ? o : i;
    // Across the store, an object no longer equal to the value (its member erased first) is simply not found.
    const unmatched =
      kind.outer !== undefined && lost === o && o.code === 0 && JSON.parse(o.out).erased.every((e) => e.resumed);
    const ok =
      report.ok &&
      !pending &&
      stuck.length === 0 &&
      erased.length === 1 &&
      report.head_seq === 1 &&
      (unmatched || (lost.code !== 0 && lost.out.includes('ERASURE_TARGET_INVALID')));
    if (!ok) {
      tally.bad++;
      failures++;
      console.error(
        `${kind.name} round ${n}: ${JSON.stringify({ problems: report.problems.map((p) => p.code), erased, pending, stuck: stuck.map((s) => s.code), head: report.head_seq, inner: i, outer: o })}`,
      );
    } else tally[erased[0] === '/result/customer/email' ? 'inner' : 'outer']++;
    await store.close?.();
  }
  console.log(
    `${kind.name}: ${rounds} races${values.gated ? ' (gated)' : ''}: the member's erase won ${tally.inner}, the object's ${tally.outer}, wrong ${tally.bad}`,
  );
}
rmSync(root, { recursive: true, force: true });
process.exit(failures === 0 ? 0 : 1);
