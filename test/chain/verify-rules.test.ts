/**
 * The chain verifier's rules one at a time (spec/FORMAT.md §3.5, §5.1, §6.3): each envelope member broken
 * alone, markers of every wrong shape, the sequence and link rules on crafted chains, a partial chain's
 * start, over-long lines, locations and the report's own fields. Each case was a mutant that survived the
 * suite (npm run mutate; test/mutation/SURVIVORS.md). Lines are sealed with their true hash, so the only
 * problems reported are the ones a case plants.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { MAX_LINE_BYTES } from '../../src/canonical/limits.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { genesisHash, makeGenesis } from '../../src/record/formats.js';
import { sealRecord } from '../../src/record/seal.js';
import type { ChainReport, ProblemLocation } from '../../src/chain/report.js';
import { verifyChain } from '../../src/chain/files.js';
import { ChainVerifier, type VerifiedLine } from '../../src/chain/verifier.js';

const genesis = makeGenesis({ journalId: 'rules', createdAt: '2026-01-01T00:00:00.000Z' });
const G = genesisHash(genesis);
const B0 = '0000000000000000.jsonl';
const D = (c: string) => 'sha256:' + c.repeat(64);

type Fields = Record<string, unknown>;
const base = (seq: number, prev: string): Fields => ({
  v: 1,
  seq,
  step_id: `s-${seq}`,
  ts: '2026-01-01T00:00:00.000Z',
  prev_hash: prev,
  input: null,
  model: 'm',
  prompt: null,
  tool_call: null,
  result: seq,
});
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

describe('each envelope member broken alone (§5.1)', () => {
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

describe('the step hash wherever step_hash stands in the line (§5.2)', () => {
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

describe('sequence and link (§6.3)', () => {
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

describe('markers (§3.5)', () => {
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

describe("a partial chain's start", () => {
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

describe('lines over the limit (§4.2)', () => {
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

describe('locations of line defects', () => {
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

describe('the report', () => {
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
