/**
 * A fork into a directory store builds the new journal in a staging directory and renames it into place. An
 * outsider killed a fork before its rename: the staging directory kept the parent's values in clear, and a
 * later `stepchain erase` of one of them reported it done without reaching the copy. Now each staging
 * directory has its builder's record beside it, and erasing removes the directories whose builder is provably
 * dead; a live builder's is left (its fork looks again, under its parent's lock, before placing).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { sweepDeadStaging } from '../../src/store/file/staging.js';
import { FileStore } from '../../src/store/file/store.js';
import { cliIn } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';

const DIST = fileURLToPath(new URL('../../dist/index.js', import.meta.url));
const EMAIL = 'staged.copy@example.org';

/** Every file under `dir` (hidden ones too) whose bytes hold `text`. */
function filesHolding(dir: string, text: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...filesHolding(path, text));
    else if (readFileSync(path).includes(text)) found.push(path);
  }
  return found;
}

/** A process that forks `live` of the store at `root` to `copy` and stops inside the fork's last hold, before its rename. */
async function forkStoppedBeforeRename(root: string): Promise<ChildProcess> {
  const script = `
    setInterval(() => {}, 60_000); // alive until killed: a stalled fork is not an exited one
    const { FileStore } = await import(${JSON.stringify(DIST)});
    const store = new FileStore(process.argv[1]);
    const parent = await store.open('live');
    const stalled = new Proxy(parent, {
      get(target, key) {
        if (key === 'holdingAppends') return () => (process.stdout.write('staged\\n'), new Promise(() => {}));
        const v = Reflect.get(target, key, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    await store.fork(stalled, { fromStep: 2, to: 'copy' });`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, root], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (b: Buffer) => b.toString().includes('staged') && resolve());
    child.on('exit', (code) => reject(new Error(`the forking process exited ${code} before staging`)));
  });
  return child;
}

async function liveJournal(): Promise<string> {
  const root = tempDir('stepchain-erase-staging-');
  const live = await new FileStore(root).create('live', { format: 'stepchain/v3' } as never);
  for (let i = 0; i < 3; i++)
    await live.append({ step_id: `s${i}`, result: { email: i === 1 ? EMAIL : `n${i}@x.org` } });
  return root;
}

const stagingIn = (root: string): string[] => readdirSync(root).filter((n) => n.startsWith('.staging-'));

describe('erasing reaches what a killed fork left staged', () => {
  test('a fork killed before its rename: erase removes its staging directory, and no file holds the value', async () => {
    const root = await liveJournal();
    const fork = await forkStoppedBeforeRename(root);
    fork.kill('SIGKILL');
    await new Promise((r) => fork.once('exit', r));
    expect(stagingIn(root)).toHaveLength(2); // the directory and its builder's record
    expect(filesHolding(root, EMAIL).some((f) => f.includes('.staging-'))).toBe(true);
    const cli = cliIn(root);
    await cli.ok('erase', join(root, 'live'), '--seq', '1', '--path', '/result/email', '--reason', 'GDPR Art. 17');
    expect(stagingIn(root)).toEqual([]);
    expect(filesHolding(root, EMAIL)).toEqual([]);
  });

  // Outsider 16: a record its builder was killed while writing (empty, torn) or garbage proved nothing, so the
  // directory was kept forever; it is judged as no record, by the age of the directory and its record.
  test('a staging directory whose record does not read as one goes once both are a day old, not before', async () => {
    const root = tempDir('stepchain-erase-staging-');
    const records = { empty: '', torn: '{"host":', garbage: 'not json at all', other: '{"secret":1}' };
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    const names: Record<string, string> = {};
    for (const [i, [kind, text]] of Object.entries(records).entries()) {
      for (const age of ['old', 'new']) {
        const name = `.staging-${i}${age === 'old' ? 'a' : 'b'}00000000000000`;
        names[`${kind} ${age}`] = name;
        mkdirSync(join(root, name));
        writeFileSync(join(root, name, 'data'), EMAIL);
        writeFileSync(join(root, `${name}.holder`), text);
        if (age === 'old') {
          utimesSync(join(root, name), twoDaysAgo, twoDaysAgo);
          utimesSync(join(root, `${name}.holder`), twoDaysAgo, twoDaysAgo);
        }
      }
    }
    // An old directory whose record was rewritten recently: its builder may be at work.
    const touched = '.staging-9a00000000000000';
    mkdirSync(join(root, touched));
    utimesSync(join(root, touched), twoDaysAgo, twoDaysAgo);
    writeFileSync(join(root, `${touched}.holder`), '');
    const removed = await sweepDeadStaging(root);
    expect(removed.sort()).toEqual(
      Object.keys(records)
        .map((k) => names[`${k} old`])
        .sort(),
    );
    const left = stagingIn(root).filter((n) => !n.endsWith('.holder'));
    expect(left.sort()).toEqual([...Object.keys(records).map((k) => names[`${k} new`]!), touched].sort());
  });

  test('a live fork’s staging directory is left to it', async () => {
    const root = await liveJournal();
    const fork = await forkStoppedBeforeRename(root);
    try {
      const cli = cliIn(root);
      await cli.ok('erase', join(root, 'live'), '--seq', '1', '--path', '/result/email', '--reason', 'GDPR Art. 17');
      expect(stagingIn(root)).toHaveLength(2);
    } finally {
      fork.kill('SIGKILL');
    }
  });
});
