/**
 * The leak sweep's multi-needle search (src/redact/needles.ts) against the obvious reference: a needle is
 * found exactly when some needle is a substring of the text, and what is returned is one of them.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { NeedleSearch } from '../../src/redact/needles.js';

// A small alphabet makes near misses and overlaps common; astral characters test surrogate pairs.
const unit = fc.constantFrom('a', 'b', 'c', '"', '\\', 'é', '\ud83d\ude00', '\u0000');
const text = fc.string({ unit, maxLength: 60 });
const needle = fc.string({ unit, minLength: 1, maxLength: 12 });

describe('NeedleSearch', () => {
  test('finds a needle exactly when one occurs (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.array(needle, { maxLength: 8 }),
        fc.array(fc.tuple(text, fc.nat(), fc.nat()), { minLength: 1, maxLength: 4 }),
        (needles, plans) => {
          const search = new NeedleSearch(needles);
          // Half the texts get one of the needles planted at a random place (often the very start or end).
          const texts = plans.map(([t, which, where]) => {
            if (needles.length === 0 || which % 2 === 0) return t;
            const at = [0, t.length, where % (t.length + 1)][which % 3]!;
            return t.slice(0, at) + needles[which % needles.length]! + t.slice(at);
          });
          for (const t of texts) {
            const found = search.find(t);
            const expected = needles.some((n) => t.includes(n));
            expect(found !== null).toBe(expected);
            if (found !== null) {
              expect(needles).toContain(found);
              expect(t.includes(found)).toBe(true);
            }
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('a needle planted anywhere in a long text is found: start, middle, end, overlapping a near miss', () => {
    const secret = 'k-live-0123456789abcdef';
    const search = new NeedleSearch([secret, 'other-secret-value']);
    const filler = '{"input":"' + 'x'.repeat(5000) + '"}';
    for (const at of [0, 1, 2500, filler.length - 1, filler.length]) {
      expect(search.find(filler.slice(0, at) + secret + filler.slice(at))).toBe(secret);
    }
    expect(search.find('k-live-0123456789abcde' + 'k-live-0123456789abcdef')).toBe(secret);
    expect(search.find(filler)).toBeNull();
    // A needle exactly as long as the hashed window, as the whole text and as its last characters.
    const six = new NeedleSearch(['abcdef']);
    expect(six.find('abcdef')).toBe('abcdef');
    expect(six.find('xxabcdef')).toBe('abcdef');
    expect(six.find('xxabcde')).toBeNull();
    expect(search.find('k-liv')).toBeNull();
    expect(new NeedleSearch([]).find(filler)).toBeNull();
    expect(new NeedleSearch(['']).find(filler)).toBeNull();
  });
});
