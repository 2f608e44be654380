/**
 * The per-line check and what the verifier does with its facts (spec/FORMAT.md §4.3, §6.3): the column of
 * the first byte that is not UTF-8, the per-line check from bytes (what a worker thread runs), lines given
 * as strings measured in UTF-8 bytes, a v2 relation defect on a stored line, hashes that are strings, which
 * lines reach `onLine`, and a problem budget shared by several lists. Each case was a mutant that survived
 * the chain suites (npm run mutate; test/mutation/SURVIVORS.md, src/chain).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { MAX_LINE_BYTES } from '../../src/canonical/limits.js';
import { checkLine, checkLineBytes } from '../../src/chain/line.js';
import { ProblemBudget, ProblemList } from '../../src/chain/problems.js';
import type { ChainReport } from '../../src/chain/report.js';
import { ChainVerifier, type ChainVerifierOptions, type VerifiedLine } from '../../src/chain/verifier.js';
import { formatOf, genesisHash, makeGenesis } from '../../src/record/formats.js';
import type { JournalFormat, RecordProfile } from '../../src/record/profile.js';
import { sealRecord } from '../../src/record/seal.js';
import { v1Fields } from '../helpers/chains.js';

const genesis = makeGenesis({ journalId: 'line-rules', createdAt: '2026-01-01T00:00:00.000Z' });
const G = genesisHash(genesis);
const V1 = formatOf(genesis);
const B0 = '0000000000000000.jsonl';
const enc = new TextEncoder();
const RUNS = Number(process.env.RUNS ?? 100);

/** A sealed v1 line without its newline, and its step hash. */
function line(seq: number, prev: string, result: unknown = seq): { text: string; hash: string } {
  const { record, line } = sealRecord(v1Fields(seq, prev, result) as never);
  return { text: line.slice(0, -1), hash: record.step_hash };
}
function chain(n: number): Array<{ text: string; hash: string }> {
  const out: Array<{ text: string; hash: string }> = [];
  for (let i = 0; i < n; i++) out.push(line(i, i === 0 ? G : out[i - 1]!.hash));
  return out;
}
/** Walks `texts` (without newlines) as one bucket, each as bytes or as a string; the report and what onLine saw. */
function walk(
  texts: string[],
  as: 'bytes' | 'string',
  options: ChainVerifierOptions = { genesis },
): { report: ChainReport; seen: VerifiedLine[] } {
  const seen: VerifiedLine[] = [];
  const v = new ChainVerifier({ ...options, onLine: (l) => void seen.push(l) });
  v.beginSegment(B0, 0);
  for (const t of texts) v.line(as === 'bytes' ? enc.encode(t) : t, true);
  return { report: v.finish(), seen };
}

describe('FORMAT §4.3: a line that is not UTF-8 is MALFORMED_LINE at the first byte that cannot continue', () => {
  /** Bytes that can begin no UTF-8 sequence. */
  const neverFirst = fc.oneof(fc.integer({ min: 0x80, max: 0xc1 }), fc.integer({ min: 0xf5, max: 0xff }));
  /** A sequence broken early: its lead byte(s), then a byte that may not follow them (§4.3's table). */
  const broken = fc.constantFrom(
    [0xe0, 0x80],
    [0xe0, 0x41],
    [0xed, 0xa0],
    [0xf0, 0x8f],
    [0xf4, 0x90],
    [0xc3, 0xc3],
    [0xe2, 0x82, 0x41],
    [0xf0, 0x9f, 0x98, 0x20],
    [0xc2, 0x7b],
  );
  /** A sequence cut short by the end of the line. */
  const cut = fc.constantFrom([0xc3], [0xe2], [0xe2, 0x82], [0xf0, 0x9f], [0xf0, 0x9f, 0x98]);
  const text = fc.string({ unit: 'grapheme', maxLength: 12 });

  /** What the verifier reports for the line, and what the per-line check from bytes finds. */
  function facts(bytes: Uint8Array) {
    const v = new ChainVerifier({ genesis });
    v.beginSegment(B0, 0);
    v.line(bytes, true);
    return { verifier: v.finish().problems, worker: checkLineBytes(bytes, V1) };
  }

  test('a byte that begins no sequence is reported itself, after any valid prefix', () => {
    fc.assert(
      fc.property(text, neverFirst, text, (before, bad, after) => {
        const prefix = enc.encode(before);
        const bytes = new Uint8Array([...prefix, bad, ...enc.encode(after)]);
        const { verifier, worker } = facts(bytes);
        expect(verifier).toEqual([
          {
            code: 'MALFORMED_LINE',
            message: expect.any(String),
            location: { file: B0, line: 1, column: prefix.length + 1 },
          },
        ]);
        // Nothing of an unreadable line is known: no members, no blobs, no markers.
        expect(worker).toEqual({
          readable: false,
          seq: null,
          prevHash: null,
          stepHash: null,
          blobs: [],
          markers: [],
          problems: [{ code: 'MALFORMED_LINE', message: expect.any(String), location: { column: prefix.length + 1 } }],
        });
      }),
      { numRuns: RUNS },
    );
  });

  test('a sequence broken early is reported at the byte that breaks it, not at its lead byte', () => {
    fc.assert(
      fc.property(text, broken, text, (before, seq, after) => {
        const prefix = enc.encode(before);
        const bytes = new Uint8Array([...prefix, ...seq, ...enc.encode(after)]);
        const { verifier, worker } = facts(bytes);
        const column = prefix.length + seq.length; // the last byte of `seq` is the one that breaks it
        expect(verifier.map((p) => [p.code, p.location])).toEqual([['MALFORMED_LINE', { file: B0, line: 1, column }]]);
        expect(worker.problems.map((p) => [p.code, p.location])).toEqual([['MALFORMED_LINE', { column }]]);
      }),
      { numRuns: RUNS },
    );
  });

  test('a sequence cut short by the end of the line is reported where the newline stands (|L| + 1)', () => {
    fc.assert(
      fc.property(text, cut, (before, seq) => {
        const bytes = new Uint8Array([...enc.encode(before), ...seq]);
        const { verifier, worker } = facts(bytes);
        expect(verifier.map((p) => [p.code, p.location])).toEqual([
          ['MALFORMED_LINE', { file: B0, line: 1, column: bytes.length + 1 }],
        ]);
        expect(worker.problems.map((p) => [p.code, p.location])).toEqual([
          ['MALFORMED_LINE', { column: bytes.length + 1 }],
        ]);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("FORMAT §4.3: checkLineBytes, the per-line check a worker thread runs on a stored line's bytes", () => {
  test('a good line: readable, its seq, prev_hash and step_hash, as checkLine finds them on its text', () => {
    const [a, b] = chain(2);
    for (const l of [a!, b!]) {
      const facts = checkLineBytes(enc.encode(l.text), V1);
      expect(facts).toEqual(checkLine(l.text, V1));
      expect(facts).toMatchObject({ readable: true, problems: [], stepHash: l.hash });
    }
    expect(checkLineBytes(enc.encode(b!.text), V1)).toMatchObject({ seq: 1, prevHash: a!.hash });
  });

  test('a line over the limit is LINE_TOO_LONG without being read; one at the limit is read', () => {
    const over = checkLineBytes(new Uint8Array(MAX_LINE_BYTES), V1); // with its newline, one byte over
    expect(over).toMatchObject({ readable: false, problems: [{ code: 'LINE_TOO_LONG', location: {} }] });
    const at = checkLineBytes(new Uint8Array(MAX_LINE_BYTES - 1).fill(0x7b), V1);
    expect(at.problems.map((p) => p.code)).toEqual(['MALFORMED_LINE']);
  });

  test('the verifier, given bytes, reports an over-long line the same way', () => {
    const v = new ChainVerifier({ genesis });
    v.beginSegment(B0, 0);
    v.line(new Uint8Array(MAX_LINE_BYTES), true);
    expect(v.finish().problems.map((p) => [p.code, p.location])).toEqual([['LINE_TOO_LONG', { file: B0, line: 1 }]]);
  });
});

describe('FORMAT §4.2: lines given as strings are measured in UTF-8 bytes', () => {
  test('fewer UTF-16 units than the limit, more bytes: LINE_TOO_LONG; the same line as bytes: the same', () => {
    const text = 'é'.repeat(MAX_LINE_BYTES / 2); // 2 bytes each: with its newline, one byte over
    expect(walk([text], 'string').report.problems.map((p) => p.code)).toEqual(['LINE_TOO_LONG']);
    expect(walk([text], 'bytes').report.problems.map((p) => p.code)).toEqual(['LINE_TOO_LONG']);
  });

  test('a long string within the limit is read', () => {
    const text = 'é'.repeat(MAX_LINE_BYTES / 2 - 1);
    expect(walk([text], 'string').report.problems.map((p) => [p.code, p.location.column])).toEqual([
      ['MALFORMED_LINE', 1],
    ]);
  });

  test('a chain given as strings is reported and observed exactly as the same chain given as bytes', () => {
    const [a, b, c] = chain(3);
    const texts = [a!.text, b!.text, b!.text, line(5, b!.hash).text, 'x', c!.text.replace('"result":2', '"result":3')];
    const strings = walk(texts, 'string');
    expect(strings).toEqual(walk(texts, 'bytes'));
    expect(strings.report.problems.length).toBeGreaterThan(0);
  });
});

describe('FORMAT §11.3: a v2 record whose members break a rule between them is readable and linked', () => {
  const g2 = makeGenesis({ journalId: 'run-1', createdAt: '2026-01-01T00:00:00.000Z', format: 'stepchain/v2' });
  const V2 = formatOf(g2);
  const profile = V2.records[0]!;
  const seal = (seq: number, prev: string, content: Record<string, unknown>) => {
    const texts: Record<string, string> = {};
    for (const [k, v] of Object.entries({
      kind: 'step',
      ref: null,
      input: null,
      model: null,
      prompt: null,
      tool_call: null,
      result: null,
      error: null,
      ...content,
    }))
      texts[k] = canonicalJson(v as never, { refuseReserved: false });
    const { line, stepHash } = profile.seal(texts, {
      seq,
      stepId: `s-${seq}`,
      ts: '2026-01-01T00:00:00.000Z',
      prevHash: prev,
      salt: '0'.repeat(32),
    });
    return { text: line.slice(0, -1), hash: stepHash };
  };

  test.each([
    ['a step with a ref', { ref: 'start-1' }, 'ref'],
    ['a tool.completed without one', { kind: 'tool.completed' }, 'ref'],
    ['a tool.failed without an error', { kind: 'tool.failed', ref: 'start-1' }, 'error'],
    ['a step with an error', { error: 'boom' }, 'error'],
  ])('%s: FIELD_INVALID at that member, and the chain goes on', (_, content, field) => {
    const a = seal(0, genesisHash(g2), content);
    const b = seal(1, a.hash, {});
    const { report, seen } = walk([a.text, b.text], 'bytes', { genesis: g2 });
    expect(report.problems.map((p) => ({ code: p.code, ...p.location }))).toEqual([
      { code: 'FIELD_INVALID', file: B0, line: 1, seq: 0, field },
    ]);
    expect([report.head, report.head_seq]).toEqual([b.hash, 1]);
    expect(seen.map((l) => [l.seq, l.step_hash, l.clean])).toEqual([
      [0, a.hash, false],
      [1, b.hash, true],
    ]);
  });

  // A member that is absent or broke its own rule is unknown to the rules between members: each defect is
  // reported once, by the rule it breaks (FORMAT §11.3). Before the fix a start kind with a ref that is not
  // an id was reported twice at ref: for the id rule, and again for "this kind has no ref".
  test.each([
    ['a start whose ref is not an id: once, by the ref rule', { kind: 'tool.started', ref: 'a b' }, ['ref']],
    ['a start whose ref is a number: once, by the ref rule', { kind: 'model.started', ref: 7 }, ['ref']],
    [
      'an unknown kind with an error: once, by the kind rule (the rules between members are not checked)',
      { kind: 'tool.retried', error: 'x' },
      ['kind'],
    ],
    ['an unknown kind with a ref: once, by the kind rule', { kind: 'tool.retried', ref: 'start-1' }, ['kind']],
  ])('%s', (_, content, fields) => {
    const a = seal(0, genesisHash(g2), content);
    const { report } = walk([a.text], 'bytes', { genesis: g2 });
    expect(report.problems.map((p) => [p.code, p.location.field])).toEqual(fields.map((f) => ['FIELD_INVALID', f]));
  });

  test("the rules between members are reported after every member's own rule and before the marker pass", () => {
    const a = seal(0, genesisHash(g2), {
      kind: 'tool.started',
      ref: 'start-1',
      input: { '$stepchain:redacted': { rule: 'r' } },
      result: 5,
    });
    const text = a.text.replace('"v":2', '"v":3');
    const { report } = walk([text], 'bytes', { genesis: g2 });
    expect(report.problems.map((p) => [p.code, p.location.field])).toEqual([
      ['UNSUPPORTED_VERSION', 'v'],
      ['FIELD_INVALID', 'ref'],
      ['MARKER_INVALID', 'input'],
      ['HASH_MISMATCH', 'step_hash'],
    ]);
  });
});

describe('FORMAT §6.3 step 4: seq, prev_hash and step_hash are taken only as what they are', () => {
  // A caller may verify with its own format (ChainVerifierOptions.format). One whose rules let any
  // prev_hash and step_hash through still gets no link or hash check from a value that is not a string.
  const v1 = V1.records[0]!;
  const loose: RecordProfile = {
    ...v1,
    members: v1.members.map((m) => (m.name === 'step_hash' || m.name === 'prev_hash' ? { ...m, check: null } : m)),
  };
  const format: JournalFormat = { ...V1, records: [loose], select: () => loose };

  test('a number as step_hash and prev_hash: no HASH_MISMATCH, no GENESIS_MISMATCH, no head', () => {
    const text = canonicalJson({
      input: null,
      model: 'm',
      prev_hash: 7,
      prompt: null,
      result: 0,
      seq: 0,
      step_hash: 5,
      step_id: 's-0',
      tool_call: null,
      ts: '2026-01-01T00:00:00.000Z',
      v: 1,
    });
    expect(checkLine(text, format)).toMatchObject({
      readable: true,
      problems: [],
      seq: 0,
      prevHash: null,
      stepHash: null,
    });
    const { report, seen } = walk([text], 'string', { genesis, format });
    expect(report.problems).toEqual([]);
    expect([report.head, report.head_seq]).toEqual([null, null]);
    expect(seen.map((l) => [l.seq, l.step_hash, l.clean])).toEqual([[0, null, true]]);
  });

  test('the same format on a sealed line reads its hashes as usual', () => {
    const [a] = chain(1);
    const { report } = walk([a!.text, line(1, G).text], 'string', { genesis, format });
    expect(report.problems.map((p) => p.code)).toEqual(['LINK_BROKEN']);
    expect(report.head).toBe(line(1, G).hash);
  });
});

describe('FORMAT §6.3 steps 6 and 9: a line whose seq is unknown', () => {
  // seq "x" breaks its rule (FIELD_INVALID); the line's step_hash is a digest, so it is known.
  const [a] = chain(1);
  const noSeq = (prev: string) => line(1, prev).text.replace('"seq":1', '"seq":"x"');

  test('is never a duplicate, even after the same line: the second is checked and linked as any other', () => {
    const x = noSeq(a!.hash);
    const { report, seen } = walk([a!.text, x, x], 'string');
    expect(report.problems.map((p) => ({ code: p.code, ...p.location }))).toEqual([
      { code: 'FIELD_INVALID', file: B0, line: 2, field: 'seq' },
      { code: 'HASH_MISMATCH', file: B0, line: 2, field: 'step_hash' },
      { code: 'FIELD_INVALID', file: B0, line: 3, field: 'seq' },
      { code: 'HASH_MISMATCH', file: B0, line: 3, field: 'step_hash' },
      { code: 'LINK_BROKEN', file: B0, line: 3, field: 'prev_hash' },
    ]);
    expect(seen.map((l) => l.line)).toEqual([1, 2, 3]);
  });

  test('its link problem is located at prev_hash, without a seq', () => {
    const { report } = walk([a!.text, noSeq(G)], 'string');
    const link = report.problems.find((p) => p.code === 'LINK_BROKEN');
    expect(link?.location).toStrictEqual({ file: B0, line: 2, field: 'prev_hash' });
  });
});

describe('FORMAT §6.3: which lines reach onLine: every readable line once, duplicates not', () => {
  const [a, b, c] = chain(3);
  const gap = line(4, c!.hash);
  const unlinked = line(5, G);
  const edited = line(6, unlinked.hash).text.replace('"result":6', '"result":7');

  test.each(['bytes', 'string'] as const)('lines given as %s', (as) => {
    const texts = [a!.text, b!.text, b!.text, '[1]', c!.text, gap.text, unlinked.text, edited, 'tru'];
    const { report, seen } = walk(texts, as);
    expect(report.problems.map((p) => [p.code, p.location.line])).toEqual([
      ['DUPLICATE_STEP', 3],
      ['MALFORMED_LINE', 4],
      ['SEQ_GAP', 6],
      ['LINK_BROKEN', 7],
      ['HASH_MISMATCH', 8],
      ['MALFORMED_LINE', 9],
    ]);
    // Not the duplicate (3) nor the unreadable lines (4, 9); those with problems of their own, as not clean.
    expect(seen.map((l) => [l.line, l.seq, l.clean])).toEqual([
      [1, 0, true],
      [2, 1, true],
      [5, 2, true],
      [6, 4, false],
      [7, 5, false],
      [8, 6, false],
    ]);
    expect(seen.map((l) => l.text)).toEqual([texts[0], texts[1], texts[4], texts[5], texts[6], texts[7]]);
    expect(seen.every((l) => l.file === B0)).toBe(true);
  });

  test('a torn final line reaches no observer', () => {
    const seen: VerifiedLine[] = [];
    const v = new ChainVerifier({ genesis, onLine: (l) => void seen.push(l) });
    v.beginSegment(B0, 0);
    v.line(a!.text, true);
    v.line(b!.text, false);
    expect(v.finish().problems.map((p) => p.code)).toEqual(['TRUNCATED_LINE']);
    expect(seen.map((l) => l.line)).toEqual([1]);
  });
});

describe('FORMAT §6.4: a problem budget shared by several lists (a cap, and saying so)', () => {
  test('the lists together keep at most the budget, in the order added; each says when one was dropped', () => {
    const budget = new ProblemBudget(3);
    const first = new ProblemList<'A' | 'B'>(budget);
    const second = new ProblemList<'A' | 'B'>(budget);
    first.add('A', 'a1');
    second.add('B', 'b1');
    expect([first.truncated, second.truncated]).toEqual([false, false]);
    first.add('A', 'a2');
    second.add('B', 'b2');
    first.add('A', 'a3');
    expect(first.items.map((p) => p.message)).toEqual(['a1', 'a2']);
    expect(second.items.map((p) => p.message)).toEqual(['b1']);
    expect([first.truncated, second.truncated, budget.truncated, budget.left]).toEqual([true, true, true, 0]);
  });

  test('a number makes a list its own budget', () => {
    const own = new ProblemList<'A'>(1);
    const other = new ProblemList<'A'>(1);
    own.add('A', 'x');
    own.add('A', 'y');
    other.add('A', 'z');
    expect([own.items.length, own.truncated, other.items.length, other.truncated]).toEqual([1, true, 1, false]);
  });

  test('a chain capped at maxProblems is not ok, and says it was capped', () => {
    const lines = Array.from({ length: 5 }, () => 'x');
    const { report } = walk(lines, 'string', { genesis, maxProblems: 2 });
    expect([report.ok, report.problems.length, report.problems_truncated, report.steps]).toEqual([false, 2, true, 5]);
  });
});
