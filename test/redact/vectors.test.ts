/** vectors/redaction.json (spec/REDACTION.md §10): every case reproduced by this implementation. */
import { describe, expect, test } from 'vitest';
import type { ChainSource } from '../../src/chain/source.js';
import type { Genesis, Json } from '../../src/record/index.js';
import {
  commitment,
  compilePolicy,
  fixedSalts,
  preparePublication,
  publicationBytes,
  redactStep,
  saltFromHex,
  seededSalts,
  stepCommitment,
  verifyDisclosure,
  verifyHashDisclosure,
  verifyPublishedReceipt,
  verifyStepDisclosure,
} from '../../src/redact/index.js';
import { loadVectors, vectorBytes } from '../helpers/vectors.js';

interface Case {
  id: string;
  comment: string;
  kind:
    | 'policy'
    | 'commitment'
    | 'step-commitment'
    | 'redact'
    | 'publish'
    | 'published'
    | 'disclosure'
    | 'step-disclosure'
    | 'hash-disclosure';
  result: 'valid' | 'invalid';
  [k: string]: unknown;
}

const doc = loadVectors<Case>('redaction.json');
const byKind = (k: Case['kind']): Case[] => doc.cases.filter((c) => c.kind === k);
const receipts = new Map(byKind('published').map((c) => [c.id, vectorBytes({ base64: c.base64 as string })]));

describe('redaction vectors', () => {
  test('every kind is present, valid and invalid side by side', () => {
    for (const k of [
      'policy',
      'commitment',
      'step-commitment',
      'redact',
      'publish',
      'published',
      'disclosure',
      'step-disclosure',
      'hash-disclosure',
    ] as const)
      expect(byKind(k).length).toBeGreaterThan(0);
    for (const k of ['policy', 'published', 'disclosure', 'step-disclosure', 'hash-disclosure'] as const)
      expect(new Set(byKind(k).map((c) => c.result))).toEqual(new Set(['valid', 'invalid']));
  });

  test.each(byKind('policy'))('$id: $comment', (c) => {
    if (c.result === 'valid') expect(compilePolicy(c.policy).digest).toBe(c.digest);
    else expect(() => compilePolicy(c.policy)).toThrow(expect.objectContaining({ code: c.error }));
  });

  test.each(byKind('commitment'))('$id: $comment', (c) => {
    expect(commitment(saltFromHex(c.salt)!, c.value)).toBe(c.commitment);
  });

  test.each(byKind('step-commitment'))('$id: $comment', (c) => {
    expect(stepCommitment(saltFromHex(c.salt)!, c.step_hash as string)).toBe(c.commitment);
  });

  test.each(byKind('redact'))('$id: $comment', (c) => {
    // Salts taken from the vector itself, in order: what another implementation would do.
    const listed = c.redactions as Array<{ path: string; rule: string; salt: string; commitment: string }>;
    const { fields, redactions } = redactStep(
      compilePolicy(c.policy),
      c.seq as number,
      c.fields as Record<string, Json>,
      fixedSalts(listed.map((r) => saltFromHex(r.salt)!)),
    );
    expect(fields).toEqual(c.expect);
    expect(redactions.map((r) => ({ path: r.path, rule: r.rule, commitment: r.commitment }))).toEqual(
      listed.map(({ salt: _s, ...rest }) => rest),
    );
  });

  test.each(byKind('publish'))('$id: $comment', async (c) => {
    // Another implementation's publisher would do this: read the journal, publish with the seeded salts.
    const j = c.journal as { genesis: Genesis; lines: string[]; blobs: Array<{ digest: string; base64: string }> };
    const blobs = new Map(j.blobs.map((b) => [b.digest, vectorBytes({ base64: b.base64 })]));
    const last = JSON.parse(j.lines[j.lines.length - 1]!) as { seq: number; step_hash: string };
    const source: ChainSource = {
      genesis: j.genesis,
      head: async () => ({ seq: last.seq, step_hash: last.step_hash }),
      lines: async function* (range = {}) {
        for (const [seq, text] of j.lines.entries())
          if (seq >= (range.from ?? 0) && seq <= (range.to ?? Infinity))
            yield { segment: '0000000000000000.jsonl', seq, text };
      },
      blob: async (d) => blobs.get(d) ?? null,
    };
    const pub = await preparePublication(source, {
      policy: c.policy as never,
      optIn: true,
      salts: seededSalts(c.seed as string),
      exporter: c.exporter as string,
    });
    const e = c.expect as { receipt: string; original_head: string; steps: unknown };
    expect(Buffer.from(await publicationBytes(pub)).equals(Buffer.from(receipts.get(e.receipt)!))).toBe(true);
    expect(pub.originalHead.step_hash).toBe(e.original_head);
    expect(pub.steps).toEqual(e.steps);
  });

  test.each(byKind('published'))('$id: $comment', async (c) => {
    const r = await verifyPublishedReceipt(
      receipts.get(c.id)!,
      c.publicKey ? { publicKey: c.publicKey as string } : {},
    );
    const e = c.expect as {
      ok: boolean;
      codes: string[];
      redactions?: number;
      anchor?: unknown;
      original_head?: string;
    };
    expect(r.problems.map((p) => p.code)).toEqual(e.codes);
    expect(r.ok).toBe(e.ok);
    expect(c.result).toBe(e.ok ? 'valid' : 'invalid');
    if (e.ok) {
      expect(r.redactions).toBe(e.redactions);
      expect(r.anchor).toEqual(e.anchor);
      // Nothing redacted: the published head is the original head.
      if (e.original_head) expect(r.head).toBe(e.original_head);
    }
  });

  test.each(byKind('disclosure'))('$id: $comment', async (c) => {
    const r = await verifyDisclosure(receipts.get(c.receipt as string)!, c.proof);
    const e = c.expect as { ok: boolean; code?: string; value?: Json };
    expect(r.ok).toBe(e.ok);
    if (e.ok) expect(r.value).toEqual(e.value);
    else expect(r.problems[0]!.code).toBe(e.code);
  });

  test.each(byKind('hash-disclosure'))('$id: $comment', async (c) => {
    const r = await verifyHashDisclosure(receipts.get(c.receipt as string)!, c.proof);
    const e = c.expect as { ok: boolean; code?: string; step_hash?: string; head?: boolean };
    expect(r.ok).toBe(e.ok);
    if (e.ok) expect({ step_hash: r.step_hash, head: r.head }).toEqual({ step_hash: e.step_hash, head: e.head });
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
