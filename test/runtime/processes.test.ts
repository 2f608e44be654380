/**
 * Two processes writing outcomes into one run at once (real child processes on one file store, dist/,
 * built by `npm test`). A Run folds its own records without reading them back and appends an outcome only
 * while the chain ends where it last read it (FILE-STORE.md §17, RUNS.md §1), so each effect gets exactly one
 * outcome whichever process is first, the other is refused with EFFECT_ALREADY_ENDED, and each process
 * sees the other's records.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { FileStore, startRun, type StepRecord } from '../../src/index.js';
import { runState } from '../../src/runtime/index.js';
import { tempDir } from '../helpers/tmp.js';

const WRITER = fileURLToPath(new URL('./fixtures/outcomes.mjs', import.meta.url));

type View = Array<{ id: string; tool: string; status: string; result: unknown }>;

/** A writer process: `ready` once it has resumed the run; `go()` starts it; `done()` resolves with what it ended and was refused; `look()` then asks for its view. */
function writer(args: string[]) {
  const proc = spawn(process.execPath, [WRITER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let partial = '';
  let err = '';
  proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  proc.stdout.setEncoding('utf8').on('data', (c: string) => {
    const parts = (partial + c).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => proc.on('close', resolve));
  const line = (n: number) =>
    new Promise<string>((resolve, reject) => {
      const check = () => (lines.length > n ? resolve(lines[n]!) : waiters.push(check));
      void exited.then((code) => reject(new Error(`writer ${args[2]} exited ${code}: ${err}`)));
      check();
    });
  return {
    ready: line(0),
    go: () => proc.stdin.write('go\n'),
    done: () => line(1).then((l) => JSON.parse(l) as { ended: string[]; refused: string[]; moved: number }),
    look: async () => {
      proc.stdin.write('look\n');
      const view = JSON.parse(await line(2)) as View;
      expect(await exited).toBe(0);
      return view;
    },
  };
}

test("two processes ending the same effects at once: one outcome each, the other refused, and each sees the other's records", async () => {
  const root = tempDir();
  const store = new FileStore(root, { fsync: 'none' });
  const run = await startRun(store, { runId: 'shared' });
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) ids.push((await run.beginTool({ name: 'charge', args: { i }, id: `eff-${i}` })).id);
  await run.close();

  // They walk the list from either end, so each claims some and they contend where they meet.
  const wa = writer([root, 'shared', 'a', ids.join(',')]);
  const wb = writer([root, 'shared', 'b', [...ids].reverse().join(',')]);
  await Promise.all([wa.ready, wb.ready]);
  wa.go();
  wb.go();
  const [a, b] = await Promise.all([wa.done(), wb.done()]);

  // Every effect was ended by exactly one of them; the other was refused.
  expect([...a.ended, ...b.ended].sort()).toEqual([...ids].sort());
  expect(a.ended.filter((id) => b.ended.includes(id))).toEqual([]);
  expect([...a.refused].sort()).toEqual([...b.ended].sort());
  expect([...b.refused].sort()).toEqual([...a.ended].sort());

  // The journal holds one outcome per effect, with the result of the process that claimed it, and verifies.
  const journal = await store.open('shared', { readOnly: true });
  const records: StepRecord[] = [];
  for await (const r of journal.read()) records.push(r);
  const state = runState(records);
  expect(state.anomalies).toEqual([]);
  const outcomes = records.filter((r) => r.v !== 1 && r.kind === 'tool.completed' && ids.includes(r.ref ?? ''));
  expect(outcomes).toHaveLength(ids.length);
  for (const r of outcomes) expect(r.result).toBe(a.ended.includes((r as { ref: string }).ref) ? 'a' : 'b');
  expect((await journal.verify()).ok).toBe(true);

  // Each process's last view is the journal's: the other's outcomes and its own effects included.
  const truth = [...state.effects.values()]
    .sort((x, y) => x.seq - y.seq)
    .map((e) => ({ id: e.id, tool: e.tool, status: e.status, result: e.result }));
  expect(truth.filter((e) => e.tool === 'own-a')).toHaveLength(ids.length);
  expect(truth.filter((e) => e.tool === 'own-b')).toHaveLength(ids.length);
  expect(await wa.look()).toEqual(truth);
  expect(await wb.look()).toEqual(truth);
  await journal.close();
}, 60_000);
