/**
 * A SQLite journal holds its appends while a fork into another store, a receipt or a publication takes its
 * last look for erasure records and puts its copy in place (ChainSource.holdingAppends, spec/ERASURE.md
 * §4.1): the database file's write lock, which every append takes to commit. Without it, an erase's record
 * committed by another connection between the look and the placing left the erased value in the copy.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { withAppendsHeld } from '../../src/chain/source.js';
import { exportReceipt } from '../../src/index.js';
import { FileStore } from '../../src/store/file/store.js';
import type { Journal } from '../../src/store/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-sqlite-hold-');
let n = 0;
const stores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
});
const storeAt = (file: string): SqliteStore => {
  const s = new SqliteStore(file, { lockTimeoutMs: 10_000 });
  stores.push(s);
  return s;
};
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('holding a SQLite journal’s appends', () => {
  for (const readOnly of [false, true])
    test(`an append through another store's connections commits only after the hold (held journal opened ${readOnly ? 'read-only' : 'to write'})`, async () => {
      const file = join(root, `h${n++}.db`);
      const mine = storeAt(file);
      const other = storeAt(file);
      await (await mine.create('parent', { format: 'stepchain/v3' } as never)).append({ input: { n: 0 } });
      const held = await mine.open('parent', { readOnly });
      const writer = await other.open('parent');
      const order: string[] = [];
      let appended: Promise<unknown> = Promise.resolve();
      const looked = await withAppendsHeld(held, async () => {
        appended = writer.append({ input: { n: 1 } }).then(() => order.push('appended'));
        await sleep(600);
        order.push('hold ends');
        return (await held.head())?.seq;
      });
      await appended;
      expect(order).toEqual(['hold ends', 'appended']);
      expect(looked).toBe(0);
      expect((await held.head())?.seq).toBe(1);
      expect((await held.verify()).ok).toBe(true);
    });

  test('an append through the same store waits behind the hold, in order, and is not refused', async () => {
    const s = storeAt(join(root, `h${n++}.db`));
    const j = await s.create('j', { format: 'stepchain/v3' } as never);
    await j.append({ input: { n: 0 } });
    const twin = await s.open('j');
    const order: string[] = [];
    let appended: Promise<unknown> = Promise.resolve();
    await withAppendsHeld(j, async () => {
      appended = twin.append({ input: { n: 1 } }).then(() => order.push('appended'));
      await sleep(300);
      order.push('hold ends');
    });
    await appended;
    expect(order).toEqual(['hold ends', 'appended']);
    expect((await j.head())?.seq).toBe(1);
  });

  test('a receipt of a journal opened read-only is exported under the hold and leaves the database unchanged', async () => {
    const file = join(root, `h${n++}.db`);
    const s = storeAt(file);
    const j = await s.create('j', { format: 'stepchain/v3' } as never);
    for (let i = 0; i < 3; i++) await j.append({ input: { i } });
    await s.close();
    const before = readFileSync(file);
    const reader = storeAt(file);
    const ro = await reader.open('j', { readOnly: true });
    const out = join(root, `r${n++}.tar`);
    const receipt = await exportReceipt(ro, { out });
    expect(receipt.head.seq).toBe(2);
    await reader.close();
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  /** `parent`, its holdingAppends noted: `inside` runs in the hold once the fork's work in it is done. */
  function watched(parent: Journal, inside: () => Promise<string>, seen: string[]): Journal {
    return new Proxy(parent, {
      get(target, key) {
        if (key === 'holdingAppends')
          return <T>(fn: () => Promise<T>) =>
            withAppendsHeld(target, async () => {
              seen.push('held');
              const out = await fn();
              seen.push(await inside());
              return out;
            });
        const v = Reflect.get(target, key, target) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }

  test('a fork into SQLite from another store commits inside its parent’s hold', async () => {
    const files = new FileStore(tempDir('stepchain-sqlite-hold-parent-'));
    const parent = await files.create('p', { format: 'stepchain/v3' } as never);
    for (let i = 0; i < 3; i++) await parent.append({ input: { i } });
    const file = join(root, `h${n++}.db`);
    const target = storeAt(file);
    const seen: string[] = [];
    const onlooker = storeAt(file);
    const inside = async (): Promise<string> => ((await onlooker.list()).includes('f') ? 'committed' : 'not committed');
    const fork = await target.fork(watched(parent, inside, seen), { fromStep: 1, to: 'f' });
    expect(seen).toEqual(['held', 'committed']);
    expect((await fork.head())?.seq).toBe(1);
    expect((await fork.verify()).ok).toBe(true);
  });

  test('a fork from a journal of the same database file, through another store, is not held twice (no lock timeout)', async () => {
    const file = join(root, `h${n++}.db`);
    const a = new SqliteStore(file, { lockTimeoutMs: 1000 });
    stores.push(a);
    const parent = await a.create('p', { format: 'stepchain/v3' } as never);
    for (let i = 0; i < 3; i++) await parent.append({ input: { i } });
    const b = new SqliteStore(file, { lockTimeoutMs: 1000 });
    stores.push(b);
    const fork = await b.fork(parent, { fromStep: 2, to: 'f' });
    expect((await fork.head())?.seq).toBe(2);
  });
});
