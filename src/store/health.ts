/**
 * A store's health as `stepchain doctor` reports it (spec/POSTGRES.md §9): which backend, whether it can
 * be reached, which schema (format) version it holds against the one this version speaks, and whether it
 * can be written. Not part of the generic Store contract: a store that can be diagnosed implements
 * StoreDiagnostics besides (the Postgres store); the file store's check is a function over its root
 * (file/health.ts). A health check only reads: it never creates, migrates or modifies anything. Types only.
 */
import type { ChainHead } from '../chain/source.js';

export interface HealthProblem {
  /** A StoreError code (SERVER_UNREACHABLE, AUTH_FAILED, SCHEMA_TOO_NEW, …) or NOT_WRITABLE. */
  code: string;
  message: string;
}

export interface StoreHealth {
  /** Every check passed: reachable, a schema this version can use (or none yet, created on first write), writable. */
  ok: boolean;
  backend: 'file' | 'postgres' | 'sqlite' | 'memory';
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
  /** What a person should know and act on that does not make the store unhealthy (a removal left unfinished). */
  notices?: HealthProblem[];
}

/** What a store offers besides the Store contract when it can be diagnosed from outside. */
export interface StoreDiagnostics {
  /** The backend's name, as `stepchain doctor` prints it. */
  readonly backend: StoreHealth['backend'];
  /** Reachability, schema version and writability (and journal `journal`'s head, when given); never throws for a server problem. */
  health(journal?: string): Promise<StoreHealth>;
}
