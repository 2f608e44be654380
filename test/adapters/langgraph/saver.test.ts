/**
 * StepchainSaver beyond LangGraph's own suite: how values are stored (spec/LANGGRAPH.md §4), the writes rule
 * and what it appends (§5.2, §6), two savers on one store seeing each other's records, records that break
 * the profile, deletion, and the errors a caller gets.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FileStore, MemoryStore, type Store } from '../../../src/index.js';
import { LangGraphError, StepchainSaver } from '../../../src/adapters/langgraph/index.js';
import { loadValue, storeValue } from '../../../src/adapters/langgraph/records.js';
import { tempDir } from '../../helpers/tmp.js';
import { all, code } from '../../helpers/outcomes.js';

const root = tempDir('stepchain-langgraph-saver-');
let n = 0;
const fileStore = () => new FileStore(`${root}/s${n++}`, { fsync: 'none' });
const meta = { source: 'loop' as const, step: 0, parents: {} };
const cp = (id: string, values: Record<string, unknown> = {}, versions: Record<string, number> = {}) => ({
  v: 4,
  id,
  ts: '2026-11-23T00:00:00.000Z',
  channel_values: values,
  channel_versions: versions,
  versions_seen: {},
});

async function count(store: Store, id: string): Promise<number> {
  const head = await (await store.open(id)).head();
  return head === null ? 0 : head.seq + 1;
}

describe('stored values (LANGGRAPH §4)', () => {
  test('any bytes under any type come back exactly; UTF-8 is kept as text unless the type is "bytes"', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.constantFrom('json', 'bytes', 'msgpack'), (bytes, type) => {
        const stored = storeValue(type, bytes);
        const [t, back] = loadValue(JSON.parse(JSON.stringify(stored)) as typeof stored);
        expect(t).toBe(type);
        expect(back).toEqual(bytes);
        let utf8 = true;
        try {
          new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          utf8 = false;
        }
        expect('text' in stored).toBe(utf8 && type !== 'bytes');
      }),
      { numRuns: 300 },
    );
  });

  test.each([
    ['a byte-order mark is kept', new Uint8Array([0xef, 0xbb, 0xbf, 0x31]), 'text'],
    ['a lone surrogate encoded in UTF-8 is not UTF-8', new Uint8Array([0xed, 0xa0, 0x80]), 'base64'],
    ['an overlong encoding is not UTF-8', new Uint8Array([0xc0, 0xaf]), 'base64'],
  ])('%s', (_label, bytes, kind) => {
    const stored = storeValue('json', bytes);
    expect(kind in stored).toBe(true);
    expect(loadValue(stored)[1]).toEqual(bytes);
  });

  test('binary and large channel values round-trip through the saver; a large one goes to a blob', async () => {
    const store = new MemoryStore({ blobThreshold: 1024 });
    const saver = new StepchainSaver({ store });
    const big = 'x'.repeat(5000);
    const bin = new Uint8Array([0, 255, 1, 254]);
    await saver.put({ configurable: { thread_id: 't' } }, cp('1', { big, bin }, { big: 1, bin: 1 }), meta, {
      big: 1,
      bin: 1,
    });
    const tuple = await saver.getTuple({ configurable: { thread_id: 't' } });
    expect(tuple?.checkpoint.channel_values).toEqual({ big, bin });
    let first = '';
    for await (const l of (await store.open(saver.journalId('t'))).lines()) {
      first ||= l.text;
    }
    const line = JSON.parse(first) as { result: unknown };
    expect(Object.keys(line.result as object)).toEqual(['$stepchain:blob']);
  });
});

describe('writes (LANGGRAPH §5.2, §6)', () => {
  test('a regular write is kept once per (task, idx) and a repeat appends nothing; a special channel is replaced', async () => {
    const store = new MemoryStore();
    const saver = new StepchainSaver({ store });
    const c = await saver.put({ configurable: { thread_id: 't' } }, cp('1'), meta, {});
    await saver.putWrites(
      c,
      [
        ['a', 1],
        ['b', 2],
      ],
      'task',
    );
    const after1 = await count(store, saver.journalId('t'));
    await saver.putWrites(
      c,
      [
        ['a', 'changed'],
        ['b', 'changed'],
      ],
      'task',
    );
    expect(await count(store, saver.journalId('t'))).toBe(after1);
    await saver.putWrites(c, [['__interrupt__', 'first']], 'task');
    await saver.putWrites(c, [['__interrupt__', 'second']], 'task');
    expect(await count(store, saver.journalId('t'))).toBe(after1 + 2);
    expect((await saver.getTuple(c))?.pendingWrites).toEqual([
      ['task', '__interrupt__', 'second'],
      ['task', 'a', 1],
      ['task', 'b', 2],
    ]);
  });
});

describe('two savers on one store', () => {
  test('each sees what the other appended, and their interleaved records form one valid chain', async () => {
    const dir = `${root}/shared${n++}`;
    const a = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const b = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const thread = { configurable: { thread_id: 'shared' } };
    let last = await a.put(thread, cp('01', { n: 1 }, { n: 1 }), meta, { n: 1 });
    for (let i = 2; i <= 6; i++) {
      const saver = i % 2 === 0 ? b : a;
      expect((await saver.getTuple(thread))?.checkpoint.id).toBe(`0${i - 1}`);
      last = await saver.put(last, cp(`0${i}`, { n: i }, { n: i }), meta, { n: i });
    }
    await Promise.all([a.putWrites(last, [['x', 'from a']], 'ta'), b.putWrites(last, [['x', 'from b']], 'tb')]);
    for (const saver of [a, b]) {
      const t = await saver.getTuple(thread);
      expect(t?.checkpoint.channel_values).toEqual({ n: 6 });
      expect(t?.pendingWrites).toEqual([
        ['ta', 'x', 'from a'],
        ['tb', 'x', 'from b'],
      ]);
      expect(t?.parentConfig?.configurable?.checkpoint_id).toBe('05');
    }
    const journal = (await a.journal('shared'))!;
    expect((await journal.verify()).problems).toEqual([]);
    await a.close();
    await b.close();
  });
});

describe('records that are not what they claim', () => {
  test("foreign records are skipped; a record that says it is LangGraph's but breaks the shape is RECORD_INVALID with its seq", async () => {
    const store = new MemoryStore();
    const saver = new StepchainSaver({ store });
    await saver.put({ configurable: { thread_id: 't' } }, cp('1'), meta, {});
    const journal = await store.open(saver.journalId('t'));
    await journal.append({ input: { note: 'an operator remark' }, result: 'not LangGraph' });
    expect((await saver.getTuple({ configurable: { thread_id: 't' } }))?.checkpoint.id).toBe('1');
    await journal.append({ input: { kind: 'langgraph.checkpoint', thread_id: 't' }, result: {} });
    const err = await saver.getTuple({ configurable: { thread_id: 't' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LangGraphError);
    expect((err as LangGraphError).code).toBe('RECORD_INVALID');
    expect((err as LangGraphError).location.seq).toBe(2);
  });
});

describe('reads verify what they fold (LANGGRAPH §6)', () => {
  const bucket = (dir: string, id: string): string => `${dir}/${id}/buckets/0000000000000000.jsonl`;
  const forge = (file: string): void => writeFileSync(file, readFileSync(file, 'utf8').replace('honest', 'forged'));

  test('a thread edited on disk is THREAD_INVALID on getTuple and list, with the seq of the edited record', async () => {
    const dir = `${root}/tampered${n++}`;
    const a = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const thread = { configurable: { thread_id: 't' } };
    const c1 = await a.put(thread, cp('01', { note: 'honest' }, { note: 1 }), meta, { note: 1 });
    await a.put(c1, cp('02', { n: 2 }, { n: 2 }), meta, { n: 2 });
    await a.close();
    forge(bucket(dir, a.journalId('t')));
    const b = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const err = await b.getTuple(thread).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LangGraphError);
    expect((err as LangGraphError).code).toBe('THREAD_INVALID');
    expect((err as LangGraphError).message).toContain('HASH_MISMATCH');
    expect((err as LangGraphError).location.seq).toBe(0);
    const c = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    expect(await code(all(c.list(thread)))).toBe('THREAD_INVALID');
    await b.close();
    await c.close();
  });

  test('a record another writer appended is verified before it is folded: an edited one is refused, the view is unchanged', async () => {
    const dir = `${root}/tampered${n++}`;
    const a = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const b = new StepchainSaver({ store: new FileStore(dir, { fsync: 'none' }) });
    const thread = { configurable: { thread_id: 't' } };
    const c1 = await a.put(thread, cp('01', { n: 1 }, { n: 1 }), meta, { n: 1 });
    expect((await b.getTuple(thread))?.checkpoint.id).toBe('01');
    await a.put(c1, cp('02', { note: 'honest' }, { note: 2 }), meta, { note: 2 });
    forge(bucket(dir, a.journalId('t')));
    expect(await code(b.getTuple(thread))).toBe('THREAD_INVALID');
    expect(await code(b.getTuple(thread))).toBe('THREAD_INVALID');
    await a.close();
    await b.close();
  });
});

describe('deleteThread and errors', () => {
  test('removes every namespace of the thread whole and no other thread', async () => {
    const store = fileStore();
    const saver = new StepchainSaver({ store });
    for (const [thread_id, checkpoint_ns] of [
      ['t', ''],
      ['t', 'sub:1'],
      ['t2', ''],
      ['t-other', ''],
    ] as const) {
      await saver.put({ configurable: { thread_id, checkpoint_ns } }, cp('1'), meta, {});
    }
    await saver.deleteThread('t');
    expect(await store.list()).toEqual([saver.journalId('t-other'), saver.journalId('t2')].sort());
    expect(await saver.getTuple({ configurable: { thread_id: 't', checkpoint_ns: 'sub:1' } })).toBeUndefined();
    const again = await saver.put({ configurable: { thread_id: 't' } }, cp('2'), meta, {});
    expect(again.configurable?.stepchain_seq).toBe(0);
  });

  test('coded errors: no thread id, a store that cannot remove, a bad prefix', async () => {
    const saver = new StepchainSaver({ store: new MemoryStore() });
    expect(await code(saver.put({ configurable: {} }, cp('1'), meta, {}))).toBe('CONFIG_INVALID');
    expect(await code(saver.putWrites({ configurable: { thread_id: 't' } }, [['a', 1]], 'task'))).toBe(
      'CONFIG_INVALID',
    );
    expect(await code(saver.put({ configurable: { thread_id: 42 } }, cp('1'), meta, {}))).toBe('CONFIG_INVALID');
    const memory = new MemoryStore();
    const noRemove: Store = {
      create: (i, o) => memory.create(i, o),
      open: (i, o) => memory.open(i, o),
      list: (f) => memory.list(f),
      runs: (f) => memory.runs(f),
      fork: (p, o) => memory.fork(p, o),
    };
    expect(await code(new StepchainSaver({ store: noRemove }).deleteThread('t'))).toBe('REMOVE_UNSUPPORTED');
    expect(() => new StepchainSaver({ store: memory, prefix: 'a.b' })).toThrow(/CONFIG_INVALID/);
  });

  test('long thread ids and namespaces get digest names; the thread is still read from its records', async () => {
    const store = new MemoryStore();
    const saver = new StepchainSaver({ store });
    const long = 'ü'.repeat(100);
    await saver.put({ configurable: { thread_id: long, checkpoint_ns: long } }, cp('1'), meta, {});
    expect(saver.journalId(long, long)).toMatch(/^langgraph\.h[0-9a-f]{40}\.h[0-9a-f]{40}$/);
    const listed = [];
    for await (const t of saver.list({ configurable: {} })) listed.push(t.config.configurable);
    expect(listed).toEqual([{ thread_id: long, checkpoint_ns: long, checkpoint_id: '1' }]);
  });
});
