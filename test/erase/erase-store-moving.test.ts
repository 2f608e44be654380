/**
 * A store-wide erase searches again every journal that moved while it ran (spec/ERASURE.md §6), up to a bound;
 * a journal still being written after the last search is reported as failed, never passed over in silence
 * (review finding 7: the erase returned after its eighth listing and its report claimed the store done).
 */
import { describe, expect, it } from 'vitest';
import type { StoreErasureReport } from '../../src/erase/common.js';
import { forEachJournal } from '../../src/erase/each-journal.js';
import { FileStore } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const emptyReport = (): StoreErasureReport => ({ journals_scanned: 0, journals_not_v3: [], erased: [], failed: [] });

describe('a store-wide erase over journals being written', () => {
  it('reports a journal that is still moving after every search, and none that settled', async () => {
    const store = new FileStore(tempDir('stepchain-erase-moving-'));
    const busy = await store.create('busy', { format: 'stepchain/v3' } as never);
    const quiet = await store.create('quiet', { format: 'stepchain/v3' } as never);
    await quiet.append({ input: { n: 0 } });
    try {
      const report = emptyReport();
      let searches = 0;
      // The writer of `busy` appends while each of its searches runs, as an agent would.
      await forEachJournal(store, report, async (id) => {
        if (id === 'busy') {
          searches++;
          await busy.append({ input: { n: searches } });
        }
      });
      expect(searches).toBe(8);
      expect(report.journals_scanned).toBe(2);
      expect(report.failed.map((f) => [f.journal, f.seq])).toEqual([['busy', -1]]);
      expect(report.failed[0]!.error).toMatch(/still being written after 8 searches.*erase again/);
    } finally {
      await busy.close();
      await quiet.close();
    }
  });

  it('reports nothing when the journals settle', async () => {
    const store = new FileStore(tempDir('stepchain-erase-moving-'));
    const j = await store.create('once', { format: 'stepchain/v3' } as never);
    try {
      const report = emptyReport();
      let searches = 0;
      await forEachJournal(store, report, async () => {
        if (searches++ === 0) await j.append({ input: { n: 1 } });
      });
      expect(searches).toBe(2);
      expect(report.failed).toEqual([]);
    } finally {
      await j.close();
    }
  });
});
