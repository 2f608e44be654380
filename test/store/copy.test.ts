/**
 * copyJournal between stores (spec/POSTGRES.md §10), on the file and memory stores (the CLI tests run it
 * to and from Postgres): byte-identical copies, completion of an identical prefix, refusal of anything
 * else with the target untouched, and a source that does not verify stops the copy at a clean prefix.
 */
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  FileStore,
  MemoryStore,
  copyJournal,
  type Journal,
  type StepInput,
  type StoredLine,
} from '../../src/store/index.js';
import { startRun } from '../../src/runtime/index.js';
import { tempDir } from '../helpers/tmp.js';
import { code } from '../helpers/outcomes.js';

async function lines(j: Journal): Promise<StoredLine[]> {
  const out: StoredLine[] = [];
  for await (const l of j.lines()) out.push(l);
  return out;
}

async function source(count: number): Promise<{ store: FileStore; j: Journal; root: string }> {
  const root = tempDir();
  const store = new FileStore(root, { fsync: 'none', segmentBytes: 4096, blobThreshold: 1024 });
  const j = await store.create('src');
  for (let i = 0; i < count; i++)
    await j.append({
      input: { i, pad: 'p'.repeat(200) },
      result: i % 5 === 2 ? 'b'.repeat(1500 + i) : i,
      ...(i % 3 ? {} : { meta: { k: i } }),
    });
  return { store, j, root };
}

describe('copyJournal', () => {
  test('copies byte for byte (lines, bucket labels, blobs, genesis, config), then has nothing to do, then completes what is new', async () => {
    const { j } = await source(25);
    const target = new MemoryStore();
    const first = await copyJournal(j, target, 'dst');
    expect(first).toMatchObject({
      created: true,
      already: 0,
      copied: 25,
      head: await j.head(),
      lineage_dropped: false,
    });
    const dst = await target.open('dst');
    expect(dst.genesis).toEqual(j.genesis);
    expect(dst.config).toEqual(j.config);
    expect(await lines(dst)).toEqual(await lines(j));
    expect((await dst.verify()).ok).toBe(true);
    expect(await copyJournal(j, target, 'dst')).toMatchObject({ created: false, already: 25, copied: 0 });
    await j.append({ input: 'new' });
    expect(await copyJournal(j, target, 'dst')).toMatchObject({ already: 25, copied: 1 });
    expect(await lines(await target.open('dst'))).toEqual(await lines(j));
  });

  test('a stepchain/v2 run journal — salted records, boundary records, its run identity — is copied byte for byte', async () => {
    const store = new FileStore(tempDir(), { fsync: 'none', blobThreshold: 1024 });
    const run = await startRun(store, {
      runId: 'run-1',
      conversationId: 'c-1',
      labels: { env: 'test' },
      input: 'go',
      format: 'stepchain/v2',
    });
    const call = await run.beginModel({ model: 'm', prompt: 'p' });
    await call.complete({ result: 'r'.repeat(1500), toolCalls: [{ id: 'call-1', name: 'pay', arguments: { n: 1 } }] });
    const effect = await run.beginTool({ name: 'pay', args: { n: 1 }, callId: 'call-1' });
    await effect.complete({ paid: true });
    await run.journal.append({ input: 'plain step' });
    const target = new MemoryStore();
    expect(await copyJournal(run.journal, target, 'copy')).toMatchObject({ created: true, already: 0 });
    const dst = await target.open('copy');
    expect(dst.genesis).toEqual(run.journal.genesis);
    const copied = await lines(dst);
    expect(copied).toEqual(await lines(run.journal));
    expect(copied.every((l) => /"salt":"[0-9a-f]{32}"/.test(l.text))).toBe(true);
    expect((await dst.verify()).ok).toBe(true);
    expect(await target.runs({ conversationId: 'c-1' })).toMatchObject([{ id: 'copy', run_id: 'run-1' }]);
    await run.close();
  });

  test('a caller-supplied record salt must be 32 lowercase hex digits, and only a v2 journal takes one', async () => {
    const store = new MemoryStore();
    const v2 = await store.create('v2', { format: 'stepchain/v2' });
    // A salt is not in the public StepInput (a caller never chooses one); copyJournal's CopiedStepInput carries it.
    const salted = (salt: unknown): StepInput => ({ input: 1, salt }) as StepInput;
    for (const salt of ['00', 'A'.repeat(32), 42]) expect(await code(v2.append(salted(salt)))).toBe('FIELD_INVALID');
    const ok = await v2.append(salted('0123456789abcdef0123456789abcdef'));
    expect((await v2.get(ok.seq)) as unknown).toMatchObject({ salt: '0123456789abcdef0123456789abcdef' });
    const v1 = await store.create('v1');
    expect(await code(v1.append(salted('0123456789abcdef0123456789abcdef')))).toBe('FIELD_INVALID');
  });

  test.each([
    [
      'another genesis',
      async (t: MemoryStore) => void (await t.create('dst', { segmentBytes: 4096, blobThreshold: 1024 })),
      /another genesis/,
    ],
    [
      'another config',
      async (t: MemoryStore, j: Journal) =>
        void (await t.create('dst', { journalId: j.genesis.journal_id, createdAt: j.genesis.created_at })),
      /another config/,
    ],
    [
      'a differing step',
      async (t: MemoryStore, j: Journal) => {
        const d = await t.create('dst', {
          journalId: j.genesis.journal_id,
          createdAt: j.genesis.created_at,
          segmentBytes: 4096,
          blobThreshold: 1024,
        });
        await d.append({ input: 'not the source' });
      },
      /step 0 is not the source's/,
    ],
    [
      'more steps than the source',
      async (t: MemoryStore, j: Journal) => {
        await copyJournal(j, t, 'dst');
        await (await t.open('dst')).append({ input: 'extra' });
      },
      /holds 6 steps and the source 5/,
    ],
  ])('refuses a target with %s and leaves it untouched', async (_l, prepare, message) => {
    const { j } = await source(5);
    const target = new MemoryStore();
    await prepare(target, j);
    const before = await lines(await target.open('dst'));
    const e = await copyJournal(j, target, 'dst').catch((x: unknown) => x as Error & { code: string });
    expect((e as { code: string }).code).toBe('JOURNAL_EXISTS');
    expect((e as Error).message).toMatch(message);
    expect(await lines(await target.open('dst'))).toEqual(before);
  });

  test('neither a refusal part-way nor a completion leaves a file of the target open (read through /proc/self/fd)', async () => {
    // The target's prefix was read beside the source's and never ended: a refusal after it (a differing step)
    // left the bucket's file handle for the collector to close (Node warned of it in the suite).
    const openUnder = (dir: string): string[] =>
      readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          const to = readlinkSync(`/proc/self/fd/${fd}`);
          return to.startsWith(dir) ? [to] : [];
        } catch {
          return []; // the descriptor readdir itself used, closed since
        }
      });
    const { j } = await source(5);
    const root = tempDir();
    const target = new FileStore(root, { fsync: 'none' });
    await copyJournal(j, target, 'same');
    expect((await copyJournal(j, target, 'same')).already).toBe(5);
    // The source's first two steps, then one of its own: the copy reads the target's prefix and stops at seq 2.
    const firstTwo = new Proxy(j, {
      get: (t, name, r) => (name === 'head' ? async () => ({ ...(await t.head())!, seq: 1 }) : Reflect.get(t, name, r)),
    });
    await copyJournal(firstTwo, target, 'dst');
    const d = await target.open('dst');
    await d.append({ input: 'not the source' });
    await d.close();
    const e = await copyJournal(j, target, 'dst').catch((x: unknown) => x as Error & { code: string });
    expect((e as Error).message).toMatch(/step 2 is not the source's/);
    expect(openUnder(root)).toEqual([]);
  });

  test('a source that does not verify stops the copy; the target holds an identical prefix', async () => {
    const { j, root } = await source(8);
    const bucket = join(root, 'src', 'buckets', readdirSync(join(root, 'src', 'buckets')).sort()[0]!);
    writeFileSync(bucket, readFileSync(bucket, 'utf8').replace('"i":1,', '"i":7,'));
    const target = new MemoryStore();
    const e = await copyJournal(await new FileStore(root).open('src', { readOnly: true }), target, 'dst').catch(
      (x: unknown) => x as Error & { code: string },
    );
    expect((e as { code: string }).code).toBe('JOURNAL_CORRUPT');
    expect((e as Error).message).toMatch(/HASH_MISMATCH/);
    const copied = await lines(await target.open('dst'));
    expect(copied.length).toBeLessThan(2);
    expect(await code(copyJournal(j, new MemoryStore(), 'x'))).toBe('JOURNAL_CORRUPT');
  });
});
