/**
 * The database driver seen through the few calls the Postgres store makes (spec/POSTGRES.md §2). `pg` is
 * an optional peer dependency: it is loaded on first use, so importing stepchain never requires it, and a
 * missing driver is DRIVER_MISSING with the install command. The structural types below keep `pg`'s own
 * type package out of the store's public declarations.
 */
import { StoreError } from '../errors.js';

export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number | null;
}

export interface DbClient {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<QueryResult<Row>>;
  /** Returns the client to its pool; an error (or true) destroys it instead, for a connection in doubt. */
  release(destroy?: Error | boolean): void;
}

export interface DbPool {
  connect(): Promise<DbClient>;
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<QueryResult<Row>>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Connection settings as `pg` takes them; what is absent comes from the libpq environment (PGHOST, PGPASSWORD…). */
export interface ConnectionConfig {
  connectionString?: string;
  host?: string;
  port?: number;
  user?: string;
  database?: string;
  password?: string;
  ssl?: unknown;
  /** Give up connecting after this long (default 10 s). */
  connectionTimeoutMillis?: number;
  /** Connections one store keeps at most (default 10, at least 2: a fork reads its parent while it writes). */
  max?: number;
  [option: string]: unknown;
}

/** A connection of its own, outside the pool: the intake's LISTEN (intake.ts). */
export interface DbListener {
  connect(): Promise<void>;
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (n: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
  ref(): void;
  unref(): void;
  end(): Promise<void>;
}

interface PgModule {
  Pool: new (config: Record<string, unknown>) => DbPool;
  Client: new (config: Record<string, unknown>) => DbListener;
}

let loaded: Promise<PgModule> | null = null;

/** The `pg` module, imported once; DRIVER_MISSING when it is not installed. */
export function loadDriver(): Promise<PgModule> {
  // A specifier in a variable: the compiler neither needs pg's types nor bundlers a copy of pg.
  const name = 'pg';
  loaded ??= (import(name) as Promise<{ default?: unknown }>).then(
    (m) => (m.default ?? m) as PgModule,
    (e: unknown) => {
      loaded = null;
      throw new StoreError('DRIVER_MISSING', 'the Postgres store needs the `pg` package, which is not installed', {
        hint: 'npm install pg@8',
        cause: e,
      });
    },
  );
  return loaded;
}

/**
 * The pool as the store uses it: every client it checks out carries an 'error' listener for its life. A
 * connection the server ends while the store holds the client between two statements of a transaction
 * (pg_terminate_backend, a server restart: "terminating connection due to administrator command") is
 * reported by `pg` as an 'error' event on the client, and without a listener that event killed the whole
 * process (test/faults/postgres.test.ts). With it, the transaction's next statement fails, as a lost
 * connection (SERVER_UNREACHABLE), and the client is destroyed on release. The pool's own idle clients are
 * covered by its 'error' listener (createPool).
 */
export function guardClients(pool: DbPool): DbPool {
  const guarded = new WeakSet<object>();
  const ignore = (): void => {};
  return {
    connect: async () => {
      const client = await pool.connect();
      const events = client as unknown as { on?: (event: 'error', listener: () => void) => unknown };
      if (!guarded.has(client) && typeof events.on === 'function') {
        events.on('error', ignore);
        guarded.add(client);
      }
      return client;
    },
    query: (text, values) => pool.query(text, values),
    end: () => pool.end(),
    on: (event, listener) => pool.on(event, listener),
  };
}

/** A pool for the store. Idle connections never keep the process alive (allowExitOnIdle). */
export async function createPool(config: ConnectionConfig): Promise<DbPool> {
  const pg = await loadDriver();
  const pool = new pg.Pool({
    connectionTimeoutMillis: 10_000,
    max: 10,
    ...config,
    allowExitOnIdle: true,
    // TCP keepalive lets a writer notice a dead server (and the server a dead writer) on a silent network.
    keepAlive: true,
  });
  // Without a listener, an idle client's error (the server restarting) would be an uncaught exception.
  pool.on('error', () => {});
  // And a client's own, whatever path it is used by (guardClients covers the clients of a caller's pool).
  (
    pool as unknown as {
      on(event: 'connect', listener: (client: { on(event: 'error', l: () => void): unknown }) => void): unknown;
    }
  ).on('connect', (client) => {
    client.on('error', () => {});
  });
  return pool;
}
