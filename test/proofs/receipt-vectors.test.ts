/**
 * The committed vectors of receipts with transparency proofs (scripts/vectors/proof-receipts.mjs,
 * spec/RECEIPT.md §4.5, spec/PROOFS.md §9.8): every case gives its expected verdict and codes, valid and
 * invalid side by side, through the browser-safe entry auditors use.
 */
import { describe, expect, test } from 'vitest';
import { parseVerifierKey } from '../../src/verify.js';
import { verifyProvenReceipt } from '../../src/proofs/index.js';
import { loadVectors } from '../helpers/vectors.js';

interface Case {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  base64: string;
  policy?: string;
  trusted?: { origin: string; size: number; root: string };
  consistency?: string;
  expect: { ok: boolean; codes: string[] };
}
const vectors = loadVectors<Case>('proof-receipts.json');
const policies = vectors.policies as Record<string, { log: string; witnesses: string[]; quorum: number }>;

describe('receipts with proofs', () => {
  test('valid and invalid cases sit side by side', () => {
    expect(vectors.cases.filter((c) => c.result === 'valid').length).toBeGreaterThan(2);
    expect(vectors.cases.filter((c) => c.result === 'invalid').length).toBeGreaterThan(8);
  });

  test.each(vectors.cases)('$id: $comment', async (c) => {
    const p = c.policy ? policies[c.policy]! : null;
    const policy = p
      ? { log: parseVerifierKey(p.log), witnesses: p.witnesses.map(parseVerifierKey), quorum: p.quorum }
      : undefined;
    const trusted = c.trusted
      ? { origin: c.trusted.origin, size: c.trusted.size, root: new Uint8Array(Buffer.from(c.trusted.root, 'base64')) }
      : undefined;
    const r = await verifyProvenReceipt(new Uint8Array(Buffer.from(c.base64, 'base64')), {
      ...(policy ? { policy } : {}),
      ...(trusted ? { trusted } : {}),
      ...(c.consistency ? { consistency: c.consistency } : {}),
    });
    expect({ ok: r.ok, codes: r.problems.map((x) => x.code) }).toEqual(c.expect);
    expect(c.result === 'valid').toBe(c.expect.ok);
  });
});
