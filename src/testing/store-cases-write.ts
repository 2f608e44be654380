/**
 * The conformance cases of the write path (spec/FILE-STORE.md §3 ids, §9 committing, §10 idempotent retry,
 * §17 appending after a known step), as any store must show them through Store and Journal.
 */
import { strict as assert } from 'node:assert';
import { all, code, hasMembers, rejection, upTo, type CaseContext, type CaseGroup } from './store-kit.js';

const HOSTILE_IDS: readonly (readonly [string, string])[] = [
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
];

function ids({ test, make }: CaseContext): void {
  for (const [label, id] of HOSTILE_IDS) {
    test(`refuses a hostile id (${label}) in create, open and fork`, async () => {
      const store = make();
      assert.equal(await code(store.create(id)), 'ID_INVALID');
      assert.equal(await code(store.open(id)), 'ID_INVALID');
      const parent = await store.create('parent');
      await parent.append({ input: 1 });
      assert.equal(await code(store.fork(parent, { fromStep: 0, to: id })), 'ID_INVALID');
      assert.deepEqual(await store.list(), ['parent']);
    });
  }
  for (const id of ['a', 'A-b_c.d', 'x'.repeat(200), '0', 'a.b.c']) {
    test(`accepts ${id}`, async () => {
      const store = make();
      await store.create(id);
      assert.deepEqual(await store.list(), [id]);
    });
  }
  test('create refuses a taken id; open refuses a missing one', async () => {
    const store = make();
    await store.create('j');
    assert.equal(await code(store.create('j')), 'JOURNAL_EXISTS');
    assert.equal(await code(store.open('nope')), 'JOURNAL_NOT_FOUND');
    assert.deepEqual(await store.list(), ['j']);
  });
}

function appending({ test, make }: CaseContext): void {
  test('returns seq, step_id, step_hash and prev_hash linked from the genesis', async () => {
    const j = await make().create('j');
    assert.equal(await j.head(), null);
    const a = await j.append({ input: 'a' });
    const b = await j.append({ input: 'b', step_id: 'my-id', meta: { agent: 'x' }, ts: '2026-01-31T12:00:00.000Z' });
    assert.equal(a.seq, 0);
    hasMembers(b, { seq: 1, step_id: 'my-id', prev_hash: a.step_hash });
    assert.deepEqual(await j.head(), { seq: 1, step_hash: b.step_hash });
    hasMembers(await j.get(1), {
      v: 1,
      seq: 1,
      step_id: 'my-id',
      ts: '2026-01-31T12:00:00.000Z',
      input: 'b',
      model: null,
      meta: { agent: 'x' },
      step_hash: b.step_hash,
    });
    assert.equal(await j.get(2), null);
    assert.equal((await j.verify()).ok, true);
  });
  test('concurrent appends get contiguous seqs in call order', async () => {
    const j = await make().create('j');
    const results = await Promise.all(upTo(100).map((i) => j.append({ input: i })));
    assert.deepEqual(
      results.map((r) => r.seq),
      upTo(100),
    );
    assert.deepEqual(
      (await all(j.read())).map((s) => s.input),
      upTo(100),
    );
    assert.equal((await j.verify()).ok, true);
  });
  test('appendMany commits all or none', async () => {
    const j = await make().create('j');
    await j.append({ input: 'first', step_id: 'taken' });
    const withSeq = [{ input: 1 }, { input: 2, seq: 5 } as never, { input: 3 }];
    assert.equal(await code(j.appendMany(withSeq)), 'FIELD_NOT_ALLOWED');
    const conflicting = [{ input: 1 }, { input: 'different', step_id: 'taken' }];
    assert.equal(await code(j.appendMany(conflicting)), 'STEP_ID_CONFLICT');
    assert.equal((await j.head())!.seq, 0);
    const rs = await j.appendMany([{ input: 1 }, { input: 2 }, { input: 3 }]);
    assert.deepEqual(
      rs.map((r) => r.seq),
      [1, 2, 3],
    );
    assert.equal(rs[1]!.prev_hash, rs[0]!.step_hash);
    assert.deepEqual(await j.appendMany([]), []);
  });
  test('a failing call in a group commit does not fail its neighbours', async () => {
    const j = await make().create('j');
    await j.append({ input: 0, step_id: 'dup' });
    const outcomes = await Promise.allSettled([
      j.append({ input: 1 }),
      j.append({ input: 'other', step_id: 'dup' }),
      j.appendMany([{ input: 2 }, { input: 3 }]),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(
      (await all(j.read())).map((s) => s.input),
      [0, 1, 2, 3],
    );
  });
  test("the result carries the ts as committed: the store's clock, the caller's, or a repeat's original", async () => {
    const j = await make().create('j');
    const a = await j.append({ input: 'a', step_id: 'a-1' });
    assert.equal(a.ts, (await j.get(0))!.ts);
    const b = await j.append({ input: 'b', ts: '2026-01-31T12:00:00.000Z' });
    assert.equal(b.ts, '2026-01-31T12:00:00.000Z');
    assert.equal((await j.append({ input: 'a', step_id: 'a-1' })).ts, a.ts);
  });
}

const REFUSED_STEPS: readonly (readonly [string, Record<string, unknown>, string])[] = [
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
];

function refusals({ test, make }: CaseContext): void {
  for (const field of ['v', 'seq', 'prev_hash', 'step_hash']) {
    test(`refuses a caller-supplied ${field} and appends nothing`, async () => {
      const j = await make().create('j');
      assert.equal(await code(j.append({ input: 1, [field]: 1 })), 'FIELD_NOT_ALLOWED');
      assert.equal(await j.head(), null);
    });
  }
  for (const [label, step, expected] of REFUSED_STEPS) {
    test(`refuses a step with a ${label}`, async () => {
      const j = await make().create('j');
      assert.equal(await code(j.append(step as never)), expected);
      assert.equal(await j.head(), null);
    });
  }
  test('read-only journals refuse appends', async () => {
    const store = make();
    await store.create('j');
    const ro = await store.open('j', { readOnly: true });
    assert.equal(ro.readOnly, true);
    assert.equal(await code(ro.append({ input: 1 })), 'READ_ONLY');
  });
  test('a closed journal refuses appends', async () => {
    const j = await make().create('j');
    await j.close();
    assert.equal(await code(j.append({ input: 1 })), 'CLOSED');
  });
}

function after({ test, make }: CaseContext): void {
  test('commits only while the chain ends at that seq; otherwise HEAD_MOVED and nothing is written', async () => {
    const j = await make().create('j');
    assert.equal((await j.append({ input: 0 }, { after: -1 })).seq, 0);
    assert.equal(await code(j.append({ input: 'stale' }, { after: -1 })), 'HEAD_MOVED');
    assert.equal(await code(j.appendMany([{ input: 'x' }, { input: 'y' }], { after: 5 })), 'HEAD_MOVED');
    assert.equal((await j.head())!.seq, 0);
    const rs = await j.appendMany([{ input: 1 }, { input: 2 }], { after: 0 });
    assert.deepEqual(
      rs.map((r) => r.seq),
      [1, 2],
    );
    assert.equal((await j.append({ input: 3 }, {})).seq, 3);
    assert.deepEqual(
      (await all(j.read())).map((s) => s.input),
      [0, 1, 2, 3],
    );
    assert.equal((await j.verify()).ok, true);
  });
  test('HEAD_MOVED is located at the seq the chain ends at, and names the seq asked for', async () => {
    const j = await make().create('j');
    await j.appendMany([{ input: 0 }, { input: 1 }]);
    const e = await rejection(j.append({ input: 2 }, { after: 0 }));
    assert.equal(e.code, 'HEAD_MOVED');
    assert.equal(e.location?.seq, 1);
    assert.match(e.message, /\bseq 0\b/);
  });
  test('two appends after the same seq at once: one commits, the other is HEAD_MOVED', async () => {
    const j = await make().create('j');
    await j.append({ input: 0 });
    const outcomes = await Promise.allSettled([
      j.append({ input: 'a' }, { after: 0 }),
      j.append({ input: 'b' }, { after: 0 }),
      j.append({ input: 'free' }),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.equal(((outcomes[1] as PromiseRejectedResult).reason as { code: string }).code, 'HEAD_MOVED');
    assert.deepEqual(
      (await all(j.read())).map((s) => s.input),
      [0, 'a', 'free'],
    );
  });
  test("another instance's append (another process) moves the head", async () => {
    const store = make();
    const j = await store.create('j');
    await j.append({ input: 0 });
    const other = await store.open('j');
    await other.append({ input: 'other' });
    assert.equal(await code(j.append({ input: 'mine' }, { after: 0 })), 'HEAD_MOVED');
    assert.equal((await j.append({ input: 'mine' }, { after: 1 })).seq, 2);
    await other.close();
  });
  for (const options of [{ after: 1.5 }, { after: -2 }, { after: '0' }, '0']) {
    test(`refuses ${JSON.stringify(options)} with OPTION_INVALID`, async () => {
      const j = await make().create('j');
      assert.equal(await code(j.append({ input: 0 }, options as never)), 'OPTION_INVALID');
      assert.equal(await j.head(), null);
    });
  }
}

function retry({ test, make }: CaseContext): void {
  test('the same step_id with identical content returns the existing step and appends nothing', async () => {
    const store = make();
    const j = await store.create('j');
    const step = { step_id: 'call-1', input: { q: 'x' }, result: 'big'.repeat(1000), meta: { try: 1 } };
    const first = await j.append(step);
    await j.append({ input: 'between' });
    assert.deepEqual(await j.append(step), first);
    // A fresh instance (as after a crash) recognizes it too.
    const reopened = await store.open('j');
    assert.deepEqual(await reopened.append(step), first);
    // Concurrent retries in one batch: one step.
    const both = await Promise.all([
      j.append({ step_id: 'call-2', input: 2 }),
      j.append({ step_id: 'call-2', input: 2 }),
    ]);
    assert.deepEqual(both[0], both[1]);
    assert.equal((await j.head())!.seq, 2);
  });
  const changes: readonly (readonly [string, Record<string, unknown>])[] = [
    ['content', { input: { q: 'y' } }],
    ['meta', { input: { q: 'x' }, meta: { other: true } }],
    ['ts', { input: { q: 'x' }, ts: '2020-01-01T00:00:00.000Z' }],
  ];
  for (const [label, changed] of changes) {
    test(`the same step_id with different ${label} is STEP_ID_CONFLICT located at the step's seq`, async () => {
      const j = await make().create('j');
      await j.append({ step_id: 'call-1', input: { q: 'x' }, ts: '2026-01-01T00:00:00.000Z' });
      const e = await rejection(j.append({ step_id: 'call-1', ...changed }));
      assert.equal(e.code, 'STEP_ID_CONFLICT');
      hasMembers(e.location, { seq: 0, path: '/step_id' });
      assert.equal((await j.head())!.seq, 0);
    });
  }
  test('is guaranteed within the window of the last N steps', async () => {
    const j = await make({ idempotencyWindow: 5 }).create('j');
    const first = await j.append({ step_id: 'old', input: 1 });
    for (let i = 0; i < 4; i++) await j.append({ input: i });
    assert.deepEqual(await j.append({ step_id: 'old', input: 1 }), first); // seq 0 is the 5th most recent
    await j.append({ input: 'push it out' });
    const outside = await j.append({ step_id: 'old', input: 1 });
    assert.equal(outside.seq, 6); // past the window a retry is a new step (documented)
  });
}

export const writeCases: readonly CaseGroup[] = [
  ['FILE-STORE §3: ids', ids],
  ['FILE-STORE §9: appending', appending],
  ['FILE-STORE §9: what an append refuses', refusals],
  ['FILE-STORE §17: appending after a known seq (after)', after],
  ['FILE-STORE §10: idempotent retry', retry],
];
