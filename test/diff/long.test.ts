/**
 * Long runs: two 100 000-step runs that align step by step are diffed in bounded memory (spec/DIFF.md §5.3).
 * The runs are generated lazily, never held in memory; the test samples the heap after forced collections
 * while the engine reads them and fails if it grows with the run.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { diff } from '../../src/diff/index.js';
import type { StepRecord } from '../../src/record/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const N = 100_000;
const HASH = 'sha256:' + '0'.repeat(64);

/** A realistic-looking record (~600 bytes) for seq i; hashes are placeholders, diff does not verify them. */
function record(run: string, i: number, change?: (r: StepRecord) => void): StepRecord {
  const r: StepRecord = {
    v: 1,
    seq: i,
    step_id: `${run}-${i}`,
    ts: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
    prev_hash: HASH,
    input: { query: `question number ${i}`, context: 'lorem ipsum dolor sit amet '.repeat(4) + i },
    model: { name: 'gpt-4o', temperature: 0 },
    prompt: [{ role: 'user', content: `Answer question ${i} using the search tool.` }],
    tool_call: { id: `call_${i}`, name: 'search', arguments: { q: `topic ${i}`, page: i % 7 } },
    result: { status: 'ok', hits: [`hit ${i}a`, `hit ${i}b`, `hit ${i}c`], request_id: `${run}-req-${i}` },
    step_hash: HASH,
  };
  change?.(r);
  return r;
}

function* lazyRun(
  run: string,
  n: number,
  sample: (i: number) => void,
  change?: (i: number, r: StepRecord) => void,
): Generator<StepRecord> {
  for (let i = 0; i < n; i++) {
    if (i % 20_000 === 10_000) sample(i);
    yield record(run, i, change ? (r) => change(i, r) : undefined);
  }
}

function heapProbe(): { sample: (i: number) => void; growth: () => number } {
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  return {
    sample: () => {
      gc();
      peak = Math.max(peak, process.memoryUsage().heapUsed);
    },
    growth: () => peak - base,
  };
}

describe('long runs', () => {
  test('100 000 identical steps: same, in bounded memory', async () => {
    const probe = heapProbe();
    const r = await diff(
      lazyRun('a', N, probe.sample),
      lazyRun('b', N, () => {}),
      { ignore: ['/result/request_id'] },
    );
    expect(r.same).toBe(true);
    expect(r.compared).toEqual({ a: N, b: N });
    // Holding either run would take well over 100 MB; the engine keeps a window of steps.
    expect(probe.growth()).toBeLessThan(20 * 1024 * 1024);
  });

  test('100 000 steps with one insertion and a change at the very end, every divergence', async () => {
    const probe = heapProbe();
    const a = lazyRun('a', N, probe.sample);
    // b: step 50 000 is a retried call (inserted), and the last step's answer differs.
    function* b(): Generator<StepRecord> {
      let seq = 0;
      for (const r of lazyRun(
        'b',
        N,
        () => {},
        (i, rec) => {
          if (i === N - 1) (rec.result as { hits: string[] }).hits[1] = 'other';
        },
      )) {
        if (r.seq === 50_000) yield { ...record('b', 50_000), seq: seq++, result: { error: 'timeout' } };
        yield { ...r, seq: seq++ };
      }
    }
    const report = await diff(a, b(), { all: true, ignore: ['/result/request_id'] });
    expect(report.divergences).toEqual([
      expect.objectContaining({ kind: 'inserted', seq_b: 50_000 }),
      {
        kind: 'changed',
        seq_a: N - 1,
        seq_b: N,
        fields: [{ path: '/result/hits/1', kind: 'changed', a: `hit ${N - 1}b`, b: 'other' }],
      },
    ]);
    expect(report.compared).toEqual({ a: N, b: N + 1 });
    expect(probe.growth()).toBeLessThan(20 * 1024 * 1024);
  });
});
