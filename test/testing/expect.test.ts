/** stepchain/testing: expectSameRun and the arbitraries (spec/DIFF.md §8). */
import { describe, expect, test } from 'vitest';
import * as fc from 'fast-check';
import {
  expectSameRun,
  RunMismatchError,
  sealRun,
  sealRunLazily,
  stepContent,
  jsonValue,
  step,
  steps,
  run,
  replayVariant,
  contentKey,
  DiffError,
} from '../../src/testing/index.js';
import { assertIJson } from '../../src/canonical/validate.js';
import { checkStepInput, type StepRecord } from '../../src/record/index.js';
import { verifyChain } from '../../src/chain/index.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { genesisHash, makeGenesis } from '../../src/record/index.js';

const weather = (city: string) => ({ tool_call: { name: 'get_weather', arguments: { city } }, result: { temp_c: 21 } });

describe('expectSameRun', () => {
  const a = sealRun([weather('Paris'), weather('Rome')], { journalId: 'rec' });

  test('resolves with the report when the runs match (envelopes differ)', async () => {
    const b = sealRun([weather('Paris'), weather('Rome')], { journalId: 'replay', start: '2027-05-05T05:05:05.005Z' });
    const report = await expectSameRun(a, b);
    expect(report).toMatchObject({ same: true, compared: { a: 2, b: 2 } });
  });

  test('rejects with an Error whose message is the one-line summary', async () => {
    const b = sealRun([weather('Paris'), weather('Lyon')], { journalId: 'replay' });
    const err = await expectSameRun(a, b).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).toBeInstanceOf(RunMismatchError);
    const e = err as RunMismatchError;
    expect(e.name).toBe('RunMismatchError');
    expect(e.message).toBe('diverged at step 1: tool_call.arguments.city "Rome" → "Lyon"');
    expect(e.report.divergences).toHaveLength(1);
    expect(e.details.split('\n')[0]).toBe(e.message);
    // The way a test author writes it: vitest (and jest) print the message.
    await expect(expectSameRun(a, b)).rejects.toThrow('diverged at step 1: tool_call.arguments.city "Rome" → "Lyon"');
  });

  test('options reach the diff and the summary', async () => {
    const b = sealRun([weather('Paris'), weather('L'.repeat(80))], { journalId: 'replay' });
    await expect(expectSameRun(a, b, { ignore: ['/tool_call/arguments/city'] })).resolves.toMatchObject({ same: true });
    await expect(expectSameRun(a, b, { maxValueLength: 12 })).rejects.toThrow(
      'diverged at step 1: tool_call.arguments.city "Rome" → "LLLLL…LLLL"',
    );
    await expect(expectSameRun(a, b, { all: true, ignore: ['/nope'] })).rejects.toBeInstanceOf(DiffError);
  });

  test('prefix and extra steps fail with their own sentence', async () => {
    await expect(expectSameRun(a, a.slice(0, 1))).rejects.toThrow(
      'run b is a strict prefix of run a (1 step, all equal); a continues with 1 more step (step 1)',
    );
    await expect(expectSameRun([], a)).rejects.toThrow(
      'run a is empty, a strict prefix of run b; b continues at step 0',
    );
  });

  test('async iterables (a journal being read) work as runs', async () => {
    async function* replay() {
      yield* sealRunLazily([weather('Paris'), weather('Rome')], { journalId: 'lazy' });
    }
    await expect(expectSameRun(a, replay())).resolves.toMatchObject({ same: true });
  });
});

describe('sealRun', () => {
  test('seals a chain the verifier accepts, with deterministic ids and timestamps', () => {
    const records = sealRun([weather('Paris'), { prompt: 'hi', meta: { k: 1 } }], {
      journalId: 'j1',
      start: '2026-01-01T00:00:00.000Z',
    });
    const genesis = makeGenesis({ journalId: 'j1', createdAt: '2026-01-01T00:00:00.000Z' });
    expect(records[0]!.prev_hash).toBe(genesisHash(genesis));
    expect(records.map((r) => [r.seq, r.step_id, r.ts])).toEqual([
      [0, 'j1-0', '2026-01-01T00:00:00.000Z'],
      [1, 'j1-1', '2026-01-01T00:00:01.000Z'],
    ]);
    expect(stepContent(records[1]!)).toEqual({
      input: null,
      model: null,
      prompt: 'hi',
      tool_call: null,
      result: null,
      meta: { k: 1 },
    });
    const bytes = new TextEncoder().encode(records.map((r) => canonicalJson(r)).join('\n') + '\n');
    const report = verifyChain({ genesis, files: [{ name: '0000000000000000.jsonl', bytes }] });
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});

describe('arbitraries', () => {
  test('jsonValue is I-JSON: finite numbers, well-formed strings, no reserved names', () => {
    fc.assert(
      fc.property(jsonValue({ maxDepth: 4 }), (v) => {
        assertIJson(v, { maxDepth: 10 });
      }),
      { numRuns: 300 },
    );
  });

  test('steps are valid step inputs with realistic shapes, pairwise different', () => {
    fc.assert(
      fc.property(steps({ maxLength: 6 }), (xs) => {
        for (const s of xs) checkStepInput(s);
        expect(new Set(xs.map(contentKey)).size).toBe(xs.length);
      }),
      { numRuns: 200 },
    );
    const sample = fc.sample(step(), { numRuns: 200, seed: 42 });
    expect(sample.some((s) => Array.isArray(s.prompt))).toBe(true);
    expect(sample.some((s) => s.tool_call !== null && typeof s.tool_call === 'object')).toBe(true);
    expect(sample.some((s) => s.meta !== undefined)).toBe(true);
  });

  test('run() gives sealed chains: seq from 0, each prev_hash the previous step_hash', () => {
    fc.assert(
      fc.property(run({ maxLength: 5 }), (r: StepRecord[]) => {
        r.forEach((rec, i) => {
          expect(rec.seq).toBe(i);
          if (i > 0) expect(rec.prev_hash).toBe(r[i - 1]!.step_hash);
        });
      }),
      { numRuns: 100 },
    );
  });

  test('replay variants: every kind appears, b is sealed as another journal', () => {
    const sample = fc.sample(replayVariant({ maxLength: 5 }), { numRuns: 300, seed: 7 });
    const kinds = new Set(sample.map((v) => v.kind));
    expect([...kinds].sort()).toEqual(['changed', 'deleted', 'extended', 'inserted', 'same', 'truncated']);
    const fieldKinds = new Set(
      sample.flatMap((v) => (v.expected?.kind === 'changed' ? v.expected.fields.map((f) => f.kind) : [])),
    );
    expect([...fieldKinds].sort()).toEqual(['added', 'changed', 'removed', 'type-changed']);
    for (const v of sample) {
      if (v.b.length > 0) expect(v.b[0]!.step_id.startsWith('run-b-')).toBe(true);
      expect(typeof v.description).toBe('string');
    }
  });

  test('replayVariant({ kinds }) draws only those kinds', () => {
    const sample = fc.sample(replayVariant({ kinds: ['deleted'], minLength: 1 }), { numRuns: 50, seed: 1 });
    expect(sample.every((v) => v.kind === 'deleted' && v.a.length === v.b.length + 1)).toBe(true);
  });
});
