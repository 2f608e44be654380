/**
 * vectors/commitments.json (FORMAT §12, REDACTION §12): every case recomputed by this implementation —
 * slot salts and digests from their definitions, stored chains through the chain verifier, publications
 * through the published-receipt verifier pinned to the original head, openings through verifyOpening.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { verifyChain } from '../../src/chain/index.js';
import { slotDigest, slotSalt } from '../../src/record/commitments.js';
import type { Genesis, Json } from '../../src/record/index.js';
import { STEP_V2 } from '../../src/record/v2.js';
import { verifyOpening } from '../../src/redact/opening.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface Case {
  id: string;
  kind: string;
  result: 'valid' | 'invalid';
  record_salt?: string;
  slot?: string;
  salt?: string;
  value?: Json;
  absent?: boolean;
  digest?: string;
  genesis?: Genesis;
  lines?: string[];
  base64?: string;
  expect_head?: string;
  receipt?: string;
  proof?: unknown;
  expect?: {
    ok: boolean;
    head?: string | null;
    codes?: string[];
    code?: string;
    present?: boolean;
    value?: Json;
    unbound?: unknown[];
  };
}

const vectors = loadVectors<Case>('commitments.json');
const of = (kind: string) => vectors.cases.filter((c) => c.kind === kind).map((c) => [c.id, c] as const);
const enc = new TextEncoder();

describe('commitments.json', () => {
  test('every kind is present, valid and invalid side by side', () => {
    const kinds = new Set(vectors.cases.map((c) => c.kind));
    for (const k of ['slot-salt', 'slot-digest', 'chain', 'published', 'public-lines', 'opening'])
      expect(kinds.has(k), k).toBe(true);
    for (const k of ['chain', 'published', 'opening'])
      expect(new Set(vectors.cases.filter((c) => c.kind === k).map((c) => c.result))).toEqual(
        new Set(['valid', 'invalid']),
      );
  });

  test.each(of('slot-salt'))('%s', (_id, c) =>
    expect(slotSalt(c.record_salt!, c.slot!, STEP_V2.redactable)).toBe(c.salt),
  );
  test.each(of('slot-digest'))('%s', (_id, c) =>
    expect(slotDigest(c.salt!, c.slot!, c.absent ? undefined : canonicalJson(c.value!))).toBe(c.digest),
  );

  test.each(of('chain'))('%s', (_id, c) => {
    const report = verifyChain({
      genesis: c.genesis!,
      files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(c.lines!.map((l) => l + '\n').join('')) }],
    });
    expect(report.ok).toBe(c.expect!.ok);
    expect(report.head).toBe(c.expect!.head);
    expect(report.problems.map((p) => p.code)).toEqual(c.expect!.codes);
  });

  test.each(of('published'))('%s', async (_id, c) => {
    const report = await verifyPublishedReceipt(vectorBytes(c), { expectHead: c.expect_head! });
    expect(report.ok).toBe(c.expect!.ok);
    expect(report.problems.map((p) => p.code)).toEqual(c.expect!.codes);
    // The cases of issue 32 also pin the unbound places (REDACTION §12.5 step 6).
    if (c.expect!.unbound !== undefined) expect(report.unbound).toEqual(c.expect!.unbound);
  });

  test('the cases of issue 32: text written into a publication is refused, or listed as unbound', () => {
    const byId = new Map(vectors.cases.map((c) => [c.id, c]));
    expect(byId.get('published-view-unmarked')!.expect!.codes).toEqual(['VIEW_INVALID']);
    expect(byId.get('published-withheld-text')!.expect!.codes).toEqual(['VIEW_INVALID']);
    expect(byId.get('published-view-undeclared')!.expect!.codes).toEqual(['REDACTION_UNDECLARED']);
    const invented = byId.get('published-view-invented')!;
    expect(invented.expect!.ok).toBe(true);
    expect(invented.expect!.unbound).toContainEqual({ seq: 0, field: 'prompt', path: '/prompt', why: 'view' });
  });

  test('the published chain keeps the original head', () => {
    const chain = vectors.cases.find((c) => c.id === 'chain-valid')!;
    const pub = vectors.cases.find((c) => c.id === 'published-valid')!;
    expect(pub.expect_head).toBe(chain.expect!.head);
  });

  const receipt = vectorBytes(vectors.cases.find((c) => c.id === 'published-valid')!);
  test.each(of('opening'))('%s', async (_id, c) => {
    const report = await verifyOpening(receipt, c.proof);
    expect(report.ok).toBe(c.expect!.ok);
    if (c.expect!.ok)
      expect({ present: report.present, value: report.value }).toEqual({
        present: c.expect!.present,
        value: c.expect!.value,
      });
    else expect(report.problems[0]!.code).toBe(c.expect!.code);
  });
});
