/**
 * The store conformance suite (src/testing/store-conformance.ts, exported from `stepchain/testing`) run
 * against every implementation: the file store (real files under a temporary root), the in-memory store,
 * the Postgres store (a real server, started once per run by test/setup/postgres.ts; each store a schema of
 * its own) and the SQLite store (a database file each). Whatever a caller can observe through Store and
 * Journal must be the same in all of them.
 */
import { afterAll, describe, inject, test } from 'vitest';
import { FileStore, MemoryStore, type Store } from '../../src/store/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { storeConformance, type ConformanceStoreOptions } from '../../src/testing/index.js';
import { tempDir } from '../helpers/tmp.js';

interface Impl {
  name: string;
  make: (options?: ConformanceStoreOptions) => Store;
}

const root = tempDir('stepchain-conformance-');
let n = 0;
const pgStores: PostgresStore[] = [];
const sqliteStores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all([...pgStores, ...sqliteStores].map((s) => s.close()));
});
const impls: Impl[] = [
  { name: 'file store', make: (o = {}) => new FileStore(`${root}/s${n++}`, { ...o, fsync: 'none' }) },
  { name: 'memory store', make: (o = {}) => new MemoryStore(o) },
  {
    name: 'postgres store',
    make: (o = {}) => {
      const store = new PostgresStore({
        connectionString: inject('pgUrl'),
        schema: `conformance_${process.pid}_${n++}`,
        connection: { max: 4 },
        ...o,
      });
      pgStores.push(store);
      return store;
    },
  },
  {
    name: 'sqlite store',
    make: (o = {}) => {
      const store = new SqliteStore(`${root}/s${n++}.db`, { ...o, fsync: 'none' });
      sqliteStores.push(store);
      return store;
    },
  },
];

for (const { name, make } of impls) describe(name, () => storeConformance({ describe, test, makeStore: make }));
