/**
 * vectors/replay.json (spec/REPLAY.md §9) against the library: each matching key, each matching run under
 * its mode, each classified divergence. The recorded runs are built as the spec says (run.started at 0,
 * then per op its started record and its outcome; a last `run` op is the run's own outcome record), so an
 * outcome's seq is fixed.
 */
import { describe, expect, test } from 'vitest';
import { MemoryStore, startRun, type Json, type Run } from '../../src/index.js';
import { diff, explain, replayFrom, VOLATILE_PATTERNS } from '../../src/replay.js';
import { IgnoreSet } from '../../src/diff/index.js';
import { matchKey, modelProjection, toolProjection, type ReplayMode } from '../../src/replay/index.js';
import { loadVectors } from '../helpers/vectors.js';

interface Op {
  kind: 'model' | 'tool' | 'run';
  request?: { readonly [key: string]: Json };
  answer?: { result?: Json; error?: unknown };
}
interface KeyCase {
  id: string;
  kind: 'model' | 'tool';
  request: Record<string, unknown>;
  ignore: string[];
  volatile: boolean;
  key: string;
}
interface MatchCase {
  id: string;
  mode: ReplayMode;
  recorded: Op[];
  requests: Op[];
  expect: Record<string, unknown>[];
}
interface ClassifyCase {
  id: string;
  a: Op[];
  b: Op[];
  expect: Record<string, unknown>[];
}

const doc = loadVectors('replay.json');
const all = doc.cases as unknown as { id: string; group: string }[];
const keys = all.filter((c) => c.group === 'key') as unknown as KeyCase[];
const cases = all.filter((c) => c.group === 'match') as unknown as MatchCase[];
const classify = all.filter((c) => c.group === 'classify') as unknown as ClassifyCase[];

async function recordRun(store: MemoryStore, id: string, ops: Op[]): Promise<Run> {
  const run = await startRun(store, { runId: id, input: 'task' });
  for (const op of ops) {
    if (op.kind === 'model') {
      const call = await run.beginModel(op.request);
      if (op.answer?.error !== undefined) await call.fail(op.answer.error);
      else await call.complete({ result: op.answer?.result });
    } else if (op.kind === 'run') {
      if (op.answer?.error !== undefined) await run.fail(op.answer.error);
      else await run.complete(op.answer?.result);
    } else {
      const effect = await run.beginTool({ name: op.request!.name as string, args: op.request!.arguments });
      if (op.answer?.error !== undefined) await effect.fail(op.answer.error);
      else await effect.complete(op.answer?.result);
    }
  }
  return run;
}

describe('vectors/replay.json', () => {
  test('every group has cases', () => {
    expect([keys.length, cases.length, classify.length].every((n) => n > 0)).toBe(true);
  });

  test("the volatile list is the library's", () => {
    expect(doc.volatile).toEqual(VOLATILE_PATTERNS);
  });

  test.each(keys.map((c) => [c.id, c] as const))('key %s', (_id, c) => {
    const projection = c.kind === 'model' ? modelProjection(c.request) : toolProjection(c.request as { name: string });
    expect(matchKey(c.kind, projection, new IgnoreSet([...(c.volatile ? VOLATILE_PATTERNS : []), ...c.ignore]))).toBe(
      c.key,
    );
  });

  test.each(cases.map((c) => [c.id, c] as const))('match %s', async (_id, c) => {
    const run = await recordRun(new MemoryStore(), c.id, c.recorded);
    const replay = await replayFrom(run.journal, { mode: c.mode });
    const got: Record<string, unknown>[] = [];
    for (const r of c.requests) {
      try {
        const a =
          r.kind === 'model'
            ? replay.nextModelResult(r.request!)
            : replay.nextToolResult(r.request as { name: string });
        got.push(
          a.source === 'recorded'
            ? { source: 'recorded', seq: a.seq, ordinal: a.ordinal, result: a.result }
            : { source: 'live' },
        );
      } catch (e) {
        const err = e as { code: string; diff?: { path: string; kind: string }[]; location?: { seq?: number } };
        got.push({
          error: err.code,
          ...(err.diff ? { diff: err.diff.map((f) => ({ path: f.path, kind: f.kind })) } : {}),
          ...(err.location?.seq !== undefined ? { seq: err.location.seq } : {}),
        });
        break;
      }
    }
    expect(got).toEqual(c.expect);
  });

  test.each(classify.map((c) => [c.id, c] as const))('classify %s', async (_id, c) => {
    const store = new MemoryStore();
    const a = await recordRun(store, `${c.id}-a`, c.a);
    const b = await recordRun(store, `${c.id}-b`, c.b);
    const explained = await explain(await diff(a.journal, b.journal, { all: true }), a.journal, b.journal);
    expect(
      explained.map((e) => ({ class: e.class, record: e.record, seq_a: e.seq_a, seq_b: e.seq_b, fields: e.fields })),
    ).toEqual(c.expect);
  });
});
