/**
 * Database failures as the store's coded errors (spec/POSTGRES.md §7). The driver reports network errors
 * with errno codes, server errors with SQLSTATE codes and a few client-side conditions with bare messages;
 * each becomes one StoreError code whose message names the server (password masked) and what to do.
 */
import { StoreError } from '../errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'ECONNRESET',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

interface DriverError {
  code?: unknown;
  message?: unknown;
  severity?: unknown;
  errors?: unknown;
}

/** The SQLSTATE (five characters) of a server error, or undefined. */
export function sqlState(e: unknown): string | undefined {
  const code = (e as DriverError | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** Whether `e` means the connection itself failed (nothing the server said about the statement). */
export function isConnectionLoss(e: unknown): boolean {
  if (e instanceof StoreError) return e.code === 'SERVER_UNREACHABLE';
  const err = e as DriverError | null;
  const code = err?.code;
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  const state = sqlState(e);
  // 08: connection exception; 57P01–57P03: the server is shutting down or starting up.
  if (state !== undefined) return state.startsWith('08') || state === '57P01' || state === '57P02' || state === '57P03';
  const message = typeof err?.message === 'string' ? err.message : '';
  return /Connection terminated|connection timeout|timeout expired|Client has encountered a connection error|Connection closed/i.test(
    message,
  );
}

/**
 * Translates anything the driver threw into a StoreError; a StoreError passes through unchanged.
 * `server` is the masked location, `doing` says what was being done ("appending to journal run-42").
 */
export function translate(e: unknown, server: string, doing: string): StoreError {
  if (e instanceof StoreError) return e;
  const err = e as DriverError | null;
  const message = typeof err?.message === 'string' ? err.message : String(e);
  const state = sqlState(e);
  const location = { file: server };
  if (
    state === '28P01' ||
    state === '28000' ||
    /SASL|client password must be a string|password authentication/i.test(message)
  ) {
    return new StoreError('AUTH_FAILED', `${server} refused the login while ${doing}: ${message}`, {
      location,
      hint: 'put the password in PGPASSWORD or ~/.pgpass (never on the command line), and check the user name and pg_hba.conf',
      cause: e,
    });
  }
  const full = poolExhausted(e, message, server, doing);
  if (full !== null) return full;
  if (isConnectionLoss(e)) {
    const code = typeof err?.code === 'string' && !state ? ` (${err.code})` : state ? ` (SQLSTATE ${state})` : '';
    return new StoreError(
      'SERVER_UNREACHABLE',
      `${server} could not be reached while ${doing}${code}: ${message || 'connection failed'}`,
      {
        location,
        hint: 'check that the server is running and that host, port and firewall let this machine connect',
        cause: e,
      },
    );
  }
  if (state === '55P03') {
    return new StoreError(
      'LOCK_TIMEOUT',
      `${server}: another writer held the journal past the lock timeout while ${doing}`,
      {
        location,
        hint: 'retry; if it persists, look for a stuck session in pg_stat_activity',
        cause: e,
      },
    );
  }
  if (state === '3D000') {
    return new StoreError(
      'SERVER_ERROR',
      `${server}: the database does not exist (SQLSTATE 3D000) while ${doing}: ${message}`,
      {
        location,
        hint: 'create the database (createdb), or name an existing one in the location',
        cause: e,
      },
    );
  }
  if (state === '42501') {
    return new StoreError('SERVER_ERROR', `${server}: permission denied (SQLSTATE 42501) while ${doing}: ${message}`, {
      location,
      hint: 'the store needs USAGE on its schema and SELECT, INSERT, UPDATE on its tables; creating the schema needs CREATE on the database',
      cause: e,
    });
  }
  if (state === '25006') {
    return new StoreError(
      'SERVER_ERROR',
      `${server} is read-only (SQLSTATE 25006: a standby, or default_transaction_read_only) while ${doing}`,
      {
        location,
        hint: 'connect to the primary to write; reading works on a standby',
        cause: e,
      },
    );
  }
  return new StoreError(
    'SERVER_ERROR',
    `${server} failed while ${doing}${state ? ` (SQLSTATE ${state})` : ''}: ${message}`,
    { location, cause: e },
  );
}

/**
 * pg-pool's own words when a checkout waited its connection timeout with every connection in use: the
 * server was never asked, so neither "unreachable" nor a server error (outsider 16). Null for anything else.
 */
function poolExhausted(e: unknown, message: string, server: string, doing: string): StoreError | null {
  if (sqlState(e) !== undefined || !/timeout exceeded when trying to connect/i.test(message)) return null;
  return new StoreError(
    'POOL_EXHAUSTED',
    `every connection of this process's pool to ${server} stayed in use past the connection timeout while ${doing}; the server was not asked`,
    {
      location: { file: server },
      hint: "raise the pool's max (connection: { max }, or the max of the pg.Pool you passed), or run fewer operations of this store at once",
      cause: e,
    },
  );
}
