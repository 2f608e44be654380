/**
 * A run whose writes from this adapter reach the journal in the order they were asked for (the same rule as
 * the AI SDK adapter's ordered.ts; adapters share no code). Parallel tool calls end in the order their
 * `execute` returns; the runtime reads the journal before each outcome, so
 * two outcomes asked for together could otherwise be appended in either order, and two identical runs
 * would not diff as `same`. Each write still completes as soon as the ones before it have: nothing waits
 * on a tool.
 */
import type { EffectHandle, ModelCallHandle } from '../../index.js';
import type { AdapterRun } from './run.js';

export function ordered(run: AdapterRun): AdapterRun {
  let last: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(write: () => Promise<T>): Promise<T> => {
    const next = last.then(write, write);
    last = next.catch(() => undefined);
    return next;
  };
  const model = (h: ModelCallHandle): ModelCallHandle => ({
    id: h.id, seq: h.seq,
    complete: (outcome) => inTurn(() => h.complete(outcome)),
    fail: (error) => inTurn(() => h.fail(error)),
  });
  const effect = (h: EffectHandle): EffectHandle => ({
    id: h.id, seq: h.seq,
    annotate: (notes) => inTurn(() => h.annotate(notes)),
    complete: (result) => inTurn(() => h.complete(result)),
    fail: (error) => inTurn(() => h.fail(error)),
  });
  return {
    beginModel: async (options) => model(await inTurn(() => run.beginModel(options))),
    beginTool: async (options) => effect(await inTurn(() => run.beginTool(options))),
    endModel: (id, outcome, error) => inTurn(() => run.endModel(id, outcome, error)),
    get runId() {
      return run.runId;
    },
    get identity() {
      return run.identity;
    },
  };
}
