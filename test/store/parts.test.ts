/**
 * The part store contract (spec/PARTS.md §6) run against every implementation: the file store's folder,
 * SQLite and Postgres (the run's embedded server). A store is trusted for availability only: the reader
 * checks what it returns, so the contract is about idempotent puts, sized gets, the private index, delete.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { digestBytes } from '../../src/canonical/sha256.js';
import { PartReader } from '../../src/record/v3/part-reader.js';
import { PartWriter } from '../../src/record/v3/part-writer.js';
import { FilePartStore } from '../../src/store/file/parts.js';
import { MemoryPartStore, type PartStore } from '../../src/store/parts.js';
import { PostgresPartStore } from '../../src/store/postgres/parts.js';
import { connect } from '../../src/store/sqlite/driver.js';
import { SqlitePartStore } from '../../src/store/sqlite/parts.js';
import { postgresHarness } from '../helpers/postgres.js';
import { tempDir } from '../helpers/tmp.js';

const dir = tempDir('stepchain-parts-');
const pgHarness = await postgresHarness('parts', 2);
let n = 0;
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end()));
});

const stores: Array<[string, () => PartStore]> = [
  ['memory', () => new MemoryPartStore()],
  ['file', () => new FilePartStore(join(dir, `j${n++}`), { fsync: false })],
  ['sqlite', () => new SqlitePartStore(connect(join(dir, `db${n++}.sqlite`), {}), 'j')],
  [
    'postgres',
    () => {
      const pool = new pg.Pool({ connectionString: pgHarness.url, max: 2 });
      pools.push(pool);
      return new PostgresPartStore(pool as never, pgHarness.schemaName(), 'j');
    },
  ],
];

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const A = `sha256:${'ab'.repeat(32)}`;
const B = `sha256:${'cd'.repeat(32)}`;

describe.each(stores)('part store: %s', (_name, make) => {
  test('put is idempotent; get by size; lookup by index key; list; delete', async () => {
    const s = make();
    expect(await s.get(A)).toBeNull();
    expect(await s.has(A)).toBe(false);
    await s.put([{ address: A, bytes: bytes('first'), indexKey: '11'.repeat(32) }]);
    // The same address again keeps the first file (an address names one file).
    await s.put([
      { address: A, bytes: bytes('other'), indexKey: '22'.repeat(32) },
      { address: B, bytes: bytes('bee'), indexKey: '33'.repeat(32) },
    ]);
    expect(new TextDecoder().decode((await s.get(A)) as Uint8Array)).toBe('first');
    expect(await s.get(A, 5)).toBeInstanceOf(Uint8Array);
    expect(await s.get(A, 9)).toEqual({ size: 5 });
    expect(await s.has(B)).toBe(true);
    expect(await s.lookup('11'.repeat(32))).toBe(A);
    expect(await s.lookup('22'.repeat(32))).toBe(A);
    expect(await s.lookup('44'.repeat(32))).toBeNull();
    const listed: string[] = [];
    for await (const a of s.list()) listed.push(a);
    expect(listed.sort()).toEqual([A, B]);
    const key = await s.key();
    expect(key).toHaveLength(32);
    expect(await s.key()).toEqual(key);
    await s.delete(A);
    expect(await s.get(A)).toBeNull();
    expect(await s.lookup('11'.repeat(32))).toBeNull();
    expect(await s.has(B)).toBe(true);
  });

  test('a writer finds its parts again through the store after a restart, and a reader checks them', async () => {
    const s = make();
    const key = await s.key();
    const step = { input: { doc: 'page text '.repeat(200) }, prompt: [{ role: 'user', content: 'q '.repeat(600) }] };
    const first = await new PartWriter(key, s).extract(step);
    await s.put(first.parts);
    // A new process: a fresh writer, same journal key, same store → the same references, nothing new.
    const again = await new PartWriter(key, s).extract({ input: step.input });
    expect(again.parts).toEqual([]);
    expect(again.slots.input).toEqual(first.slots.input);
    const reader = new PartReader((a, size) => s.get(a, size), { deep: true });
    expect(await reader.resolve(first.slots, { seq: 0, path: '' })).toEqual(step);
  });
});

test("file store: a FIFO, a directory or a stray file under a part's name is refused or not a part, never hangs", async () => {
  const root = join(dir, 'hostile');
  const s = new FilePartStore(root, { fsync: false });
  const hex = 'ef'.repeat(32);
  mkdirSync(join(root, 'parts', 'ef', hex.slice(2)), { recursive: true });
  // For a reader, damage it reports at the reference (PART_CORRUPT); a writer checking for the part stops.
  await expect(s.get(`sha256:${hex}`)).resolves.toMatchObject({ unreadable: expect.stringContaining('ENOTREGULAR') });
  await expect(s.has(`sha256:${hex}`)).rejects.toMatchObject({ code: 'IO_ERROR' });
  // A file whose bytes are not what a reference names is the reader's to refuse.
  const good = `sha256:${'12'.repeat(32)}`;
  mkdirSync(join(root, 'parts', '12'), { recursive: true });
  writeFileSync(join(root, 'parts', '12', '12'.repeat(31)), 'not a part');
  const reader = new PartReader((a, size) => s.get(a, size));
  await expect(
    reader.resolve(
      { '$stepchain:part': { digest: good, file: digestBytes(bytes('x')), size: 10 } },
      { seq: 4, path: '/input' },
    ),
  ).rejects.toMatchObject({
    code: 'PART_CORRUPT',
    location: { seq: 4, path: '/input' },
  });
  await expect(s.get('sha256:../../etc')).rejects.toMatchObject({ code: 'OPTION_INVALID' });
});
