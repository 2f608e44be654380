/** The committed receipt vectors (scripts/vectors/receipts.mjs): each case verifies to its expected report. */
import { describe, expect, test } from 'vitest';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';
import { verifyReceipt, type VerifyReceiptOptions } from '../../src/receipt/index.js';

interface ReceiptCase {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  options: VerifyReceiptOptions;
  base64: string;
  expect: { ok: boolean; codes: string[]; [fact: string]: unknown };
}

const vectors = loadVectors<ReceiptCase>('receipts.json');

describe('receipt vectors', () => {
  test('valid and invalid cases sit side by side', () => {
    expect(vectors.kind).toBe('receipts');
    expect(vectors.cases.some((c) => c.result === 'valid')).toBe(true);
    expect(vectors.cases.some((c) => c.result === 'invalid')).toBe(true);
  });
  test.each(vectors.cases)('$id: $comment', async (c) => {
    const r = await verifyReceipt(vectorBytes(c), c.options);
    const { ok, codes, range, ...facts } = c.expect;
    expect(r.ok).toBe(ok);
    expect(r.ok).toBe(c.result === 'valid');
    expect(r.problems.map((p) => p.code)).toEqual(codes);
    if (range) expect(r.range).toMatchObject(range as object);
    for (const [k, v] of Object.entries(facts)) expect((r as unknown as Record<string, unknown>)[k], k).toEqual(v);
  });
});
