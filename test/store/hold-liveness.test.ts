/**
 * A copy's hold of its source's appends (ChainSource.holdingAppends, spec/ERASURE.md §4.1) is taken after at
 * most the batch being committed, even while a caller keeps appending through the same journal handle. An
 * outsider found it waited instead for the appends to stop: the hold first waited for the handle's commit
 * queue to empty, and each new append refilled it, so a receipt of a busy journal waited 30 s, past any lock
 * timeout. Here an appender never pauses; the export and the fork must finish, and appends go on after them.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { exportReceipt } from '../../src/index.js';
import { FileStore } from '../../src/store/file/store.js';
import type { Journal, Store } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { copyWhileAppending } from '../helpers/appending.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-hold-liveness-');
const sqlite: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(sqlite.map((s) => s.close()));
});

const stores: Array<[string, () => Store]> = [
  ['a directory', () => new FileStore(tempDir('stepchain-hold-liveness-files-'))],
  [
    'SQLite',
    () => {
      const s = new SqliteStore(join(root, `${sqlite.length}.db`));
      sqlite.push(s);
      return s;
    },
  ],
];

describe('a hold of a journal someone keeps appending to through the same handle', () => {
  for (const [name, make] of stores) {
    test(`${name}: a receipt is written, and appends go on after it`, async () => {
      const store = make();
      const journal = await store.create('busy', { format: 'stepchain/v3' } as never);
      const out = join(root, `busy-${name.length}-${Date.now()}.tar`);
      const [before, , after] = await copyWhileAppending(journal, () => exportReceipt(journal, { out }));
      expect(before).toBeGreaterThanOrEqual(20);
      expect(after).toBeGreaterThanOrEqual(20);
      expect((await journal.verify()).ok).toBe(true);
    });

    test(`${name}: a fork into the same store is made, and appends go on after it`, async () => {
      const store = make();
      const journal = await store.create('busy', { format: 'stepchain/v3' } as never);
      let fork: Journal | null = null;
      await copyWhileAppending(journal, async () => {
        fork = await store.fork(journal, { fromStep: 10, to: 'fork' });
      });
      expect((await fork!.head())?.seq).toBe(10);
      expect((await fork!.verify()).ok).toBe(true);
    });
  }

  test('a directory journal verified through the same handle while appends go on', async () => {
    const journal = await new FileStore(tempDir('stepchain-hold-liveness-verify-')).create('busy', {
      format: 'stepchain/v3',
    } as never);
    let report: { ok: boolean } | null = null;
    await copyWhileAppending(journal, async () => {
      report = await journal.verify();
    });
    expect(report!.ok).toBe(true);
  });

  for (const [name, make] of [
    ['a directory', () => new FileStore(tempDir('stepchain-hold-stream-'), { lockTimeoutMs: 1500 })],
    [
      'SQLite',
      () => {
        const s = new SqliteStore(join(root, `stream-${sqlite.length}.db`), { lockTimeoutMs: 1500 });
        sqlite.push(s);
        return s;
      },
    ],
  ] as Array<[string, () => Store]>)
    test(`${name}: a receipt while the same handle streams a batch fails LOCK_TIMEOUT, and the batch is kept`, async () => {
      const journal = await make().create('streaming', { format: 'stepchain/v3' } as never);
      for (let i = 0; i < 5; i++) await journal.append({ input: { i } });
      let stop = false;
      const steps = async function* (): AsyncGenerator<{ input: { n: number } }> {
        for (let n = 0; !stop; n++) {
          yield { input: { n } };
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      const streamed = (
        journal as unknown as { appendStream(s: AsyncIterable<unknown>): Promise<unknown> }
      ).appendStream(steps());
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      const refused = await exportReceipt(journal, { out: join(root, `stream-${name.length}.tar`) }).then(
        () => null,
        (e: unknown) => e as { code?: string },
      );
      const waited = Date.now() - started;
      stop = true;
      await streamed;
      expect(refused?.code).toBe('LOCK_TIMEOUT');
      expect(waited).toBeLessThan(10_000);
      expect((await journal.head())!.seq).toBeGreaterThan(5);
      expect((await journal.verify()).ok).toBe(true);
    });
});
