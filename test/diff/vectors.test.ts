/** The diff vectors (vectors/diff.json, spec/DIFF.md §9): every case's report, summary or error code. */
import { describe, expect, test } from 'vitest';
import { diff, summarize, DiffError, type DiffOptions, type DiffReport } from '../../src/diff/index.js';
import type { StepRecord } from '../../src/record/index.js';
import { loadVectors } from '../helpers/vectors.js';

interface DiffCase {
  id: string;
  comment: string;
  a: StepRecord[];
  b: StepRecord[];
  options: DiffOptions;
  expect: DiffReport | { error: string };
  summary?: string;
}

const vectors = loadVectors<DiffCase>('diff.json');

describe('diff vectors', () => {
  test('the file is a diff vector file with valid and invalid cases', () => {
    expect(vectors.kind).toBe('diff');
    expect(vectors.cases.some((c) => 'error' in c.expect)).toBe(true);
    expect(vectors.cases.some((c) => !('error' in c.expect) && c.expect.same)).toBe(true);
    expect(new Set(vectors.cases.map((c) => c.id)).size).toBe(vectors.cases.length);
  });

  test.each(vectors.cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    if ('error' in c.expect) {
      const err = await diff(c.a, c.b, c.options).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DiffError);
      expect((err as DiffError).code).toBe(c.expect.error);
      return;
    }
    const report = await diff(c.a, c.b, c.options);
    expect(report).toEqual(c.expect);
    // The report is plain JSON: it survives a round trip unchanged.
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
    expect(summarize(report)).toBe(c.summary);
  });
});
