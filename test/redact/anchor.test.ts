/**
 * The published receipt's extension members judged alone (spec/REDACTION.md §6.2, §6.3, §11): the anchor
 * block's exact shape and its arithmetic (0 ≤ K ≤ N, exactly N − K commitments), the withdrawn version-1
 * format named as such, the declarations' shape and order; and compareAnchor against the journal. Table
 * driven: a good row, then each member broken alone.
 */
import { describe, expect, test } from 'vitest';
import {
  WITHDRAWN_FORMATS,
  anchorDefect,
  compareAnchor,
  preparePublication,
  redactionsDefect,
} from '../../src/redact/index.js';
import { MAX_ANCHOR_DIFFERENCES } from '../../src/redact/anchor.js';
import type { ChainSource } from '../../src/chain/source.js';
import { SAMPLE_POLICY, memoryJournal, sampleSteps, ts } from './helpers.js';

const D = (n: number): string => `sha256:${n.toString(16).padStart(64, '0')}`;
const good = {
  commitments: [D(1), D(2)],
  format: 'stepchain-redaction/v2',
  genesis_hash: D(3),
  length: 5,
  policy_digest: D(4),
  redacted_from: 3,
};

describe('anchorDefect (§6.2)', () => {
  test.each([
    ['the good block', good],
    ['nothing redacted: K = N, no commitments', { ...good, commitments: [], redacted_from: 5 }],
    ['everything from step 0', { ...good, commitments: [D(1), D(2), D(5)], length: 3, redacted_from: 0 }],
  ])('%s is accepted', (_what, block) => {
    expect(anchorDefect(block)).toBeNull();
  });

  test.each([
    [
      'not an object',
      [good],
      /^anchor must be \{"commitments","format","genesis_hash","length","policy_digest","redacted_from"\}/,
    ],
    ['null', null, /^anchor must be/],
    ['an extra member', { ...good, extra: 1 }, /^anchor must be/],
    ['a member missing', { ...good, length: undefined }, /^anchor must be/],
    ['another format', { ...good, format: 'stepchain-redaction/v3' }, /^anchor\.format is "stepchain-redaction\/v3"/],
    // Only a format string names a withdrawn format: a list whose text is that name is another format.
    [
      'a format that is a list holding the withdrawn name',
      { ...good, format: ['stepchain-redaction/v1'] },
      /^anchor\.format is \["stepchain-redaction\/v1"\]/,
    ],
    ['a genesis hash that is not a digest', { ...good, genesis_hash: 'sha256:00' }, /^anchor\.genesis_hash/],
    ['a policy digest that is not a digest', { ...good, policy_digest: D(4).toUpperCase() }, /^anchor\.policy_digest/],
    ['length 0', { ...good, commitments: [], length: 0, redacted_from: 0 }, /^anchor\.length/],
    ['length not an integer', { ...good, length: 5.5 }, /^anchor\.length/],
    ['redacted_from past length', { ...good, commitments: [], redacted_from: 6 }, /^anchor\.redacted_from/],
    ['redacted_from negative', { ...good, redacted_from: -1 }, /^anchor\.redacted_from/],
    ['one commitment too few', { ...good, commitments: [D(1)] }, /^anchor\.commitments must hold exactly .* \(2\)/],
    ['one commitment too many', { ...good, commitments: [D(1), D(2), D(6)] }, /^anchor\.commitments must hold exactly/],
    ['commitments not an array', { ...good, commitments: 'x' }, /^anchor\.commitments must hold exactly/],
    [
      'a commitment that is not a digest',
      { ...good, commitments: [D(1), 'x'] },
      /^anchor\.commitments\[1\] is not a digest/,
    ],
  ])('%s', (_what, block, why) => {
    expect(anchorDefect(JSON.parse(JSON.stringify(block)))).toMatch(why);
  });

  test('the withdrawn version-1 format is named as withdrawn, whatever else the block holds', () => {
    expect(anchorDefect({ format: 'stepchain-redaction/v1' })).toBe(WITHDRAWN_FORMATS['stepchain-redaction/v1']);
    expect(anchorDefect({ ...good, format: 'stepchain-redaction/v1' })).toMatch(/withdrawn/);
    // A format that is only an inherited property name is not a withdrawn format.
    expect(anchorDefect({ ...good, format: 'toString' })).toMatch(/^anchor\.format is "toString"/);
  });
});

describe('redactionsDefect (§6.3)', () => {
  const d = (seq: number, path: string, rule = 'r') => ({ path, rule, seq });
  test.each([
    ['empty', []],
    [
      'sorted by seq, then path in UTF-16 order',
      [d(0, '/input/10'), d(0, '/input/2'), d(0, '/meta/\ud83d\ude00'), d(0, '/meta/\uff00'), d(1, '/input')],
    ],
    ['the same path at two seqs', [d(0, '/input'), d(1, '/input')]],
  ])('%s is accepted', (_what, list) => {
    expect(redactionsDefect(list)).toBeNull();
  });

  test.each([
    ['not an array', { 0: d(0, '/input') }, /^redactions must be an array/],
    ['an entry not an object', ['x'], /^redactions\[0\] must be/],
    ['an extra member', [{ ...d(0, '/input'), text: 'x' }], /^redactions\[0\] must be/],
    ['a seq that is not a seq', [d(-1, '/input')], /^redactions\[0\] must be/],
    ['a path that is not a string', [{ path: 1, rule: 'r', seq: 0 }], /^redactions\[0\] must be/],
    ['a rule that is not an id', [d(0, '/input', '-r')], /^redactions\[0\] must be/],
    ['a path that is not a pointer', [d(0, 'input')], /^redactions\[0\]\.path is not a JSON Pointer/],
    ['a path with a bad escape', [d(0, '/input/~2')], /^redactions\[0\]\.path is not a JSON Pointer/],
    ['the empty path', [d(0, '')], /^redactions\[0\]\.path must point into a content field or meta/],
    ['a path into the envelope', [d(0, '/step_id')], /^redactions\[0\]\.path must point into/],
    ['out of order by seq', [d(1, '/input'), d(0, '/input')], /^redactions\[1\] is out of order or repeated/],
    ['out of order by path', [d(0, '/input/b'), d(0, '/input/a')], /^redactions\[1\] is out of order/],
    [
      'code-point order, not UTF-16',
      [d(0, '/meta/\uff00'), d(0, '/meta/\ud83d\ude00')],
      /^redactions\[1\] is out of order/,
    ],
    ['repeated', [d(0, '/input'), d(0, '/input')], /^redactions\[1\] is out of order or repeated/],
    ['a bad entry after good ones', [d(0, '/input'), d(1, '/input'), d(2, '/seq')], /^redactions\[2\]/],
  ])('%s', (_what, list, why) => {
    expect(redactionsDefect(list)).toMatch(why);
  });
});

describe('compareAnchor (§6.2, against the original journal)', () => {
  test('true of the journal it was made from; each difference named', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true });
    expect(pub.anchor.redacted_from).toBe(0);
    expect(await compareAnchor(j, pub.anchor, pub.steps)).toEqual([]);
    expect(await compareAnchor(j, { ...pub.anchor, genesis_hash: D(9) }, pub.steps)).toEqual([
      expect.stringMatching(/genesis hash/),
    ]);
    expect(
      await compareAnchor(
        j,
        pub.anchor,
        pub.steps.filter((s) => s.seq !== 2),
      ),
    ).toEqual(['step 2: no opening (salt) for its commitment']);
    const swapped = pub.steps.map((s) => (s.seq === 1 ? { ...s, salt: pub.steps[0]!.salt } : s));
    expect(await compareAnchor(j, pub.anchor, swapped)).toEqual([
      expect.stringMatching(/^step 1: the anchor's commitment does not open/),
    ]);
    expect(
      await compareAnchor(j, { ...pub.anchor, length: 3, commitments: pub.anchor.commitments.slice(0, 3) }, pub.steps),
    ).toEqual(['the journal has 4 steps, the anchor 3 (it has grown since publishing)']);
    expect(await compareAnchor(j, { ...pub.anchor, length: 5 }, pub.steps)).toEqual([
      'the journal has 4 steps, the anchor 5',
    ]);
  });

  test('steps before redacted_from are not in the anchor: a later first redaction needs openings from it on only', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, {
      policy: { rules: [{ id: 'late', paths: ['/prompt'], seq: { from: 2 } }] },
      optIn: true,
    });
    expect(pub.anchor.redacted_from).toBe(2);
    expect(pub.steps.map((s) => s.seq)).toEqual([2, 3]);
    expect(await compareAnchor(j, pub.anchor, pub.steps)).toEqual([]);
    // Shifted by one step, every commitment fails to open.
    expect((await compareAnchor(j, { ...pub.anchor, redacted_from: 1 }, pub.steps)).length).toBeGreaterThan(0);
    // Commitment i belongs to step redacted_from + i: swapping the two openings fails both, each named by its seq.
    const swapped = pub.steps.map((s) => ({ ...s, salt: pub.steps[s.seq === 2 ? 1 : 0]!.salt }));
    expect(await compareAnchor(j, pub.anchor, swapped)).toEqual([
      expect.stringMatching(/^step 2: the anchor's commitment does not open/),
      expect.stringMatching(/^step 3: the anchor's commitment does not open/),
    ]);
  });

  test('a journal line without a readable step_hash is a difference named by its seq', async () => {
    const j = await memoryJournal();
    const pub = await preparePublication(j, { policy: SAMPLE_POLICY, optIn: true });
    const damaged = {
      genesis: j.genesis,
      head: () => j.head(),
      blob: (d: string) => j.blob(d),
      lines: async function* (r?: { from?: number; to?: number }) {
        for await (const l of j.lines(r)) {
          if (l.seq === 1) yield { ...l, text: '{"seq":1}' };
          else if (l.seq === 2) yield { ...l, text: 'not JSON' };
          else yield l;
        }
      },
    };
    expect(await compareAnchor(damaged, pub.anchor, pub.steps)).toEqual([
      "step 1: the journal's line has no readable step_hash",
      "step 2: the journal's line has no readable step_hash",
    ]);
  });

  describe('stops after MAX_ANCHOR_DIFFERENCES (20) differences, and says so', () => {
    /** A journal of `n` steps, every prompt redacted (redacted_from 0), and a view of it that counts the lines read. */
    async function many(n: number) {
      const steps = Array.from({ length: n }, (_, i) => ({ ...sampleSteps()[0]!, step_id: `s-${i}`, ts: ts(i) }));
      const j = await memoryJournal(steps);
      const pub = await preparePublication(j, { policy: { rules: [{ id: 'p', paths: ['/prompt'] }] }, optIn: true });
      const counted = { read: 0 };
      const source: ChainSource = {
        genesis: j.genesis,
        head: () => j.head(),
        blob: (d) => j.blob(d),
        lines: async function* (r) {
          for await (const l of j.lines(r)) {
            counted.read++;
            yield l;
          }
        },
      };
      return { pub, source, counted };
    }
    const missing = (from: number, to: number) =>
      Array.from({ length: to - from + 1 }, (_, i) => `step ${from + i}: no opening (salt) for its commitment`);

    test('25 steps without openings: the first 20 named, then where it stopped; the lines after it are not read', async () => {
      expect(MAX_ANCHOR_DIFFERENCES).toBe(20);
      const { pub, source, counted } = await many(25);
      expect(await compareAnchor(source, pub.anchor, pub.steps)).toEqual([]);
      counted.read = 0;
      expect(await compareAnchor(source, pub.anchor, [])).toEqual([
        ...missing(0, 19),
        "stopped after 20 differences: steps 20 on and the journal's length were not compared",
      ]);
      expect(counted.read).toBe(21); // the line at which it stopped, and none after it
    });

    test('the genesis hash counts among the 20', async () => {
      const { pub, source } = await many(25);
      const other = { ...pub.anchor, genesis_hash: D(9) };
      const got = await compareAnchor(source, other, []);
      expect(got).toEqual([
        expect.stringMatching(/^the journal's genesis hash is /),
        ...missing(0, 18),
        "stopped after 20 differences: steps 19 on and the journal's length were not compared",
      ]);
    });

    test('exactly 20 differences in the last line read: nothing was left unread, so the length is still compared', async () => {
      const { pub, source } = await many(20);
      expect(
        await compareAnchor(source, { ...pub.anchor, length: 21, commitments: [...pub.anchor.commitments, D(7)] }, []),
      ).toEqual([...missing(0, 19), 'the journal has 20 steps, the anchor 21']);
    });
  });
});
