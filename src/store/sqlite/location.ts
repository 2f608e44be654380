/**
 * A SQLite store and journal named by one string (spec/SQLITE.md §3): `sqlite:path/to/agents.db` is the
 * store (one database file), `sqlite:path/to/agents.db?journal=run-42` a journal in it — the same
 * `?journal=` a Postgres location takes. The path is a file path as the shell gives it, relative to the
 * working directory; `%` escapes (`%3F` for `?`, `%25` for `%`) are decoded, so any file name can be named.
 */
import { StoreError } from '../errors.js';

export interface SqliteLocation {
  /** The database file, as written (relative paths resolve against the working directory). */
  file: string;
  /** The journal's id, when the location names one. */
  journal: string | undefined;
  /** The location as people may see it. */
  display: string;
}

/** Whether `text` is a SQLite location rather than a path. */
export function isSqliteLocation(text: string): boolean {
  return /^sqlite:/i.test(text);
}

/** Parses a SQLite location; OPTION_INVALID, naming what is wrong, for anything else. */
export function parseSqliteLocation(text: string): SqliteLocation {
  const bad = (why: string): never => {
    throw new StoreError(
      'OPTION_INVALID',
      `${JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text)} is not a SQLite location: ${why}`,
      {
        hint: 'write it as sqlite:path/to/agents.db, or sqlite:path/to/agents.db?journal=<id> for one journal in it',
      },
    );
  };
  if (!isSqliteLocation(text)) return bad('it must start with sqlite:');
  const rest = text.slice('sqlite:'.length);
  const q = rest.indexOf('?');
  let file = q < 0 ? rest : rest.slice(0, q);
  let journal: string | undefined;
  if (q >= 0) {
    const params = new URLSearchParams(rest.slice(q + 1));
    for (const name of params.keys())
      if (name !== 'journal') bad(`?${name}= is not a parameter of a SQLite location (only journal is)`);
    const all = params.getAll('journal');
    if (all.length > 1) bad(`?journal= is given ${all.length} times`);
    journal = all[0];
  }
  // sqlite://path (as some tools write it) is the same file as sqlite:path; three slashes keep an absolute path.
  if (file.startsWith('//')) file = file.slice(2);
  try {
    file = decodeURIComponent(file);
  } catch {
    bad('a % in the path does not start an escape (write %25 for %)');
  }
  if (file === '') bad('it names no file');
  if (file === ':memory:' || file.startsWith('file:'))
    bad('the SQLite store is a file on disk (for a store in memory, the location is memory:)');
  if (file.includes('\u0000')) bad('the path holds a NUL character');
  return { file, journal, display: `sqlite:${file}${journal === undefined ? '' : `?journal=${journal}`}` };
}
