/**
 * Where a journal is, as the command line names it — the one place the CLI parses locations. A location
 * is a journal directory (its parent is the file store's root, its name the id) or a Postgres URI,
 * `postgres://user@host:port/db?journal=run-42[&schema=name]`, whose password comes from PGPASSWORD or
 * ~/.pgpass (spec/POSTGRES.md §3). Verbs ask for a store and an id, or an open journal, and never look at
 * the string themselves.
 */
import { basename, dirname, resolve } from 'node:path';
import { FileStore, StoreError, type Journal, type JournalReport, type JournalVerifyOptions, type Store } from '../store/index.js';
import type { StoreHealth } from '../store/health.js';
import { fileStoreHealth } from '../store/file/health.js';
import { PostgresStore, isPostgresLocation, parsePostgresLocation } from '../store/postgres/index.js';
import { pathKind } from './input.js';

export interface Located {
  kind: 'directory' | 'postgres';
  /** The store holding the journal; `verify` reads a journal without opening it. */
  store: Store & { verify(id: string, options?: JournalVerifyOptions): Promise<JournalReport> };
  /** The journal's id in that store (undefined only for a Postgres location without ?journal=). */
  id: string | undefined;
  /** The location as people may see it: an absolute path, or the URI with any password masked. */
  display: string;
  /** A key equal for two locations in the same store (fork keeps a journal beside its parent). */
  storeKey: string;
  /** The store's health (doctor). */
  health(): Promise<StoreHealth>;
  /** Releases the store's connections. */
  close(): Promise<void>;
}

let warned = false;

/**
 * The store and id a location names. A Postgres location needs ?journal= unless `journalOptional`; a
 * password typed into it works, with a warning, once per process, that other users can see it.
 */
export function locate(text: string, options: { journalOptional?: boolean } = {}): Located {
  if (isPostgresLocation(text)) {
    const loc = parsePostgresLocation(text);
    if (loc.journal === undefined && options.journalOptional !== true) {
      throw new StoreError('OPTION_INVALID', `${loc.display} names no journal`, { hint: 'add ?journal=<id> to the location, for example postgres://user@host/db?journal=run-42' });
    }
    if (loc.hasPassword && !warned) {
      warned = true;
      process.stderr.write('warning: the location holds a password, which other users of this machine can see in the process list; use PGPASSWORD or ~/.pgpass instead\n');
    }
    const store = new PostgresStore({ connectionString: loc.connectionString, ...(loc.schema === undefined ? {} : { schema: loc.schema }) });
    return {
      kind: 'postgres',
      store,
      id: loc.journal,
      display: loc.display,
      storeKey: `postgres:${loc.connectionString}#${store.tables.schema}`,
      health: () => store.health(loc.journal),
      close: () => store.close(),
    };
  }
  const full = resolve(text);
  const store = new FileStore(dirname(full));
  const id = basename(full);
  return {
    kind: 'directory',
    store,
    id,
    display: full,
    storeKey: `directory:${dirname(full)}`,
    health: async () => {
      // A journal directory, or a store root whose journals are its subdirectories.
      if ((await store.list()).includes(id)) {
        return fileStoreHealth(dirname(full), { id, head: () => withJournal(text, true, (j) => j.head()) });
      }
      return fileStoreHealth(full);
    },
    close: async () => {},
  };
}

/** The journal id a location names, or OPTION_INVALID. */
export function journalId(at: Located): string {
  if (at.id === undefined) throw new StoreError('OPTION_INVALID', `${at.display} names no journal`, { hint: 'add ?journal=<id>' });
  return at.id;
}

export async function openJournal(text: string, options: { readOnly: boolean }): Promise<{ journal: Journal; at: Located }> {
  const at = locate(text);
  try {
    return { journal: await at.store.open(journalId(at), { readOnly: options.readOnly }), at };
  } catch (e) {
    await at.close();
    throw e;
  }
}

/** Opens the journal at `text`, runs `fn`, and closes the journal and its store whatever happens. */
export async function withJournal<T>(text: string, readOnly: boolean, fn: (j: Journal, at: Located) => Promise<T>): Promise<T> {
  const { journal, at } = await openJournal(text, { readOnly });
  try {
    return await fn(journal, at);
  } finally {
    await journal.close();
    await at.close();
  }
}

/** A journal (directory or Postgres) or a receipt file; a clear error when the path is neither. */
export async function locationKind(text: string): Promise<'journal' | 'receipt'> {
  return isPostgresLocation(text) ? 'journal' : pathKind(text);
}
