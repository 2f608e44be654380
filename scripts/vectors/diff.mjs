// Diff vectors (spec/DIFF.md §9): two sealed runs, the options, and the report and summary diff must give.
// Deterministic: runs are sealed with fixed journal ids and timestamps. Error cases carry the DiffError code.
import { diff, summarize } from '../../dist/diff/index.js';
import { sealRun } from '../../dist/testing/run.js';

const A = { journalId: 'run-a', start: '2026-01-01T00:00:00.000Z' };
const B = { journalId: 'run-b', start: '2026-02-01T12:00:00.000Z' };

const weather = (city, extra = {}) => ({
  input: { query: `What is the weather in ${city}?` },
  model: { name: 'gpt-4o', temperature: 0 },
  prompt: [{ role: 'user', content: `What is the weather in ${city}?` }],
  tool_call: { id: 'call_1', name: 'get_weather', arguments: { city, units: 'metric' } },
  result: { status: 'ok', request_id: 'req-1', data: { temp_c: 21, sky: 'clear' } },
  ...extra,
});
const answer = (text) => ({ model: { name: 'gpt-4o', temperature: 0 }, prompt: [{ role: 'user', content: 'Answer.' }], result: text });
const retryOf = (step) => ({ ...step, result: { error: { type: 'timeout', message: 'upstream timed out' }, attempt: 1 } });
const search = (q) => ({ tool_call: { name: 'search', arguments: { q } }, result: { hits: [q], request_id: `r-${q}` } });
const base = [weather('Paris'), search('museums'), search('restaurants'), answer('Sunny, 21 °C.')];

const cases = [];
function add(id, comment, a, b, options = {}) {
  cases.push({ id, comment, a: sealRun(a, A), b: sealRun(b, B), options });
}

add('same', 'identical content; step_id, ts and hashes differ (the envelope is not compared by default)', base, base);
add('both-empty', 'two empty runs are the same', [], []);
add('changed-argument', 'one tool argument changed: the first divergence names seq and path', base,
  [{ ...base[0], tool_call: { ...base[0].tool_call, arguments: { city: 'Lyon', units: 'metric' } } }, ...base.slice(1)]);
add('changed-kinds', 'changed, added, removed and type-changed fields in one step, listed in path order', base,
  [base[0], { ...base[1], tool_call: { name: 'search', arguments: { q: 'museums', limit: 5 } }, result: { hits: 'museums', request_id: 'r-museums' }, input: 'x' }, ...base.slice(2)],
  { all: true });
add('inserted-retry', 'a failed attempt inserted before the step that succeeded: one insertion, not a cascade', base,
  [base[0], retryOf(base[1]), ...base.slice(1)], { all: true });
add('retry-paired-by-similarity', 'b replaces one step with a failed attempt plus a changed success; the success pairs with a\'s step',
  base, [base[0], retryOf(base[1]), { ...base[1], result: { hits: ['museums', 'Louvre'], request_id: 'r-museums' } }, ...base.slice(2)], { all: true });
add('deleted-step', 'b skipped a tool call: one deletion', base, [base[0], base[2], base[3]], { all: true });
add('deleted-first-only', 'the same pair without all: only the first divergence, complete is false', base, [base[0], base[2], search('bars'), base[3]]);
add('changed-after-insert', 'after an insertion, a changed step has different seqs in a and b', base,
  [base[0], search('parks'), base[1], search('restaurants nearby'), base[3]], { all: true });
add('prefix-a', 'a is a strict prefix of b', base.slice(0, 2), base, { all: true });
add('prefix-a-first-only', 'a is a strict prefix of b, first divergence only', base.slice(0, 2), base);
add('prefix-b', 'b stops early: b is a strict prefix of a', base, base.slice(0, 1), { all: true });
add('a-empty', 'an empty run is a strict prefix of any other', [], base.slice(0, 2), { all: true });
add('ignore-deep', '"**" matches at any depth: request ids are left out everywhere under /result', base,
  base.map((s, i) => (s.result && typeof s.result === 'object' ? { ...s, result: { ...s.result, request_id: `other-${i}` } } : s)),
  { ignore: ['/result/**/request_id'] });
add('ignore-deep-not-covering', 'the same runs with the ignore pattern naming another member: every request id is reported', base,
  base.map((s, i) => (s.result && typeof s.result === 'object' ? { ...s, result: { ...s.result, request_id: `other-${i}` } } : s)),
  { ignore: ['/result/**/trace_id'], all: true });
add('ignore-star', '"*" matches one token: /tool_call/arguments/* hides argument changes but not a changed tool name', base,
  [weather('Lyon'), { ...base[1], tool_call: { name: 'find', arguments: { q: 'galleries' } } }, ...base.slice(2)],
  { ignore: ['/tool_call/arguments/*'], all: true });
add('ignore-array-element', 'ignoring one array element leaves the indices of the others as stored', base,
  [base[0], { ...base[1], result: { hits: ['MUSEUMS', 'extra'], request_id: 'r-museums' } }, ...base.slice(2)],
  { ignore: ['/result/hits/0'], all: true });
add('envelope', 'with envelope: true the journal-specific fields differ at every step', base.slice(0, 2), base.slice(0, 2), { envelope: true });
add('meta-added', 'meta is compared: present in b only', base.slice(0, 1), [{ ...base[0], meta: { latency_ms: 120 } }]);
add('escaped-path', 'member names with "/" and "~" are escaped in the pointer (RFC 6901)', [{ result: { 'a/b': 1, 'c~d': 2 } }],
  [{ result: { 'a/b': 2, 'c~d': 3 } }], { all: true });
add('array-growth', 'arrays compare by index: an added element is reported at its index', [{ result: [1, 2] }], [{ result: [1, 2, 3] }]);
add('long-values', 'long strings are shortened in the middle in the summary; the report keeps them whole',
  [{ result: 'The quick brown fox jumps over the lazy dog. '.repeat(3) }], [{ result: 'The quick brown fox jumps over the lazy cat. '.repeat(3) }]);
add('max-fields', 'maxFields caps the listed differences and counts the rest', [{ result: { a: 1, b: 1, c: 1, d: 1 } }],
  [{ result: { a: 2, b: 2, c: 2, d: 2 } }], { maxFields: 2 });
add('window-too-small', 'an insertion longer than the window cannot be seen: its steps are reported as changed', [search('a'), search('z')],
  [search('x1'), search('x2'), search('a'), search('z')], { all: true, window: 1 });
add('bad-ignore-partial-wildcard', 'a wildcard must be a whole token', base, base, { ignore: ['/result/req*'] });
add('bad-ignore-unknown-field', 'the first token must name a step field', base, base, { ignore: ['/results/**/request_id'] });
add('bad-ignore-no-slash', 'a pattern is a JSON Pointer', base, base, { ignore: ['result'] });
add('bad-ignore-escape', 'only ~0, ~1 and ~2 are escapes', base, base, { ignore: ['/result/a~3'] });
add('ignore-literal-star', '~2 is a literal "*" in a pattern: a member named "*" can be ignored', [{ result: { '*': 1, a: 1 } }], [{ result: { '*': 2, a: 2 } }], { ignore: ['/result/~2'] });
add('bad-option-window', 'window is an integer from 1 to 1000', base, base, { window: 0 });
add('bad-option-unknown', 'unknown options are refused', base, base, { everything: true });

export async function generate() {
  for (const [i, c] of cases.entries()) {
    // Valid cases are diffed; invalid ones (bad options, malformed steps) must be refused with a code.
    let outcome;
    try {
      const report = await diff(c.a, c.b, c.options);
      outcome = { result: 'valid', expect: report, summary: summarize(report) };
    } catch (e) {
      if (!e || typeof e.code !== 'string') throw e;
      outcome = { result: 'invalid', expect: { error: e.code } };
    }
    cases[i] = { id: c.id, comment: c.comment, result: outcome.result, a: c.a, b: c.b, options: c.options, expect: outcome.expect, ...(outcome.summary === undefined ? {} : { summary: outcome.summary }) };
  }
  return {
    'diff.json': {
      format: 'stepchain-vectors/v1',
      kind: 'diff',
      description: 'Diff vectors (spec/DIFF.md §9): diff(a, b, options) must return `expect` (a stepchain-diff/v1 report) and summarize() `summary`; or, for `expect.error`, throw a DiffError with that code.',
      cases,
    },
  };
}
