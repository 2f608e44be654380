/**
 * The SQLite store (spec/SQLITE.md), for journals in one file written by the processes of one machine: the
 * folder's public names, gathered for `stepchain/sqlite` (src/sqlite.ts), the library's openStore, the CLI
 * and the tests. The `better-sqlite3` driver is an optional peer dependency, loaded on first use.
 */
export {
  SqliteStore,
  DEFAULT_SQLITE_IDEMPOTENCY_WINDOW,
  DEFAULT_SQLITE_LOCK_TIMEOUT_MS,
  type SqliteStoreOptions,
} from './store.js';
export type { SqliteJournal } from './journal.js';
export type { SqliteDurability } from './db.js';
export { SQLITE_SCHEMA_VERSION } from './schema.js';
export { isSqliteLocation, parseSqliteLocation, type SqliteLocation } from './location.js';
