/**
 * Diff of stepchain/v3 journals whose values stand in parts (spec/DIFF.md §3.2): part addresses are keyed per
 * journal, so two runs that hold the same large value are the same run, and a changed one shows its values.
 */
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { FileStore } from '../../src/index.js';
import { diff } from '../../src/diff/index.js';
import { tempDir } from '../helpers/tmp.js';

const page = (word: string): string => `${word} `.repeat(600);

describe('diff of v3 journals with parts', () => {
  test('the same large value in two journals is no divergence; a changed one is shown by its values', async () => {
    const store = new FileStore(join(tempDir('diff-v3-parts-'), 'runs'), { fsync: 'none' });
    const made = [];
    for (const [id, word] of [
      ['a', 'same'],
      ['b', 'same'],
      ['c', 'other'],
    ] as const) {
      const j = await store.create(id, { format: 'stepchain/v3' });
      await j.append({ tool_call: { name: 'read', arguments: { url: 'https://example.com' } }, result: page(word) });
      made.push(j);
    }
    const [a, b, c] = made;
    const lineOf = async (id: string): Promise<string> => {
      for await (const l of (await store.open(id)).lines()) return l.text;
      return '';
    };
    // The value stands in a part in each journal, under a different address.
    const address = (line: string): string | undefined =>
      /"\$stepchain:part":\{"digest":"(sha256:[0-9a-f]{64})"/.exec(line)?.[1];
    const [pa, pb] = [address(await lineOf('a')), address(await lineOf('b'))];
    expect(pa).toMatch(/^sha256:/);
    expect(pb).toMatch(/^sha256:/);
    expect(pa).not.toBe(pb);
    expect((await diff(a!, b!)).same).toBe(true);
    const changed = await diff(a!, c!);
    expect(changed.same).toBe(false);
    expect(changed.divergences[0]).toMatchObject({ kind: 'changed' });
    expect((changed.divergences[0] as { fields: unknown }).fields).toEqual([
      { path: '/result', kind: 'changed', a: page('same'), b: page('other') },
    ]);
    for (const j of made) await j.close();
  });
});
