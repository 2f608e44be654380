/**
 * The Postgres store (spec/POSTGRES.md), for journals written from many machines: the folder's public
 * names, gathered for `stepchain/postgres` (src/postgres.ts), the CLI and the tests. The `pg` driver is an
 * optional peer dependency, loaded on first use.
 */
export {
  PostgresStore,
  DEFAULT_PG_IDEMPOTENCY_WINDOW,
  DEFAULT_PG_IDLE_TIMEOUT_MS,
  DEFAULT_PG_LOCK_TIMEOUT_MS,
  type PostgresStoreOptions,
} from './store.js';
export type { PostgresJournal } from './journal.js';
export { SCHEMA_VERSION, DEFAULT_SCHEMA } from './schema.js';
export { isPostgresLocation, parsePostgresLocation, type PostgresLocation } from './location.js';
export type { ConnectionConfig, DbPool, DbClient } from './driver.js';
