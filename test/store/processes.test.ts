/**
 * Many processes, one journal: real child processes running the built store (dist/, which `npm test` builds),
 * real files, the real lock. Issue 3's "Done when" list.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore, type StepInput, type StepRecord } from '../../src/store/index.js';
import { rootOfLeaves, stepLeafHash } from '../../src/proofs/index.js';
import { tempDir } from '../helpers/tmp.js';
import { runChild, runToEnd } from './helpers.js';

async function collect(store: FileStore, id: string): Promise<StepRecord[]> {
  const j = await store.open(id, { readOnly: true });
  const out: StepRecord[] = [];
  for await (const r of j.read()) out.push(r);
  return out;
}

/**
 * The tree the writers kept (tree/state.json and tiles-0, FILE-STORE.md §16) is the tree of the chain: every
 * writer fed its own commits under the lock and caught up with the others' on taking it.
 */
async function expectTreeOfChain(root: string, id: string, steps: number): Promise<void> {
  const state = JSON.parse(readFileSync(join(root, id, 'tree', 'state.json'), 'utf8')) as {
    step_hash: string;
    tree: { size: number };
  };
  expect(state.tree.size).toBe(steps);
  expect(statSync(join(root, id, 'tree', 'tiles-0')).size).toBe(32 * steps);
  const j = await new FileStore(root).open(id, { readOnly: true });
  const hashes: string[] = [];
  for await (const l of j.lines()) hashes.push((JSON.parse(l.text) as { step_hash: string }).step_hash);
  expect(state.step_hash).toBe(hashes.at(-1));
  const view = await j.treeView(); // the stored tiles: state.json matches the head
  expect(Buffer.from(view.root).toString('hex')).toBe(
    Buffer.from(rootOfLeaves(hashes.map((h) => stepLeafHash(h)!))).toString('hex'),
  );
}

describe('many processes append to one journal', () => {
  test.each([
    { workers: 1, label: 'one appender per process' },
    { workers: 32, label: '32 concurrent appenders per process' },
  ])(
    '8 processes × 250 appends, $label: 2000 steps, valid chain, distinct step_ids',
    async ({ workers }) => {
      const root = tempDir();
      const store = new FileStore(root, { segmentBytes: 256 * 1024 });
      await store.create('shared');
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 8 }, (_, p) =>
          runToEnd('appender.mjs', [root, 'shared', `p${p}`, '250', String(workers)]),
        ),
      );
      const elapsed = Date.now() - started;
      const j = await store.open('shared', { readOnly: true });
      const report = await j.verify();
      expect(report.problems).toEqual([]);
      expect(report.warnings).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.steps).toBe(2000);
      expect(await j.head()).toEqual({ seq: 1999, step_hash: report.head });
      const steps = await collect(store, 'shared');
      expect(steps.map((s) => s.seq)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
      expect(new Set(steps.map((s) => s.step_id)).size).toBe(2000);
      // Every (writer, i) exactly once: nothing lost, nothing duplicated.
      const seen = new Set(
        steps.map((s) => {
          const v = s.input as { writer: string; i: number };
          return `${v.writer}/${v.i}`;
        }),
      );
      expect(seen.size).toBe(2000);
      for (let p = 0; p < 8; p++) for (let i = 0; i < 250; i++) expect(seen.has(`p${p}/${i}`)).toBe(true);
      await expectTreeOfChain(root, 'shared', 2000);
      console.info(`8 × 250 appends with ${workers} appender(s) per process: ${elapsed} ms`);
    },
    120_000,
  );
});

/** The step test/store/fixtures/kill-loop.mjs appends as its i-th in a round (kept identical to it). */
function killLoopStep(round: number, i: number): StepInput {
  return {
    step_id: `r${round}-${i}`,
    input: { round, i },
    result: i % 9 === 4 ? { big: `${round}:${i}:`.padEnd(5000, 'z') } : 'ok',
  };
}

describe('SIGKILL at random moments', () => {
  test('20 kills: the journal always opens and verifies, and every acknowledged append is present', async () => {
    const root = tempDir();
    const options = { staleMs: 2000, lockTimeoutMs: 20_000, blobThreshold: 4096, segmentBytes: 64 * 1024 };
    const store = new FileStore(root, options);
    await store.create('crashy');
    const acked = new Map<number, string>();
    let recovered = 0;
    const started = Date.now();
    for (let round = 0; round < 20; round++) {
      const child = runChild('kill-loop.mjs', [root, 'crashy', String(round), JSON.stringify(options)]);
      await child.waitFor((l) => l.startsWith('ack '));
      await new Promise((r) => setTimeout(r, 5 + Math.random() * 150));
      child.proc.kill('SIGKILL');
      const { signal } = await child.exited;
      expect(signal, child.stderr()).toBe('SIGKILL');
      for (const l of child.lines) {
        if (!l.startsWith('ack ')) continue;
        const [, seq, stepId] = l.split(' ');
        acked.set(Number(seq), stepId!);
      }
      // Read-only: verifies without the lock and without touching a byte.
      const ro = await store.open('crashy', { readOnly: true });
      const report = await ro.verify();
      expect(report.problems, `round ${round}`).toEqual([]);
      expect(report.ok).toBe(true);
      for (const w of report.warnings) expect(['TRUNCATED_LINE', 'HEAD_CACHE_STALE']).toContain(w.code);
      const present = new Map<number, string>();
      for await (const r of ro.read()) present.set(r.seq, r.step_id);
      for (const [seq, stepId] of acked)
        expect(present.get(seq), `acknowledged seq ${seq} after round ${round}`).toBe(stepId);

      // The agent restarts and retries every step it never saw acknowledged, with the same step_id and
      // content: a step committed before the kill comes back as it is; nothing is written twice.
      const ackedHere = new Set(
        child.lines.filter((l) => l.startsWith(`ack `) && l.includes(` r${round}-`)).map((l) => l.split(' ')[2]!),
      );
      const maxI = Math.max(-1, ...[...ackedHere].map((id) => Number(id.split('-')[1])));
      const headBefore = (await ro.head())?.seq ?? -1;
      const writer = await store.open('crashy');
      for (let i = 0; i <= maxI + 8; i++) {
        if (ackedHere.has(`r${round}-${i}`)) continue;
        const r = await writer.append(killLoopStep(round, i));
        if (r.seq <= headBefore) recovered++;
        acked.set(r.seq, r.step_id);
      }
      await writer.close();
    }
    // A writer's open repairs whatever the last kill left: no warnings remain.
    const j = await store.open('crashy');
    const final = await j.verify();
    expect(final.ok).toBe(true);
    expect(final.warnings).toEqual([]);
    expect(acked.size).toBeGreaterThan(20);
    const ids = new Set<string>();
    for await (const r of j.read()) ids.add(r.step_id);
    expect(ids.size).toBe(final.steps); // no step_id twice: retries never duplicated a step
    await j.close();
    await expectTreeOfChain(root, 'crashy', final.steps);
    const quarantined = readdirSync(join(root, 'crashy', 'buckets')).filter((f) => f.includes('.quarantine-')).length;
    console.info(
      `20 SIGKILL rounds: ${acked.size} acknowledged steps, ${final.steps} in the journal, ${recovered} unacknowledged but committed steps returned to their retry, ${quarantined} torn tails quarantined, ${Date.now() - started} ms`,
    );
  }, 180_000);
});
