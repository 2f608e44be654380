/**
 * The health of a file store root, and of one journal directory in it (store/health.ts, `stepchain
 * doctor`): the root is a readable directory, the journal (or the root) is writable by this user, the
 * journal's head. Only reads.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChainHead } from '../../chain/source.js';
import type { HealthProblem, StoreHealth } from '../health.js';
import { STORE_FORMAT } from '../meta.js';
import { unfinishedRemovals } from './removing.js';

/** The health of a file store root (and of one journal directory in it, when given). */
export async function fileStoreHealth(
  root: string,
  journal?: { id: string; head: () => Promise<ChainHead | null> },
): Promise<StoreHealth> {
  const problems: HealthProblem[] = [];
  let reachable = false;
  let writable = false;
  try {
    reachable = (await stat(root)).isDirectory();
    if (!reachable) problems.push({ code: 'IO_ERROR', message: `${root} is not a directory` });
  } catch (e) {
    problems.push({
      code: 'IO_ERROR',
      message: `${root} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
    });
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
  // A removal cut short (spec/FILE-STORE.md §15) left a removed journal's values on disk: nothing fails, but
  // whoever pruned them for retention should know they are still there, and how to finish.
  const left = reachable ? await unfinishedRemovals(root) : 0;
  const notices: HealthProblem[] =
    left === 0
      ? []
      : [
          {
            code: 'REMOVAL_UNFINISHED',
            message: `${left} removed journal${left === 1 ? "'s" : "s'"} files still on disk under ${root} (.removing-…: a prune or removal was cut short after its commit point); any \`stepchain prune ${root} --keep-days N\` deletes them before anything else`,
          },
        ];
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
    ...(notices.length === 0 ? {} : { notices }),
  };
}
