/**
 * The store-wide erase (`--match-path`, `--value`; spec/ERASURE.md §6.3) of a value stored as a part
 * (spec/PARTS.md: a string over the journal's part threshold, 1024 bytes by default, stands in the line as a
 * `{"$stepchain:part": …}` reference). Outsider 14, F4: a 1 000-character value was found and erased, a
 * 1 100-character one was not: "0 value(s) erased", exit 0, the value in clear in every journal. Here, on the
 * file and the SQLite store: every place holding it, at a member and at a list element, in two journals, is
 * erased, no line nor part (file, row, or any byte of the store) holds it after, and both journals verify.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '../../src/store/file/store.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { eraseMatching } from '../../src/erase.js';
import { tempDir } from '../helpers/tmp.js';
import { cliIn } from '../helpers/cli-in.js';

type Store = FileStore | SqliteStore;

/** About 1 100 characters: over the default part threshold, so stored as a part. */
const SECRET = `SECRET-${'y'.repeat(1100)}`;
const JOURNALS = ['a', 'b'];

/** A store in its own directory, and how the CLI names it. */
const stores: [string, () => { dir: string; store: Store; location: string }][] = [
  [
    'file',
    () => {
      const dir = tempDir('stepchain-erase-parts-');
      return { dir, store: new FileStore(dir), location: dir };
    },
  ],
  [
    'sqlite',
    () => {
      const dir = tempDir('stepchain-erase-parts-');
      const file = join(dir, 'agents.db');
      return { dir, store: new SqliteStore(file), location: `sqlite:${file}` };
    },
  ],
];

/** Two v3 journals, each holding SECRET at /result/doc of seq 0 and at /result/list/0 of seq 1. */
async function journals(store: Store): Promise<void> {
  for (const id of JOURNALS) {
    const j = await store.create(id, { format: 'stepchain/v3' } as never);
    await j.append({ step_id: 's1', result: { doc: SECRET } });
    await j.append({ step_id: 's2', result: { list: [SECRET, 'short'] } });
    // The lines hold a reference, not the value: what the erase must see through.
    for await (const l of j.lines()) {
      expect(l.text).not.toContain('SECRET-');
      expect(l.text).toContain('"$stepchain:part"');
    }
    await j.close();
  }
}

/** The files under `dir` (a file store's lines and part files, a SQLite database and its WAL) holding SECRET. */
function filesHolding(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesHolding(path));
    else if (readFileSync(path).includes('SECRET-yyyy')) out.push(path);
  }
  return out;
}

describe.each(stores)('a store-wide erase of a value stored as a part (%s store)', (_name, makeStore) => {
  it('eraseMatching finds it at a member and at a list element of every journal, and nothing holds it after', async () => {
    const { dir, store } = makeStore();
    await journals(store);
    expect(filesHolding(dir).length).toBeGreaterThan(0);
    const ask = { value: SECRET, reason: 'GDPR Art. 17', by: 'dpo' };
    const doc = await eraseMatching(store, { ...ask, matchPath: '/result/doc' });
    expect(doc.failed).toEqual([]);
    expect(doc.erased.map((o) => [o.journal, o.seq, o.path])).toEqual([
      ['a', 0, '/result/doc'],
      ['b', 0, '/result/doc'],
    ]);
    const list = await eraseMatching(store, { ...ask, matchPath: '/result/list/*' });
    expect(list.failed).toEqual([]);
    expect(list.erased.map((o) => [o.journal, o.seq, o.path])).toEqual([
      ['a', 1, '/result/list/0'],
      ['b', 1, '/result/list/0'],
    ]);
    // The part goes with its last reference.
    expect(list.erased.every((o) => o.parts_deleted.length === 1)).toBe(true);
    for (const id of JOURNALS) {
      const j = await store.open(id, { readOnly: true });
      for await (const l of j.lines()) expect(l.text).not.toContain('"$stepchain:part"');
      await j.close();
      expect((await store.verify(id)).ok, id).toBe(true);
    }
    await closeStore(store);
    expect(filesHolding(dir)).toEqual([]);
  });

  it('stepchain erase --match-path --value erases it in every journal (the built CLI)', async () => {
    const { dir, store, location } = makeStore();
    await journals(store);
    await closeStore(store);
    const cli = cliIn(dir);
    const erased: [string, number, string][] = [];
    for (const pattern of ['/result/doc', '/result/list/*']) {
      const ask = ['--match-path', pattern, '--value', SECRET, '--reason', 'GDPR Art. 17', '--json'];
      const run = await cli.run('erase', location, ...ask);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as { erased: { journal: string; seq: number; path: string }[] };
      erased.push(...report.erased.map((o): [string, number, string] => [o.journal, o.seq, o.path]));
    }
    expect(erased).toEqual([
      ['a', 0, '/result/doc'],
      ['b', 0, '/result/doc'],
      ['a', 1, '/result/list/0'],
      ['b', 1, '/result/list/0'],
    ]);
    const again = reopened(store, dir);
    for (const id of JOURNALS) expect((await again.verify(id)).ok, id).toBe(true);
    await closeStore(again);
    expect(filesHolding(dir)).toEqual([]);
  });
});

/** The same store opened afresh (the CLI wrote it meanwhile). */
function reopened(store: Store, dir: string): Store {
  return store instanceof FileStore ? new FileStore(dir) : new SqliteStore(join(dir, 'agents.db'));
}

/** Closes a SQLite store's database (a file store holds nothing open between calls). */
async function closeStore(store: Store): Promise<void> {
  if (store instanceof SqliteStore) await store.close();
}
