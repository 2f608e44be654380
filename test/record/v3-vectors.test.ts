/**
 * vectors/v3.json (spec/FORMAT.md §14) against this implementation: every unit's index, kind, path, salt,
 * digest and chunk text, every slot key and digest and the root, from the fixed seeds; the derivation of
 * keys and salts; and each chain case through the chain verifier, fast and deep, with the expected codes
 * and locations.
 */
import { describe, expect, test } from 'vitest';
import { verifyChain } from '../../src/chain/files.js';
import { toHex } from '../../src/canonical/sha256.js';
import { V3_SLOTS, commitRecord, seedFromHex, slotKey, unitSalt, type Unit } from '../../src/record/v3/commit.js';
import { loadVectors } from '../helpers/vectors.js';

interface UnitsCase {
  id: string;
  kind: 'units';
  seed: string;
  values: Record<string, unknown>;
  expect: {
    root: string;
    slots: Array<{
      slot: string;
      key: string;
      digest: string;
      units: Array<{ index: number; kind: string; path: string; salt: string; digest: string; text?: string }>;
    }>;
  };
}
interface DeriveCase {
  id: string;
  kind: 'derive';
  seed: string;
  expect: { keys: string[]; salts_of_key_1: string[] };
}
interface Summary {
  ok: boolean;
  head: string | null;
  problems: Array<{ code: string; seq?: number; field?: string }>;
  notices: Array<{ code: string; seq?: number }>;
}
interface ChainCase {
  id: string;
  kind: 'chain';
  genesis: unknown;
  lines: string[];
  expect: { fast: Summary; deep: Summary };
}
type Case = UnitsCase | DeriveCase | ChainCase;

const doc = loadVectors<Case>('v3.json');
const enc = new TextEncoder();

describe('vectors/v3.json', () => {
  test.each(doc.cases.filter((c): c is UnitsCase => c.kind === 'units').map((c) => [c.id, c] as const))(
    '%s',
    (_id, c) => {
      const units: Unit[] = [];
      const got = commitRecord(c.values, seedFromHex(c.seed)!, { units: true });
      units.push(...got.units);
      expect(got.root).toBe(c.expect.root);
      c.expect.slots.forEach((s, j) => {
        expect(s.slot).toBe(V3_SLOTS[j]);
        expect(toHex(got.slots[j]!.key)).toBe(s.key);
        expect(toHex(got.slots[j]!.digest)).toBe(s.digest);
        const mine = units
          .filter((u) => u.slot === s.slot)
          .map((u) => ({ index: u.index, kind: u.kind, path: u.path, salt: toHex(u.salt), digest: toHex(u.digest) }));
        expect(mine).toEqual(s.units.map(({ text: _t, ...u }) => u));
      });
    },
  );

  test.each(doc.cases.filter((c): c is DeriveCase => c.kind === 'derive').map((c) => [c.id, c] as const))(
    '%s',
    (_id, c) => {
      const seed = seedFromHex(c.seed)!;
      expect(V3_SLOTS.map((_, j) => toHex(slotKey(seed, j)))).toEqual(c.expect.keys);
      expect([0, 1, 2, 3, 4].map((i) => toHex(unitSalt(slotKey(seed, 1), i)))).toEqual(c.expect.salts_of_key_1);
    },
  );

  test.each(doc.cases.filter((c): c is ChainCase => c.kind === 'chain').map((c) => [c.id, c] as const))(
    '%s',
    (_id, c) => {
      for (const deep of [false, true]) {
        const r = verifyChain({
          genesis: c.genesis,
          storedOnly: true,
          deep,
          files: [{ name: '0000000000000000.jsonl', bytes: enc.encode(c.lines.map((l) => l + '\n').join('')) }],
        });
        const want = deep ? c.expect.deep : c.expect.fast;
        expect(r.ok).toBe(want.ok);
        expect(r.head).toBe(want.head);
        expect(
          r.problems.map((p) => ({
            code: p.code,
            ...(p.location.seq === undefined ? {} : { seq: p.location.seq }),
            ...(p.location.field === undefined ? {} : { field: p.location.field }),
          })),
        ).toEqual(want.problems);
        expect(r.warnings.map((w) => ({ code: w.code, seq: w.location.seq }))).toEqual(want.notices);
      }
    },
  );

  test('the negatives are negatives: each invalid case differs from chain-valid in its lines', () => {
    const valid = doc.cases.find((c) => c.id === 'chain-valid') as ChainCase;
    for (const c of doc.cases)
      if (c.kind === 'chain' && c.id !== 'chain-valid' && c.id !== 'chain-kinds-notices')
        expect(c.lines).not.toEqual(valid.lines);
  });
});
