/** src/canonical/depth.ts: the nesting of JSON text, read without recursion, as a recursive walk of the value measures it. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytesNestDeeper, nestsDeeper } from '../../src/canonical/depth.js';

/** The reference: containers nested in a parsed value (the record object counts as 1). */
function depthOf(v: unknown): number {
  if (v === null || typeof v !== 'object') return 0;
  const inner = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
  return 1 + inner.reduce<number>((m, x) => Math.max(m, depthOf(x)), 0);
}

describe('nestsDeeper', () => {
  it('is whether the value nests deeper than the bound, brackets inside strings aside', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (v, max) => {
        const text = JSON.stringify(v);
        // Below the length and bracket prefilters too: a padded string member keeps the text long.
        const padded = `{"p":"${'[{'.repeat(20)}","v":${text}}`;
        expect(nestsDeeper(padded, max)).toBe(depthOf(JSON.parse(padded)) > max);
        expect(bytesNestDeeper(new TextEncoder().encode(padded), max)).toBe(depthOf(JSON.parse(padded)) > max);
      }),
    );
  });

  it('finds a line nested 5,000 deep without recursion, and passes a line of many flat brackets', () => {
    expect(nestsDeeper(`{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`)).toBe(true);
    expect(nestsDeeper(`{"a":[${'[],'.repeat(5000)}[]]}`)).toBe(false);
  });
});
