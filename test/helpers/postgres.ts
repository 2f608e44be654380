/**
 * The Postgres test harness every Postgres suite shares: the run's embedded server (its URL from the global
 * setup), one schema per store so suites and tests never see each other's journals, an admin connection
 * for going behind the store's back, and everything closed after the file's tests.
 */
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { PostgresStore } from '../../src/store/postgres/index.js';

export interface PostgresHarness {
  readonly url: string;
  /** A client on the server, outside any store: for SQL a test runs behind the store's back. */
  readonly admin: pg.Client;
  /** A store in a schema of its own (`<prefix>_<pid>_<n>`), closed after the file's tests. */
  store(options?: Record<string, unknown>): PostgresStore;
  /** A fresh schema name of this harness, for a store a test builds itself. */
  schemaName(): string;
  /** Closes a store the test built itself after the file's tests. */
  track<S extends PostgresStore>(store: S): S;
}

export async function postgresHarness(prefix: string, poolSize: number): Promise<PostgresHarness> {
  const url = inject('pgUrl');
  const stores: PostgresStore[] = [];
  let n = 0;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await admin.end();
  });
  const schemaName = (): string => `${prefix}_${process.pid}_${n++}`;
  const track = <S extends PostgresStore>(store: S): S => {
    stores.push(store);
    return store;
  };
  return {
    url,
    admin,
    schemaName,
    track,
    store: (options = {}) =>
      track(
        new PostgresStore({ connectionString: url, schema: schemaName(), connection: { max: poolSize }, ...options }),
      ),
  };
}
