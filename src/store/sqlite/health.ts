/**
 * The SQLite store's health check (spec/SQLITE.md §11): the file (absent: a store the first writer
 * creates), SQLite's version, the schema version against SQLITE_SCHEMA_VERSION, and whether this user could
 * write the file and its folder (SQLite writes the -wal and -shm files beside it). Nothing is created,
 * migrated or written: the file is opened query-only, and not at all when it does not exist.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { isDigest } from '../../canonical/sha256.js';
import type { HealthProblem, StoreHealth } from '../health.js';
import { connect, type Connection } from './driver.js';
import { translate } from './errors.js';
import { installedVersion, SQLITE_SCHEMA_VERSION } from './schema.js';

function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

export async function checkHealth(file: string, display: string, journal?: string): Promise<StoreHealth> {
  const problems: HealthProblem[] = [];
  const health: StoreHealth = {
    ok: false,
    backend: 'sqlite',
    location: display,
    reachable: false,
    server: null,
    schema: { name: 'sqlite', version: null, supported: SQLITE_SCHEMA_VERSION },
    writable: false,
    durability: null,
    problems,
  };
  const exists = existsSync(file);
  const folder = dirname(file);
  let db: Connection | null = null;
  try {
    if (!existsSync(folder)) {
      problems.push({
        code: 'NOT_WRITABLE',
        message: `the folder ${folder} does not exist, so the first writer cannot create ${file}`,
      });
      return health;
    }
    health.reachable = true;
    const folderWritable = canWrite(folder);
    health.writable = folderWritable && (!exists || canWrite(file));
    if (!health.writable)
      problems.push({
        code: 'NOT_WRITABLE',
        message: `${exists && folderWritable ? file : folder} is not writable by this user (SQLite writes the -wal and -shm files beside the database)`,
      });
    let version: number | null = null;
    if (exists) {
      // Not SQLite's readonly mode: a read-only connection that is the file's last leaves the -wal and -shm
      // files behind. query_only keeps this one from writing; closing it tidies them as every writer's close does.
      db = connect(file, { fileMustExist: true, timeout: 5000 });
      db.pragma('query_only = ON');
      health.server = `SQLite ${(db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v}`;
      version = installedVersion(db);
      health.schema.version = version;
      if (version !== null && version > SQLITE_SCHEMA_VERSION) {
        problems.push({
          code: 'SCHEMA_TOO_NEW',
          message: `${file} holds a store at schema version ${version}, written by a newer stepchain; this one reads and writes version ${SQLITE_SCHEMA_VERSION}`,
        });
      }
    }
    if (journal !== undefined) {
      health.journal = { id: journal, found: false, head: null };
      if (db !== null && version !== null && version <= SQLITE_SCHEMA_VERSION) {
        const row = db.prepare('SELECT head_seq, head_hash FROM journals WHERE id = ?').get(journal) as
          { head_seq: number; head_hash: string } | undefined;
        if (row !== undefined)
          health.journal = {
            id: journal,
            found: true,
            head: row.head_seq >= 0 && isDigest(row.head_hash) ? { seq: row.head_seq, step_hash: row.head_hash } : null,
          };
      }
      if (!health.journal.found)
        problems.push({ code: 'JOURNAL_NOT_FOUND', message: `no journal ${JSON.stringify(journal)} in ${display}` });
    }
  } catch (e) {
    const err = translate(e, display, 'checking its health');
    problems.push({ code: err.code, message: err.message.slice(err.code.length + 2) });
  } finally {
    db?.close();
  }
  health.ok = problems.length === 0;
  return health;
}
