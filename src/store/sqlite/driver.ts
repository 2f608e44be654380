/**
 * The SQLite driver seen through the few calls the SQLite store makes (spec/SQLITE.md §2). `better-sqlite3`
 * (12.x) is an optional peer dependency, loaded on first use, so importing stepchain never requires it and
 * a missing driver is DRIVER_MISSING with the install command. The structural types keep the driver's own
 * type package out of the store's public declarations. The driver is synchronous: every statement runs on
 * the calling thread, so a transaction never waits on I/O between its statements.
 */
import { createRequire } from 'node:module';
import { StoreError } from '../errors.js';

export interface RunResult {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface Statement {
  run(...params: unknown[]): RunResult;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

export interface Connection {
  prepare(sql: string): Statement;
  exec(sql: string): unknown;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): unknown;
  readonly inTransaction: boolean;
  readonly open: boolean;
}

interface DriverOptions {
  readonly?: boolean;
  fileMustExist?: boolean;
  /** busy_timeout in milliseconds. */
  timeout?: number;
}

type DriverModule = new (file: string, options?: DriverOptions) => Connection;

let loaded: DriverModule | null = null;

/** The `better-sqlite3` module, loaded once; DRIVER_MISSING when it is not installed or does not load. */
export function loadDriver(): DriverModule {
  if (loaded !== null) return loaded;
  // A specifier in a variable: the compiler needs no types, and the CLI's bundler leaves the native module outside.
  const name = 'better-sqlite3';
  try {
    loaded = createRequire(import.meta.url)(name) as DriverModule;
  } catch (e) {
    throw new StoreError(
      'DRIVER_MISSING',
      'the SQLite store needs the `better-sqlite3` package (12.x), which is not installed or does not load on this Node',
      {
        hint: 'npm install better-sqlite3@12',
        cause: e,
      },
    );
  }
  return loaded;
}

/** Opens a connection: the driver's own errors (a file that is not a database, a missing folder) pass through to the caller's translation. */
export function connect(file: string, options: DriverOptions): Connection {
  const Database = loadDriver();
  return new Database(file, options);
}
