/**
 * Scale (issue 15 item 2): `append --jsonl` of 400 000 steps crashed with "Maximum call stack size
 * exceeded" — a spread of one batch's lines into push(). No call may spread an array whose length the
 * caller controls. One appendMany of 200 000 steps (the normal run; one million in `npm run test:long`)
 * is appended in one commit and verified; and a verifier with more problems than it keeps stays bounded.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';
import { LONG } from './support.js';

const STEPS = LONG ? 1_000_000 : 200_000;
const root = tempDir('stepchain-scale-');

describe('one appendMany of many steps', () => {
  test(
    `${STEPS} steps in one appendMany are committed, read back and verified`,
    async () => {
      const store = new FileStore(root, { fsync: 'none' });
      const j = await store.create('big');
      try {
        const results = await j.appendMany(Array.from({ length: STEPS }, (_, i) => ({ input: i })));
        expect(results).toHaveLength(STEPS);
        expect(results[STEPS - 1]!.seq).toBe(STEPS - 1);
        const report = await j.verify();
        expect(report.problems).toEqual([]);
        expect(report.ok).toBe(true);
        expect(report.steps).toBe(STEPS);
        expect(report.head).toBe(results[STEPS - 1]!.step_hash);
        expect((await j.get(STEPS - 1))?.input).toBe(STEPS - 1);
      } finally {
        await j.close();
        rmSync(join(root, 'big'), { recursive: true, force: true });
      }
    },
    LONG ? 3_600_000 : 240_000,
  );
});

describe('a journal with more problems than a report keeps', () => {
  test('1 200 missing blobs: at most 1 000 problems, truncated, never valid', async () => {
    const store = new FileStore(root, { fsync: 'none', blobThreshold: 1024 });
    const j = await store.create('blobless');
    await j.appendMany(Array.from({ length: 1200 }, (_, i) => ({ input: i, result: `${i}:`.padEnd(1100, 'x') })));
    await j.close();
    rmSync(join(root, 'blobless', 'blobs', 'sha256'), { recursive: true });
    const report = await store.verify('blobless');
    expect(report.ok).toBe(false);
    expect(report.problems_truncated).toBe(true);
    expect(report.problems.length).toBeLessThanOrEqual(1000);
    expect(new Set(report.problems.map((p) => p.code))).toEqual(new Set(['JOURNAL_INVALID', 'BLOB_MISSING']));
  });
});
