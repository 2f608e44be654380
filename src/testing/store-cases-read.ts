/**
 * The conformance cases of what a store gives back (spec/FILE-STORE.md §5 buckets, §6 blobs, §11 forks,
 * §15 removal) and the read-back property, as any store must show them through Store and Journal.
 */
import { strict as assert } from 'node:assert';
import * as fc from 'fast-check';
import type { StepRecord } from '../record/index.js';
import { all, code, hasMembers, upTo, type CaseContext, type CaseGroup } from './store-kit.js';

const BLOB_MARKER = /"\$stepchain:blob":\{"digest":"(sha256:[0-9a-f]{64})","size":(\d+)\}/;

function blobs({ test, make }: CaseContext): void {
  test('a large content field is stored once, referenced from the record, and restored on read', async () => {
    const j = await make({ blobThreshold: 1024 }).create('j');
    const big = { text: 'é'.repeat(2000), list: [1, 2, 3] };
    await j.append({ input: big, result: 'small' });
    await j.append({ prompt: big });
    const lines = await all(j.lines());
    const m0 = BLOB_MARKER.exec(lines[0]!.text);
    if (m0 === null) assert.fail('the first line references no blob');
    assert.equal(BLOB_MARKER.exec(lines[1]!.text)?.[1], m0[1]);
    assert.ok(!lines[0]!.text.includes('ééé'), 'the value is not inline');
    const bytes = (await j.blob(m0[1]!))!;
    assert.equal(bytes.length, Number(m0[2]));
    assert.equal(new TextDecoder().decode(bytes), '{"list":[1,2,3],"text":"' + 'é'.repeat(2000) + '"}');
    assert.deepEqual((await j.get(0))!.input, big);
    assert.deepEqual((await j.get(1))!.prompt, big);
    assert.equal(await j.blob('sha256:' + 'f'.repeat(64)), null);
    assert.equal(await j.blob('not a digest'), null);
    assert.equal((await j.verify()).ok, true);
  });
  test('a value just under the threshold stays inline', async () => {
    const j = await make({ blobThreshold: 1024 }).create('j');
    await j.append({ input: 'x'.repeat(1021) }); // 1023 bytes with its quotes
    await j.append({ input: 'x'.repeat(1022) }); // 1024 bytes: a blob
    const lines = await all(j.lines());
    assert.ok(!lines[0]!.text.includes('$stepchain:blob'));
    assert.ok(lines[1]!.text.includes('$stepchain:blob'));
  });
}

function reading({ test, make }: CaseContext): void {
  test('ranges stream the right steps across buckets', async () => {
    const j = await make({ segmentBytes: 4096 }).create('j');
    for (let i = 0; i < 60; i++) await j.append({ input: { i, pad: 'p'.repeat(200) } });
    const buckets = new Set((await all(j.lines())).map((l) => l.segment));
    assert.ok(buckets.size > 2, `${buckets.size} buckets`);
    for (const name of buckets) assert.match(name, /^\d{16}\.jsonl$/);
    const seqs = async (range: { from?: number; to?: number }) => (await all(j.read(range))).map((s) => s.seq);
    assert.deepEqual(
      await seqs({ from: 17, to: 41 }),
      upTo(25).map((i) => 17 + i),
    );
    assert.deepEqual(await seqs({ from: 55 }), [55, 56, 57, 58, 59]);
    assert.deepEqual(await seqs({ to: 2 }), [0, 1, 2]);
    assert.deepEqual(await seqs({ from: 60 }), []);
    assert.deepEqual(await seqs({ from: 58, to: 1000 }), [58, 59]);
    assert.equal(await code(all(j.read({ from: 5, to: 4 }))), 'RANGE_INVALID');
    assert.equal(await code(all(j.read({ from: -1 }))), 'RANGE_INVALID');
    assert.equal(await code(j.get(1.5)), 'RANGE_INVALID');
    hasMembers(await j.verify(), { ok: true, steps: 60, head_seq: 59 });
  });
  // Outsider H: a rows store paged to the first empty page, so an export or erasure reading a journal appended to
  // faster than it read ran until the appends stopped.
  test('a read without an end stops at the head it began at, while appends go on', async () => {
    const j = await make().create('j');
    for (let i = 0; i < 5; i++) await j.append({ input: i });
    const seen: number[] = [];
    for await (const l of j.lines()) {
      seen.push(l.seq);
      if (l.seq === 0) for (let i = 5; i < 8; i++) await j.append({ input: i });
    }
    assert.deepEqual(seen, [0, 1, 2, 3, 4]);
    assert.deepEqual(
      (await all(j.read({ from: 6 }))).map((s) => s.seq),
      [6, 7],
    );
  });
}

function forks({ test, make }: CaseContext): void {
  test('shares the prefix byte for byte, records its lineage, verifies, and appends independently', async () => {
    const store = make({ blobThreshold: 1024, segmentBytes: 4096 });
    const parent = await store.create('parent');
    for (let i = 0; i < 30; i++) await parent.append({ input: i, result: i === 3 ? 'b'.repeat(5000) : null });
    const before = (await all(parent.lines())).map((l) => l.text);
    const fork = await store.fork(parent, { fromStep: 12, to: 'child' });
    assert.deepEqual(fork.genesis, parent.genesis);
    const parentHash = /"step_hash":"(sha256:[0-9a-f]{64})"/.exec(before[12]!)![1];
    hasMembers(fork.lineage, { parent_journal: 'parent', from_step: 12, parent_step_hash: parentHash });
    assert.deepEqual(Object.keys(fork.lineage!).sort(), [
      'from_step',
      'parent_genesis_hash',
      'parent_journal',
      'parent_step_hash',
    ]);
    assert.match(fork.lineage!.parent_genesis_hash, /^sha256:/);
    assert.deepEqual(
      (await all(fork.lines())).map((l) => l.text),
      before.slice(0, 13),
    );
    assert.equal((await fork.get(3))!.result, 'b'.repeat(5000));
    const f = await fork.append({ input: 'fork' });
    const p = await parent.append({ input: 'parent' });
    assert.equal(f.seq, 13);
    assert.equal(p.seq, 30);
    assert.equal(f.prev_hash, fork.lineage!.parent_step_hash);
    assert.equal((await fork.verify()).ok, true);
    assert.equal((await parent.verify()).ok, true);
    assert.deepEqual(
      (await all(parent.lines({ to: 29 }))).map((l) => l.text),
      before,
    );
    assert.deepEqual(await store.list(), ['child', 'parent']);
    // The fork's own reopen sees the same lineage.
    assert.deepEqual((await store.open('child')).lineage, fork.lineage);
  });
  for (const fromStep of [-1, 1.5, 5, 100]) {
    test(`refuses fromStep ${fromStep} outside the parent and creates nothing`, async () => {
      const store = make();
      const parent = await store.create('parent');
      for (let i = 0; i < 5; i++) await parent.append({ input: i });
      assert.equal(await code(store.fork(parent, { fromStep, to: 'child' })), 'RANGE_INVALID');
      assert.deepEqual(await store.list(), ['parent']);
    });
  }
  test('refuses an existing target and an empty parent', async () => {
    const store = make();
    const parent = await store.create('parent');
    assert.equal(await code(store.fork(parent, { fromStep: 0, to: 'child' })), 'RANGE_INVALID');
    await parent.append({ input: 1 });
    assert.equal(await code(store.fork(parent, { fromStep: 0, to: 'parent' })), 'JOURNAL_EXISTS');
  });
}

function removal({ test, make }: CaseContext): void {
  test('removes a journal whole: not listed, not opened, the others untouched; a second remove is JOURNAL_NOT_FOUND', async () => {
    const store = make();
    const remove = store.remove?.bind(store);
    if (remove === undefined) assert.fail('the store offers no remove');
    const gone = await store.create('gone');
    await gone.append({ input: 'a' });
    await gone.close();
    const kept = await store.create('kept');
    await kept.append({ input: 'b' });
    await remove('gone');
    assert.deepEqual(await store.list(), ['kept']);
    assert.equal(await code(store.open('gone')), 'JOURNAL_NOT_FOUND');
    assert.equal(await code(remove('gone')), 'JOURNAL_NOT_FOUND');
    assert.equal(await code(remove('../kept')), 'ID_INVALID');
    assert.deepEqual((await kept.verify()).problems, []);
    const again = await store.create('gone');
    assert.equal(await again.head(), null);
  });
}

/** JSON's own round trip: -0 becomes 0, as it does in canonical JSON. */
const normalize = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

function properties({ test, make, numRuns }: CaseContext): void {
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
        assert.equal(back.length, steps.length);
        back.forEach((rec: StepRecord, i) => {
          const s = steps[i]! as Record<string, unknown>;
          for (const f of ['input', 'model', 'prompt', 'tool_call', 'result'] as const) {
            assert.deepStrictEqual(rec[f], normalize(s[f] === undefined ? null : s[f]), f);
          }
          if (s.meta !== undefined) assert.deepStrictEqual(rec.meta, normalize(s.meta));
        });
        assert.deepEqual((await j.verify()).problems, []);
      }),
      { numRuns },
    );
  });
}

export const readCases: readonly CaseGroup[] = [
  ['FILE-STORE §6: blobs', blobs],
  ['FILE-STORE §5: reading ranges across buckets', reading],
  ['FILE-STORE §11: forks', forks],
  ['FILE-STORE §15: removing a journal', removal],
  ['FILE-STORE §9, §13: properties', properties],
];
