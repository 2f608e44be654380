/**
 * Where a new journal is built before its rename (spec/FILE-STORE.md §2): `<root>/.staging-<hex>`, and beside
 * it `<root>/.staging-<hex>.holder`, the record of the process building it (§8's holder record), written
 * before the directory is made. A fork killed before its rename leaves its parent's values copied in clear
 * in the staging directory, which no journal names and so no erase searched (an outsider's finding); with the
 * record, a later writer proves its builder dead and removes it.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ioError } from '../errors.js';
import { readRegular } from './fsutil.js';
import { holderVerdict, MAX_RECORD_BYTES, ownHolder, parseHolder, serializeHolder } from './lock.js';

const PREFIX = '.staging-';
const NAME_RE = /^\.staging-[0-9a-f]{16}$/;
const RECORD_SUFFIX = '.holder';
/**
 * A staging directory with no record is an older stepchain's (this one writes the record first), and one whose
 * record does not read as one is a builder's killed while writing it: removed once this old, when no build of
 * any size is still running in it.
 */
const UNRECORDED_AGE_MS = 24 * 3600_000;

/**
 * A fresh staging directory's path under `root`, its builder's record written first (and the dead builders'
 * directories removed); `done` removes the record once the directory is renamed or removed.
 */
export async function recordStaging(root: string): Promise<{ dir: string; done: () => Promise<void> }> {
  await sweepDeadStaging(root);
  const dir = join(root, `${PREFIX}${randomBytes(8).toString('hex')}`);
  const record = dir + RECORD_SUFFIX;
  await writeFile(record, serializeHolder(ownHolder()), { flag: 'wx' }).catch((e: unknown) => {
    throw ioError('recording the builder of', dir, e);
  });
  return { dir, done: () => rm(record, { force: true }).catch(() => {}) };
}

/**
 * Removes the staging directories under `root` whose builder is provably dead (its record names a dead
 * process on this host), or that have no readable record and were, with it, last modified more than a day
 * ago, with their records; returns their names. Best effort: one it cannot judge or remove is left.
 */
export async function sweepDeadStaging(root: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return [];
  }
  const removed: string[] = [];
  // A record whose directory is gone (its builder killed between the rename and removing it) goes with it.
  const bases = names.map((n) => (n.endsWith(RECORD_SUFFIX) ? n.slice(0, -RECORD_SUFFIX.length) : n));
  for (const name of new Set(bases.filter((n) => NAME_RE.test(n)))) {
    const path = join(root, name);
    try {
      const text = await readRegular(path + RECORD_SUFFIX, MAX_RECORD_BYTES).then(
        (b) => b.toString('utf8'),
        () => null,
      );
      // A record that does not read as one (empty, torn, garbage: its builder killed while writing it, say)
      // proves nothing either way, and is judged as no record by age (an outsider's finding: kept forever).
      const holder = text === null ? null : parseHolder(text);
      const dead = holder !== null ? holderVerdict(holder) === 'dead' : await untouchedFor(path, UNRECORDED_AGE_MS);
      if (!dead) continue;
      await rm(path, { recursive: true, force: true });
      await rm(path + RECORD_SUFFIX, { force: true });
      removed.push(name);
    } catch {
      // not ours to judge: leave it
    }
  }
  return removed;
}

/** Whether neither `path` nor its record (where there is one) was modified in the last `ms`. */
async function untouchedFor(path: string, ms: number): Promise<boolean> {
  const times = await Promise.all(
    [path, path + RECORD_SUFFIX].map((p) =>
      stat(p).then(
        (st) => st.mtimeMs,
        () => 0,
      ),
    ),
  );
  return Date.now() - Math.max(...times) > ms;
}
