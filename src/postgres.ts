/**
 * `stepchain/postgres`: the Postgres store (spec/POSTGRES.md), for journals written by agents on many
 * machines, behind the same Store/Journal contract as the file store (`stepchain/journal`); copying a
 * journal between any two stores; a store's health, as `stepchain doctor` prints it. Node only. The `pg`
 * driver is an optional peer dependency (`npm install pg`), loaded on first use: importing this entry
 * without it works, and the first connection fails with DRIVER_MISSING.
 */
export * from './store/postgres/index.js';
export { copyJournal, type CopyOptions, type CopyResult } from './store/copy.js';
export type { StoreHealth, HealthProblem, StoreDiagnostics } from './store/health.js';
export { StoreError, type StoreErrorCode } from './store/errors.js';
