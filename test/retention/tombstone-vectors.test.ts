/** vectors/tombstones.json (spec/RETENTION.md §4): every case gives its expected verdict and code. */
import { describe, expect, test } from 'vitest';
import { checkTombstone } from '../../src/retention/index.js';
import { loadVectors } from '../helpers/vectors.js';

interface Case {
  id: string;
  tombstone: unknown;
  against?: string;
  result: 'valid' | 'invalid';
  code?: string;
  checkpoint_size?: number | null;
}

describe('tombstone vectors', () => {
  test.each(loadVectors<Case>('tombstones.json').cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
    const got = checkTombstone(c.tombstone, c.against);
    if (c.result === 'valid') expect(got).toEqual({ ok: true, checkpointSize: c.checkpoint_size });
    else expect(got).toMatchObject({ ok: false, problem: { code: c.code } });
  });
});
