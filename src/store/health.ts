/**
 * A store's health as `stepchain doctor` reports it: which backend, whether it can be reached, which
 * schema (format) version it holds against the one this version speaks, and whether it can be written.
 * Checks read only: a health check never creates, migrates or modifies anything.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChainHead } from '../chain/source.js';
import { STORE_FORMAT } from './layout.js';

export interface HealthProblem {
  /** A StoreError code (SERVER_UNREACHABLE, AUTH_FAILED, SCHEMA_TOO_NEW, …) or NOT_WRITABLE. */
  code: string;
  message: string;
}

export interface StoreHealth {
  /** Every check passed: reachable, a schema this version can use (or none yet, created on first write), writable. */
  ok: boolean;
  backend: 'file' | 'postgres';
  /** Where the store is: a directory, or the server with the password masked. */
  location: string;
  reachable: boolean;
  /** The server's version (Postgres), or null. */
  server: string | null;
  schema: {
    /** The schema (Postgres) or store format (file) name. */
    name: string;
    /** The version the store holds; null when nothing is installed yet. */
    version: number | string | null;
    /** The version this stepchain reads and writes. */
    supported: number | string;
  };
  writable: boolean;
  /**
   * Postgres: the server settings an acknowledged append's durability rests on (spec/POSTGRES.md §9),
   * and what they mean when they weaken it; null where they do not apply or could not be read.
   */
  durability?: { fsync: string; synchronous_commit: string; warning: string | null } | null;
  /** The journal the location names, when it names one. */
  journal?: { id: string; found: boolean; head: ChainHead | null };
  problems: HealthProblem[];
}

/** The health of a file store root (and of one journal directory in it, when given). */
export async function fileStoreHealth(root: string, journal?: { id: string; head: () => Promise<ChainHead | null> }): Promise<StoreHealth> {
  const problems: HealthProblem[] = [];
  let reachable = false;
  let writable = false;
  try {
    reachable = (await stat(root)).isDirectory();
    if (!reachable) problems.push({ code: 'IO_ERROR', message: `${root} is not a directory` });
  } catch (e) {
    problems.push({ code: 'IO_ERROR', message: `${root} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` });
  }
  if (reachable) {
    const target = journal === undefined ? root : join(root, journal.id);
    try {
      await access(target, constants.W_OK);
      writable = true;
    } catch {
      problems.push({ code: 'NOT_WRITABLE', message: `${target} is not writable by this user` });
    }
  }
  let journalHealth: StoreHealth['journal'];
  if (journal !== undefined) {
    try {
      journalHealth = { id: journal.id, found: true, head: await journal.head() };
    } catch (e) {
      journalHealth = { id: journal.id, found: false, head: null };
      problems.push({ code: (e as { code?: string }).code ?? 'IO_ERROR', message: (e as Error).message });
    }
  }
  return {
    ok: problems.length === 0,
    backend: 'file',
    location: root,
    reachable,
    server: null,
    schema: { name: 'directory', version: STORE_FORMAT, supported: STORE_FORMAT },
    writable,
    ...(journalHealth === undefined ? {} : { journal: journalHealth }),
    problems,
  };
}
