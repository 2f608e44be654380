/**
 * Replay reproduces any recorded run (spec/REPLAY.md §2, §5): a generated sequence of model requests and
 * tool calls — repeated requests, failures and arbitrary JSON included — is recorded through the runtime;
 * a second agent that makes the same requests and takes every answer from `replayFrom` (strict) writes a
 * run that diffs as same, serves every recorded outcome exactly once, and answers each request with the
 * very outcome recorded for it.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { MemoryStore, startRun, type Json, type Run } from '../../src/index.js';
import { diff, replayFrom } from '../../src/replay.js';
import { toJournalValue } from '../../src/runtime.js';
import { jsonValue, prompt, result } from '../../src/testing/index.js';

type Op =
  | { type: 'model'; model: Json; prompt: Json; input: Json; result: Json; toolCalls: Json; failed: boolean }
  | { type: 'tool'; name: string; args: Json; result: Json; failed: boolean };

/** What the runtime records as it is (the kit's I-JSON numbers include ±2^53, which the runtime refuses). */
const recordable = (v: Json): boolean => {
  try {
    toJournalValue(v);
    return true;
  } catch {
    return false;
  }
};
const small = (): fc.Arbitrary<Json> => jsonValue({ maxDepth: 2 }).filter(recordable);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    type: fc.constant('model' as const),
    model: fc.constantFrom<Json>('m1', { provider: 'p', modelId: 'x' }),
    prompt: prompt().filter(recordable),
    input: small(),
    result: result().filter(recordable),
    toolCalls: fc.constantFrom<Json>(null, [{ id: 'c1', name: 't', arguments: {} }]),
    failed: fc.boolean(),
  }),
  fc.record({
    type: fc.constant('tool' as const),
    name: fc.constantFrom('search', 'pay'),
    args: small(),
    result: small(),
    failed: fc.boolean(),
  }),
);
// Repeats: the same request twice gets its own ordinal, and must get its own answer back.
const ops = fc
  .array(op, { maxLength: 12 })
  .chain((xs) => fc.constantFrom(xs, [...xs, ...xs.slice(0, 3).map((x) => ({ ...x, result: 'second answer' }))]));

async function record(run: Run, list: readonly Op[]): Promise<void> {
  for (const o of list) {
    if (o.type === 'model') {
      const call = await run.beginModel({ model: o.model, prompt: o.prompt, input: o.input });
      if (o.failed) await call.fail({ name: 'ProviderError', message: 'overloaded' });
      else await call.complete({ result: o.result, toolCalls: o.toolCalls as never, usage: { total: 3 } });
    } else {
      const effect = await run.beginTool({ name: o.name, args: o.args });
      if (o.failed) await effect.fail({ name: 'ToolError', message: 'declined' });
      else await effect.complete(o.result);
    }
  }
}

describe('replaying any generated recorded run reproduces it', () => {
  test('strict replay, same requests: same run, every outcome served once, each the recorded one', async () => {
    await fc.assert(
      fc.asyncProperty(ops, async (list) => {
        const store = new MemoryStore();
        const recorded = await startRun(store, { input: 'task' });
        await record(recorded, list);
        await recorded.complete('done');

        const replay = await replayFrom(recorded.journal);
        const replayed = await startRun(store, { input: replay.runInput, labels: replay.labels });
        for (const o of list) {
          if (o.type === 'model') {
            const call = await replayed.beginModel({ model: o.model, prompt: o.prompt, input: o.input });
            const a = replay.nextModelResult({ model: o.model, prompt: o.prompt, input: o.input });
            if (a.source !== 'recorded') throw new Error('went live in strict mode');
            const meta = a.meta ?? {};
            if (a.error !== null) await call.fail(a.error);
            else
              await call.complete({
                result: a.result,
                toolCalls: a.toolCalls as never,
                ...(meta.usage !== undefined ? { usage: meta.usage } : {}),
              });
          } else {
            const effect = await replayed.beginTool({ name: o.name, args: o.args });
            const a = replay.nextToolResult({ name: o.name, arguments: o.args });
            if (a.source !== 'recorded') throw new Error('went live in strict mode');
            if (a.error !== null) await effect.fail(a.error);
            else await effect.complete(a.result);
            expect(a.result).toEqual(o.failed ? null : o.result);
          }
        }
        await replayed.complete('done');
        expect(replay.unserved()).toEqual([]);
        const report = await diff(recorded.journal, replayed.journal);
        expect(report.divergences).toEqual([]);
      }),
      { numRuns: 40 },
    );
  });

  test('a changed request is a mismatch at that request in strict mode, and goes live in lenient mode', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { minLength: 1, maxLength: 6 }).filter((l) => l.some((o) => o.type === 'model')),
        async (list) => {
          const store = new MemoryStore();
          const recorded = await startRun(store);
          await record(recorded, list);
          const firstModel = list.find((o) => o.type === 'model') as Extract<Op, { type: 'model' }>;
          const changed = { model: firstModel.model, prompt: { changed: firstModel.prompt }, input: firstModel.input };
          const strict = await replayFrom(recorded.journal);
          expect(() => strict.nextModelResult(changed)).toThrow(/REPLAY_MISMATCH[\s\S]*\/prompt/);
          const lenient = await replayFrom(recorded.journal, { mode: 'lenient' });
          expect(lenient.nextModelResult(changed)).toEqual({ source: 'live', reason: 'unmatched' });
        },
      ),
      { numRuns: 30 },
    );
  });
});
