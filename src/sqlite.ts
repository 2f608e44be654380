/**
 * `stepchain/sqlite`: the SQLite store (spec/SQLITE.md), for journals kept in one file — desktop agents,
 * CLIs, serverless functions, tests — written by the processes of one machine, behind the same Store/Journal
 * contract as the file and Postgres stores (`stepchain/journal`); copying a journal between any two stores;
 * a store's health, as `stepchain doctor` prints it. Node only. The `better-sqlite3` driver (12.x) is an
 * optional peer dependency (`npm install better-sqlite3@12`), loaded on first use: importing this entry
 * without it works, and the first use of a store fails with DRIVER_MISSING.
 */
export * from './store/sqlite/index.js';
export { copyJournal, type CopyOptions, type CopyResult } from './store/copy.js';
export type { StoreHealth, HealthProblem, StoreDiagnostics } from './store/health.js';
export { StoreError, type StoreErrorCode } from './store/errors.js';
