/**
 * Store locations: one string naming a store, and optionally a journal in it, resolved the same way by the
 * library (`openStore`) and the CLI (spec/SQLITE.md §3, spec/POSTGRES.md §3):
 *
 *   runs/                                  a directory: the file store
 *   sqlite:agents.db[?journal=run-42]      a SQLite database file
 *   postgres://user@host/db[?journal=…]    a Postgres schema (postgresql:// too)
 *   memory:[name]                          a store in this process's memory (tests)
 *
 * Anything else that starts with a scheme (`s3://bucket/run-9`, `file:…`, `https://…`) is refused with
 * SCHEME_UNKNOWN naming the schemes known here — never taken for a relative directory. A path that happens
 * to contain a colon is written with a leading `./`. A one-letter scheme is a Windows drive (`C:\runs`).
 * Each database driver is loaded only on first use.
 */
import { StoreError } from './store/errors.js';
import type { StoreHealth } from './store/health.js';
import { resolve } from 'node:path';
import { fileStoreHealth } from './store/file/health.js';
import { FileStore } from './store/file/store.js';
import { MemoryStore } from './store/memory.js';
import { PostgresStore } from './store/postgres/store.js';
import { SqliteStore } from './store/sqlite/store.js';
import type { JournalReport, JournalVerifyOptions, Store } from './store/types.js';
import { parsePostgresLocation } from './store/postgres/location.js';
import { parseSqliteLocation } from './store/sqlite/location.js';
import { backendOf } from './store/scheme.js';

export { KNOWN_SCHEMES } from './store/scheme.js';

export type Location =
  | { backend: 'file'; path: string; journal: undefined; display: string }
  | { backend: 'sqlite'; file: string; journal: string | undefined; display: string }
  | {
      backend: 'postgres';
      connectionString: string;
      schema: string | undefined;
      journal: string | undefined;
      display: string;
      hasPassword: boolean;
    }
  | { backend: 'memory'; name: string; journal: string | undefined; display: string };

/** A store opened from a location, with what every backend answers alike. */
export interface OpenedStore {
  backend: Location['backend'];
  store: Store;
  /** The journal the location names (`?journal=`), if any. */
  journal: string | undefined;
  /** The location as people may see it (a password masked). */
  display: string;
  /** Equal for two locations of the same store (a fork stays beside its parent). */
  key: string;
  /** Verifies journal `id` read-only. */
  verify(id: string, options?: JournalVerifyOptions): Promise<JournalReport>;
  /** Reachable, schema version, writable, and the journal's head when `journal` is given (`stepchain doctor`). */
  health(journal?: string): Promise<StoreHealth>;
  /** Releases the store's connections (nothing for a directory or memory). */
  close(): Promise<void>;
}

/** Parses a location without opening anything; SCHEME_UNKNOWN for a scheme this version does not know. */
export function parseLocation(text: string): Location {
  if (typeof text !== 'string' || text === '')
    throw new StoreError(
      'OPTION_INVALID',
      'a location must be a non-empty string: a directory, sqlite:file.db, postgres://… or memory:',
    );
  switch (backendOf(text)) {
    case 'sqlite':
      return { backend: 'sqlite', ...parseSqliteLocation(text) };
    case 'postgres': {
      const l = parsePostgresLocation(text);
      return {
        backend: 'postgres',
        connectionString: l.connectionString,
        schema: l.schema,
        journal: l.journal,
        display: l.display,
        hasPassword: l.hasPassword,
      };
    }
    case 'memory':
      return memoryLocation(text);
    case 'file':
      return { backend: 'file', path: text, journal: undefined, display: text };
  }
}

function memoryLocation(text: string): Location {
  const rest = text.slice('memory:'.length);
  const q = rest.indexOf('?');
  const name = q < 0 ? rest : rest.slice(0, q);
  const params = new URLSearchParams(q < 0 ? '' : rest.slice(q + 1));
  for (const key of params.keys()) {
    if (key !== 'journal')
      throw new StoreError(
        'OPTION_INVALID',
        `${JSON.stringify(text)}: ?${key}= is not a parameter of a memory location (only journal is)`,
      );
  }
  const journal = params.get('journal') ?? undefined;
  return {
    backend: 'memory',
    name,
    journal,
    display: `memory:${name}${journal === undefined ? '' : `?journal=${journal}`}`,
  };
}

/** Named memory stores of this process: `memory:x` opened twice is one store. */
const memoryStores = new Map<string, MemoryStore>();
let memoryKeys = 0;

/**
 * The store a location names, opened: `openStore('sqlite:agents.db')`, `openStore('runs')`,
 * `openStore('postgres://agent@db/agents')`, `openStore('memory:')` (a fresh in-memory store; `memory:name`
 * the same one each time in this process). A location's `?journal=` is handed back as `journal`; a
 * directory is the store's root. SCHEME_UNKNOWN for a scheme this version does not know: nothing is created.
 */
export async function openStore(location: string | Location): Promise<OpenedStore> {
  const at = typeof location === 'string' ? parseLocation(location) : location;
  const base = { backend: at.backend, journal: at.journal, display: at.display };
  switch (at.backend) {
    case 'sqlite': {
      const store = new SqliteStore(at.file);
      return {
        ...base,
        display: store.display + (at.journal === undefined ? '' : `?journal=${at.journal}`),
        key: store.display,
        store,
        verify: (id, o) => store.verify(id, o),
        health: (j) => store.health(j),
        close: () => store.close(),
      };
    }
    case 'postgres': {
      const store = new PostgresStore({
        connectionString: at.connectionString,
        ...(at.schema === undefined ? {} : { schema: at.schema }),
      });
      return {
        ...base,
        key: `postgres:${at.connectionString}#${store.tables.schema}`,
        store,
        verify: (id, o) => store.verify(id, o),
        health: (j) => store.health(j),
        close: () => store.close(),
      };
    }
    case 'memory': {
      let store = at.name === '' ? new MemoryStore() : memoryStores.get(at.name);
      if (store === undefined) memoryStores.set(at.name, (store = new MemoryStore()));
      const held = store;
      return {
        ...base,
        key: at.name === '' ? `memory:#${memoryKeys++}` : `memory:${at.name}`,
        store,
        verify: async (id, o) => (await held.open(id, { readOnly: true })).verify(o),
        health: (j) => memoryHealth(held, at.display, j),
        close: async () => {},
      };
    }
    case 'file': {
      const root = resolve(at.path);
      const store = new FileStore(root);
      return {
        ...base,
        display: root,
        key: `directory:${root}`,
        store,
        verify: (id, o) => store.verify(id, o),
        health: (j) => fileStoreHealth(root, j === undefined ? undefined : { id: j, head: () => headOf(store, j) }),
        close: async () => {},
      };
    }
  }
}

async function memoryHealth(store: MemoryStore, display: string, journal?: string): Promise<StoreHealth> {
  const health: StoreHealth = {
    ok: true,
    backend: 'memory',
    location: display,
    reachable: true,
    server: null,
    schema: { name: 'memory', version: null, supported: 'memory' },
    writable: true,
    problems: [],
  };
  if (journal !== undefined) {
    const found = (await store.list()).includes(journal);
    health.journal = {
      id: journal,
      found,
      head: found ? await (await store.open(journal, { readOnly: true })).head() : null,
    };
    if (!found)
      health.problems.push({
        code: 'JOURNAL_NOT_FOUND',
        message: `no journal ${JSON.stringify(journal)} in ${display}`,
      });
    health.ok = found;
  }
  return health;
}

/** A journal's head, read through a read-only open that is closed again. */
async function headOf(store: Store, id: string): Promise<import('./chain/source.js').ChainHead | null> {
  const j = await store.open(id, { readOnly: true });
  try {
    return await j.head();
  } finally {
    await j.close();
  }
}
