/**
 * Outsider 6's approval findings (issue 39), kept as attacks; each failed on the code before the fix. The rules
 * are APPROVALS.md §5 steps 3–5; all run in process (the verifier and runtime library are at fault, not the CLI).
 * - 8.sh: JSON-text arguments were compared after JSON.parse, which rounds …993 to …992: a grant of account …992
 *   let the runtime begin, and the verifier certify, a transfer to …993.
 * - 1.sh: a denied call inside a message wrapper (OpenAI Chat assistant message, Anthropic content, LangChain
 *   AIMessage, `{"call": …}`, the OpenAI shape with its own `name`) was not compared.
 * - 3.sh: an outcome of a granted start carrying the denied tool with no comparable arguments gave no notice.
 * - 7.sh: a tool.started with tool_call null and its call in `input` was ignored.
 * - 4.sh: verifyReceipt read `require: new Map(…)` as "no requirements".
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { receiptBytes } from '../../src/receipt/node.js';
import { verifyReceipt } from '../../src/verifier/index.js';
import { exactNumber, numbersExact } from '../../src/canonical/exact-numbers.js';
import type { ApprovalRequest } from '../../src/runtime/approvals.js';
import type { Run } from '../../src/runtime/run.js';
import { alice, v3Run } from '../approval/helpers.js';
import { approvalWorld, seen } from '../helpers/attack-world.js';

const { dir } = approvalWorld();

/** A run with `pay {amount:120}` granted and `unlock {pin:"4821"}` denied (outsider 6's two-requests.mjs). */
const twoRequests = async () => {
  const { run } = await v3Run(dir());
  const pay = await run.requestApproval({ name: 'pay', args: { amount: 120 } }, { id: 'req-pay' });
  await run.decideApproval(pay.id, 'granted', { key: alice.privateKey, name: 'alice' });
  const unlock = await run.requestApproval({ name: 'unlock', args: { pin: '4821' } }, { id: 'req-unlock' });
  await run.decideApproval(unlock.id, 'denied', { key: alice.privateKey, name: 'alice' });
  return { run, pay, unlock };
};
/** The granted pay call begun (step e1) under its approval, written past the runtime. */
const payStarted = (run: Run, pay: ApprovalRequest) =>
  run.journal.append({
    kind: 'tool.started',
    step_id: 'e1',
    tool_call: { name: 'pay', arguments: { amount: 120 } },
    meta: { approval: { request: pay.id, request_hash: pay.stepHash } },
  });
const entryOf = (v: Awaited<ReturnType<typeof seen>>, id: string) => v.entries.find((e) => e.request === id);

describe('approval attacks from outsider 6', () => {
  it('8.sh: text arguments whose numbers JSON.parse rounds are compared as text, by the runtime and the verifier', async () => {
    const { run } = await v3Run(dir());
    const granted = '{"to_account":9007199254740992,"eur":5000}';
    const req = await run.requestApproval({ name: 'transfer', args: granted }, { id: 'req-1' });
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const other = '{"to_account":9007199254740993,"eur":5000}';
    await expect(run.beginTool({ name: 'transfer', args: other, approval: req })).rejects.toMatchObject({
      code: 'APPROVAL_MISMATCH',
    });
    // Written past the runtime: the verifier finds the same.
    const e = await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'transfer', arguments: other },
      meta: { approval: { request: req.id, request_hash: req.stepHash } },
    });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISMATCH@${e.seq}`]);
  });

  it('8.sh: the exact text still runs, and exact numbers still compare by value with an object', async () => {
    const { run } = await v3Run(dir());
    const text = '{"to_account":9007199254740992,"eur":5000}';
    const a = await run.requestApproval({ name: 'transfer', args: text }, { id: 'req-1' });
    await run.decideApproval(a.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const b = await run.requestApproval({ name: 'pay', args: '{ "amount": 0.1, "n": 1.0e2 }' }, { id: 'req-2' });
    await run.decideApproval(b.id, 'granted', { key: alice.privateKey, name: 'alice' });
    await (await run.beginTool({ name: 'transfer', args: text, approval: a })).complete({ ok: true });
    await (await run.beginTool({ name: 'pay', args: { amount: 0.1, n: 100 }, approval: b })).complete({ ok: true });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.entries.map((x) => x.effect_seq)).toEqual([5, 7]);
  });

  it('8.sh: a number is exact when its text denotes the value of the shortest text of its double', () => {
    const table: Array<[string, boolean]> = [
      ['0', true],
      ['-0', true],
      ['1.0', true],
      ['0.1', true],
      ['-12.50', true],
      ['2.5E+3', true],
      ['9007199254740991', true],
      ['9007199254740992', false],
      ['9007199254740993', false],
      ['0.10000000000000001', false],
      ['1e400', false],
      ['1e-400', false],
    ];
    for (const [t, exact] of table) expect(exactNumber(t), t).toBe(exact);
    expect(numbersExact('{"a":"9007199254740993","b":[1,-2.5,{"c":3e-7}]}')).toBe(true);
    expect(numbersExact('{"a":[1,{"b":9007199254740993}]}')).toBe(false);
    // Every double's own shortest text is exact, unless an integer past ±(2^53−1).
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (d) => {
        const unsafe = Number.isInteger(d) && Math.abs(d) > Number.MAX_SAFE_INTEGER;
        return exactNumber(JSON.stringify(d)) === !unsafe;
      }),
    );
  });

  it('1.sh: a denied call inside a message wrapper is compared (APPROVAL_MISSING, "executed")', async () => {
    const args = '{"pin":"4821"}';
    const wrappers = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'unlock', arguments: args } }],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'unlock', input: { pin: '4821' } }] },
      { type: 'ai', content: '', tool_calls: [{ name: 'unlock', args: { pin: '4821' }, id: 'c1' }] },
      { call: { name: 'unlock', arguments: { pin: '4821' } } },
      { name: 'x', type: 'function', function: { name: 'unlock', arguments: args } },
    ];
    for (const tool_call of wrappers) {
      const { run } = await twoRequests();
      const s = await run.journal.append({ kind: 'step', tool_call });
      const v = await seen(run.journal);
      expect(v.problems, JSON.stringify(tool_call)).toEqual([`APPROVAL_MISSING@${s.seq}`]);
      expect(entryOf(v, 'req-unlock')).toMatchObject({ effect_seq: s.seq });
    }
  });

  it("1.sh: a call's own arguments are values, not calls", async () => {
    const { run } = await twoRequests();
    await run.journal.append({
      kind: 'step',
      tool_call: { name: 'echo', arguments: { payload: { name: 'unlock', arguments: { pin: '4821' } } } },
    });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.notices.filter((n) => n.startsWith('APPROVAL_'))).toEqual([]);
  });

  it('3.sh: an outcome of a granted start carrying the denied tool without comparable arguments is the notice', async () => {
    for (const carried of [{ name: 'unlock', parameters: { pin: '4821' } }, { name: 'unlock' }]) {
      const { run, pay } = await twoRequests();
      await payStarted(run, pay);
      const o = await run.journal.append({ kind: 'tool.completed', ref: 'e1', tool_call: carried });
      const v = await seen(run.journal);
      expect(v.problems, JSON.stringify(carried)).toEqual([]);
      expect(v.notices).toContain(`APPROVAL_UNCHECKED@${o.seq}`);
      expect(entryOf(v, 'req-unlock')).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
      expect(entryOf(v, 'req-pay')).toMatchObject({ effect_seq: 5 });
    }
  });

  it("3.sh: an outcome repeating its start's tool without arguments stays quiet", async () => {
    const { run, pay } = await twoRequests();
    await payStarted(run, pay);
    await run.journal.append({ kind: 'tool.updated', ref: 'e1', tool_call: { name: 'pay' } });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.notices.filter((n) => n.startsWith('APPROVAL_UNCHECKED'))).toEqual([]);
  });

  it('7.sh: a tool.started with tool_call null is read for the call in its input, else is a call not in hand', async () => {
    const found = await twoRequests();
    const e = await found.run.journal.append({
      kind: 'tool.started',
      tool_call: null,
      input: { name: 'unlock', arguments: { pin: '4821' } },
    });
    const v = await seen(found.run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISSING@${e.seq}`]);
    expect(entryOf(v, 'req-unlock')).toMatchObject({ effect_seq: e.seq });

    const none = await twoRequests();
    const f = await none.run.journal.append({ kind: 'tool.started', tool_call: null, input: 'open the door' });
    const w = await seen(none.run.journal);
    expect(w.problems).toEqual([]);
    expect(w.notices).toContain(`APPROVAL_UNCHECKED@${f.seq}`);
    expect(entryOf(w, 'req-unlock')).toMatchObject({ effect_seq: null, unchecked: true });
  });

  it('4.sh: verifyReceipt refuses a require that is not a plain object of values (REQUIRE_INVALID)', async () => {
    const { run } = await v3Run(dir());
    await run.journal.append({ kind: 'step', input: 'x' });
    const bytes = await receiptBytes(run.journal, {});
    class Flags {
      authenticated = true;
    }
    const getter = Object.defineProperty({}, 'authenticated', { get: () => true, enumerable: true });
    for (const require of [new Map([['authenticated', true]]), new Flags(), getter]) {
      const r = await verifyReceipt(bytes, { require: require as never });
      expect(r.ok, String(require)).toBe(false);
      expect(r.problems.map((p) => p.code)).toContain('REQUIRE_INVALID');
    }
    expect((await verifyReceipt(bytes, { require: Object.create(null) as never })).ok).toBe(true);
  });
});
