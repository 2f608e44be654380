/**
 * `stepchain/postgres`: the Postgres store (spec/POSTGRES.md), for journals written from many machines.
 * Node-only entry point: importing it installs node:crypto's SHA-256, as `stepchain` does. The `pg`
 * driver is an optional peer dependency, loaded on first use.
 */
import { useNodeHash } from '../../node/fast-hash.js';

useNodeHash();

export {
  PostgresStore, DEFAULT_PG_IDEMPOTENCY_WINDOW, DEFAULT_PG_IDLE_TIMEOUT_MS, DEFAULT_PG_LOCK_TIMEOUT_MS, type PostgresStoreOptions,
} from './store.js';
export type { PostgresJournal } from './journal.js';
export { SCHEMA_VERSION, DEFAULT_SCHEMA } from './schema.js';
export { isPostgresLocation, parsePostgresLocation, type PostgresLocation } from './location.js';
export type { ConnectionConfig, DbPool, DbClient } from './driver.js';
export type { StoreHealth, HealthProblem } from '../health.js';
export { StoreError, type StoreErrorCode } from '../errors.js';
