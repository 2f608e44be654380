/** vectors/redaction.json (spec/REDACTION.md §10): every case reproduced by this implementation. */
import { describe, expect, test } from 'vitest';
import type { Json } from '../../src/chain/record.js';
import {
  commitment, compilePolicy, fixedSalts, redactStep, saltFromHex, verifyDisclosure, verifyPublishedReceipt, verifyStepDisclosure,
} from '../../src/redact/index.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface Case {
  id: string;
  comment: string;
  kind: 'policy' | 'commitment' | 'redact' | 'published' | 'disclosure' | 'step-disclosure';
  result: 'valid' | 'invalid';
  [k: string]: unknown;
}

const doc = loadVectors<Case>('redaction.json');
const byKind = (k: Case['kind']): Case[] => doc.cases.filter((c) => c.kind === k);
const receipts = new Map(byKind('published').map((c) => [c.id, vectorBytes({ base64: c.base64 as string })]));

describe('redaction vectors', () => {
  test('every kind is present, valid and invalid side by side', () => {
    for (const k of ['policy', 'commitment', 'redact', 'published', 'disclosure', 'step-disclosure'] as const) expect(byKind(k).length).toBeGreaterThan(0);
    for (const k of ['policy', 'published', 'disclosure', 'step-disclosure'] as const) expect(new Set(byKind(k).map((c) => c.result))).toEqual(new Set(['valid', 'invalid']));
  });

  test.each(byKind('policy'))('$id: $comment', (c) => {
    if (c.result === 'valid') expect(compilePolicy(c.policy).digest).toBe(c.digest);
    else expect(() => compilePolicy(c.policy)).toThrow(expect.objectContaining({ code: c.error }));
  });

  test.each(byKind('commitment'))('$id: $comment', (c) => {
    expect(commitment(saltFromHex(c.salt)!, c.value)).toBe(c.commitment);
  });

  test.each(byKind('redact'))('$id: $comment', (c) => {
    // Salts taken from the vector itself, in order: what another implementation would do.
    const listed = c.redactions as Array<{ path: string; rule: string; salt: string; commitment: string }>;
    const { fields, redactions } = redactStep(compilePolicy(c.policy), c.seq as number, c.fields as Record<string, Json>, fixedSalts(listed.map((r) => saltFromHex(r.salt)!)));
    expect(fields).toEqual(c.expect);
    expect(redactions.map((r) => ({ path: r.path, rule: r.rule, commitment: r.commitment }))).toEqual(listed.map(({ salt: _s, ...rest }) => rest));
  });

  test.each(byKind('published'))('$id: $comment', async (c) => {
    const r = await verifyPublishedReceipt(receipts.get(c.id)!, c.publicKey ? { publicKey: c.publicKey as string } : {});
    const e = c.expect as { ok: boolean; codes: string[]; redactions?: number; original_head?: string };
    expect(r.problems.map((p) => p.code)).toEqual(e.codes);
    expect(r.ok).toBe(e.ok);
    expect(c.result).toBe(e.ok ? 'valid' : 'invalid');
    if (e.ok) {
      expect(r.redactions).toBe(e.redactions);
      expect(r.anchor!.head.step_hash).toBe(e.original_head);
    }
  });

  test.each(byKind('disclosure'))('$id: $comment', async (c) => {
    const r = await verifyDisclosure(receipts.get(c.receipt as string)!, c.proof);
    const e = c.expect as { ok: boolean; code?: string; value?: Json };
    expect(r.ok).toBe(e.ok);
    if (e.ok) expect(r.value).toEqual(e.value);
    else expect(r.problems[0]!.code).toBe(e.code);
  });

  test.each(byKind('step-disclosure'))('$id: $comment', async (c) => {
    const r = await verifyStepDisclosure(receipts.get(c.receipt as string)!, c.proof);
    const e = c.expect as { ok: boolean; code?: string; step_hash?: string };
    expect(r.ok).toBe(e.ok);
    if (e.ok) expect((r.record as { step_hash: string }).step_hash).toBe(e.step_hash);
    else expect(r.problems[0]!.code).toBe(e.code);
  });
});
