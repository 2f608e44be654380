/**
 * Where a journal is, as the command line names it — the one place the CLI parses locations, through the
 * library's own resolution (src/location.ts: parseLocation, openStore), so a location means the same to a
 * program and to the CLI. On the command line a directory names a journal (its parent is the file store's
 * root, its name the id); `sqlite:file.db?journal=<id>` and `postgres://…?journal=<id>` name a journal in
 * that store; a scheme stepchain does not know is SCHEME_UNKNOWN (exit 2), and nothing is created. Verbs
 * ask for a store and an id, or an open journal, and never look at the string themselves.
 */
import { basename, dirname, resolve } from 'node:path';
import { openStore, parseLocation, type Location } from '../location.js';
import { StoreError } from '../store/index.js';
import type { Journal, JournalReport, JournalVerifyOptions, Store, StoreHealth } from '../index.js';
import { pathKind } from './input.js';

export interface Located {
  kind: 'directory' | Exclude<Location['backend'], 'file'>;
  /** The store holding the journal; `verify` reads a journal without opening it. */
  store: Store & { verify(id: string, options?: JournalVerifyOptions): Promise<JournalReport> };
  /** The journal's id in that store (undefined only for a store location without ?journal=). */
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
 * The store and id a location names. A store location needs ?journal= unless `journalOptional`; a
 * password typed into a Postgres location works, with a warning, once per process, that other users can see it.
 */
export async function locate(text: string, options: { journalOptional?: boolean } = {}): Promise<Located> {
  const loc = parseLocation(text);
  if (loc.backend !== 'file') {
    if (loc.journal === undefined && options.journalOptional !== true) {
      throw new StoreError('OPTION_INVALID', `${loc.display} names no journal`, {
        hint: `add ?journal=<id> to the location, for example ${loc.backend === 'postgres' ? 'postgres://user@host/db' : loc.display}?journal=run-42`,
      });
    }
    if (loc.backend === 'postgres' && loc.hasPassword && !warned) {
      warned = true;
      process.stderr.write(
        'warning: the location holds a password, which other users of this machine can see in the process list; use PGPASSWORD or ~/.pgpass instead\n',
      );
    }
    const opened = await openStore(loc);
    // Every store but memory's verifies a journal by id itself; memory's gets the opened store's verify.
    const store = (
      'verify' in opened.store ? opened.store : Object.assign(opened.store, { verify: opened.verify })
    ) as Located['store'];
    return {
      kind: loc.backend,
      store,
      id: loc.journal,
      display: opened.display,
      storeKey: opened.key,
      health: () => opened.health(loc.journal),
      close: () => opened.close(),
    };
  }
  const full = resolve(text);
  const opened = await openStore({ backend: 'file', path: dirname(full), journal: undefined, display: dirname(full) });
  const store = opened.store as Located['store'];
  const id = basename(full);
  return {
    kind: 'directory',
    store,
    id,
    display: full,
    storeKey: opened.key,
    health: async () => {
      // A journal directory, or a store root whose journals are its subdirectories.
      if ((await store.list()).includes(id)) return opened.health(id);
      const root = await openStore({ backend: 'file', path: full, journal: undefined, display: full });
      try {
        return await root.health();
      } finally {
        await root.close();
      }
    },
    close: () => opened.close(),
  };
}

/** The journal id a location names, or OPTION_INVALID. */
export function journalId(at: Located): string {
  if (at.id === undefined)
    throw new StoreError('OPTION_INVALID', `${at.display} names no journal`, { hint: 'add ?journal=<id>' });
  return at.id;
}

export async function openJournal(
  text: string,
  options: { readOnly: boolean },
): Promise<{ journal: Journal; at: Located }> {
  const at = await locate(text);
  try {
    return { journal: await at.store.open(journalId(at), { readOnly: options.readOnly }), at };
  } catch (e) {
    await at.close();
    throw e;
  }
}

/** Opens the journal at `text`, runs `fn`, and closes the journal and its store whatever happens. */
export async function withJournal<T>(
  text: string,
  readOnly: boolean,
  fn: (j: Journal, at: Located) => Promise<T>,
): Promise<T> {
  const { journal, at } = await openJournal(text, { readOnly });
  try {
    return await fn(journal, at);
  } finally {
    await journal.close();
    await at.close();
  }
}

/** A journal (a directory or in a database) or a receipt file; SCHEME_UNKNOWN for an unknown scheme; a clear error when the path is neither. */
export async function locationKind(text: string): Promise<'journal' | 'receipt'> {
  return parseLocation(text).backend !== 'file' ? 'journal' : pathKind(text);
}
