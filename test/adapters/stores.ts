/**
 * The stores an adapter suite runs on: the file store and the SQLite store (one database file), under the
 * suite's temporary root; the SQLite stores are closed after the file's tests.
 */
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { FileStore, type Store } from '../../src/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';

export function adapterStores(root: string): Array<[string, () => Store]> {
  const opened: SqliteStore[] = [];
  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
  });
  return [
    ['file store', () => new FileStore(join(root, 'runs'), { fsync: 'none' })],
    [
      'sqlite store',
      () => {
        const s = new SqliteStore(join(root, 'runs.db'), { fsync: 'none' });
        opened.push(s);
        return s;
      },
    ],
  ];
}
