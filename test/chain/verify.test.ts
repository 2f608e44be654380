import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { genesisHash, makeGenesis, sealRecord, type Genesis, type StepRecord } from '../../src/record/index.js';
import type { Problem, ChainReport, ProblemLocation } from '../../src/chain/report.js';
import { ChainVerifier, declaredFirstSeq, verifyChain, type VerifiedLine } from '../../src/chain/index.js';
import { buildChain, v1Fields, type ContentSpec } from '../helpers/chains.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';
import { MAX_LINE_BYTES } from '../../src/canonical/limits.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';

interface ChainCase {
  id: string;
  genesis?: Genesis;
  start?: { seq: number; prev_hash: string };
  expect_head?: string;
  files: Array<{ name: string; text?: string; base64?: string }>;
  expect: {
    ok: boolean;
    head: string | null;
    head_seq: number | null;
    steps: number;
    problems: Array<Record<string, unknown>>;
  };
}

const chains = loadVectors<ChainCase>('chains.json');

function summarize(problems: Problem[]) {
  return problems.map((p) => {
    const { file, line, column, seq, field } = p.location;
    return {
      code: p.code,
      ...(file !== undefined ? { file } : {}),
      ...(line !== undefined ? { line } : {}),
      ...(column !== undefined ? { column } : {}),
      ...(seq !== undefined ? { seq } : {}),
      ...(field !== undefined ? { field } : {}),
    };
  });
}

describe('FORMAT §13: the chains.json vectors', () => {
  test.each(chains.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const report = verifyChain({
      genesis: c.genesis ?? chains.genesis,
      ...(c.start ? { start: c.start } : {}),
      ...(c.expect_head ? { expectHead: c.expect_head } : {}),
      files: c.files.map((f) => ({ name: f.name, bytes: vectorBytes(f) })),
    });
    expect({
      ok: report.ok,
      head: report.head,
      head_seq: report.head_seq,
      steps: report.steps,
      problems: summarize(report.problems),
    }).toEqual(c.expect);
    for (const p of report.problems) expect(p.message.length).toBeGreaterThan(10);
  });

  test('feeding lines one at a time gives the same report as whole files', () => {
    for (const c of chains.cases) {
      const opts = {
        genesis: c.genesis ?? chains.genesis,
        ...(c.start ? { start: c.start } : {}),
        ...(c.expect_head ? { expectHead: c.expect_head } : {}),
      };
      const whole = verifyChain({ ...opts, files: c.files.map((f) => ({ name: f.name, bytes: vectorBytes(f) })) });
      const v = new ChainVerifier(opts);
      for (const f of c.files) {
        v.beginSegment(f.name, declaredFirstSeq(f.name));
        const bytes = vectorBytes(f);
        let start = 0;
        for (let nl = bytes.indexOf(10); nl >= 0; nl = bytes.indexOf(10, start)) {
          v.line(bytes.subarray(start, nl), true);
          start = nl + 1;
        }
        if (start < bytes.length) v.line(bytes.subarray(start), false);
      }
      expect(v.finish()).toEqual(whole);
    }
  });
});

const content = fc.record({
  input: fc.jsonValue({ maxDepth: 3 }),
  model: fc.constantFrom('gpt-4o', 'claude-sonnet-4', 'llama-3.1-70b'),
  prompt: fc.string({ maxLength: 80 }),
  tool_call: fc.option(
    fc.record({
      name: fc.constantFrom('search', 'http', 'read_file'),
      arguments: fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    }),
    { nil: null },
  ),
  result: fc.jsonValue({ maxDepth: 3 }),
});

const FIELDS = [
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
] as const;

/** A different, well-typed value for a field, so the line stays canonical and the damage is semantic. */
function mutate(record: StepRecord, field: (typeof FIELDS)[number], salt: number): StepRecord {
  const r: Record<string, unknown> = { ...record };
  switch (field) {
    case 'v':
      r.v = 2;
      break;
    case 'seq':
      r.seq = record.seq + 1 + salt;
      break;
    case 'step_id':
      r.step_id = `${record.step_id}x`;
      break;
    case 'ts':
      r.ts = new Date(Date.parse(record.ts) + 1 + salt).toISOString();
      break;
    case 'prev_hash':
    case 'step_hash': {
      const h = r[field] as string;
      const last = h.at(-1) === '0' ? '1' : '0';
      r[field] = h.slice(0, -1) + last;
      break;
    }
    case 'meta':
      r.meta = { ...(record.meta ?? {}), mutated: salt };
      break;
    default:
      r[field] = { was: record[field], mutated: salt };
  }
  return r as unknown as StepRecord;
}

/** The field a verifier can name: structurally checked envelope members name themselves; any other edit is witnessed only by the hash (spec/FORMAT.md §6.3 step 5). */
const WITNESS: Record<string, string> = { v: 'v', seq: 'seq', prev_hash: 'prev_hash', step_hash: 'step_hash' };

describe('FORMAT §6.3: chain verification properties', () => {
  test('every single-field mutation of any step is reported at that step, naming the field where it can be named', () => {
    fc.assert(
      fc.property(
        fc.array(content, { minLength: 1, maxLength: 6 }),
        fc.nat(),
        fc.constantFrom(...FIELDS),
        fc.nat({ max: 5 }),
        (contents, pick, field, salt) => {
          const chain = buildChain(contents as ContentSpec[]);
          const k = pick % chain.records.length;
          const damaged = mutate(chain.records[k]!, field, salt);
          const lines = [...chain.lines];
          lines[k] = canonicalJson(damaged, { refuseReserved: false }) + '\n';
          const report = verifyChain({
            genesis: chain.genesis,
            files: [{ name: '0000000000000000.jsonl', bytes: new TextEncoder().encode(lines.join('')) }],
          });
          expect(report.ok).toBe(false);
          const first = report.problems[0]!;
          expect(first.location.line).toBe(k + 1);
          const atStep = report.problems.filter((p) => p.location.line === k + 1).map((p) => p.location.field);
          expect(atStep).toContain(WITNESS[field] ?? 'step_hash');
        },
      ),
      { numRuns: 600 },
    );
  });

  test('any byte flipped, deleted or inserted in a chain is detected at or before the damaged line', () => {
    fc.assert(
      fc.property(
        fc.array(content, { minLength: 1, maxLength: 5 }),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        fc.constantFrom('flip', 'delete', 'insert'),
        (contents, at, byte, how) => {
          const chain = buildChain(contents as ContentSpec[]);
          const bytes = chain.bytes;
          const i = at % bytes.length;
          let damaged: Uint8Array;
          if (how === 'flip') {
            damaged = bytes.slice();
            damaged[i] = damaged[i]! ^ byte;
          } else if (how === 'delete') damaged = new Uint8Array([...bytes.subarray(0, i), ...bytes.subarray(i + 1)]);
          else damaged = new Uint8Array([...bytes.subarray(0, i), byte, ...bytes.subarray(i)]);
          const head = chain.records.at(-1)!.step_hash;
          const report = verifyChain({
            genesis: chain.genesis,
            expectHead: head,
            files: [{ name: '0000000000000000.jsonl', bytes: damaged }],
          });
          expect(report.ok).toBe(false);
          const damagedLine = bytes.subarray(0, i).filter((b) => b === 10).length + 1;
          expect(report.problems[0]!.location.line ?? Infinity).toBeLessThanOrEqual(damagedLine + 1);
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('the verifier never throws on arbitrary bytes, and reports them as problems', () => {
    const genesis = buildChain([]).genesis;
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 200 }), { maxLength: 3 }), (files) => {
        const report = verifyChain({
          genesis,
          files: files.map((bytes, i) => ({ name: `${String(i).padStart(16, '0')}.jsonl`, bytes })),
        });
        if (files.some((f) => f.length > 0)) expect(report.ok).toBe(false);
        expect(Array.isArray(report.problems)).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });

  test('the verifier never throws on arbitrary genesis values and partial starts', () => {
    const chain = buildChain([{ model: 'm' }]);
    fc.assert(
      fc.property(fc.anything(), (genesis) => {
        const report = verifyChain({ genesis, files: [{ name: 'x.jsonl', bytes: chain.bytes }] });
        expect(typeof report.ok).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  test('valid chains verify, and the head is the last step hash', () => {
    fc.assert(
      fc.property(fc.array(content, { maxLength: 8 }), (contents) => {
        const chain = buildChain(contents as ContentSpec[]);
        const report = verifyChain({
          genesis: chain.genesis,
          files: [{ name: '0000000000000000.jsonl', bytes: chain.bytes }],
        });
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        expect(report.head).toBe(chain.records.at(-1)?.step_hash ?? null);
        expect(report.steps).toBe(contents.length);
      }),
      { numRuns: 300 },
    );
  });

  test('the problem list is capped, and a capped report is never ok', () => {
    const genesis = buildChain([]).genesis;
    const garbage = new TextEncoder().encode('x\n'.repeat(5000));
    const report = verifyChain({ genesis, maxProblems: 100, files: [{ name: 'g.jsonl', bytes: garbage }] });
    expect(report.problems).toHaveLength(100);
    expect(report.problems_truncated).toBe(true);
    expect(report.ok).toBe(false);
  });

  test('a sealed record verifies whatever the content, including markers', () => {
    const chain = buildChain([
      { result: { '$stepchain:blob': { digest: 'sha256:' + 'a'.repeat(64), size: 3 } } as never },
    ]);
    const report = verifyChain({
      genesis: chain.genesis,
      files: [{ name: '0000000000000000.jsonl', bytes: chain.bytes }],
    });
    expect(report.ok).toBe(true);
    const { step_hash, ...unsealed } = chain.records[0]!;
    expect(sealRecord(unsealed).record.step_hash).toBe(step_hash);
  });
});

/**
 * The chain verifier's rules one at a time (spec/FORMAT.md §3.5, §5.1, §6.3): each envelope member broken
 * alone, markers of every wrong shape, the sequence and link rules on crafted chains, a partial chain's
 * start, over-long lines, locations and the report's own fields. Each case was a mutant that survived the
 * suite (npm run mutate; test/mutation/SURVIVORS.md). Lines are sealed with their true hash, so the only
 * problems reported are the ones a case plants.
 */
const genesis = makeGenesis({ journalId: 'rules', createdAt: '2026-01-01T00:00:00.000Z' });
const G = genesisHash(genesis);
const B0 = '0000000000000000.jsonl';
const D = (c: string) => 'sha256:' + c.repeat(64);

type Fields = Record<string, unknown>;
const base = (seq: number, prev: string): Fields => v1Fields(seq, prev);
/** A sealed line: the record with `changes` (undefined removes a member), its true step_hash added. */
function line(seq: number, prev: string, changes: Fields = {}): { text: string; hash: string } {
  const r: Fields = { ...base(seq, prev), ...changes };
  for (const k of Object.keys(r)) if (r[k] === undefined) delete r[k];
  const { record, line } = sealRecord(r as never);
  return { text: line, hash: record.step_hash };
}
/** A chain of n clean lines from the genesis. */
function clean(n: number): Array<{ text: string; hash: string }> {
  const out: Array<{ text: string; hash: string }> = [];
  for (let i = 0; i < n; i++) out.push(line(i, i === 0 ? G : out[i - 1]!.hash));
  return out;
}
const enc = new TextEncoder();
function verify(
  texts: string[],
  options: { name?: string; expectHead?: string; start?: { seq: number; prev_hash: string } } = {},
): ChainReport {
  return verifyChain({
    genesis,
    ...(options.start ? { start: options.start } : {}),
    ...(options.expectHead ? { expectHead: options.expectHead } : {}),
    files: [{ name: options.name ?? B0, bytes: enc.encode(texts.join('')) }],
  });
}
const codes = (r: ChainReport) => r.problems.map((p) => p.code);
const where = (r: ChainReport) => r.problems.map((p) => ({ code: p.code, ...p.location }));

describe('FORMAT §5.1: each envelope member broken alone', () => {
  test.each([
    ['seq -1', { seq: -1 }, ['FIELD_INVALID'], 'seq'],
    ['seq 1.5', { seq: 1.5 }, ['FIELD_INVALID'], 'seq'],
    ['seq as a string', { seq: '0' }, ['FIELD_INVALID'], 'seq'],
    ['seq 2^53', { seq: 2 ** 53 }, ['FIELD_INVALID'], 'seq'],
    ['prev_hash not a digest', { prev_hash: 'sha256:XYZ' }, ['FIELD_INVALID'], 'prev_hash'],
    ['prev_hash null', { prev_hash: null }, ['FIELD_INVALID'], 'prev_hash'],
    ['step_id starting with a dot', { step_id: '.x' }, ['FIELD_INVALID'], 'step_id'],
    ['ts without milliseconds', { ts: '2026-01-01T00:00:00Z' }, ['FIELD_INVALID'], 'ts'],
    ['ts in year 10000', { ts: '+010000-01-01T00:00:00.000Z' }, ['FIELD_INVALID'], 'ts'],
    ['v as the string "1"', { v: '1' }, ['FIELD_INVALID'], 'v'],
    ['v true', { v: true }, ['FIELD_INVALID'], 'v'],
    ['v 2', { v: 2 }, ['UNSUPPORTED_VERSION'], 'v'],
    ['meta an array', { meta: [] }, ['FIELD_INVALID'], 'meta'],
    ['meta a string', { meta: 'x' }, ['FIELD_INVALID'], 'meta'],
    ['meta null', { meta: null }, ['FIELD_INVALID'], 'meta'],
    ['an unknown member', { zz: 1 }, ['UNKNOWN_FIELD'], 'zz'],
  ])('%s', (_what, changes, expected, field) => {
    const r = verify([line(0, G, changes).text]);
    expect(codes(r)).toEqual(expected);
    expect(r.problems[0]!.location.field).toBe(field);
  });

  test.each(['input', 'model', 'prompt', 'tool_call', 'result', 'seq', 'prev_hash', 'step_id', 'ts', 'v'])(
    '%s missing: MISSING_FIELD alone, not also FIELD_INVALID',
    (name) => {
      const r = verify([line(0, G, { [name]: undefined }).text]);
      expect(codes(r)).toEqual(['MISSING_FIELD']);
      expect(r.problems[0]!.location.field).toBe(name);
    },
  );

  test('meta absent is no problem; an object is fine', () => {
    expect(verify([line(0, G).text]).ok).toBe(true);
    expect(verify([line(0, G, { meta: {} }).text]).ok).toBe(true);
  });

  test('a step with an unreadable seq is located without a seq; a readable one with it', () => {
    const bad = verify([line(0, G, { step_id: '.x', seq: -1 }).text]);
    for (const p of bad.problems) expect(Object.keys(p.location)).not.toContain('seq');
    const good = verify([line(0, G, { step_id: '.x' }).text]);
    expect(good.problems[0]!.location).toEqual({ file: B0, line: 1, seq: 0, field: 'step_id' });
  });
});

describe('FORMAT §5.2: the step hash wherever step_hash stands in the line', () => {
  // step_hash is usually in the middle; with members missing it can be the first or the last.
  test.each([
    ['first: only later members', { v: 1 }],
    ['first and alone', {}],
    ['last: only earlier members', { input: 1, seq: 0 }],
    ['in the middle', { input: 1, ts: 'x' }],
  ])('%s', (_what, members) => {
    const preimage = canonicalJson(members);
    const hash = digestUtf8(preimage);
    const sealed = canonicalJson({ ...members, step_hash: hash });
    const r = verify([sealed + '\n']);
    expect(codes(r)).not.toContain('HASH_MISMATCH');
    const wrong = canonicalJson({ ...members, step_hash: D('0') });
    expect(codes(verify([wrong + '\n']))).toContain('HASH_MISMATCH');
  });
});

describe('FORMAT §6.3: sequence and link', () => {
  test('a line with an unreadable seq leaves room for one step: the next seq may be one further', () => {
    const a = line(0, G);
    const b = line(1, a.hash, { seq: 'one' });
    const c = line(2, b.hash);
    expect(codes(verify([a.text, b.text, c.text]))).toEqual(['FIELD_INVALID']);
    const d = line(3, b.hash);
    expect(codes(verify([a.text, b.text, d.text]))).toEqual(['FIELD_INVALID', 'SEQ_GAP']);
  });

  test('an unreadable seq is not out of order, and is no misnamed bucket', () => {
    const [a] = clean(1);
    const b = line(1, a!.hash, { seq: -1 });
    expect(codes(verify([a!.text, b.text]))).toEqual(['FIELD_INVALID']);
    expect(codes(verify([line(0, G, { seq: null }).text]))).toEqual(['FIELD_INVALID']);
  });

  test('the same seq again with other content is out of order, not a duplicate', () => {
    const [a, b] = clean(2);
    const again = line(1, a!.hash, { result: 'other' });
    expect(codes(verify([a!.text, b!.text, again.text]))).toEqual(['SEQ_OUT_OF_ORDER', 'LINK_BROKEN']);
  });

  test('a line repeated exactly is one DUPLICATE_STEP; with its seq edited (hash kept) it is not', () => {
    const [a, b, c] = clean(3);
    expect(codes(verify([a!.text, b!.text, b!.text, c!.text]))).toEqual(['DUPLICATE_STEP']);
    const edited = b!.text.replace('"seq":1,', '"seq":0,');
    // the edited line: its hash, its seq, its link; then step 2 follows a seq of 0
    expect(codes(verify([a!.text, b!.text, edited, c!.text]))).toEqual([
      'HASH_MISMATCH',
      'SEQ_OUT_OF_ORDER',
      'LINK_BROKEN',
      'SEQ_GAP',
    ]);
  });

  test('two lines with the same unreadable step_hash and seq are not a duplicate', () => {
    const [a] = clean(1);
    const bad = line(1, a!.hash, { result: 'x' }).text.replace(/"step_hash":"[^"]+"/, '"step_hash":"nope"');
    const r = verify([a!.text, bad, bad]);
    expect(codes(r)).toEqual(['FIELD_INVALID', 'FIELD_INVALID', 'SEQ_OUT_OF_ORDER']);
  });

  test('BUCKET_MISNAMED only for a file named like a bucket, whatever folder it is in', () => {
    const lines = clean(2).map((l) => l.text);
    expect(codes(verify(lines, { name: 'chain.jsonl' }))).toEqual([]);
    expect(codes(verify(lines, { name: 'chain/0000000000000005.jsonl' }))).toEqual(['BUCKET_MISNAMED']);
    expect(codes(verify(lines, { name: 'chain/0000000000000000.jsonl' }))).toEqual([]);
  });
});

describe('FORMAT §3.5: markers', () => {
  const blob = (body: unknown) => ({ '$stepchain:blob': body });
  const red = (body: unknown) => ({ '$stepchain:redacted': body });
  const okBlob = { digest: D('a'), size: 3 };
  const okRed = { commitment: D('b'), rule: 'secrets' };
  test.each([
    ['a valid blob reference', { result: blob(okBlob) }, []],
    ['a blob of size 0', { result: blob({ digest: D('a'), size: 0 }) }, []],
    ['a blob reference inside a content field', { result: { x: blob(okBlob) } }, ['MARKER_INVALID']],
    ['a blob reference as meta', { meta: blob(okBlob) }, ['MARKER_INVALID']],
    ['a blob with a third member', { result: blob({ ...okBlob, extra: 1 }) }, ['MARKER_INVALID']],
    ['a blob without size', { result: blob({ digest: D('a') }) }, ['MARKER_INVALID']],
    ['a blob with a negative size', { result: blob({ digest: D('a'), size: -1 }) }, ['MARKER_INVALID']],
    ['a blob with a fractional size', { result: blob({ digest: D('a'), size: 1.5 }) }, ['MARKER_INVALID']],
    ['a blob with a string size', { result: blob({ digest: D('a'), size: '3' }) }, ['MARKER_INVALID']],
    ['a blob with a bad digest', { result: blob({ digest: 'sha256:00', size: 3 }) }, ['MARKER_INVALID']],
    ['a blob body that is an array', { result: blob([D('a'), 3]) }, ['MARKER_INVALID']],
    ['a blob body that is null', { result: blob(null) }, ['MARKER_INVALID']],
    ['a blob body that is a string', { result: blob(D('a')) }, ['MARKER_INVALID']],
    ['a valid redaction marker', { result: { a: red(okRed) } }, []],
    ['a redaction marker with text', { result: red({ ...okRed, text: 'sk-[REDACTED]' }) }, []],
    ['a redaction marker as meta', { meta: red(okRed) }, []],
    ['a redaction marker with an extra member', { result: red({ ...okRed, note: 'x' }) }, ['MARKER_INVALID']],
    ['a redaction marker with non-string text', { result: red({ ...okRed, text: 1 }) }, ['MARKER_INVALID']],
    ['a redaction marker with a bad commitment', { result: red({ ...okRed, commitment: 'x' }) }, ['MARKER_INVALID']],
    ['a redaction marker with a bad rule', { result: red({ ...okRed, rule: '-bad' }) }, ['MARKER_INVALID']],
    ['a redaction marker without a rule', { result: red({ commitment: D('b') }) }, ['MARKER_INVALID']],
    ['a redaction body that is an array', { result: red([]) }, ['MARKER_INVALID']],
    ['a redaction body that is null', { result: red(null) }, ['MARKER_INVALID']],
    [
      'an unknown marker name, even with a valid redaction body',
      { result: { '$stepchain:other': okRed } },
      ['MARKER_INVALID'],
    ],
    ['a marker with two members', { result: { ...blob(okBlob), ...red(okRed) } }, ['MARKER_INVALID']],
  ])('%s', (_what, changes, expected) => {
    expect(codes(verify([line(0, G, changes).text]))).toEqual(expected);
  });

  test('a marker under a member whose name holds / or ~ is located with the name unescaped as its field', () => {
    const r = verify([line(0, G, { 'x/y': { '$stepchain:other': 1 }, 'x~y': { '$stepchain:other': 2 } }).text]);
    const markers = r.problems
      .filter((p) => p.code === 'MARKER_INVALID')
      .map((p) => [p.location.field, p.location.path]);
    expect(markers).toEqual([
      ['x/y', '/x~1y'],
      ['x~y', '/x~0y'],
    ]);
  });

  test('a valid blob reference is handed to onLine with its field; an invalid one is not', () => {
    const seen: VerifiedLine[] = [];
    const v = new ChainVerifier({ genesis, onLine: (l) => seen.push(l) });
    v.beginSegment(B0, 0);
    const a = line(0, G, { input: blob(okBlob) });
    v.line(a.text.slice(0, -1), true);
    v.line(line(1, a.hash, { result: blob({ digest: D('c'), size: -1 }) }).text.slice(0, -1), true);
    expect(seen[0]!.blobs).toEqual([{ field: 'input', digest: D('a'), size: 3 }]);
    expect(seen[1]!.blobs).toEqual([]);
    expect(seen.map((l) => l.clean)).toEqual([true, false]);
  });
});

describe("FORMAT §6.3: a partial chain's start", () => {
  const [a, b] = clean(2);
  test.each([
    [{ seq: -1, prev_hash: D('a') }],
    [{ seq: 1.5, prev_hash: D('a') }],
    [{ seq: '1', prev_hash: D('a') }],
    [{ seq: 2 ** 53, prev_hash: D('a') }],
    [{ seq: 1, prev_hash: 'sha256:x' }],
  ])('%j is GENESIS_INVALID', (start) => {
    const r = verify([b!.text], { start: start as never, name: '0000000000000001.jsonl' });
    expect(codes(r)[0]).toBe('GENESIS_INVALID');
    expect(r.start_seq).toBe(
      typeof start.seq === 'number' && Number.isSafeInteger(start.seq) && start.seq >= 0 ? start.seq : 0,
    );
    expect(r.start_hash).toBe(start.prev_hash.length === 71 ? start.prev_hash : null);
  });

  test('a valid start is taken as given', () => {
    const r = verify([b!.text], { start: { seq: 1, prev_hash: a!.hash }, name: '0000000000000001.jsonl' });
    expect(codes(r)).toEqual([]);
    expect([r.start_seq, r.start_hash]).toEqual([1, a!.hash]);
  });
});

describe('FORMAT §4.2: lines over the limit', () => {
  test('an over-long line is LINE_TOO_LONG, counted as a step, and the next line is numbered after it', () => {
    const v = new ChainVerifier({ genesis });
    v.beginSegment(B0, 0);
    v.line('x'.repeat(MAX_LINE_BYTES), true); // with its newline, one byte over
    v.longLine(MAX_LINE_BYTES * 2);
    v.line('x'.repeat(MAX_LINE_BYTES - 1), true); // exactly at the limit: read, and malformed
    const r = v.finish();
    expect(where(r).map(({ code, line }) => [code, line])).toEqual([
      ['LINE_TOO_LONG', 1],
      ['LINE_TOO_LONG', 2],
      ['MALFORMED_LINE', 3],
    ]);
    expect(r.steps).toBe(3);
  });

  test('without a file name, locations carry only the line', () => {
    const v = new ChainVerifier({ genesis });
    v.longLine(MAX_LINE_BYTES);
    v.line('[1]', true);
    v.line('{"a":tru}', true);
    const r = v.finish();
    expect(r.problems.map((p) => p.location)).toEqual<ProblemLocation[]>([
      { line: 1 },
      { line: 2 },
      { line: 3, column: 9, path: '/a' },
    ]);
    for (const p of r.problems) expect(Object.keys(p.location)).not.toContain('file');
  });
});

describe('FORMAT §4.3, §6.4: locations of line defects', () => {
  test('a canonical line that is no object: MALFORMED_LINE without a column', () => {
    for (const text of ['[]', '"x"', '1', 'null']) {
      const r = verify([text + '\n']);
      expect(codes(r)).toEqual(['MALFORMED_LINE']);
      expect(r.problems[0]!.location).toEqual({ file: B0, line: 1 });
    }
  });

  test('field is named only for a member of §5.1', () => {
    const inside = verify(['{"input":{"a":tru}}\n']);
    expect(inside.problems[0]!.location).toMatchObject({ field: 'input', path: '/input/a' });
    const unknown = verify(['{"zz":{"a":tru}}\n']);
    expect(Object.keys(unknown.problems[0]!.location)).not.toContain('field');
    const root = verify(['{"a":1}x\n']);
    expect(Object.keys(root.problems[0]!.location)).not.toContain('field');
  });
});

describe('FORMAT §6.4: the report', () => {
  test('HEAD_MISMATCH is located at the last step, with its seq when it has one', () => {
    const lines = clean(3);
    const r = verify(
      lines.map((l) => l.text),
      { expectHead: D('e') },
    );
    expect(where(r)).toEqual([{ code: 'HEAD_MISMATCH', file: B0, line: 3, seq: 2, field: 'step_hash' }]);
    const empty = verifyChain({ genesis, files: [], expectHead: D('e') });
    expect(where(empty)).toEqual([{ code: 'HEAD_MISMATCH', field: 'step_hash' }]);
  });

  test('a last line with a readable seq but no readable step_hash: no head, no head_seq', () => {
    const [a] = clean(1);
    const bad = line(1, a!.hash).text.replace(/"step_hash":"[^"]+"/, '"step_hash":"nope"');
    const r = verify([a!.text, bad]);
    expect([r.head, r.head_seq]).toEqual([null, null]);
    const withHead = verify([a!.text, bad], { expectHead: D('e') });
    expect(where(withHead).at(-1)).toEqual({ code: 'HEAD_MISMATCH', file: B0, line: 2, field: 'step_hash' });
  });

  test('warnings is an empty list; ok, steps and the start are as walked', () => {
    const r = verify(clean(2).map((l) => l.text));
    expect(r).toMatchObject({
      ok: true,
      steps: 2,
      start_seq: 0,
      start_hash: G,
      head_seq: 1,
      warnings: [],
      problems_truncated: false,
    });
  });
});
