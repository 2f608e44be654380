/**
 * The double outcome of issue 34, reproduced without luck. Two processes end the same tool effect: this
 * one through a Run, the other (a real child process) at exact points placed between this Run's read of the
 * journal and its append. Eight times in a row the other process appends just before this Run does, so
 * each of this Run's appends `{ after }` is refused with HEAD_MOVED; then it ends the effect itself, in the
 * same gap. Before the fix, the ninth try went without `after` — decided on a read made before the other
 * outcome landed — and both processes were told they had recorded the one outcome: the journal held two.
 * Now every try goes with `after`, so the second outcome is refused (EFFECT_ALREADY_ENDED), on either store.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { FileStore, startRun, type StepRecord, type Store } from '../../src/index.js';
import { runState } from '../../src/runtime/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';
import { drive, type Driven } from './helpers.js';

const pg = await postgresHarness('outrace', 2);
const children: Driven[] = [];
afterAll(() => {
  for (const c of children) c.proc.kill('SIGKILL');
});

async function records(store: Store, id: string): Promise<StepRecord[]> {
  const j = await store.open(id, { readOnly: true });
  const out: StepRecord[] = [];
  for await (const r of j.read()) out.push(r);
  expect((await j.verify()).ok).toBe(true);
  await j.close();
  return out;
}

describe.each(['file', 'pg'] as const)('an outcome decided on a stale read is never appended (%s store)', (kind) => {
  test("refused eight times in a row by another process's appends, then beaten to the outcome: one outcome, the loser told EFFECT_ALREADY_ENDED", async () => {
    const root = kind === 'file' ? tempDir() : '';
    const store: Store = kind === 'file' ? new FileStore(root, { fsync: 'none' }) : pg.store();
    const run = await startRun(store, { runId: 'race' });
    const target = (await run.beginTool({ name: 'charge', args: { amount: 5 }, id: 'eff-target' })).id;
    const other = drive('ender.mjs', [
      kind,
      kind === 'file' ? root : (store as unknown as { tables: { schema: string } }).tables.schema,
      'race',
    ]);
    children.push(other);
    await other.waitFor((l) => l === 'ready');

    // Before each of this Run's appends of the outcome: the other process appends (eight times), then ends the effect.
    const answers: string[] = [];
    const append = run.journal.append.bind(run.journal);
    run.journal.append = async (step, options) => {
      if ((step as { kind?: string }).kind === 'tool.completed' && answers.length < 9) {
        answers.push(await other.ask(answers.length < 8 ? 'own' : `end ${target}`));
      }
      return append(step, options);
    };
    let mine: string;
    try {
      await run.endTool(target, { result: 'a' });
      mine = 'ended';
    } catch (e) {
      mine = (e as { code?: string }).code ?? String(e);
    }
    await run.close();
    other.proc.stdin!.end();
    expect(await other.exited).toEqual({ code: 0, signal: null });

    expect(answers.slice(0, 8).every((a) => a.startsWith('ok '))).toBe(true);
    expect(answers[8]).toMatch(/^ok \d+$/); // the other process recorded the outcome
    expect(mine).toBe('EFFECT_ALREADY_ENDED'); // so this one was refused, not told it had recorded it too
    const all = await records(store, 'race');
    const outcomes = all.filter((r) => r.v !== 1 && r.ref === target);
    expect(outcomes.map((r) => r.result)).toEqual(['b']);
    expect(runState(all).anomalies).toEqual([]);
  }, 60_000);
});
