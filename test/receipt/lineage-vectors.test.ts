/**
 * vectors/lineage.json (spec/APPROVALS.md §4.1, §8): receipts of stepchain/v3 forks carrying the manifest
 * member `lineage`, through the receipt verifier with the pinned approvers: the same ok, problems and approvals
 * as recorded, the manifest's lineage as the case states it, and the cases the spec names all present.
 */
import { describe, expect, it } from 'vitest';
import { verifyReceipt } from '../../src/receipt/verify.js';
import { loadVectors } from '../helpers/vectors.js';

interface LineageCase {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  lineage: { from_step: number; parent_step_hash: string };
  approvers: { name: string; public_key: string }[];
  receipt: string;
  expect: { ok: boolean; problems: Record<string, unknown>[]; approvals: Record<string, unknown>[] };
}

const doc = loadVectors<LineageCase>('lineage.json');

describe('vectors/lineage.json: fork receipts', () => {
  it('holds the cases APPROVALS.md §4.1 and §8 name', () => {
    expect(doc.cases.map((c) => c.id)).toEqual([
      'fork-asks-again',
      'fork-uses-copied-grant',
      'fork-lineage-hash-mismatch',
      'fork-holding-parent-steps-past-from-step',
    ]);
  });

  it.each(doc.cases.map((c) => [c.id, c] as const))('%s', async (_id, c) => {
    const bytes = new Uint8Array(Buffer.from(c.receipt, 'base64'));
    const approvers = c.approvers.map((a) => ({
      key: new Uint8Array(Buffer.from(a.public_key, 'base64')),
      name: a.name,
    }));
    const r = await verifyReceipt(bytes, { approvers });
    expect(r.manifest?.lineage).toEqual(c.lineage);
    expect(r.ok).toBe(c.expect.ok);
    expect(r.ok ? 'valid' : 'invalid').toBe(c.result);
    expect(
      r.problems.map((p) => ({
        code: p.code,
        ...(p.location.seq === undefined ? {} : { seq: p.location.seq }),
        ...(p.location.field === undefined ? {} : { field: p.location.field }),
        ...(p.location.path === undefined ? {} : { path: p.location.path }),
      })),
    ).toEqual(c.expect.problems);
    expect(
      (r.approvals ?? []).map((a) => ({
        request: a.request,
        request_seq: a.request_seq,
        status: a.status,
        effect_seq: a.effect_seq,
        ...(a.unchecked === true ? { unchecked: true } : {}),
      })),
    ).toEqual(c.expect.approvals);
  });
});
