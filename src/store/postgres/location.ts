/**
 * A Postgres journal named by one string (spec/POSTGRES.md §3): `postgres://user@host:port/db?journal=run-42`,
 * optionally `&schema=name`. The rest of the URL is libpq's connection URI, handed to the driver as it is;
 * what it leaves out (the password above all) comes from the libpq environment: PGPASSWORD, ~/.pgpass,
 * PGHOST, PGUSER… The password never has to be on a command line, and it is never shown.
 */
import { StoreError } from '../errors.js';

export interface PostgresLocation {
  /** The connection URI without the store's own parameters (journal, schema). */
  connectionString: string;
  /** The journal's id, when the location names one. */
  journal: string | undefined;
  /** The Postgres schema holding the store's tables, when the location names one. */
  schema: string | undefined;
  /** The location with any password masked: safe for messages, logs and --json. */
  display: string;
  /** Whether the URI carries a password (visible to other users in the process list when typed as an argument). */
  hasPassword: boolean;
}

/** Whether `text` is a Postgres connection URI rather than a path. */
export function isPostgresLocation(text: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(text);
}

/** Parses a Postgres location; OPTION_INVALID, naming what is wrong, for anything else. */
export function parsePostgresLocation(text: string): PostgresLocation {
  const bad = (why: string): never => {
    throw new StoreError('OPTION_INVALID', `${maskUnparsed(text)} is not a Postgres location: ${why}`, {
      hint: 'write it as postgres://user@host:port/database?journal=<id>, with the password in PGPASSWORD or ~/.pgpass',
    });
  };
  if (!isPostgresLocation(text)) return bad('it must start with postgres:// or postgresql://');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return bad('it does not parse as a URI');
  }
  const params = url.searchParams;
  const one = (name: string): string | undefined => {
    const all = params.getAll(name);
    if (all.length > 1) bad(`?${name}= is given ${all.length} times`);
    params.delete(name);
    return all[0];
  };
  const journal = one('journal');
  const schema = one('schema');
  const hasPassword = url.password !== '';
  const connectionString = url.toString();
  const shown = new URL(connectionString);
  if (hasPassword) shown.password = '***';
  shown.search = '';
  const extra = [
    ...(journal === undefined ? [] : [`journal=${journal}`]),
    ...(schema === undefined ? [] : [`schema=${schema}`]),
  ];
  return {
    connectionString,
    journal,
    schema,
    display: `${shown.toString()}${extra.length > 0 ? `?${extra.join('&')}` : ''}`,
    hasPassword,
  };
}

/** Masks user:password@ in text that did not parse, so an error message never repeats a password. */
function maskUnparsed(text: string): string {
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return JSON.stringify(shown.replace(/^([a-z]+:\/\/[^/@:]*):[^/@]*@/i, '$1:***@'));
}
