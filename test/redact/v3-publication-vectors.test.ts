/**
 * vectors/v3-publication.json (REDACTION §13): every case recomputed by this implementation — the public form
 * of the design's example from its private line and policy, the publication's public records from the
 * journal's private lines, and every receipt through the published-receipt verifier pinned to its head.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import type { Json } from '../../src/record/index.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { checkPublicRecordV3, publicRecordV3 } from '../../src/redact/v3-public.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { loadVectors } from '../helpers/vectors.js';

interface Case {
  id: string;
  kind: string;
  result: 'valid' | 'invalid';
  private_line?: string;
  bind?: string;
  policy?: unknown;
  lines?: string[];
  private_lines?: string[];
  base64?: string;
  expect_head?: string;
  expect?: { ok?: boolean; codes?: string[]; public_line?: string; declarations?: unknown[] };
}

const vectors = loadVectors<Case>('v3-publication.json');
const of = (kind: string) => vectors.cases.filter((c) => c.kind === kind).map((c) => [c.id, c] as const);

describe('v3-publication.json', () => {
  test.each(of('public-record'))('%s', (_id, c) => {
    const pub = publicRecordV3(JSON.parse(c.private_line!) as Record<string, Json>, c.bind!, compilePolicy(c.policy));
    expect(canonicalJson(pub.record, { refuseReserved: false })).toBe(c.expect!.public_line);
    expect(pub.declarations).toEqual(c.expect!.declarations);
    expect(checkPublicRecordV3(JSON.parse(c.expect!.public_line!), { stepHash: true })).toEqual([]);
  });

  test.each(of('public-lines'))('%s: each public record passes the deep check and keeps its step hash', (_id, c) => {
    c.lines!.forEach((l, i) => {
      expect(checkPublicRecordV3(JSON.parse(l), { stepHash: true })).toEqual([]);
      expect(JSON.parse(l).step_hash).toBe(JSON.parse(c.private_lines![i]!).step_hash);
    });
  });

  test.each(of('publication'))('%s', async (_id, c) => {
    const r = await verifyPublishedReceipt(Buffer.from(c.base64!, 'base64'), { expectHead: c.expect_head! });
    expect(r.ok).toBe(c.expect!.ok);
    expect(r.problems.map((p) => p.code)).toEqual(c.expect!.codes);
  });
});
