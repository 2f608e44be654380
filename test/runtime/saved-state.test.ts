/**
 * The run state saved beside the chain (spec/FILE-STORE.md §19, issue 36): a Run opened on a file-store run
 * starts from it and folds only the records after it — the same state as folding the whole run, whatever
 * was appended, by whom, before or after it was saved — and ignores a saved state the chain does not
 * anchor. Verifying readers (resumeRun, `stepchain verify`) never read it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { FileStore, resumeRun, startRun, type Journal, type RunState } from '../../src/index.js';
import { Run } from '../../src/runtime.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-saved-state-');
let n = 0;

/** A state as plain data, maps and sets in their order, to compare two folds. */
const plain = (s: RunState): unknown =>
  JSON.parse(
    JSON.stringify({
      ...s,
      effects: [...s.effects],
      models: [...s.models],
      requested: [...s.requested],
      byKey: [...s.byKey],
      byCallId: [...s.byCallId],
      byIntent: [...s.byIntent],
    }),
  );

/** The journal, with a count of the records its `read` yields. */
function counting(journal: Journal): { journal: Journal; read: () => number } {
  let read = 0;
  const wrapped = new Proxy(journal, {
    get(target, key, receiver) {
      if (key === 'read') {
        return async function* (range?: Parameters<Journal['read']>[0]) {
          for await (const r of target.read(range)) {
            read++;
            yield r;
          }
        };
      }
      const v = Reflect.get(target, key, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { journal: wrapped, read: () => read };
}

describe('a Run starts from the saved state and folds only what follows it', () => {
  test('after 300 plain steps and a saved state, a new process-like open reads only the 3 records appended since', async () => {
    const store = new FileStore(join(root, `s${n++}`), { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    const e = await run.beginTool({ name: 'pay', args: { invoice: 'INV-1' }, idempotencyKey: 'INV-1' });
    await run.journal.appendMany(Array.from({ length: 300 }, (_, i) => ({ input: { i } })));
    await run.refresh();
    await run.close();
    const other = await store.open('r');
    await other.append({ input: 'a' });
    await other.append({ input: 'b' });
    await other.append({ input: 'c' });
    await other.close();
    const { journal, read } = counting(await store.open('r'));
    const reopened = Run.of(journal);
    expect((await reopened.pendingEffects()).map((p) => p.id)).toEqual([e.id]);
    expect(read()).toBe(3);
    const full = await Run.of(await store.open('r', { readOnly: true }), { savedState: false }).refresh();
    expect(plain(await reopened.refresh())).toEqual(plain(full));
    // The outcome of the pending effect repeats its start, from the saved state's in-flight starts.
    await reopened.endTool(e.id, { result: { paid: true } });
    await reopened.close();
    const after = await resumeRun(store, 'r', { readOnly: true });
    expect((await after.journal.verify()).ok).toBe(true);
    expect((await after.effects()).map((x) => [x.id, x.status, x.result])).toEqual([
      [e.id, 'completed', { paid: true }],
    ]);
    await after.close();
  });

  test('property: whatever is appended and saved when, the state from the saved one equals the state folded from every record', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.record({
              op: fc.constant('begin' as const),
              tool: fc.constantFrom('pay', 'mail', 'get'),
              arg: fc.integer({ min: 0, max: 3 }),
              key: fc.option(fc.constantFrom('k1', 'k2'), { nil: undefined }),
            }),
            fc.record({
              op: fc.constantFrom('end' as const, 'fail' as const, 'step' as const, 'save' as const, 'reopen' as const),
            }),
          ),
          { maxLength: 14 },
        ),
        async (ops) => {
          const store = new FileStore(join(root, `p${n++}`), { fsync: 'none' });
          let run = await startRun(store, { runId: 'r' });
          for (const o of ops) {
            if (o.op === 'begin')
              await run
                .beginTool({ name: o.tool, args: { n: o.arg }, ...(o.key ? { idempotencyKey: o.key } : {}) })
                .catch(() => undefined);
            else if (o.op === 'end' || o.op === 'fail') {
              const p = (await run.pendingEffects())[0];
              if (p !== undefined)
                await (o.op === 'end'
                  ? run.endTool(p.id, { result: { ok: 1 } })
                  : run.endTool(p.id, { error: new Error('x') }));
            } else if (o.op === 'step') await run.journal.append({ input: 'plain' });
            else if (o.op === 'save') await run.saveState();
            else {
              await run.close();
              run = Run.of(await store.open('r'));
            }
          }
          await run.close();
          const fromSaved = await Run.of(await store.open('r', { readOnly: true })).refresh();
          const fromRecords = await Run.of(await store.open('r', { readOnly: true }), { savedState: false }).refresh();
          expect(plain(fromSaved)).toEqual(plain(fromRecords));
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('a saved state the chain does not anchor is ignored', () => {
  async function savedRun(): Promise<{ store: FileStore; dir: string; pending: string }> {
    const dir = join(root, `t${n++}`);
    const store = new FileStore(dir, { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    const e = await run.beginTool({ name: 'pay', args: { invoice: 'INV-2' } });
    await run.close();
    return { store, dir, pending: e.id };
  }

  test.each([
    [
      'another step hash (the chain was rewritten after it was saved)',
      (t: string) => t.replace(/"step_hash":"sha256:[0-9a-f]{4}/, '"step_hash":"sha256:0000'),
    ],
    ['a seq past the head', (t: string) => t.replace(/"seq":\d+/, '"seq":99')],
    ['another run id', (t: string) => t.replace('"run_id":"r"', '"run_id":"x"')],
    ['not JSON', () => '{"v":1,'],
    [
      'members of the wrong type',
      (t: string) => t.replace('"effects":[', '"effects":{"a":[').replace('],"models"', ']},"models"'),
    ],
  ])('%s: the run is folded from its records', async (_label, edit) => {
    const { store, dir, pending } = await savedRun();
    const file = join(dir, 'r', '.run-state.json');
    const saved = readFileSync(file, 'utf8');
    // An edit that hides the pending effect: read, it would let the effect begin again.
    writeFileSync(file, edit(saved.replace(/"status":"started"/, '"status":"completed"')));
    const { journal, read } = counting(await store.open('r', { readOnly: true }));
    expect((await Run.of(journal).pendingEffects()).map((p) => p.id)).toEqual([pending]);
    expect(read()).toBe(2);
  });

  test('verifying readers never read it: resumeRun and `verify` see the pending effect a forged saved state hides', async () => {
    const { store, dir, pending } = await savedRun();
    const file = join(dir, 'r', '.run-state.json');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"status":"started"/, '"status":"completed"'));
    // Anchored by the right step hash, so a Run opened without verifying reads it (FILE-STORE §19 says what that trusts).
    expect(await Run.of(await store.open('r', { readOnly: true })).pendingEffects()).toEqual([]);
    const resumed = await resumeRun(store, 'r', { readOnly: true });
    expect((await resumed.pendingEffects()).map((p) => p.id)).toEqual([pending]);
    expect((await resumed.journal.verify()).ok).toBe(true);
    await resumed.close();
  });

  test('a read-only Run never writes one', async () => {
    const dir = join(root, `ro${n++}`);
    const store = new FileStore(dir, { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    await run.journal.close();
    const ro = Run.of(await store.open('r', { readOnly: true }));
    await ro.refresh();
    await ro.saveState();
    await ro.close();
    expect(() => readFileSync(join(dir, 'r', '.run-state.json'))).toThrow(/ENOENT/);
  });
});

describe('beginning an effect reads the approval ledger only when the run holds an approval record (issue 45)', () => {
  test('a stepchain/v3 run of 300 steps with a saved state: a new Run begins an effect reading only the records since it', async () => {
    const store = new FileStore(join(root, `a${n++}`), { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    await run.journal.appendMany(Array.from({ length: 300 }, (_, i) => ({ input: { i } })));
    await run.refresh();
    await run.close();
    expect(JSON.parse(readFileSync(join(root, `a${n - 1}`, 'r', '.run-state.json'), 'utf8')).approval_records).toBe(0);
    const { journal, read } = counting(await store.open('r'));
    const reopened = Run.of(journal);
    await reopened.beginTool({ name: 'pay', args: { invoice: 'INV-2' } });
    // Before: the whole chain (301 records) was read for the ledger at every begin of a new process.
    expect(read()).toBe(0);
    await reopened.close();
  });

  test('a request recorded by another process after the saved state is honoured: the same call is refused until granted', async () => {
    const store = new FileStore(join(root, `a${n++}`), { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    await run.journal.appendMany(Array.from({ length: 20 }, (_, i) => ({ input: { i } })));
    await run.close();
    const asker = Run.of(await store.open('r'));
    const request = await asker.requestApproval({ name: 'pay', args: { invoice: 'INV-3' } });
    await asker.close();
    // A saved state from before the request: the new Run folds the request after it, then reads the ledger.
    const stale = JSON.parse(readFileSync(join(root, `a${n - 1}`, 'r', '.run-state.json'), 'utf8'));
    expect(stale.approval_records).toBe(1);
    const reopened = Run.of(await store.open('r'));
    await expect(reopened.beginTool({ name: 'pay', args: { invoice: 'INV-3' } })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    await expect(reopened.beginTool({ name: 'pay', args: { invoice: 'other' } })).resolves.toBeDefined();
    await reopened.close();
    expect(request.id).toBeTypeOf('string');
  });

  test('a request another writer appends while a Run holds a saved state with none is seen at the retry after HEAD_MOVED', async () => {
    const store = new FileStore(join(root, `a${n++}`), { fsync: 'none' });
    const run = await startRun(store, { runId: 'r' });
    await run.journal.appendMany(Array.from({ length: 20 }, (_, i) => ({ input: { i } })));
    await run.close();
    const first = Run.of(await store.open('r'));
    await first.beginTool({ name: 'mail', args: { to: 'a' } }); // caught up, no ledger read: none is needed
    const asker = Run.of(await store.open('r'));
    await asker.requestApproval({ name: 'pay', args: { invoice: 'INV-4' } });
    await asker.close();
    await expect(first.beginTool({ name: 'pay', args: { invoice: 'INV-4' } })).rejects.toMatchObject({
      code: 'APPROVAL_REQUIRED',
    });
    await first.close();
  });

  test('a saved state from before the count (no approval_records member) is used, the ledger read once and the count saved', async () => {
    const store = new FileStore(join(root, `a${n++}`), { fsync: 'none' });
    const dir = join(root, `a${n - 1}`, 'r');
    const run = await startRun(store, { runId: 'r' });
    await run.journal.appendMany(Array.from({ length: 50 }, (_, i) => ({ input: { i } })));
    await run.refresh();
    await run.close();
    const saved = JSON.parse(readFileSync(join(dir, '.run-state.json'), 'utf8'));
    delete saved.approval_records;
    writeFileSync(join(dir, '.run-state.json'), JSON.stringify(saved));
    const first = counting(await store.open('r'));
    const a = Run.of(first.journal);
    await a.beginTool({ name: 'pay', args: { invoice: 'INV-5' } });
    expect(first.read()).toBe(51);
    await a.close();
    expect(JSON.parse(readFileSync(join(dir, '.run-state.json'), 'utf8')).approval_records).toBe(0);
    const second = counting(await store.open('r'));
    const b = Run.of(second.journal);
    await b.beginTool({ name: 'pay', args: { invoice: 'INV-6' } });
    expect(second.read()).toBe(0);
    await b.close();
  });
});
