/**
 * vectors/v3-publication-parts.json (scripts/vectors/v3-publication-parts.mjs; spec/REDACTION.md §13.10): a
 * publication of a v3 journal with parts verifies against its original head, and each mutation of a public
 * part file or reference is refused with the codes the vectors record, in order.
 */
import { describe, expect, test } from 'vitest';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { loadVectors } from '../helpers/vectors.js';

interface PartsCase {
  id: string;
  comment: string;
  kind: 'publication';
  result: 'valid' | 'invalid';
  base64: string;
  expect_head: string;
  expect: { ok: boolean; codes: string[] };
}

const doc = loadVectors<PartsCase>('v3-publication-parts.json');

describe('v3 publication vectors with parts', () => {
  test.each(doc.cases.map((c) => [c.id, c] as const))('%s', async (_, c) => {
    const r = await verifyPublishedReceipt(Buffer.from(c.base64, 'base64'), { expectHead: c.expect_head });
    expect(r.ok).toBe(c.expect.ok);
    expect(r.problems.map((p) => p.code)).toEqual(c.expect.codes);
    expect(c.result).toBe(c.expect.ok ? 'valid' : 'invalid');
  });
});
