/**
 * Many erases of one record at once (outsider J, F4): 20 erases of 20 distinct members of one record, made
 * together while an agent appends, each a valid erase. Each went back whenever another erase of the record was
 * recorded first (spec/ERASURE.md §4 step 4), and on SQLite 7 of 24 went back more than 16 times and gave up
 * with ERASURE_TARGET_INVALID, the code for "nothing to erase there". Erases of one journal through one store
 * now run one at a time in a process; erases in several processes pause before each go-back, and one that
 * still gives up says so with a code of its own, ERASURE_CONTENDED. Real SQLite file, real Postgres server,
 * real file store.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkAgain } from '../../src/erase/common.js';
import { eraseValue } from '../../src/erase.js';
import { FileStore } from '../../src/store/file/store.js';
import type { Store } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-erase-contention-');
const pg = await postgresHarness('erasecont', 6);
const MEMBERS = 20;

const stores: [string, () => Store][] = [
  ['sqlite', () => new SqliteStore(join(root, 'store.db'))],
  ['postgres', () => pg.store()],
  ['file', () => new FileStore(join(root, 'files'), { fsync: 'none' })],
];

describe('erases of distinct members of one record, all at once', () => {
  it.each(stores)('%s: every one is made, and the journal verifies', async (_, open) => {
    const store = open();
    const j = await store.create('j', { format: 'stepchain/v3' } as never);
    const result: Record<string, string> = {};
    for (let i = 0; i < MEMBERS; i++) result[`k${i}`] = `distinct-secret-${i}`;
    const target = await j.append({ step_id: 'target', result });
    let stop = false;
    const agent = (async () => {
      // At most 300 steps: a file store's erase reads what was appended since it looked (ERASURE.md §4 step 4).
      for (let n = 0; !stop && n < 300; n++) await j.append({ step_id: `agent-${n}`, input: n });
    })();
    const outcomes = await Promise.allSettled(
      Array.from({ length: MEMBERS }, (_, i) =>
        eraseValue(store, 'j', { seq: target.seq, path: `/result/k${i}`, reason: 'request of the data subject' }),
      ),
    );
    stop = true;
    await agent;
    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    const report = await j.verify();
    expect(report.problems).toEqual([]);
    expect(report.warnings.filter((w) => w.code === 'VALUE_ERASED')).toHaveLength(MEMBERS);
    for await (const line of j.lines({ from: target.seq, to: target.seq }))
      expect(line.text).not.toMatch(/distinct-secret-/);
    await j.close();
    await (store as { close?: () => Promise<void> }).close?.();
  });

  it('an erase that keeps meeting others gives up with ERASURE_CONTENDED, not the code for nothing to erase', () => {
    const req = { seq: 3, path: '/result/k1', reason: 'r' };
    expect(() => checkAgain(16, req)).not.toThrow();
    expect(() => checkAgain(17, req)).toThrow(
      expect.objectContaining({ code: 'ERASURE_CONTENDED', path: '/result/k1' }),
    );
  });
});
