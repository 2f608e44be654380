/**
 * Which kind of store a location string names, from its scheme alone (spec/SQLITE.md §3): `sqlite:`,
 * `postgres://` or `postgresql://`, `memory:`, or none (a directory). Any other scheme is SCHEME_UNKNOWN,
 * naming the known ones: a location is never silently taken for a relative directory. Pure and tiny, so
 * `stepchain verify` tells a database location from a path without loading any store.
 */
import { StoreError } from './errors.js';

/** The schemes a location may start with, as messages name them. */
export const KNOWN_SCHEMES: readonly string[] = ['sqlite:', 'postgres://', 'postgresql://', 'memory:'];

export type Backend = 'file' | 'sqlite' | 'postgres' | 'memory';

/** A scheme is two characters or more, so that a Windows drive letter (`C:\runs`) stays a path. */
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]+):/;

/** The backend `text` names; SCHEME_UNKNOWN for a scheme this version does not know (nothing is touched). */
export function backendOf(text: string): Backend {
  const scheme = SCHEME_RE.exec(text)?.[1]?.toLowerCase();
  if (scheme === undefined) return 'file';
  if (scheme === 'sqlite') return 'sqlite';
  if (scheme === 'memory') return 'memory';
  if ((scheme === 'postgres' || scheme === 'postgresql') && text.slice(scheme.length + 1).startsWith('//'))
    return 'postgres';
  // A password in an unknown URI is never repeated.
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text).replace(
    /^("[a-z][a-z0-9+.-]*:\/\/[^/@:]*):[^/@]*@/i,
    '$1:***@',
  );
  throw new StoreError(
    'SCHEME_UNKNOWN',
    `${shown} starts with the scheme ${JSON.stringify(`${scheme}:`)}, which names no store stepchain knows; the schemes it knows are ${KNOWN_SCHEMES.join(', ')}, and a location without a scheme is a directory`,
    {
      hint: 'name a directory, a sqlite: file or a postgres:// database (copy a journal kept elsewhere into one of them first); to name a directory whose name holds a colon, start the path with ./',
    },
  );
}
