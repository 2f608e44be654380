/**
 * One conformance suite for the storage interface, run against every implementation: the file store
 * (real files under a temporary root), the in-memory store, the Postgres store (a real server, started
 * once per run by test/setup/postgres.ts; each store a schema of its own) and the SQLite store (a database
 * file each). Whatever a caller can observe through Store and Journal must be the same in all of them.
 */
import fc from 'fast-check';
import { afterAll, describe, expect, inject, test } from 'vitest';
import { FileStore, MemoryStore, StoreError, type Store, type StepRecord } from '../../src/store/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { tempDir } from '../helpers/tmp.js';
import { all, code } from '../helpers/outcomes.js';

interface Impl {
  name: string;
  make: (options?: { blobThreshold?: number; segmentBytes?: number; idempotencyWindow?: number }) => Store;
}

const root = tempDir('stepchain-conformance-');
let n = 0;
const pgStores: PostgresStore[] = [];
const sqliteStores: SqliteStore[] = [];
afterAll(async () => {
  await Promise.all([...pgStores, ...sqliteStores].map((s) => s.close()));
});
const impls: Impl[] = [
  { name: 'file store', make: (o = {}) => new FileStore(`${root}/s${n++}`, { ...o, fsync: 'none' }) },
  { name: 'memory store', make: (o = {}) => new MemoryStore(o) },
  {
    name: 'postgres store',
    make: (o = {}) => {
      const store = new PostgresStore({
        connectionString: inject('pgUrl'),
        schema: `conformance_${process.pid}_${n++}`,
        connection: { max: 4 },
        ...o,
      });
      pgStores.push(store);
      return store;
    },
  },
  {
    name: 'sqlite store',
    make: (o = {}) => {
      const store = new SqliteStore(`${root}/s${n++}.db`, { ...o, fsync: 'none' });
      sqliteStores.push(store);
      return store;
    },
  },
];

describe.each(impls)('$name', ({ make }) => {
  describe('ids', () => {
    test.each([
      ['empty', ''],
      ['parent directory', '..'],
      ['dot', '.'],
      ['leading dot', '.hidden'],
      ['traversal', '../escape'],
      ['embedded ..', 'a..b'],
      ['slash', 'a/b'],
      ['backslash', 'a\\b'],
      ['absolute', '/etc/passwd'],
      ['NUL', 'a\u0000b'],
      ['space', 'a b'],
      ['unicode', 'jöurnal'],
      ['too long', 'x'.repeat(201)],
      ['not a string', 42 as unknown as string],
    ])('refuses a hostile id (%s) in create, open and fork', async (_label, id) => {
      const store = make();
      expect(await code(store.create(id))).toBe('ID_INVALID');
      expect(await code(store.open(id))).toBe('ID_INVALID');
      const parent = await store.create('parent');
      await parent.append({ input: 1 });
      expect(await code(store.fork(parent, { fromStep: 0, to: id }))).toBe('ID_INVALID');
      expect(await store.list()).toEqual(['parent']);
    });

    test.each([['a'], ['A-b_c.d'], ['x'.repeat(200)], ['0'], ['a.b.c']])('accepts %s', async (id) => {
      const store = make();
      await store.create(id);
      expect(await store.list()).toEqual([id]);
    });

    test('create refuses a taken id; open refuses a missing one', async () => {
      const store = make();
      await store.create('j');
      expect(await code(store.create('j'))).toBe('JOURNAL_EXISTS');
      expect(await code(store.open('nope'))).toBe('JOURNAL_NOT_FOUND');
      expect(await store.list()).toEqual(['j']);
    });
  });

  describe('appending', () => {
    test('returns seq, step_id, step_hash and prev_hash linked from the genesis', async () => {
      const j = await make().create('j');
      expect(await j.head()).toBeNull();
      const a = await j.append({ input: 'a' });
      const b = await j.append({ input: 'b', step_id: 'my-id', meta: { agent: 'x' }, ts: '2026-01-31T12:00:00.000Z' });
      expect(a.seq).toBe(0);
      expect(b).toMatchObject({ seq: 1, step_id: 'my-id', prev_hash: a.step_hash });
      expect(await j.head()).toEqual({ seq: 1, step_hash: b.step_hash });
      const rec = (await j.get(1))!;
      expect(rec).toMatchObject({
        v: 1,
        seq: 1,
        step_id: 'my-id',
        ts: '2026-01-31T12:00:00.000Z',
        input: 'b',
        model: null,
        meta: { agent: 'x' },
        step_hash: b.step_hash,
      });
      expect(await j.get(2)).toBeNull();
      expect((await j.verify()).ok).toBe(true);
    });

    test.each(['v', 'seq', 'prev_hash', 'step_hash'])(
      'refuses a caller-supplied %s and appends nothing',
      async (field) => {
        const j = await make().create('j');
        expect(await code(j.append({ input: 1, [field]: 1 } as never))).toBe('FIELD_NOT_ALLOWED');
        expect(await j.head()).toBeNull();
      },
    );

    test.each([
      [
        'reserved member name',
        { input: { '$stepchain:blob': { digest: 'sha256:' + '0'.repeat(64), size: 1 } } },
        'RESERVED_KEY',
      ],
      ['non-finite number', { result: Number.NaN }, 'NOT_FINITE_NUMBER'],
      ['unknown field', { output: 1 }, 'FIELD_INVALID'],
      ['bad ts', { ts: '2026-01-31' }, 'FIELD_INVALID'],
      ['bad step_id', { step_id: '-x' }, 'FIELD_INVALID'],
      ['meta not an object', { meta: [1] }, 'FIELD_INVALID'],
    ])('refuses a step with a %s', async (_label, step, expected) => {
      const j = await make().create('j');
      expect(await code(j.append(step as never))).toBe(expected);
      expect(await j.head()).toBeNull();
    });

    test('concurrent appends get contiguous seqs in call order', async () => {
      const j = await make().create('j');
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => j.append({ input: i })));
      expect(results.map((r) => r.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      const steps = await all(j.read());
      expect(steps.map((s) => s.input)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect((await j.verify()).ok).toBe(true);
    });

    test('appendMany commits all or none', async () => {
      const j = await make().create('j');
      await j.append({ input: 'first', step_id: 'taken' });
      expect(await code(j.appendMany([{ input: 1 }, { input: 2, seq: 5 } as never, { input: 3 }]))).toBe(
        'FIELD_NOT_ALLOWED',
      );
      expect(await code(j.appendMany([{ input: 1 }, { input: 'different', step_id: 'taken' }]))).toBe(
        'STEP_ID_CONFLICT',
      );
      expect((await j.head())!.seq).toBe(0);
      const rs = await j.appendMany([{ input: 1 }, { input: 2 }, { input: 3 }]);
      expect(rs.map((r) => r.seq)).toEqual([1, 2, 3]);
      expect(rs[1]!.prev_hash).toBe(rs[0]!.step_hash);
      expect(await j.appendMany([])).toEqual([]);
    });

    test('a failing call in a group commit does not fail its neighbours', async () => {
      const j = await make().create('j');
      await j.append({ input: 0, step_id: 'dup' });
      const outcomes = await Promise.allSettled([
        j.append({ input: 1 }),
        j.append({ input: 'other', step_id: 'dup' }),
        j.appendMany([{ input: 2 }, { input: 3 }]),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((await all(j.read())).map((s) => s.input)).toEqual([0, 1, 2, 3]);
    });

    test('read-only journals refuse appends', async () => {
      const store = make();
      await store.create('j');
      const ro = await store.open('j', { readOnly: true });
      expect(ro.readOnly).toBe(true);
      expect(await code(ro.append({ input: 1 }))).toBe('READ_ONLY');
    });

    test('a closed journal refuses appends', async () => {
      const j = await make().create('j');
      await j.close();
      expect(await code(j.append({ input: 1 }))).toBe('CLOSED');
    });

    test("the result carries the ts as committed: the store's clock, the caller's, or a repeat's original", async () => {
      const j = await make().create('j');
      const a = await j.append({ input: 'a', step_id: 'a-1' });
      expect(a.ts).toBe((await j.get(0))!.ts);
      const b = await j.append({ input: 'b', ts: '2026-01-31T12:00:00.000Z' });
      expect(b.ts).toBe('2026-01-31T12:00:00.000Z');
      expect((await j.append({ input: 'a', step_id: 'a-1' })).ts).toBe(a.ts);
    });
  });

  describe('appending after a known seq (after)', () => {
    test('commits only while the chain ends at that seq; otherwise HEAD_MOVED and nothing is written', async () => {
      const j = await make().create('j');
      expect((await j.append({ input: 0 }, { after: -1 })).seq).toBe(0);
      expect(await code(j.append({ input: 'stale' }, { after: -1 }))).toBe('HEAD_MOVED');
      expect(await code(j.appendMany([{ input: 'x' }, { input: 'y' }], { after: 5 }))).toBe('HEAD_MOVED');
      expect((await j.head())!.seq).toBe(0);
      expect((await j.appendMany([{ input: 1 }, { input: 2 }], { after: 0 })).map((r) => r.seq)).toEqual([1, 2]);
      expect((await j.append({ input: 3 }, {})).seq).toBe(3);
      expect((await all(j.read())).map((s) => s.input)).toEqual([0, 1, 2, 3]);
      expect((await j.verify()).ok).toBe(true);
    });

    test('the message names the seq asked for and the seq the chain ends at', async () => {
      const j = await make().create('j');
      await j.appendMany([{ input: 0 }, { input: 1 }]);
      await expect(j.append({ input: 2 }, { after: 0 })).rejects.toThrow(/HEAD_MOVED: .*follow seq 0.*ends at seq 1/);
    });

    test('two appends after the same seq at once: one commits, the other is HEAD_MOVED', async () => {
      const j = await make().create('j');
      await j.append({ input: 0 });
      const outcomes = await Promise.allSettled([
        j.append({ input: 'a' }, { after: 0 }),
        j.append({ input: 'b' }, { after: 0 }),
        j.append({ input: 'free' }),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(((outcomes[1] as PromiseRejectedResult).reason as StoreError).code).toBe('HEAD_MOVED');
      expect((await all(j.read())).map((s) => s.input)).toEqual([0, 'a', 'free']);
    });

    test("another instance's append (another process) moves the head", async () => {
      const store = make();
      const j = await store.create('j');
      await j.append({ input: 0 });
      const other = await store.open('j');
      await other.append({ input: 'other' });
      expect(await code(j.append({ input: 'mine' }, { after: 0 }))).toBe('HEAD_MOVED');
      expect((await j.append({ input: 'mine' }, { after: 1 })).seq).toBe(2);
      await other.close();
    });

    test.each([[{ after: 1.5 }], [{ after: -2 }], [{ after: '0' }], ['0']])(
      'refuses %j with OPTION_INVALID',
      async (options) => {
        const j = await make().create('j');
        expect(await code(j.append({ input: 0 }, options as never))).toBe('OPTION_INVALID');
        expect(await j.head()).toBeNull();
      },
    );
  });

  describe('idempotent retry', () => {
    test('the same step_id with identical content returns the existing step and appends nothing', async () => {
      const store = make();
      const j = await store.create('j');
      const step = { step_id: 'call-1', input: { q: 'x' }, result: 'big'.repeat(1000), meta: { try: 1 } };
      const first = await j.append(step);
      await j.append({ input: 'between' });
      const again = await j.append(step);
      expect(again).toEqual(first);
      // A fresh instance (as after a crash) recognizes it too.
      const reopened = await store.open('j');
      expect(await reopened.append(step)).toEqual(first);
      // Concurrent retries in one batch: one step.
      const both = await Promise.all([
        j.append({ step_id: 'call-2', input: 2 }),
        j.append({ step_id: 'call-2', input: 2 }),
      ]);
      expect(both[0]).toEqual(both[1]);
      expect((await j.head())!.seq).toBe(2);
    });

    test.each([
      ['content', { input: { q: 'y' } }],
      ['meta', { input: { q: 'x' }, meta: { other: true } }],
      ['ts', { input: { q: 'x' }, ts: '2020-01-01T00:00:00.000Z' }],
    ])('the same step_id with different %s fails with STEP_ID_CONFLICT naming the seq', async (_l, changed) => {
      const j = await make().create('j');
      await j.append({ step_id: 'call-1', input: { q: 'x' }, ts: '2026-01-01T00:00:00.000Z' });
      try {
        await j.append({ step_id: 'call-1', ...changed });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(StoreError);
        expect((e as StoreError).code).toBe('STEP_ID_CONFLICT');
        expect((e as StoreError).message).toContain('seq 0');
      }
      expect((await j.head())!.seq).toBe(0);
    });

    test('is guaranteed within the window of the last N steps', async () => {
      const j = await make({ idempotencyWindow: 5 }).create('j');
      const first = await j.append({ step_id: 'old', input: 1 });
      for (let i = 0; i < 4; i++) await j.append({ input: i });
      expect(await j.append({ step_id: 'old', input: 1 })).toEqual(first); // seq 0 is the 5th most recent
      await j.append({ input: 'push it out' });
      const outside = await j.append({ step_id: 'old', input: 1 });
      expect(outside.seq).toBe(6); // past the window a retry is a new step (documented)
    });
  });

  describe('blobs', () => {
    test('a large content field is stored once, referenced from the record, and restored on read', async () => {
      const j = await make({ blobThreshold: 1024 }).create('j');
      const big = { text: 'é'.repeat(2000), list: [1, 2, 3] };
      await j.append({ input: big, result: 'small' });
      await j.append({ prompt: big });
      const lines = await all(j.lines());
      const marker = /"\$stepchain:blob":\{"digest":"(sha256:[0-9a-f]{64})","size":(\d+)\}/;
      const m0 = marker.exec(lines[0]!.text)!;
      expect(m0).not.toBeNull();
      expect(marker.exec(lines[1]!.text)![1]).toBe(m0[1]);
      expect(lines[0]!.text).not.toContain('ééé');
      const bytes = (await j.blob(m0[1]!))!;
      expect(bytes.length).toBe(Number(m0[2]));
      expect(new TextDecoder().decode(bytes)).toBe('{"list":[1,2,3],"text":"' + 'é'.repeat(2000) + '"}');
      expect((await j.get(0))!.input).toEqual(big);
      expect((await j.get(1))!.prompt).toEqual(big);
      expect(await j.blob('sha256:' + 'f'.repeat(64))).toBeNull();
      expect(await j.blob('not a digest')).toBeNull();
      expect((await j.verify()).ok).toBe(true);
    });

    test('a value just under the threshold stays inline', async () => {
      const j = await make({ blobThreshold: 1024 }).create('j');
      await j.append({ input: 'x'.repeat(1021) }); // 1023 bytes with its quotes
      await j.append({ input: 'x'.repeat(1022) }); // 1024 bytes: a blob
      const lines = await all(j.lines());
      expect(lines[0]!.text).not.toContain('$stepchain:blob');
      expect(lines[1]!.text).toContain('$stepchain:blob');
    });
  });

  describe('reading', () => {
    test('ranges stream the right steps across buckets', async () => {
      const j = await make({ segmentBytes: 4096 }).create('j');
      for (let i = 0; i < 60; i++) await j.append({ input: { i, pad: 'p'.repeat(200) } });
      const buckets = new Set((await all(j.lines())).map((l) => l.segment));
      expect(buckets.size).toBeGreaterThan(2);
      for (const name of buckets) expect(name).toMatch(/^\d{16}\.jsonl$/);
      expect((await all(j.read({ from: 17, to: 41 }))).map((s) => s.seq)).toEqual(
        Array.from({ length: 25 }, (_, i) => 17 + i),
      );
      expect((await all(j.read({ from: 55 }))).map((s) => s.seq)).toEqual([55, 56, 57, 58, 59]);
      expect((await all(j.read({ to: 2 }))).map((s) => s.seq)).toEqual([0, 1, 2]);
      expect(await all(j.read({ from: 60 }))).toEqual([]);
      expect((await all(j.read({ from: 58, to: 1000 }))).map((s) => s.seq)).toEqual([58, 59]);
      expect(await code(all(j.read({ from: 5, to: 4 })))).toBe('RANGE_INVALID');
      expect(await code(all(j.read({ from: -1 })))).toBe('RANGE_INVALID');
      expect(await code(j.get(1.5))).toBe('RANGE_INVALID');
      const report = await j.verify();
      expect(report).toMatchObject({ ok: true, steps: 60, head_seq: 59 });
    });
  });

  describe('fork', () => {
    test('shares the prefix byte for byte, records its lineage, verifies, and appends independently', async () => {
      const store = make({ blobThreshold: 1024, segmentBytes: 4096 });
      const parent = await store.create('parent');
      for (let i = 0; i < 30; i++) await parent.append({ input: i, result: i === 3 ? 'b'.repeat(5000) : null });
      const before = await all(parent.lines());
      const fork = await store.fork(parent, { fromStep: 12, to: 'child' });
      expect(fork.genesis).toEqual(parent.genesis);
      expect(fork.lineage).toEqual({
        parent_journal: 'parent',
        parent_genesis_hash: expect.stringMatching(/^sha256:/),
        from_step: 12,
        parent_step_hash: before[12]!.text.match(/"step_hash":"(sha256:[0-9a-f]{64})"/)![1],
      });
      const forkLines = await all(fork.lines());
      expect(forkLines.map((l) => l.text)).toEqual(before.slice(0, 13).map((l) => l.text));
      expect((await fork.get(3))!.result).toBe('b'.repeat(5000));
      const f = await fork.append({ input: 'fork' });
      const p = await parent.append({ input: 'parent' });
      expect(f.seq).toBe(13);
      expect(p.seq).toBe(30);
      expect(f.prev_hash).toBe(fork.lineage!.parent_step_hash);
      expect((await fork.verify()).ok).toBe(true);
      expect((await parent.verify()).ok).toBe(true);
      expect((await all(parent.lines({ to: 29 }))).map((l) => l.text)).toEqual(before.map((l) => l.text));
      expect(await store.list()).toEqual(['child', 'parent']);
      // The fork's own reopen sees the same lineage.
      expect((await store.open('child')).lineage).toEqual(fork.lineage);
    });

    test.each([[-1], [1.5], [5], [100]])(
      'refuses fromStep %s outside the parent and creates nothing',
      async (fromStep) => {
        const store = make();
        const parent = await store.create('parent');
        for (let i = 0; i < 5; i++) await parent.append({ input: i });
        expect(await code(store.fork(parent, { fromStep, to: 'child' }))).toBe('RANGE_INVALID');
        expect(await store.list()).toEqual(['parent']);
      },
    );

    test('refuses an existing target and an empty parent', async () => {
      const store = make();
      const parent = await store.create('parent');
      expect(await code(store.fork(parent, { fromStep: 0, to: 'child' }))).toBe('RANGE_INVALID');
      await parent.append({ input: 1 });
      expect(await code(store.fork(parent, { fromStep: 0, to: 'parent' }))).toBe('JOURNAL_EXISTS');
    });
  });

  describe('remove', () => {
    test('removes a journal whole: not listed, not opened, the others untouched; a second remove is JOURNAL_NOT_FOUND', async () => {
      const store = make();
      const gone = await store.create('gone');
      await gone.append({ input: 'a' });
      await gone.close();
      const kept = await store.create('kept');
      await kept.append({ input: 'b' });
      await store.remove!('gone');
      expect(await store.list()).toEqual(['kept']);
      expect(await code(store.open('gone'))).toBe('JOURNAL_NOT_FOUND');
      expect(await code(store.remove!('gone'))).toBe('JOURNAL_NOT_FOUND');
      expect(await code(store.remove!('../kept'))).toBe('ID_INVALID');
      expect((await kept.verify()).problems).toEqual([]);
      const again = await store.create('gone');
      expect(await again.head()).toBeNull();
    });
  });

  describe('properties', () => {
    const jsonValue = fc.jsonValue({ maxDepth: 4 }).filter((v) => !JSON.stringify(v).includes('$stepchain:'));
    const stepArb = fc.record(
      {
        input: jsonValue,
        model: jsonValue,
        result: fc.oneof(jsonValue, fc.string({ minLength: 1100, maxLength: 1500 })),
        meta: fc.dictionary(fc.string({ maxLength: 5 }), jsonValue, { maxKeys: 3 }),
      },
      { requiredKeys: [] },
    );

    test('whatever is appended reads back equal (blobs restored) and the journal verifies', async () => {
      const store = make({ blobThreshold: 1024 });
      let k = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 8 }), fc.boolean(), async (steps, many) => {
          const j = await store.create(`p${k++}`);
          if (many) await j.appendMany(steps);
          else for (const s of steps) await j.append(s);
          const back = await all(j.read());
          expect(back.length).toBe(steps.length);
          back.forEach((rec: StepRecord, i) => {
            const s = steps[i]! as Record<string, unknown>;
            for (const f of ['input', 'model', 'prompt', 'tool_call', 'result'] as const) {
              expect(rec[f]).toEqual(normalize(s[f] === undefined ? null : s[f]));
            }
            if (s.meta !== undefined) expect(rec.meta).toEqual(normalize(s.meta));
          });
          const report = await j.verify();
          expect(report.problems).toEqual([]);
        }),
        { numRuns: 25 },
      );
    });
  });
});

/** JSON's own round trip: -0 becomes 0, as it does in canonical JSON. */
function normalize(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v));
}
