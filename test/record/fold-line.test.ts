/**
 * The run reader's line fold (record/run-state.ts: foldLine, what the receipt verifier runs on every clean
 * line of a stepchain/v2 chain) against the fold of the parsed record: a step is recognised from its text
 * alone, never fooled by a "kind" inside a value, and the state it leaves is the same.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { sealCommitted } from '../../src/record/commitments.js';
import { kindIsStep } from '../../src/record/line-members.js';
import { emptyState, foldLine, foldRecord } from '../../src/record/run-state.js';
import type { StepRecord } from '../../src/record/seal.js';
import { RECORD_KINDS, STEP_V2 } from '../../src/record/v2.js';
import { awkwardValue } from '../helpers/awkward-json.js';

const jcs = (v: unknown): string => canonicalJsonTrusted(v as never);
/** Values that imitate a top-level kind member inside content. */
const decoy = fc.constantFrom<unknown>(
  { kind: 'step' },
  '"kind":"step"',
  ['"kind":', 'step'],
  { a: { kind: 'step', 'x"y': '}' } },
  '\\',
  '\\"kind\\":\\"step\\"',
);
const value = fc.oneof(awkwardValue, decoy);
const record = fc.record({
  kind: fc.constantFrom(...RECORD_KINDS, 'step', 'step', 'step'),
  ref: fc.constantFrom(null, 'a', 'b', 'c'),
  input: value,
  model: value,
  prompt: value,
  tool_call: fc.oneof(value, fc.constant({ name: 't', arguments: {}, call_id: 'a' })),
  result: value,
  error: value,
  meta: fc.option(fc.dictionary(fc.constantFrom('kind', 'step', '"'), value, { maxKeys: 3 }), { nil: undefined }),
});

function lineOf(r: Record<string, unknown>, seq: number): string {
  const texts: Record<string, string> = {};
  for (const f of ['kind', 'ref', 'input', 'model', 'prompt', 'tool_call', 'result', 'error', 'meta'])
    if (r[f] !== undefined) texts[f] = jcs(r[f]);
  const e = {
    seq,
    stepId: ['a', 'b', 'c'][seq % 3]! + seq,
    ts: '2026-01-01T00:00:00.000Z',
    prevHash: 'sha256:' + '0'.repeat(64),
  };
  return sealCommitted(STEP_V2, texts, e, '00112233445566778899aabbccddeeff').line.slice(0, -1);
}

describe('foldLine: a run fold that parses only what is not a plain step', () => {
  test('kindIsStep says exactly whether the record\'s kind is "step", whatever its values hold (fast-check)', () => {
    fc.assert(
      fc.property(record, (r) => {
        const line = lineOf(r, 0);
        expect(kindIsStep(line)).toBe((JSON.parse(line) as { kind: string }).kind === 'step');
      }),
      { numRuns: 500 },
    );
  });

  test('folding lines gives the state of folding the parsed records (fast-check)', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 12 }), (rs) => {
        const lines = rs.map((r, seq) => lineOf(r, seq));
        const byLine = emptyState();
        const byRecord = emptyState();
        lines.forEach((line, seq) => foldLine(byLine, line, seq));
        for (const line of lines) foldRecord(byRecord, JSON.parse(line) as StepRecord);
        expect(byLine).toEqual(byRecord);
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['empty', ''],
    ['not an object', '[1,2]'],
    ['unterminated string', '{"input":"abc'],
    ['unterminated object', '{"input":{"a":[1,2'],
    ['no kind', '{"input":1,"model":2}'],
    ['kind not step', '{"input":1,"kind":"steps"}'],
    ['kind step at the end', '{"input":1,"kind":"step"}'],
  ])('kindIsStep never throws or overruns on text that is not a clean line: %s', (_name, text) => {
    expect(kindIsStep(text)).toBe(text === '{"input":1,"kind":"step"}');
  });
});
