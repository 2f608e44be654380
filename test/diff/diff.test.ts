/** The diff engine: options, inputs, alignment, ignore patterns and the human summary (spec/DIFF.md). */
import { describe, expect, test } from 'vitest';
import {
  diff,
  summarize,
  formatDiff,
  dottedPath,
  shorten,
  compilePattern,
  patternFor,
  DiffError,
  type DiffReport,
} from '../../src/diff/index.js';
import { firstMatch, pairBlock } from '../../src/diff/align.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { makeGenesis, type StepInput, type StepRecord } from '../../src/record/index.js';
import type { ChainSource, StoredLine } from '../../src/chain/source.js';
import { sealRun } from '../../src/testing/run.js';

const A = { journalId: 'run-a' };
const B = { journalId: 'run-b', start: '2026-03-01T00:00:00.000Z' };
const s = (n: number, extra: StepInput = {}): StepInput => ({
  tool_call: { name: 'step', arguments: { n } },
  ...extra,
});
const steps = (...ns: number[]): StepInput[] => ns.map((n) => s(n));

async function codeOf(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(DiffError);
  return (e as DiffError).code;
}

describe('options are checked at the boundary', () => {
  const run = sealRun(steps(1), A);
  test.each([
    ['all not boolean', { all: 1 }, 'BAD_OPTION'],
    ['envelope not boolean', { envelope: 'yes' }, 'BAD_OPTION'],
    ['window zero', { window: 0 }, 'BAD_OPTION'],
    ['window fractional', { window: 2.5 }, 'BAD_OPTION'],
    ['window too large', { window: 1001 }, 'BAD_OPTION'],
    ['maxFields zero', { maxFields: 0 }, 'BAD_OPTION'],
    ['unknown option', { ignores: [] }, 'BAD_OPTION'],
    ['ignore not an array', { ignore: '/result' }, 'BAD_OPTION'],
    ['ignore entry not a string', { ignore: [3] }, 'BAD_IGNORE_PATTERN'],
    ['empty pattern', { ignore: [''] }, 'BAD_IGNORE_PATTERN'],
    ['no leading slash', { ignore: ['result/x'] }, 'BAD_IGNORE_PATTERN'],
    ['bad escape', { ignore: ['/result/~'] }, 'BAD_IGNORE_PATTERN'],
    ['partial wildcard', { ignore: ['/result/*_id'] }, 'BAD_IGNORE_PATTERN'],
    ['triple star', { ignore: ['/result/***'] }, 'BAD_IGNORE_PATTERN'],
    ['unknown first field', { ignore: ['/tool_calls/arguments'] }, 'BAD_IGNORE_PATTERN'],
    ['double ** in a row', { ignore: ['/result/**/**/x'] }, 'BAD_IGNORE_PATTERN'],
  ])('%s → %s', async (_name, options, code) => {
    expect(await codeOf(diff(run, run, options as never))).toBe(code);
  });

  test('a bad pattern is named in the message, among good ones', async () => {
    const e = (await diff(run, run, { ignore: ['/result/**/id', '/result/req*'] }).catch(
      (x: unknown) => x,
    )) as DiffError;
    expect(e.message).toMatch(/^BAD_IGNORE_PATTERN: ignore pattern "\/result\/req\*"/);
  });

  test.each([
    ['/result'],
    ['/*'],
    ['/**'],
    ['/**/id'],
    ['/result/a~1b/~0c'],
    ['/meta/*/x'],
    ['/ts'],
    ['/result/~2'],
    ['/result/a~2b'],
  ])('%s is a valid pattern', (p) => {
    expect(compilePattern(p).source).toBe(p);
  });

  test('~2 is a literal "*": patternFor(pointer) matches exactly that value', async () => {
    const x = sealRun([{ result: { '*': 1, a: 1, 'x*y': 1 } }], A);
    const y = sealRun([{ result: { '*': 2, a: 2, 'x*y': 2 } }], B);
    const paths = async (ignore: string[]) =>
      ((await diff(x, y, { ignore, all: true })).divergences[0] as { fields: Array<{ path: string }> }).fields.map(
        (f) => f.path,
      );
    expect(await paths([patternFor('/result/*')])).toEqual(['/result/a', '/result/x*y']);
    expect(await paths([patternFor('/result/x*y')])).toEqual(['/result/*', '/result/a']);
    expect(patternFor('/result/x*y')).toBe('/result/x~2y');
  });

  test('undefined options and undefined members are the defaults', async () => {
    expect((await diff(run, run, undefined)).same).toBe(true);
    expect((await diff(run, run, { all: undefined, ignore: undefined })).same).toBe(true);
  });
});

describe('inputs', () => {
  const a = sealRun(steps(1, 2, 3), A);
  const b = sealRun(steps(1, 9, 3), B);

  test('arrays, iterables, generators and async iterables give one report', async () => {
    const expected = await diff(a, b, { all: true });
    async function* lazy(r: StepRecord[]) {
      for (const x of r) yield x;
    }
    function* gen(r: StepRecord[]) {
      yield* r;
    }
    expect(await diff(lazy(a), gen(b), { all: true })).toEqual(expected);
    expect(await diff(new Set(a), lazy(b), { all: true })).toEqual(expected);
  });

  test.each([
    ['a number', 42],
    ['null', null],
    ['a string', 'steps'],
    ['a plain object', { steps: [] }],
  ])('%s is not a run (BAD_INPUT)', async (_n, input) => {
    expect(await codeOf(diff(input as never, a))).toBe('BAD_INPUT');
  });

  test.each([
    ['a step that is not an object', [1]],
    ['a step without seq', [{ result: 1 }]],
    ['a negative seq', [{ seq: -1, result: 1 }]],
    ['a non-finite number', [{ seq: 0, result: Number.NaN }]],
    ['undefined inside a value', [{ seq: 0, result: { x: undefined } }]],
    ['a class instance', [{ seq: 0, result: new Date(0) }]],
  ])('%s is BAD_STEP', async (_n, run) => {
    expect(await codeOf(diff(run as never, a))).toBe('BAD_STEP');
  });

  test('lone surrogates are compared exactly, not refused', async () => {
    const r = await diff([{ seq: 0, result: '\ud800' }] as never, [{ seq: 0, result: '\ud801' }] as never);
    expect(r.divergences[0]).toMatchObject({ fields: [{ path: '/result', kind: 'changed' }] });
  });

  test('a BAD_STEP names the seq and the pointer of the bad value', async () => {
    const e = (await diff([{ seq: 3, result: { list: [1, Number.POSITIVE_INFINITY] } }] as never, a).catch(
      (x: unknown) => x,
    )) as DiffError;
    expect(e.code).toBe('BAD_STEP');
    expect(e.location).toMatchObject({ seq: 3, path: '/result/list/1' });
  });

  test('steps need not be full records: absent fields are absent, not null', async () => {
    const r = await diff([{ seq: 0, result: 1 }] as never, [{ seq: 0, result: 1, input: null }] as never);
    expect(r.divergences).toEqual([
      { kind: 'changed', seq_a: 0, seq_b: 0, fields: [{ path: '/input', kind: 'added', b: null }] },
    ]);
  });

  test('iteration stops early and the iterators are closed', async () => {
    let closed = 0;
    function* gen(r: StepRecord[]) {
      try {
        yield* r;
      } finally {
        closed++;
      }
    }
    const r = await diff(gen(a), gen(b));
    expect(r.complete).toBe(false);
    expect(closed).toBe(2);
  });
});

/** An in-memory ChainSource over sealed records, with content fields moved into blobs on request. */
function source(
  records: StepRecord[],
  blobFields: string[] = [],
  drop: string[] = [],
): ChainSource & { blobReads: number } {
  const blobs = new Map<string, Uint8Array>();
  const lines: StoredLine[] = records.map((r) => {
    const copy: Record<string, unknown> = { ...r };
    for (const f of blobFields) {
      const text = canonicalJson(copy[f]);
      const digest = digestUtf8(text);
      const bytes = new TextEncoder().encode(text);
      if (!drop.includes(f)) blobs.set(digest, bytes);
      copy[f] = { '$stepchain:blob': { digest, size: bytes.length } };
    }
    return { segment: '0000000000000000.jsonl', seq: r.seq, text: canonicalJson(copy, { refuseReserved: false }) };
  });
  const src = {
    blobReads: 0,
    genesis: makeGenesis({ journalId: 'src', createdAt: '2026-01-01T00:00:00.000Z' }),
    async head() {
      const last = records[records.length - 1];
      return last ? { seq: last.seq, step_hash: last.step_hash } : null;
    },
    async *lines() {
      yield* lines;
    },
    async blob(d: string) {
      src.blobReads++;
      return blobs.get(d) ?? null;
    },
  };
  return src;
}

describe('ChainSource runs and blob references', () => {
  const big = (n: number) => ({ result: { doc: 'x'.repeat(50), n } });
  const a = sealRun([s(1, big(1)), s(2, big(2)), s(3, big(3))], A);
  const b = sealRun([s(1, big(1)), s(2, big(20)), s(3, big(3))], B);

  test('a source diffs like the records it holds; equal blob digests are never read', async () => {
    const srcA = source(a, ['result']);
    const srcB = source(b, ['result']);
    const r = await diff(srcA, srcB, { all: true });
    expect(r.divergences).toEqual([
      { kind: 'changed', seq_a: 1, seq_b: 1, fields: [{ path: '/result/n', kind: 'changed', a: 2, b: 20 }] },
    ]);
    expect(srcA.blobReads + srcB.blobReads).toBe(2);
  });

  test('the same value inline on one side and in a blob on the other is not a divergence', async () => {
    const r = await diff(source(a, ['result']), source(a), { all: true });
    expect(r.same).toBe(true);
  });

  test('an ignore pattern reaching into a blob-held field resolves it', async () => {
    const r = await diff(source(a, ['result']), source(b, ['result']), { ignore: ['/result/n'], all: true });
    expect(r.same).toBe(true);
  });

  test('a missing blob is BLOB_MISSING, a tampered one BLOB_INVALID', async () => {
    expect(await codeOf(diff(source(a, ['result'], ['result']), source(b, ['result'])))).toBe('BLOB_MISSING');
    const bad = source(a, ['result']);
    bad.blob = async () => new TextEncoder().encode('{"n":666}');
    expect(await codeOf(diff(bad, source(b, ['result'])))).toBe('BLOB_INVALID');
  });

  test('blob references without a source to resolve them compare as values', async () => {
    const ref = (d: string) => ({ '$stepchain:blob': { digest: d, size: 1 } });
    const r = await diff(
      [{ seq: 0, result: ref('sha256:' + '1'.repeat(64)) }] as never,
      [{ seq: 0, result: ref('sha256:' + '2'.repeat(64)) }] as never,
    );
    expect(r.divergences[0]).toMatchObject({ kind: 'changed', fields: [{ path: '/result', kind: 'changed' }] });
    expect(summarize(r)).toMatch(/^diverged at step 0: result ‹blob sha256:11111111…› → ‹blob sha256:22222222…›$/);
  });

  test('a stored line that is not JSON is BAD_STEP, not a SyntaxError', async () => {
    const src = source(a);
    src.lines = async function* () {
      yield { segment: 'x.jsonl', seq: 0, text: '{"seq":0,' };
    };
    expect(await codeOf(diff(src, a))).toBe('BAD_STEP');
  });

  test('hostile nesting is BAD_STEP, never a stack overflow', async () => {
    let deep = '0';
    for (let i = 0; i < 200_000; i++) deep = `[${deep}]`;
    const src = source(a);
    src.lines = async function* () {
      yield { segment: 'x.jsonl', seq: 0, text: `{"seq":0,"result":${deep}}` };
    };
    for (const ignore of [[], ['/result/**/x']]) {
      const e = await diff(src, a, { ignore }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(DiffError);
      expect((e as DiffError).code).toBe('BAD_STEP');
    }
  });

  test('redaction markers are compared whole, never descended into', async () => {
    const red = (c: string) => ({ '$stepchain:redacted': { commitment: 'sha256:' + c.repeat(64), rule: 'pii' } });
    const r = await diff(
      [{ seq: 0, input: { email: red('a') } }] as never,
      [{ seq: 0, input: { email: 'x@y.z' } }] as never,
    );
    expect(r.divergences[0]).toEqual({
      kind: 'changed',
      seq_a: 0,
      seq_b: 0,
      fields: [{ path: '/input/email', kind: 'changed', a: red('a'), b: 'x@y.z' }],
    });
    expect(summarize(r)).toBe('diverged at step 0: input.email ‹redacted› → "x@y.z"');
    expect((await diff([{ seq: 0, input: red('a') }] as never, [{ seq: 0, input: red('a') }] as never)).same).toBe(
      true,
    );
  });
});

describe('alignment', () => {
  const cases: Array<[string, number[], number[], Array<Record<string, unknown>>]> = [
    ['identical', [1, 2, 3], [1, 2, 3], []],
    ['one changed', [1, 2, 3], [1, 7, 3], [{ kind: 'changed', seq_a: 1, seq_b: 1 }]],
    ['one inserted', [1, 2, 3], [1, 2, 7, 3], [{ kind: 'inserted', seq_b: 2 }]],
    ['one deleted', [1, 2, 3], [1, 3], [{ kind: 'deleted', seq_a: 1 }]],
    ['inserted at the start', [1, 2], [0, 1, 2], [{ kind: 'inserted', seq_b: 0 }]],
    ['deleted at the start', [0, 1, 2], [1, 2], [{ kind: 'deleted', seq_a: 0 }]],
    [
      'two apart',
      [1, 2, 3, 4, 5],
      [1, 9, 3, 4, 5, 6],
      [
        { kind: 'changed', seq_a: 1, seq_b: 1 },
        { kind: 'inserted', seq_b: 5 },
      ],
    ],
    [
      'block of two inserted',
      [1, 2],
      [1, 8, 9, 2],
      [
        { kind: 'inserted', seq_b: 1 },
        { kind: 'inserted', seq_b: 2 },
      ],
    ],
    [
      'moved step',
      [1, 2, 3],
      [2, 3, 1],
      [
        { kind: 'deleted', seq_a: 0 },
        { kind: 'inserted', seq_b: 2 },
      ],
    ],
    [
      'nothing in common',
      [1, 2],
      [3, 4, 5],
      [
        { kind: 'changed', seq_a: 0, seq_b: 0 },
        { kind: 'changed', seq_a: 1, seq_b: 1 },
        { kind: 'inserted', seq_b: 2 },
      ],
    ],
    [
      'empty vs two',
      [],
      [1, 2],
      [
        { kind: 'inserted', seq_b: 0 },
        { kind: 'inserted', seq_b: 1 },
      ],
    ],
  ];
  test.each(cases)('%s', async (_name, xa, xb, expected) => {
    const r = await diff(sealRun(steps(...xa), A), sealRun(steps(...xb), B), { all: true });
    expect(
      r.divergences.map((d) => ({
        kind: d.kind,
        ...('seq_a' in d ? { seq_a: d.seq_a } : {}),
        ...('seq_b' in d ? { seq_b: d.seq_b } : {}),
      })),
    ).toEqual(expected);
    expect(r.same).toBe(expected.length === 0);
    expect(r.complete).toBe(true);
    expect(r.compared).toEqual({ a: xa.length, b: xb.length });
  });

  test('a cascade is avoided: after an insertion the rest lines up again', async () => {
    const xa = Array.from({ length: 50 }, (_, i) => i);
    const xb = [...xa.slice(0, 10), 100, ...xa.slice(10)];
    const r = await diff(sealRun(steps(...xa), A), sealRun(steps(...xb), B), { all: true });
    expect(r.divergences).toHaveLength(1);
    expect(r.divergences[0]).toMatchObject({ kind: 'inserted', seq_b: 10 });
  });

  test('the first divergence only by default, complete false', async () => {
    const r = await diff(sealRun(steps(1, 2, 3, 4), A), sealRun(steps(1, 7, 3, 8), B));
    expect(r.divergences).toHaveLength(1);
    expect(r.complete).toBe(false);
    expect(r.compared).toEqual({ a: 2, b: 2 });
  });

  test('complete is true when the first divergence is the last step', async () => {
    const r = await diff(sealRun(steps(1, 2), A), sealRun(steps(1, 3), B));
    expect(r.complete).toBe(true);
  });

  test('firstMatch finds the first common pair of a shortest edit script', () => {
    expect(firstMatch([], [])).toBeNull();
    expect(firstMatch(['a'], ['b'])).toBeNull();
    expect(firstMatch(['x', 'a', 'b'], ['a', 'b'])).toEqual([1, 0]);
    expect(firstMatch(['a', 'b'], ['y', 'z', 'a', 'b'])).toEqual([0, 2]);
    expect(firstMatch(['q', 'a', 'b', 'c'], ['r', 's', 'a', 'b', 'c'])).toEqual([1, 2]);
    // "c" could pair first, but the longest common subsequence is a, b.
    expect(firstMatch(['c', 'a', 'b'], ['a', 'b', 'c'])).toEqual([1, 0]);
  });

  test('pairBlock pairs by similarity, earliest on ties', () => {
    expect(pairBlock(1, 3, () => 0)).toEqual([[0, 0]]);
    expect(pairBlock(1, 3, (_i, j) => (j === 2 ? 1 : 0))).toEqual([[0, 2]]);
    expect(pairBlock(3, 1, (i) => (i === 1 ? 1 : 0))).toEqual([[1, 0]]);
    expect(pairBlock(2, 2, () => 0)).toEqual([
      [0, 0],
      [1, 1],
    ]);
    expect(pairBlock(0, 2, () => 0)).toEqual([]);
  });
});

describe('field differences and ignore patterns', () => {
  const one = async (x: StepInput, y: StepInput, ignore: string[] = []): Promise<DiffReport> =>
    diff(sealRun([x], A), sealRun([y], B), { ignore, all: true });

  test.each([
    ['string changed', { result: 'a' }, { result: 'b' }, [{ path: '/result', kind: 'changed', a: 'a', b: 'b' }]],
    [
      'number to string',
      { result: { n: 5 } },
      { result: { n: '5' } },
      [{ path: '/result/n', kind: 'type-changed', a: 5, b: '5' }],
    ],
    [
      'null to object',
      { tool_call: null },
      { tool_call: { name: 'x' } },
      [{ path: '/tool_call', kind: 'type-changed', a: null, b: { name: 'x' } }],
    ],
    ['object to array', { result: {} }, { result: [] }, [{ path: '/result', kind: 'type-changed', a: {}, b: [] }]],
    ['member added', { result: {} }, { result: { k: 1 } }, [{ path: '/result/k', kind: 'added', b: 1 }]],
    ['member removed', { result: { k: 1 } }, { result: {} }, [{ path: '/result/k', kind: 'removed', a: 1 }]],
    ['element removed', { result: [1, 2] }, { result: [1] }, [{ path: '/result/1', kind: 'removed', a: 2 }]],
    ['meta removed', { meta: { x: 1 } }, {}, [{ path: '/meta', kind: 'removed', a: { x: 1 } }]],
    ['-0 equals 0', { result: -0 }, { result: 0 }, []],
    ['key order does not matter', { result: { a: 1, b: 2 } }, { result: { b: 2, a: 1 } }, []],
    ['bool changed', { result: true }, { result: false }, [{ path: '/result', kind: 'changed', a: true, b: false }]],
    [
      'escaped tokens',
      { result: { 'a/b': { '~': 1 } } },
      { result: { 'a/b': { '~': 2 } } },
      [{ path: '/result/a~1b/~0', kind: 'changed', a: 1, b: 2 }],
    ],
    [
      'members in code-unit order',
      { result: { b: 1, B: 1, a: 1 } },
      { result: { b: 2, B: 2, a: 2 } },
      [
        { path: '/result/B', kind: 'changed', a: 1, b: 2 },
        { path: '/result/a', kind: 'changed', a: 1, b: 2 },
        { path: '/result/b', kind: 'changed', a: 1, b: 2 },
      ],
    ],
  ])('%s', async (_n, x, y, fields) => {
    const r = await one(x as StepInput, y as StepInput);
    expect(r.divergences).toEqual(fields.length === 0 ? [] : [{ kind: 'changed', seq_a: 0, seq_b: 0, fields }]);
  });

  const x = {
    result: {
      request_id: 'r1',
      data: {
        request_id: 'r2',
        items: [
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
        ],
      },
    },
    meta: { trace: 't1' },
  };
  const y = {
    result: {
      request_id: 'q1',
      data: {
        request_id: 'q2',
        items: [
          { id: 7, v: 'a' },
          { id: 8, v: 'c' },
        ],
      },
    },
    meta: { trace: 't2' },
  };
  test.each([
    [
      [],
      [
        '/meta/trace',
        '/result/data/items/0/id',
        '/result/data/items/1/id',
        '/result/data/items/1/v',
        '/result/data/request_id',
        '/result/request_id',
      ],
    ],
    [
      ['/result/**/request_id'],
      ['/meta/trace', '/result/data/items/0/id', '/result/data/items/1/id', '/result/data/items/1/v'],
    ],
    [
      ['/result/*/request_id'],
      [
        '/meta/trace',
        '/result/data/items/0/id',
        '/result/data/items/1/id',
        '/result/data/items/1/v',
        '/result/request_id',
      ],
    ],
    [
      ['/result/data/items/*/id'],
      ['/meta/trace', '/result/data/items/1/v', '/result/data/request_id', '/result/request_id'],
    ],
    [
      ['/**/id', '/**/request_id'],
      ['/meta/trace', '/result/data/items/1/v'],
    ],
    [
      ['/result/data/items/1'],
      ['/meta/trace', '/result/data/items/0/id', '/result/data/request_id', '/result/request_id'],
    ],
    [
      ['/meta'],
      [
        '/result/data/items/0/id',
        '/result/data/items/1/id',
        '/result/data/items/1/v',
        '/result/data/request_id',
        '/result/request_id',
      ],
    ],
    [['/*/**'], []],
    [['/result/**'], ['/meta/trace']],
  ])('ignore %j', async (ignore, paths) => {
    const r = await one(x, y, ignore);
    const got = r.divergences.flatMap((d) => (d.kind === 'changed' ? d.fields.map((f) => f.path) : []));
    expect(got.sort()).toEqual(paths);
    expect(r.ignore).toEqual(ignore);
  });

  test('reported values do not show ignored members', async () => {
    const r = await one({ result: null }, { result: { request_id: 'r', ok: true } }, ['/result/request_id']);
    expect(r.divergences[0]).toMatchObject({
      fields: [{ path: '/result', kind: 'type-changed', a: null, b: { ok: true } }],
    });
  });

  test('envelope: true compares v, seq, step_id, ts, prev_hash and step_hash, and ignore patterns reach them', async () => {
    const r = await diff(sealRun([s(1)], A), sealRun([s(1)], B), {
      envelope: true,
      ignore: ['/step_hash', '/prev_hash'],
    });
    expect(r.fields).toEqual([
      'input',
      'model',
      'prompt',
      'tool_call',
      'result',
      'meta',
      'v',
      'seq',
      'step_id',
      'ts',
      'prev_hash',
      'step_hash',
    ]);
    expect((r.divergences[0] as { fields: Array<{ path: string }> }).fields.map((f) => f.path)).toEqual([
      '/step_id',
      '/ts',
    ]);
  });

  test('maxFields caps the list and counts the rest', async () => {
    const r = await one({ result: [1, 2, 3, 4, 5] }, { result: [5, 4, 3, 2, 1] }, []);
    expect((r.divergences[0] as { fields: unknown[] }).fields).toHaveLength(4);
    const capped = await diff(sealRun([{ result: [1, 2, 3, 4, 5] }], A), sealRun([{ result: [5, 4, 3, 2, 1] }], B), {
      maxFields: 1,
    });
    expect(capped.divergences[0]).toMatchObject({ fields: [{ path: '/result/0' }], fields_omitted: 3 });
    expect(summarize(capped)).toBe('diverged at step 0: result[0] 1 → 5 (+3 more fields)');
  });
});

describe('the summary', () => {
  test.each([
    ['/tool_call/arguments/city', 'tool_call.arguments.city'],
    ['/result/items/3/name', 'result.items[3].name'],
    ['/result/a b', 'result["a b"]'],
    ['/result/a~1b', 'result["a/b"]'],
    ['/result/', 'result[""]'],
    ['/meta/$x', 'meta.$x'],
  ])('path %s reads as %s', (p, dotted) => {
    expect(dottedPath(p)).toBe(dotted);
  });

  test.each([
    ['short', 10, 'short'],
    ['0123456789', 10, '0123456789'],
    ['0123456789abc', 10, '01234…9abc'],
    ['😀😀😀😀😀😀😀😀', 5, '😀😀…😀😀'],
  ])('shorten(%j, %d)', (text, max, out) => {
    expect(shorten(text, max)).toBe(out);
    expect(Array.from(shorten(text, max)).length).toBeLessThanOrEqual(max);
  });

  test('the example from the issue, at step 17', async () => {
    const base = Array.from({ length: 20 }, (_, i) => s(i));
    const a = sealRun(
      [...base.slice(0, 17), { tool_call: { name: 'weather', arguments: { city: 'Paris' } } }, ...base.slice(18)],
      A,
    );
    const b = sealRun(
      [...base.slice(0, 17), { tool_call: { name: 'weather', arguments: { city: 'Lyon' } } }, ...base.slice(18)],
      B,
    );
    const r = await diff(a, b);
    expect(summarize(r)).toBe('diverged at step 17: tool_call.arguments.city "Paris" → "Lyon"');
  });

  test('long values are shortened in the middle; maxValueLength sets the limit', async () => {
    const r = await diff(sealRun([{ result: 'a'.repeat(100) + 'END' }], A), sealRun([{ result: 'b'.repeat(100) }], B));
    const line = summarize(r);
    expect(line).toBe(
      `diverged at step 0: result "${'a'.repeat(19)}…${'a'.repeat(15)}END" → "${'b'.repeat(19)}…${'b'.repeat(18)}"`,
    );
    expect(summarize(r, { maxValueLength: 10 })).toBe('diverged at step 0: result "aaaa…END" → "bbbb…bbb"');
  });

  test('different seqs, insertions and deletions read crisply', async () => {
    const r = await diff(sealRun(steps(1, 2, 3), A), sealRun(steps(0, 1, 2, 4), B), { all: true });
    expect(formatDiff(r).split('\n')).toEqual([
      'diverged at step 0: b has an extra step 0 not in a (tool_call step); 1 more divergent step',
      'compared 3 steps of a and 4 steps of b (fields: input, model, prompt, tool_call, result, meta)',
      'step 0 of b inserted (not in a): tool_call step',
      'step 2 of a / step 3 of b changed:',
      '  tool_call.arguments.n 3 → 4',
    ]);
  });

  test('formatDiff says when it stopped early and which patterns were ignored', async () => {
    const r = await diff(sealRun(steps(1, 2), A), sealRun(steps(3, 4), B), { ignore: ['/meta'] });
    const text = formatDiff(r);
    expect(text).toContain('; ignoring /meta)');
    expect(text.endsWith('stopped at the first divergence; pass { all: true } to list every one')).toBe(true);
  });
});
