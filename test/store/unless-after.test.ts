/**
 * An append that follows a seq the chain has moved past, unless a line since is one it refuses (store/append.ts
 * UNLESS_AFTER, sequencer.ts Group.unlessAfter): what an erasure appends with, so that other writers appending
 * without pause cannot keep it out (outsider H: an erase waited, re-reading, for as long as appends went on). The
 * lines since are read by the store under its own lock, in every store: commits past lines it does not refuse,
 * HEAD_MOVED past one it does, past a chain that moved too far (MOST_LINES_SINCE), and for an `after` ahead of the
 * chain; and a batch's earlier groups count as lines since.
 */
import { describe, expect, test } from 'vitest';
import { UNLESS_AFTER, type WriterAppendOptions } from '../../src/store/append.js';
import { FileStore } from '../../src/store/file/store.js';
import { MemoryStore } from '../../src/store/memory.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { MOST_LINES_SINCE, linesSince, type Group } from '../../src/store/sequencer.js';
import type { Journal, Store } from '../../src/store/types.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-unless-after-');
const pg = await postgresHarness('unlessafter', 2);
let n = 0;

const STORES: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['file', () => new FileStore(`${root}/f${n++}`, { fsync: 'none' })],
  ['sqlite', () => new SqliteStore(`${root}/s${n++}.db`)],
  ['postgres', () => pg.store()],
];

/** Options that follow `after` unless a line since holds `refused`. */
const unless = (after: number, refused: string): WriterAppendOptions => ({
  after,
  [UNLESS_AFTER]: (line: string) => line.includes(refused),
});

const code = (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code ?? String(e),
  );

describe.each(STORES)('%s store', (_name, make) => {
  async function journal(steps: number): Promise<Journal> {
    const j = await make().create(`j${n++}`, { format: 'stepchain/v3' });
    for (let i = 0; i < steps; i++) await j.append({ input: { other: i } });
    return j;
  }

  test('commits at the end of a chain that moved past `after` by lines it does not refuse', async () => {
    const j = await journal(1);
    for (let i = 0; i < 5; i++) await j.append({ input: { meanwhile: i } });
    const r = await j.append({ input: { mine: true } }, unless(0, '"refused"'));
    expect(r.seq).toBe(6);
    expect((await j.verify()).ok).toBe(true);
  });

  test('HEAD_MOVED, nothing written, past a line it refuses', async () => {
    const j = await journal(1);
    await j.append({ input: { meanwhile: 1 } });
    await j.append({ input: 'refused' });
    await j.append({ input: { meanwhile: 2 } });
    expect(await code(j.append({ input: { mine: true } }, unless(0, '"refused"')))).toBe('HEAD_MOVED');
    expect((await j.head())?.seq).toBe(3);
  });

  test('HEAD_MOVED for an `after` ahead of the chain, and as a plain `after` without the member', async () => {
    const j = await journal(2);
    expect(await code(j.append({ input: 'x' }, unless(5, '"refused"')))).toBe('HEAD_MOVED');
    expect(await code(j.append({ input: 'x' }, { after: 0 }))).toBe('HEAD_MOVED');
    expect((await j.head())?.seq).toBe(1);
    expect((await j.append({ input: 'x' }, unless(1, '"refused"'))).seq).toBe(2);
  });

  test('a refused line in the same batch, from an earlier append call, counts', async () => {
    const j = await journal(1);
    const [first, second] = await Promise.allSettled([
      j.append({ input: 'refused' }),
      j.append({ input: { mine: true } }, unless(0, '"refused"')),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second.status === 'rejected' && (second.reason as { code: string }).code).toBe('HEAD_MOVED');
  });
});

test(`a chain more than MOST_LINES_SINCE (${MOST_LINES_SINCE}) past \`after\` is not read: the group is HEAD_MOVED`, async () => {
  const reads: [number, number][] = [];
  const read = async function* (from: number, to: number): AsyncGenerator<string> {
    reads.push([from, to]);
    for (let s = from; s <= to; s++) yield s === 7 ? 'refused' : 'other';
  };
  const group = (after: number): Group => ({ steps: [], after, unlessAfter: (l) => l === 'refused' });
  expect(await linesSince([group(0)], MOST_LINES_SINCE + 1, read)).toBeUndefined();
  expect(reads).toEqual([]);
  // Within the bound, the lines are tested as they are read: each group from its own `after`.
  const [early, late] = [group(3), group(7)];
  const since = await linesSince([early, late], 20, read);
  expect(reads).toEqual([[4, 20]]);
  expect([since?.get(early), since?.get(late)]).toEqual([true, false]);
  // A reader that stops short (a row missing) leaves every group unread: HEAD_MOVED.
  const short = async function* (): AsyncGenerator<string> {
    yield 'other';
  };
  expect((await linesSince([group(3)], 20, short))?.size).toBe(0);
});
