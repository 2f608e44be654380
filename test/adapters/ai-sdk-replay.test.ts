/**
 * Pinned replay of an AI SDK agent (spec/REPLAY.md): the scripted agent of ai-sdk-fixture.ts is recorded
 * with the SDK's mock model, then replayed with `replayModel` and `replayTools` and no live model or tool
 * at all — the replay's own journal diffs as same. A changed prompt template fails strict replay at that
 * request with the field diff; a tampered journal or a moved pin is refused.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateText, stepCountIs, streamText, wrapLanguageModel, type LanguageModel, type ToolSet } from 'ai';
import { describe, expect, test } from 'vitest';
import { exportReceipt, FileStore, startRun, type Run } from '../../src/index.js';
import { diff, explain, replayFrom, ReplayError } from '../../src/replay.js';
import { openReceiptSource } from '../../src/receipt/node.js';
import { expectSameRun } from '../../src/testing/index.js';
import { recordTools, replayModel, replayTools, stepchainMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { tempDir } from '../helpers/tmp.js';
import { agentTools, scriptedModel } from './ai-sdk-fixture.js';

const root = tempDir('stepchain-ai-replay-');
const store = new FileStore(join(root, 'runs'), { fsync: 'none' });

/** The agent under test: its prompt template is the one thing a test changes. */
async function agent(
  model: LanguageModel,
  tools: ToolSet,
  template = (city: string) => `What is the weather in ${city}?`,
): Promise<{ text: string; streamed: string }> {
  const first = await generateText({
    model,
    tools,
    stopWhen: stepCountIs(5),
    maxRetries: 0,
    prompt: template('Paris and Oslo'),
  });
  const second = streamText({ model, tools, stopWhen: stepCountIs(4), maxRetries: 0, prompt: template('Rome') });
  let streamed = '';
  for await (const delta of second.textStream) streamed += delta;
  return { text: first.text, streamed };
}

/** Tools whose execute must never run during a strict replay. */
function deadTools(): ToolSet {
  const tools = agentTools() as ToolSet;
  for (const t of Object.values(tools))
    (t as { execute?: unknown }).execute = () => {
      throw new Error('a live tool ran during replay');
    };
  return tools;
}

async function record(runId: string): Promise<Run> {
  const run = await startRun(store, { runId, agent: 'weather-bot', input: 'forecast' });
  const out = await agent(
    wrapLanguageModel({ model: scriptedModel(), middleware: stepchainMiddleware(run) }),
    recordTools(run, agentTools()),
  );
  await run.complete(out);
  return run;
}

async function replayInto(
  runId: string,
  source: Parameters<typeof replayFrom>[0],
  template?: (city: string) => string,
): Promise<Run> {
  const replay = await replayFrom(source);
  const run = await startRun(store, { runId, agent: 'weather-bot', input: replay.runInput, labels: replay.labels });
  const out = await agent(
    wrapLanguageModel({ model: replayModel(replay), middleware: stepchainMiddleware(run) }),
    recordTools(run, replayTools(replay, deadTools())),
    template,
  );
  await run.complete(out);
  expect(replay.unserved()).toEqual([]);
  expect(replay.log.every((e) => e.source === 'recorded')).toBe(true);
  return run;
}

describe('replaying a recorded AI SDK agent', async () => {
  const recorded = await record('rec-1');

  test('with the replay model and replayed tools, no live model or tool: the replay diffs as same', async () => {
    const replayed = await replayInto('replay-1', recorded.journal);
    const report = await expectSameRun(recorded.journal, replayed.journal);
    expect(report.same).toBe(true);
    // Both runs hold every model call, generate and stream, and every tool outcome, the failing one included.
    const kinds: string[] = [];
    for await (const r of replayed.journal.read()) kinds.push(String((r as { kind?: string }).kind));
    expect(kinds.filter((k) => k === 'model.completed')).toHaveLength(5);
    expect(kinds).toContain('tool.failed');
  });

  test('the replay journal names the journal and the head it replayed from', async () => {
    const head = await recorded.journal.head();
    const replayed = await replayInto('replay-2', recorded.journal);
    const run = replayed.journal.genesis as { run?: { labels?: Record<string, string> } };
    expect(run.run?.labels).toMatchObject({
      'replay.of': 'rec-1',
      'replay.head': head!.step_hash,
      'replay.seq': String(head!.seq),
      'replay.mode': 'strict',
    });
  });

  test('a receipt replays like its journal', async () => {
    const path = join(root, 'rec-1.tar.gz');
    await exportReceipt(recorded.journal, { out: path });
    const replayed = await replayInto('replay-3', await openReceiptSource(path));
    expect((await diff(recorded.journal, replayed.journal)).same).toBe(true);
  });

  test('a changed prompt template fails strict replay at that request, with the field diff', async () => {
    const replay = await replayFrom(recorded.journal);
    const model = replayModel(replay);
    const caught = await agent(model, replayTools(replay, deadTools()), (city) => `Weather for ${city}, please.`).then(
      () => null,
      (e: unknown) => e,
    );
    // The SDK wraps a provider error it does not retry; the replay error is the cause or the error itself.
    const error = (
      caught instanceof ReplayError
        ? caught
        : ((caught as { cause?: unknown; lastError?: unknown })?.lastError ??
          (caught as { cause?: unknown })?.cause ??
          caught)
    ) as ReplayError;
    expect(error).toBeInstanceOf(ReplayError);
    expect(error.code).toBe('REPLAY_MISMATCH');
    expect(error.location.seq).toBe(2); // the first model.completed: run.started 0, model.started 1
    expect(error.diff).toEqual([
      {
        path: '/prompt/0/content/0/text',
        kind: 'changed',
        a: 'What is the weather in Paris and Oslo?',
        b: 'Weather for Paris and Oslo, please.',
      },
    ]);
    expect(error.message).toContain('/prompt/0/content/0/text');
    expect(error.message).toContain('"What is the weather in Paris and Oslo?" → "Weather for Paris and Oslo, please."');
  });

  test('lenient replay of the changed agent goes live; the diff classifies the first divergence as a request change', async () => {
    const replay = await replayFrom(recorded.journal, { mode: 'lenient' });
    const run = await startRun(store, {
      runId: 'replay-lenient',
      agent: 'weather-bot',
      input: replay.runInput,
      labels: replay.labels,
    });
    const out = await agent(
      wrapLanguageModel({
        model: replayModel(replay, { live: scriptedModel() }),
        middleware: stepchainMiddleware(run),
      }),
      recordTools(run, replayTools(replay, agentTools())),
      (city) => `Weather for ${city}, please.`,
    );
    await run.complete(out);
    expect(replay.log[0]).toMatchObject({ kind: 'model', source: 'live' });
    const report = await diff(recorded.journal, run.journal, { all: true });
    const explained = await explain(report, recorded.journal, run.journal);
    expect(explained[0]).toMatchObject({
      class: 'request-change',
      record: 'model.started',
      seq_a: 1,
      fields: ['/prompt/0/content/0/text'],
    });
  });

  test('a strict replay asks no more than was recorded', async () => {
    const replay = await replayFrom(recorded.journal);
    const model = replayModel(replay);
    await agent(model, replayTools(replay, deadTools()));
    const e = await generateText({ model, maxRetries: 0, prompt: 'one more?' }).then(
      () => null,
      (x: unknown) => x,
    );
    expect(JSON.stringify(e) + String(e)).toContain('REPLAY_EXHAUSTED');
  });
});

describe('replay refuses what does not verify', async () => {
  const recorded = await record('rec-tamper');

  test('a journal whose chain was edited', async () => {
    const dir = join(root, 'runs', 'rec-tamper');
    const bucket = readdirSync(join(dir, 'buckets'))
      .filter((n) => n.endsWith('.jsonl'))
      .sort()[0]!;
    const file = join(dir, 'buckets', bucket);
    writeFileSync(file, readFileSync(file, 'utf8').replace('Paris 21C', 'Paris 31C'));
    const journal = await store.open('rec-tamper', { readOnly: true });
    const e = await replayFrom(journal).then(
      () => null,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(ReplayError);
    expect((e as ReplayError).code).toBe('REPLAY_UNVERIFIED');
    await journal.close();
  });

  test('a journal that moved past its pin', async () => {
    const run = await record('rec-pin');
    const head = await run.journal.head();
    await run.journal.append({ input: null, model: null, prompt: null, tool_call: null, result: 'later' });
    const e = await replayFrom(run.journal, { expectHead: head!.step_hash }).then(
      () => null,
      (x: unknown) => x,
    );
    expect((e as ReplayError).code).toBe('REPLAY_UNVERIFIED');
    expect(String((e as Error).message)).toContain(head!.step_hash);
    void recorded;
  });
});
