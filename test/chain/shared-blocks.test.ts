/**
 * The shared memory a verify's batches travel in (src/parallel/shared-memory.ts): every view starts at a word's
 * alignment (an odd start made the engine copy a batch into it a byte at a time, 7× slower), no two views
 * overlap, a view larger than a block gets a block of its own, and a view keeps its bytes while later views fill.
 */
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { SharedBlocks } from '../../src/parallel/shared-memory.js';

test('views are aligned, disjoint and keep what was written to them', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 300_000 }), { minLength: 1, maxLength: 40 }), (sizes) => {
      const blocks = new SharedBlocks();
      const views = sizes.map((n, i) => {
        const v = blocks.allocate(n);
        v.fill(i & 255);
        return v;
      });
      views.forEach((v, i) => {
        expect(v.length).toBe(sizes[i]);
        expect(v.byteOffset % 8).toBe(0);
        expect(v.buffer).toBeInstanceOf(SharedArrayBuffer);
        expect(v.every((b) => b === (i & 255))).toBe(true);
      });
    }),
    { numRuns: 50 },
  );
});
