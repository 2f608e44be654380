/**
 * SQLite failures as the store's coded errors (spec/SQLITE.md §7). The driver reports SQLite's extended
 * result codes by name (SQLITE_BUSY, SQLITE_CANTOPEN, SQLITE_NOTADB…); each becomes one StoreError code
 * whose message names the database file and what was being done, and says what to do.
 */
import { StepchainError } from '../../errors.js';
import { StoreError } from '../errors.js';

/** The SQLite result code name of a driver error (SQLITE_BUSY, SQLITE_CONSTRAINT_PRIMARYKEY…), or undefined. */
export function sqliteCode(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/** This process may only read the database file: it is read-only to it, or cannot be opened for writing. */
export function cannotWrite(e: unknown): boolean {
  const code = sqliteCode(e);
  return code !== undefined && (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN'));
}

/** Another connection holds the write lock (or the database is being recovered): wait and try again. */
export function isBusy(e: unknown): boolean {
  const code = sqliteCode(e);
  return code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Translates anything the driver threw into a StoreError; stepchain's own coded errors pass through unchanged. */
export function translate(e: unknown, file: string, doing: string): StepchainError {
  if (e instanceof StepchainError) return e as StepchainError;
  const code = sqliteCode(e);
  const message =
    typeof (e as { message?: unknown } | null)?.message === 'string' ? (e as { message: string }).message : String(e);
  const location = { file };
  const said = `${file}: ${code ?? 'error'} while ${doing}: ${message}`;
  if (code !== undefined && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) {
    return new StoreError(
      'LOCK_TIMEOUT',
      `${file}: another writer held the database past the lock timeout while ${doing}`,
      {
        location,
        hint: 'retry; if it persists, look for a process holding a long write transaction on this file',
        cause: e,
      },
    );
  }
  if (code === 'SQLITE_NOTADB') {
    return new StoreError('JOURNAL_INVALID', `${file} is not a SQLite database (${doing})`, {
      location,
      hint: 'name the database file of a SQLite store, or a new file to create one',
      cause: e,
    });
  }
  if (code?.startsWith('SQLITE_CORRUPT')) {
    return new StoreError('JOURNAL_CORRUPT', said, {
      location,
      hint: 'the file is not a SQLite database, or it is damaged: restore it from a backup (`sqlite3 file ".recover"` may save what is readable)',
      cause: e,
    });
  }
  if (code?.startsWith('SQLITE_CANTOPEN')) {
    return new StoreError('IO_ERROR', said, {
      location,
      hint: 'check that the folder exists and this user may create and write files in it (SQLite writes the -wal and -shm files beside the database)',
      cause: e,
    });
  }
  if (
    code !== undefined &&
    (code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_PERM') || code.startsWith('SQLITE_AUTH'))
  ) {
    return new StoreError('IO_ERROR', said, {
      location,
      hint: 'the file or its folder is read-only for this user; reading works, writing needs write access to both',
      cause: e,
    });
  }
  if (code === 'SQLITE_FULL' || code?.startsWith('SQLITE_IOERR')) {
    return new StoreError('IO_ERROR', said, {
      location,
      hint: 'the disk is full or failing; nothing of this transaction was committed',
      cause: e,
    });
  }
  return new StoreError('SERVER_ERROR', said, { location, cause: e });
}
