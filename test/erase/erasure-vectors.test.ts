/**
 * vectors/erasure.json (scripts/vectors/erasure.mjs, spec/ERASURE.md): the chain verifier reports exactly
 * the expected problems and erasure notices for each case, and KIND_UNCHECKED only for an erasure record
 * whose input is not an erasure's (the kind is checked); the erased value and its salt are in no line of
 * the erased chain, and its step hashes are those of the original chain.
 */
import { describe, expect, it } from 'vitest';
import { ChainVerifier } from '../../src/chain/verifier.js';
import { b64u } from '../../src/record/v3/erasure.js';
import { loadVectors } from '../helpers/vectors.js';

interface ErasureCase {
  id: string;
  comment: string;
  result: 'valid' | 'invalid';
  genesis: unknown;
  lines: string[];
  expected: {
    ok: boolean;
    problems: Array<{ code: string; seq: number | null }>;
    notices: Array<{ code: string; seq: number | null; path: string | null }>;
  };
  original_lines?: string[];
  erased_value?: string;
  erased_salt_hex?: string;
  /** A partial range's first seq and prev_hash (ERASURE.md §5 step 4, §6.5). */
  start?: { seq: number; prev_hash: string };
  /** What a writer does with such a range (a fork or a receipt): refuses it with this code. */
  writer_refuses?: string;
}

const doc = loadVectors<ErasureCase>('erasure.json');

describe('vectors/erasure.json', () => {
  it.each(doc.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const v = new ChainVerifier({ genesis: c.genesis, ...(c.start ? { start: c.start } : {}) });
    for (const l of c.lines) v.line(l, true);
    const r = v.finish();
    expect(r.ok).toBe(c.result === 'valid');
    expect(r.problems.map((p) => ({ code: p.code, seq: p.location.seq ?? null }))).toEqual(c.expected.problems);
    expect(
      r.warnings
        .filter((w) => w.code.startsWith('ERASURE') || w.code === 'VALUE_ERASED')
        .map((w) => ({ code: w.code, seq: w.location.seq ?? null, path: w.location.path ?? null })),
    ).toEqual(c.expected.notices);
    // The kind is checked: KIND_UNCHECKED only for an erasure record whose input is not an erasure's (ERASURE.md §5).
    const malformed = c.lines
      .map((l) => JSON.parse(l) as { seq: number; kind: string; input: unknown })
      .filter(
        (r) =>
          r.kind === 'erasure' &&
          Object.keys((r.input ?? {}) as object)
            .sort()
            .join() !== 'by,digest,path,reason,target',
      )
      .map((r) => r.seq);
    expect(r.warnings.filter((w) => w.code === 'KIND_UNCHECKED').map((w) => w.location.seq)).toEqual(malformed);
    if (c.original_lines !== undefined) {
      const hashes = (ls: string[]): unknown[] => ls.map((l) => (JSON.parse(l) as { step_hash: string }).step_hash);
      expect(hashes(c.lines).slice(0, c.original_lines.length)).toEqual(hashes(c.original_lines));
      const salt = Buffer.from(c.erased_salt_hex!, 'hex');
      for (const needle of [c.erased_value!, c.erased_salt_hex!, b64u(new Uint8Array(salt))])
        expect(c.lines.join('\n')).not.toContain(needle);
    }
  });
});
