// Generates replay.json (spec/REPLAY.md §9): matching keys (a request, the patterns in force → the key),
// matching runs (a recorded run, a mode and the live requests → what each is answered with), and the
// classification of divergences. Inputs are fixed, so the output is byte-identical on every run.
//
// The keys are checked against an independent assembly (JSON.stringify of a hand-pruned object with
// members sorted, which equals JCS for these ASCII-only, integer-only values); the matching cases are run
// through the library and must agree with the outcome each case is written to show.
import { canonicalJson } from '../../dist/canonical/index.js';
import { IgnoreSet, VOLATILE_PATTERNS, diff } from '../../dist/diff/index.js';
import { matchKey, modelProjection, toolProjection, replayFrom, explain } from '../../dist/replay/index.js';
import { MemoryStore } from '../../dist/store/memory.js';
import { startRun } from '../../dist/runtime/index.js';

const FORMAT = 'stepchain-vectors/v1';

function assert(cond, message) {
  if (!cond) throw new Error(`vector generation check failed: ${message}`);
}

const sorted = (v) => (Array.isArray(v) ? v.map(sorted) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])])) : v);

const PROMPT = [{ role: 'system', content: 'You answer weather questions.' }, { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }];
const MODEL = { provider: 'openai.chat', modelId: 'gpt-4o-2024-08-06' };
const INPUT = { temperature: 0, tools: [{ type: 'function', name: 'weather', inputSchema: { type: 'object' } }] };

function keyCases() {
  const cases = [];
  const add = (tcId, comment, kind, request, ignore, volatile, hand) => {
    const projection = kind === 'model' ? modelProjection(request) : toolProjection(request);
    const patterns = [...(volatile ? VOLATILE_PATTERNS : []), ...ignore];
    const key = matchKey(kind, projection, new IgnoreSet(patterns));
    assert(key === `${kind} ${JSON.stringify(sorted(hand))}`, `${tcId}: key ${key}`);
    assert(key === `${kind} ${canonicalJson(hand)}`, `${tcId}: JCS`);
    cases.push({ id: tcId, group: 'key', comment, result: 'valid', kind, request, ignore, volatile, key });
  };
  add('key-model-plain', 'a model request: model, prompt and input, members in JCS order', 'model', { model: MODEL, prompt: PROMPT, input: INPUT }, [], true, { input: INPUT, model: MODEL, prompt: PROMPT });
  add('key-model-missing-input', 'absent members are null', 'model', { model: 'm', prompt: 'hi' }, [], true, { input: null, model: 'm', prompt: 'hi' });
  add('key-model-ignored-temperature', 'an ignore pattern removes the member from the key', 'model', { model: MODEL, prompt: PROMPT, input: INPUT }, ['/input/temperature'], true, { input: { tools: INPUT.tools }, model: MODEL, prompt: PROMPT });
  add('key-model-ignored-system', 'a pattern into the prompt; the removed array element is dropped (DIFF.md §4.3)', 'model', { model: MODEL, prompt: PROMPT, input: {} }, ['/prompt/0'], true, { input: {}, model: MODEL, prompt: [PROMPT[1]] });
  add('key-tool', 'a tool call: its name and arguments', 'tool', { name: 'weather', arguments: { city: 'Paris' } }, [], true, { tool_call: { arguments: { city: 'Paris' }, name: 'weather' } });
  add('key-tool-ignored-arg', 'ignoring one argument', 'tool', { name: 'weather', arguments: { city: 'Paris', request_id: 'r-81' } }, ['/tool_call/arguments/request_id'], true, { tool_call: { arguments: { city: 'Paris' }, name: 'weather' } });
  add('key-tool-undefined-dropped', 'the one value rule first: undefined members are dropped', 'tool', { name: 'weather', arguments: { city: 'Oslo', unit: undefined } }, [], false, { tool_call: { arguments: { city: 'Oslo' }, name: 'weather' } });
  return cases;
}

/** Records `ops` as FORMAT §11 run records: run.started at seq 0, then per op its started record and its outcome. */
async function recordRun(store, id, ops) {
  const run = await startRun(store, { runId: id, createdAt: '2026-11-23T12:00:00.000Z', input: 'task' });
  for (const op of ops) {
    if (op.kind === 'model') {
      const call = await run.beginModel(op.request);
      if (op.answer.error !== undefined) await call.fail(op.answer.error);
      else await call.complete({ result: op.answer.result, ...(op.answer.toolCalls ? { toolCalls: op.answer.toolCalls } : {}) });
    } else if (op.kind === 'run') {
      if (op.answer.error !== undefined) await run.fail(op.answer.error);
      else await run.complete(op.answer.result);
    } else {
      const effect = await run.beginTool({ name: op.request.name, args: op.request.arguments });
      if (op.answer.error !== undefined) await effect.fail(op.answer.error);
      else await effect.complete(op.answer.result);
    }
  }
  return run;
}

const M = (text, result) => ({ kind: 'model', request: { model: 'm1', prompt: [{ role: 'user', content: text }], input: {} }, answer: { result } });
const T = (city, result) => ({ kind: 'tool', request: { name: 'weather', arguments: { city } }, answer: { result } });
const ASK = (text) => ({ kind: 'model', request: { model: 'm1', prompt: [{ role: 'user', content: text }], input: {} } });
const CALL = (city) => ({ kind: 'tool', request: { name: 'weather', arguments: { city } } });

async function matchCases() {
  const specs = [
    ['match-strict-same', 'strict: every request answered in order; outcome seqs are 2i+2', 'strict', [M('a', 'A'), T('Paris', 21), M('b', 'B')], [ASK('a'), CALL('Paris'), ASK('b')]],
    ['match-strict-repeat', 'two equal requests: ordinals 0 and 1, each its own answer', 'strict', [M('a', 'first'), M('a', 'second')], [ASK('a'), ASK('a')]],
    ['match-strict-changed', 'strict: a changed request fails at once with the field diff', 'strict', [M('a', 'A'), M('b', 'B')], [ASK('a'), ASK('B?')]],
    ['match-strict-out-of-order', 'strict: model requests must come in recorded order', 'strict', [M('a', 'A'), M('b', 'B')], [ASK('b')]],
    ['match-strict-exhausted', 'strict: a request past the recording', 'strict', [M('a', 'A')], [ASK('a'), ASK('a')]],
    ['match-tools-any-order', 'tool calls match by key and ordinal in any order (parallel calls)', 'strict', [M('a', 'A'), T('Paris', 21), T('Oslo', 5)], [ASK('a'), CALL('Oslo'), CALL('Paris')]],
    ['match-strict-tool-changed', 'strict: a tool call with no recorded match fails, diffed against the nearest', 'strict', [T('Paris', 21)], [CALL('Rome')]],
    ['match-lenient', 'lenient: unmatched requests go live, matched ones are served in any order', 'lenient', [M('a', 'A'), M('b', 'B')], [ASK('b'), ASK('x'), ASK('a')]],
    ['match-record-missing', 'record-missing: strict while the recording lasts, then live', 'record-missing', [M('a', 'A')], [ASK('a'), ASK('more')]],
    ['match-record-missing-changed', 'record-missing: a changed request before the end still fails', 'record-missing', [M('a', 'A'), M('b', 'B')], [ASK('z')]],
  ];
  const cases = [];
  for (const [tcId, comment, mode, recorded, requests] of specs) {
    const store = new MemoryStore();
    const run = await recordRun(store, tcId, recorded);
    const replay = await replayFrom(run.journal, { mode });
    const expect = [];
    for (const r of requests) {
      try {
        const a = r.kind === 'model' ? replay.nextModelResult(r.request) : replay.nextToolResult(r.request);
        expect.push(a.source === 'recorded' ? { source: 'recorded', seq: a.seq, ordinal: a.ordinal, result: a.result } : { source: 'live' });
      } catch (e) {
        expect.push({ error: e.code, ...(e.diff ? { diff: e.diff.map((f) => ({ path: f.path, kind: f.kind })) } : {}), ...(e.location?.seq !== undefined ? { seq: e.location.seq } : {}) });
        break;
      }
    }
    cases.push({ id: tcId, group: 'match', comment, result: expect.some((x) => x.error !== undefined) ? 'invalid' : 'valid', mode, recorded, requests, expect });
  }
  const byId = Object.fromEntries(cases.map((c) => [c.id, c]));
  assert(byId['match-strict-same'].expect.map((x) => x.seq).join() === '2,4,6', 'seqs 2i+2');
  assert(byId['match-strict-repeat'].expect.map((x) => x.result).join() === 'first,second', 'ordinals');
  assert(byId['match-strict-changed'].expect[1].error === 'REPLAY_MISMATCH' && byId['match-strict-changed'].expect[1].diff[0].path === '/prompt/0/content', 'changed');
  assert(byId['match-strict-exhausted'].expect[1].error === 'REPLAY_EXHAUSTED', 'exhausted');
  assert(byId['match-tools-any-order'].expect[1].result === 5, 'tools any order');
  assert(byId['match-lenient'].expect.map((x) => x.source).join() === 'recorded,live,recorded', 'lenient');
  assert(byId['match-record-missing'].expect[1].source === 'live', 'record-missing');
  assert(byId['match-record-missing-changed'].expect[0].error === 'REPLAY_MISMATCH', 'record-missing changed');
  return cases;
}

async function classifyCases() {
  const specs = [
    ['class-request', 'the prompt differs: a request change, at the model.started record', [M('a', 'A')], [M('a2', 'A')], 'request-change'],
    ['class-answer', 'same request, another answer: a recorded-answer change (drift)', [M('a', 'A')], [M('a', 'A2')], 'recorded-answer-change'],
    ['class-tool-result', 'same tool call, another result', [T('Paris', 21)], [T('Paris', 22)], 'tool-result-change'],
    ['class-tool-failed', 'a tool that now fails: a tool-result change (kind and error differ)', [T('Paris', 21)], [{ kind: 'tool', request: { name: 'weather', arguments: { city: 'Paris' } }, answer: { error: { name: 'Timeout', message: 'late' } } }], 'tool-result-change'],
    ['class-tool-request', 'the tool is called with other arguments: a request change', [T('Paris', 21)], [T('Lyon', 21)], 'request-change'],
    ['class-run-record', 'same answers, another final result (the agent\'s own code): a run-record change, not drift', [M('a', 'A'), { kind: 'run', answer: { result: 'A' } }], [M('a', 'A'), { kind: 'run', answer: { result: 'A!' } }], 'run-record-change'],
  ];
  const cases = [];
  for (const [tcId, comment, a, b, expected] of specs) {
    const store = new MemoryStore();
    const ra = await recordRun(store, `${tcId}-a`, a);
    const rb = await recordRun(store, `${tcId}-b`, b);
    const report = await diff(ra.journal, rb.journal, { all: true });
    const explained = await explain(report, ra.journal, rb.journal);
    assert(explained[0]?.class === expected, `${tcId}: ${JSON.stringify(explained[0])}`);
    cases.push({ id: tcId, group: 'classify', comment, result: 'valid', a, b, expect: explained.map((e) => ({ class: e.class, record: e.record, seq_a: e.seq_a, seq_b: e.seq_b, fields: e.fields })) });
  }
  return cases;
}

export async function generate() {
  return {
    'replay.json': {
      format: FORMAT,
      kind: 'replay',
      description: 'Pinned replay (spec/REPLAY.md): matching keys (group key), matching under each mode (group match; result invalid when the replay refuses a request), and the classification of divergences (group classify). Recorded runs are built as §9 says: run.started at seq 0, then per op its started record and its outcome.',
      volatile: VOLATILE_PATTERNS,
      cases: [...keyCases(), ...(await matchCases()), ...(await classifyCases())],
    },
  };
}
