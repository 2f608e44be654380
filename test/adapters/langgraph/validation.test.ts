/**
 * LangGraph's conformance suite for checkpointers, run against StepchainSaver on the file store (real
 * files, a fresh root per checkpointer) and on the memory, Postgres and SQLite stores (a file each).
 */
import { afterAll, inject } from 'vitest';
import { FileStore, MemoryStore } from '../../../src/index.js';
import { PostgresStore } from '../../../src/store/postgres/index.js';
import { SqliteStore } from '../../../src/store/sqlite/index.js';
import { tempDir } from '../../helpers/tmp.js';
import { validateOn } from './harness.js';

const root = tempDir('stepchain-langgraph-validation-');
let n = 0;
validateOn('file store', () => new FileStore(`${root}/s${n++}`, { fsync: 'none' }));
validateOn('memory store', () => new MemoryStore());

// The Postgres store on the run's throwaway server (test/setup/postgres.ts), a schema per checkpointer.
const pgStores: PostgresStore[] = [];
const sqliteStores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all([...pgStores, ...sqliteStores].map((s) => s.close()));
});
validateOn('postgres store', () => {
  const store = new PostgresStore({
    connectionString: inject('pgUrl'),
    schema: `langgraph_${process.pid}_${n++}`,
    connection: { max: 4 },
  });
  pgStores.push(store);
  return store;
});

validateOn('sqlite store', () => {
  const store = new SqliteStore(`${root}/s${n++}.db`, { fsync: 'none' });
  sqliteStores.push(store);
  return store;
});
