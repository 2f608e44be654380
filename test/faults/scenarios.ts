/**
 * Scenarios of the fault battery both stores run (issue 34): starved writers, and several processes ending
 * the same tool effects of one run. Each checks what every fault must leave: every acknowledged append in
 * the journal exactly once, every effect with at most one outcome (here: exactly one, by the process told it
 * recorded it), the chain verifying, and no process told it succeeded when it did not.
 */
import { cpus } from 'node:os';
import { expect } from 'vitest';
import { startRun, type StepRecord, type Store } from '../../src/index.js';
import { runState } from '../../src/runtime/index.js';
import { acksOf, busyLoops, drive, expectAcknowledgedOnce, failsOf, type Driven } from './helpers.js';

export type Kind = 'file' | 'pg';

/** Busy processes beside the writers: as many as cores, at least 2 and at most 8. */
export function starve(): () => Promise<void> {
  return busyLoops(Math.min(8, Math.max(2, cpus().length)));
}

async function exitedOk(c: Driven): Promise<void> {
  const { code, signal } = await c.exited;
  expect({ code, signal }, c.stderr()).toEqual({ code: 0, signal: null });
}

/** `writers` niced processes × `count` awaited appends beside busy processes: all acknowledged, each once. */
export async function starvedWriters(
  kind: Kind,
  where: string,
  store: Store,
  id: string,
  writers: number,
  count: number,
  options: Record<string, unknown>,
): Promise<void> {
  await (await store.create(id)).close();
  let stop: (() => Promise<void>) | undefined;
  try {
    const children = Array.from({ length: writers }, (_, w) =>
      drive(
        'writer.mjs',
        [kind, where, id, `w${w}`, String(count), JSON.stringify(options)],
        { STEPCHAIN_TEST_WAIT_GO: '1' },
        10,
      ),
    );
    // The busy processes start once every writer is loaded and has its journal open, just before the
    // appends: all of them still run starved, without paying for starved Node start-ups, which prove nothing.
    await Promise.all(children.map((c) => c.waitFor((l) => l === 'ready')));
    stop = starve();
    for (const c of children) c.proc.stdin!.write('go\n');
    await Promise.all(children.map(exitedOk));
    await stop(); // the checks below are no part of the fault: they need not run starved
    stop = undefined;
    const acks = new Map<string, number>();
    for (const c of children) {
      expect(failsOf(c)).toEqual([]);
      for (const [k, v] of acksOf(c)) acks.set(k, v);
    }
    expect(acks.size).toBe(writers * count);
    const ids = await expectAcknowledgedOnce(store, id, acks);
    expect(ids).toHaveLength(writers * count);
  } finally {
    await stop?.();
  }
}

/**
 * `procs` processes end the same `effects` effects of one run at once, starved (each walks the list from its
 * own offset, so that they meet everywhere): each effect ended by exactly one, refused to all the others.
 */
export async function endingTogether(
  kind: Kind,
  where: string,
  store: Store,
  runId: string,
  procs: number,
  effects: number,
): Promise<void> {
  const run = await startRun(store, { runId });
  const ids: string[] = [];
  for (let i = 0; i < effects; i++) ids.push((await run.beginTool({ name: 'charge', args: { i }, id: `eff-${i}` })).id);
  await run.close();
  let stop: (() => Promise<void>) | undefined;
  let results: Array<{ ended: string[]; refused: string[] }>;
  try {
    const children = Array.from({ length: procs }, (_, p) => {
      const order = ids.map((_, i) => ids[(i + Math.floor((p * effects) / procs)) % effects]!);
      return drive(
        'ender-loop.mjs',
        [kind, where, runId, `p${p}`, (p % 2 === 0 ? order : order.reverse()).join(',')],
        {},
        p % 2 === 0 ? 10 : undefined,
      );
    });
    await Promise.all(children.map((c) => c.waitFor((l) => l === 'ready')));
    // The busy processes start once every ender is ready (loaded, run resumed), just before the race: the
    // race runs starved as before, without paying for starved Node start-ups, which prove nothing here.
    stop = starve();
    for (const c of children) c.proc.stdin!.write('go\n');
    await Promise.all(children.map(exitedOk));
    results = children.map((c) => JSON.parse(c.lines[1]!) as { ended: string[]; refused: string[] });
  } finally {
    await stop?.();
  }
  // Every effect was ended by exactly one process, and refused to every other.
  const enders = new Map<string, string[]>();
  results.forEach((r, p) => {
    expect([...r.ended, ...r.refused].sort()).toEqual([...ids].sort());
    for (const e of r.ended) enders.set(e, [...(enders.get(e) ?? []), `p${p}`]);
  });
  for (const e of ids) expect(enders.get(e), e).toHaveLength(1);

  // The journal holds one outcome per effect, by the process told it recorded it, and verifies.
  const journal = await store.open(runId, { readOnly: true });
  const records: StepRecord[] = [];
  for await (const r of journal.read()) records.push(r);
  expect((await journal.verify()).ok).toBe(true);
  await journal.close();
  const state = runState(records);
  expect(state.anomalies).toEqual([]);
  const outcomes = records.filter((r) => r.v !== 1 && r.kind === 'tool.completed' && ids.includes(r.ref ?? ''));
  expect(outcomes).toHaveLength(effects);
  for (const r of outcomes) expect([r.result]).toEqual(enders.get((r as { ref: string }).ref));
  expect(records.filter((r) => r.v !== 1 && r.kind === 'tool.completed' && !ids.includes(r.ref ?? ''))).toHaveLength(
    procs * effects,
  );
}
