/**
 * `stepchain diff --explain` (spec/REPLAY.md §7) on two run journals, through the built CLI: each
 * divergence classified with its fields, exit 1 as diff does; identical runs diff as same without options
 * (the volatile list), and --no-volatile compares the outcome's ref (a random step id) again. A run's own
 * outcome record that differs is the agent's code, never "model drift" (issue 37), and between a recording
 * and its strict replay, where no request went live, a differing answer is not called drift either.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { FileStore, startRun } from '../../src/index.js';
import { replayFrom } from '../../src/replay.js';
import { tempDir } from '../helpers/tmp.js';
import { CLI, runNode } from '../hardening/support.js';

const root = tempDir('stepchain-diff-explain-');
const cli = (args: string[]) => runNode([CLI, ...args], { timeoutMs: 60_000 });

async function agentRun(
  id: string,
  question: string,
  temp: number,
  options: { final?: string; labels?: Record<string, string>; answer?: string } = {},
): Promise<void> {
  const run = await startRun(new FileStore(root, { fsync: 'none' }), {
    runId: id,
    input: 'task',
    ...(options.labels ? { labels: options.labels } : {}),
  });
  const call = await run.beginModel({ model: 'm1', prompt: [{ role: 'user', content: question }] });
  await call.complete({
    result: options.answer ?? 'call the weather tool',
    toolCalls: [{ id: 'c1', name: 'weather', arguments: { city: 'Paris' } }],
  });
  const effect = await run.beginTool({ name: 'weather', args: { city: 'Paris' }, callId: 'c1' });
  await effect.complete({ tempC: temp });
  await run.complete(options.final ?? 'done');
  await run.journal.close();
}

describe('stepchain diff --explain', () => {
  beforeAll(async () => {
    await agentRun('a', 'Weather in Paris?', 21);
    await agentRun('a-again', 'Weather in Paris?', 21);
    await agentRun('b', 'Weather in Paris, please?', 22);
    // A strict replay of a whose code now words the final answer differently: every answer was served.
    const recorded = await new FileStore(root, { fsync: 'none' }).open('a', { readOnly: true });
    const replay = await replayFrom(recorded, { mode: 'strict' });
    await recorded.close();
    await agentRun('a-reworded', 'Weather in Paris?', 21, { final: 'Done!', labels: replay.labels });
    await agentRun('a-other-answer', 'Weather in Paris?', 21, {
      labels: replay.labels,
      answer: 'use the weather tool',
    });
  });

  test("a run whose own final result changed, same answers: the agent's code, not model drift", async () => {
    const r = await cli(['diff', join(root, 'a'), join(root, 'a-reworded'), '--all', '--explain']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "seq 5↔5 run.completed: run-record change (your code: the run's own record, not a model's answer) at /result",
    );
    expect(r.stdout).not.toContain('drift');
  });

  test("an answer that differs from a strict replay's is not called drift: no request went live", async () => {
    const r = await cli(['diff', join(root, 'a'), join(root, 'a-other-answer'), '--all', '--explain']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'seq 2↔2 model.completed: recorded-answer change (not model drift: a strict replay sends no request live; the recorder or your code kept something else) at /result',
    );
    // Two runs that are no replay of each other: the same answer change is drift.
    await agentRun('c-other-answer', 'Weather in Paris?', 21, { answer: 'use the weather tool' });
    const live = await cli(['diff', join(root, 'a'), join(root, 'c-other-answer'), '--all', '--explain']);
    expect(live.stdout).toContain(
      'seq 2↔2 model.completed: recorded-answer change (model drift: the same request got another answer) at /result',
    );
  });

  test('two identical runs diff as same without options; --no-volatile sees the ref', async () => {
    const same = await cli(['diff', join(root, 'a'), join(root, 'a-again')]);
    expect(same.code).toBe(0);
    const strict = await cli(['diff', join(root, 'a'), join(root, 'a-again'), '--no-volatile', '--json']);
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout).report.divergences[0].fields[0].path).toBe('/ref');
  });

  test('each divergence with its class and fields, exit 1', async () => {
    const r = await cli(['diff', join(root, 'a'), join(root, 'b'), '--all', '--explain']);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('seq 1↔1 model.started: request change (your code) at /prompt/0/content');
    expect(r.stdout).toContain('seq 2↔2 model.completed: request change (your code) at /prompt/0/content');
    expect(r.stdout).toContain('seq 4↔4 tool.completed: tool-result change at /result/tempC');
  });

  test('--json carries the classification', async () => {
    const r = await cli(['diff', join(root, 'a'), join(root, 'b'), '--all', '--explain', '--json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { explain: { class: string; seq_a: number }[] };
    expect(doc.explain.map((e) => [e.seq_a, e.class])).toEqual([
      [1, 'request-change'],
      [2, 'request-change'],
      [4, 'tool-result-change'],
    ]);
  });
});
