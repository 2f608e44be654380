import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJson, canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import { commitManyTexts, commitRecordTexts } from '../../src/record/v3/commit-texts.js';
import { CommitError, V3_SLOTS, commitRecord, newSeed, type V3Slot } from '../../src/record/v3/commit.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
type Slots = Partial<Record<V3Slot, unknown>>;
// A caller's values are checked I-JSON (canonicalJson); the writer's own part references use reserved names.
const textsOf = (values: Slots, canonical: (v: unknown) => string = canonicalJson): Partial<Record<V3Slot, string>> => {
  const texts: Partial<Record<V3Slot, string>> = {};
  for (const s of V3_SLOTS) if (values[s] !== undefined) texts[s] = canonical(values[s]);
  return texts;
};
/** The walk over parsed values (commit.ts), the reference the batched scan must equal byte for byte. */
const walkRoot = (values: Slots, seed: Uint8Array): string =>
  hex(commitRecord(JSON.parse(JSON.stringify(values)) as Slots, seed).rootBytes);

// Strings around the chunking threshold (64 escaped bytes) and the long-text bound (4096), with escapes,
// multi-byte characters and spaces where a chunk may be cut.
const text = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: 'grapheme', maxLength: 120 }),
  fc.string({
    unit: fc.constantFrom('a', ' ', 'é', '😀', '"', '\\', '\n', '\u0001', '/'),
    minLength: 50,
    maxLength: 400,
  }),
  fc.constantFrom(
    'x'.repeat(64),
    'x'.repeat(65),
    'word '.repeat(30),
    '\\'.repeat(70),
    'é'.repeat(33),
    'y'.repeat(4097),
    'z '.repeat(2100),
  ),
);
const json = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 5 }),
    fc.dictionary(text, tie('v'), { maxKeys: 5 }),
  ),
})).v;
const record = fc.record(Object.fromEntries(V3_SLOTS.map((s) => [s, json])) as Record<V3Slot, fc.Arbitrary<unknown>>, {
  requiredKeys: [],
});
const seed = fc.uint8Array({ minLength: 32, maxLength: 32 });

describe('R from canonical texts, hashed in batches (record/v3/commit-texts.ts)', () => {
  test('equals the walk over parsed values on generated records', () => {
    fc.assert(
      fc.property(record, seed, (values, s) => {
        expect(hex(commitRecordTexts(textsOf(values), s))).toBe(walkRoot(values, s));
      }),
      { numRuns: 400 },
    );
  });

  test('the design example (docs/design/format-v3.md §1), absent slots, empty containers, a record with many units', () => {
    const s = newSeed();
    const many = { input: { list: Array.from({ length: 300 }, (_, i) => ({ i, note: `item ${i} `.repeat(12) })) } };
    for (const values of [
      {},
      { meta: {} },
      { input: [], result: {}, error: null },
      many,
      { prompt: 'p'.repeat(10000) },
    ] as Slots[]) {
      expect(hex(commitRecordTexts(textsOf(values), s))).toBe(walkRoot(values, s));
    }
  });

  test('a batch of records hashed together (commitManyTexts) gives each record the root of the walk; a malformed part reference gives null and leaves the others', () => {
    const digest = 'sha256:' + 'ab'.repeat(32);
    // Part references (good and malformed) among generated records: the scan takes them out of the shared table.
    const special = fc.constantFrom<Slots | 'bad'>(
      { input: { a: 1, big: { '$stepchain:part': { digest, size: 2000 } } } },
      'bad',
    );
    const bad: Slots = { input: { big: { '$stepchain:part': { digest: 'sha256:nope' } } } };
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(record, special), seed), { minLength: 1, maxLength: 40 }), (items) => {
        const values = items.map(([v]) => (v === 'bad' ? bad : v));
        const seeds = items.map(([, s]) => s);
        const roots = commitManyTexts(
          values.map((v) => textsOf(v, canonicalJsonTrusted)),
          seeds,
        );
        expect(roots).toHaveLength(items.length);
        values.forEach((v, i) => {
          if (v === bad) expect(roots[i]).toBeNull();
          else expect(hex(roots[i]!)).toBe(walkRoot(v, seeds[i]!));
        });
      }),
      { numRuns: 40 },
    );
  });

  test('a part reference is left to the walk: the same root, and a malformed one the same coded error', () => {
    const s = newSeed();
    const digest = 'sha256:' + 'ab'.repeat(32);
    const good = {
      input: { a: 1, big: { '$stepchain:part': { digest, size: 2000 } } },
      prompt: { '$stepchain:part': { digest, size: 9 }, x: 1 },
    };
    expect(hex(commitRecordTexts(textsOf(good, canonicalJsonTrusted), s))).toBe(walkRoot(good, s));
    const bad = { input: { big: { '$stepchain:part': { digest: 'sha256:nope' } } } };
    const error = (() => {
      try {
        commitRecordTexts(textsOf(bad, canonicalJsonTrusted), s);
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(CommitError);
    expect((error as CommitError).code).toBe('MARKER_INVALID');
  });
});
