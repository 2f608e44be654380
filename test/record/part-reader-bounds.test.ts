/**
 * Part files an outsider made to stand for far more than they hold (spec/PARTS.md §10; outsider I): a value part
 * referencing the one below it twice, 24 deep (25 files of 200 bytes, 2^24 values once expanded), and one list
 * over a base chain of 20 000 lists. Reading them must neither run out of memory nor take a time that grows with
 * the square of the chain: the bomb is refused with PART_CORRUPT, a coded error naming where; the chain is
 * checked part by part and its value flattened once (each level kept its own flattened copy before: n²/2
 * elements, and `verify` of one such record over 32 000 lists ran out of memory).
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import type { Json } from '../../src/canonical/json.js';
import { PartReader } from '../../src/record/v3/part-reader.js';
import { PartError, partRefOf, type PartRef } from '../../src/record/v3/parts.js';

const SEED = 'cd'.repeat(32);
const encoder = new TextEncoder();

/** Part files by address, and a reference to each as a record holds it. */
function store(): { files: Map<string, Uint8Array>; add(file: Json): Json } {
  const files = new Map<string, Uint8Array>();
  return {
    files,
    add(file: Json): Json {
      const bytes = encoder.encode(canonicalJsonTrusted(file));
      const address = 'sha256:' + randomBytes(32).toString('hex');
      files.set(address, bytes);
      const digest = 'sha256:' + createHash('sha256').update(bytes).digest('hex');
      return { '$stepchain:part': { digest: address, file: digest, size: bytes.length } };
    },
  };
}

const readerOf = (files: Map<string, Uint8Array>): PartReader =>
  new PartReader(async (address) => files.get(address) ?? null);

describe('parts that stand for more than they hold', () => {
  test('a part referenced twice at each of 24 levels: PART_CORRUPT at once, not 2^24 values', async () => {
    const s = store();
    let ref = s.add({ seed: SEED, value: 'leaf' });
    for (let k = 0; k < 24; k++) ref = s.add({ seed: SEED, value: [ref, ref] });
    const reader = readerOf(s.files);
    const err = await reader.resolve({ prompt: ref }, { seq: 0, path: '' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartError);
    expect(err).toMatchObject({ code: 'PART_CORRUPT', location: { seq: 0 } });
    expect((err as Error).message).toMatch(/expand more than 1048576 references .*not expanded \(PARTS\.md §10\)/);
  });

  test('the same at 12 levels (4 096 leaves) expands in full', async () => {
    const s = store();
    let ref = s.add({ seed: SEED, value: 'leaf' });
    for (let k = 0; k < 12; k++) ref = s.add({ seed: SEED, value: [ref, ref] });
    const value = await readerOf(s.files).resolve(ref, { seq: 0, path: '/prompt' });
    expect(JSON.stringify(value).match(/leaf/g)).toHaveLength(4096);
  });

  test('one list over a base chain of 20 000 lists: checked part by part, its value flattened once', async () => {
    const s = store();
    const refs = [s.add({ seed: SEED, value: [{ c: 0 }] })];
    for (let k = 1; k <= 20_000; k++) refs.push(s.add({ base: refs[k - 1]!, seed: SEED, tail: [{ c: k }] }));
    const ref = refs[20_000]!;
    const reader = readerOf(s.files);
    const top = partRefOf(ref) as PartRef;
    await reader.file(top, { seq: 0, path: '/prompt' });
    expect(reader.checked().size).toBe(20_001);
    const value = (await reader.value(top, { seq: 0, path: '/prompt' })) as { c: number }[];
    expect(value).toHaveLength(20_001);
    expect(value[0]).toEqual({ c: 0 });
    expect(value[20_000]).toEqual({ c: 20_000 });
    // A list lower in the chain, asked for after: its own elements, the chain's first ones.
    const lower = (await reader.value(partRefOf(refs[10_000])!, { seq: 1, path: '/prompt' })) as { c: number }[];
    expect(lower).toHaveLength(10_001);
    expect(lower[10_000]).toEqual({ c: 10_000 });
  }, 60_000);
});
