/**
 * Outsider 4's approval findings on the verifier's and the runtime's side (issue 39), kept as attacks (each
 * failed on the code before the fix). In-process: a file store, the runtime and the chain verifier.
 * - 4.sh: a denied call ran through beginTool with its arguments given as JSON text ('{"pin":"4821"}', the
 *   shape of OpenAI-style tool calls), and verify said "never executed": arguments given as the JSON text of
 *   an object now compare as that object (APPROVALS.md §5 step 3), in the runtime and in verify.
 * - 1.sh: an invented `model.*` kind was exempt from the comparison; only model.started/completed/failed are.
 * - 10.sh: an outcome whose ref is the denied request itself ran its call: APPROVAL_MISSING.
 * - 8.sh: erasing a request's expires_at hid an expired effect: the expiry check is now APPROVAL_UNCHECKED.
 * - 5.sh: an expires_at naming no real instant (30 February) was accepted by append and by verify.
 */
import { describe, expect, it } from 'vitest';
import { instant } from '../../src/approval/records.js';
import { eraseValue } from '../../src/erase/store.js';
import { receiptBytes } from '../../src/receipt/node.js';
import { verifyReceipt } from '../../src/verifier/index.js';
import { alice, v3Run } from '../approval/helpers.js';
import { approvalWorld, seen } from '../helpers/attack-world.js';

const { dir, decided } = approvalWorld();
const denied = () => decided('denied');

describe('approval attacks from outsider 4: the verifier and the runtime', () => {
  it('4.sh: a denied call given with its arguments as JSON text is refused by beginTool and is APPROVAL_MISSING in verify', async () => {
    const { run } = await denied();
    for (const args of ['{"pin":"4821"}', ' { "pin" : "4821" }\n', '{"pin":"0000","pin":"4821"}']) {
      await expect(run.beginTool({ name: 'unlock', args })).rejects.toMatchObject({ code: 'APPROVAL_DENIED' });
    }
    // Written by hand: the verifier compares it as the object its text holds.
    const e = await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'unlock', arguments: '{"pin":"4821"}' },
    });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISSING@${e.seq}`]);
    expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: e.seq });
    // Text that is not an object's JSON stays text: a different call, still run and reported by nothing.
    const other = await run.beginTool({ name: 'unlock', args: '"{\\"pin\\":\\"4821\\"}"' });
    await other.complete({ unlocked: false });
    expect((await seen(run.journal)).problems).toEqual([`APPROVAL_MISSING@${e.seq}`]);
  });

  it('4.sh: a call of a denied request\'s tool with an added member leaves the request unchecked, never "never executed"', async () => {
    const { run } = await denied();
    const e = await run.beginTool({ name: 'unlock', args: { pin: '4821', _: null } });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([]);
    expect(v.notices).toContain(`APPROVAL_UNCHECKED@${e.seq}`);
    expect(v.messages.some((m) => m.includes('"unlock"') && m.includes('"req-1"'))).toBe(true);
    expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
    // Another tool leaves it proven.
    const { run: other } = await denied();
    await other.beginTool({ name: 'lookup', args: { pin: '4821' } });
    expect((await seen(other.journal)).entries[0]).not.toHaveProperty('unchecked');
  });

  it('4.sh: a request presenting arguments as JSON text is matched by the same call given as an object, before the request too', async () => {
    const { run } = await v3Run(dir());
    const early = await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'unlock', arguments: { pin: '4821' } },
    });
    const req = await run.requestApproval({ name: 'unlock', args: '{"pin":"4821"}' }, { id: 'req-1' });
    await run.decideApproval(req.id, 'denied', { key: alice.privateKey, name: 'alice' });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISSING@${early.seq}`]);
    expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: early.seq });
  });

  it('1.sh: a record of an invented model.* kind carrying the denied call ran it; model.completed still runs nothing', async () => {
    const { run } = await denied();
    const model = await run.beginModel({ model: 'm', input: 'unlock it' });
    await model.complete({ toolCalls: [{ id: 'c1', name: 'unlock', arguments: { pin: '4821' } }], result: 'call it' });
    expect((await seen(run.journal)).problems).toEqual([]);
    const e = await run.journal.append({
      kind: 'model.tool_executed',
      tool_call: { name: 'unlock', arguments: { pin: '4821' } },
      result: { unlocked: true },
    });
    const v = await seen(run.journal);
    expect(v.problems).toEqual([`APPROVAL_MISSING@${e.seq}`]);
    expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: e.seq });
  });

  it('10.sh: an outcome whose ref is the denied request itself says its call ran: APPROVAL_MISSING, the effect', async () => {
    for (const kind of ['tool.completed', 'tool.failed', 'tool.updated']) {
      const { run } = await denied();
      const e = await run.journal.append(
        (kind === 'tool.failed'
          ? { kind, ref: 'req-1', error: { message: 'jammed' } }
          : { kind, ref: 'req-1', result: { unlocked: true } }) as never,
      );
      const v = await seen(run.journal);
      expect(v.problems).toContain(`APPROVAL_MISSING@${e.seq}`);
      expect(v.entries[0]).toMatchObject({ status: 'denied', effect_seq: e.seq });
    }
  });

  it("8.sh: erasing an expired request's expires_at leaves the expiry APPROVAL_UNCHECKED, never a clean verdict", async () => {
    const { store, run } = await v3Run(dir());
    const now = Date.now();
    const req = await run.requestApproval(
      { name: 'pay', args: { eur: 5 } },
      { id: 'req-2', expiresAt: new Date(now + 60_000) },
    );
    await run.decideApproval(req.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const e = await run.journal.append({
      kind: 'tool.started',
      ts: new Date(now + 120_000),
      tool_call: { name: 'pay', arguments: { eur: 5 } },
      meta: { approval: { request: req.id, request_hash: req.stepHash } },
    });
    expect((await seen(run.journal)).problems).toEqual([`APPROVAL_EXPIRED@${e.seq}`]);
    await eraseValue(store, run.runId, { seq: req.seq, path: '/input/expires_at', reason: 'housekeeping' });
    const v = await seen(await store.open(run.runId));
    expect(v.problems).toEqual([]);
    expect(v.notices).toContain(`APPROVAL_UNCHECKED@${e.seq}`);
    expect(v.messages.some((m) => m.includes('expires_at') && m.includes('"req-2"'))).toBe(true);
    expect(v.entries[0]).toMatchObject({ unchecked: true });

    // An erased argument leaves the expiry in hand: it is still checked, and still a problem.
    const other = await v3Run(dir());
    const r2 = await other.run.requestApproval(
      { name: 'pay', args: { eur: 5 } },
      { expiresAt: new Date(now + 60_000) },
    );
    await other.run.decideApproval(r2.id, 'granted', { key: alice.privateKey, name: 'alice' });
    const e2 = await other.run.journal.append({
      kind: 'tool.started',
      ts: new Date(now + 120_000),
      tool_call: { name: 'pay', arguments: { eur: 5 } },
      meta: { approval: { request: r2.id, request_hash: r2.stepHash } },
    });
    await eraseValue(other.store, other.run.runId, {
      seq: r2.seq,
      path: '/input/presented/arguments/eur',
      reason: 'x',
    });
    expect((await seen(await other.store.open(other.run.runId))).problems).toEqual([`APPROVAL_EXPIRED@${e2.seq}`]);
  });

  it('5.sh: an expires_at naming no real instant is refused by append and is APPROVAL_INVALID in verify', async () => {
    const { run } = await v3Run(dir());
    await expect(
      run.journal.append({
        kind: 'approval.requested',
        step_id: 'req-2',
        input: { presented: { name: 'pay', arguments: { eur: 5000 } }, expires_at: '2027-02-30T10:00:00.000Z' },
      } as never),
    ).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    await expect(
      run.journal.append({
        kind: 'approval.requested',
        step_id: 'req-3',
        input: { presented: { name: 'pay', arguments: { eur: 5000 } }, expires_at: '2027-02-28T10:00:00.5Z' },
      } as never),
    ).resolves.toMatchObject({ step_id: 'req-3' });
    // The verifier's reading (a journal written before this check): no real instant, so not a request's input.
    for (const bad of ['2027-02-30T10:00:00.000Z', '2027-01-01T24:00:00Z', '2026-12-31T23:59:60Z'])
      expect(instant(bad)).toBeNull();
    expect(instant('2028-02-29T10:00:00.123456789Z')).toBe(Date.parse('2028-02-29T10:00:00.123Z'));
  });
  it('9.sh: a receipt ending before the journal does never says a denied request was never executed', async () => {
    const { run, req } = await denied();
    await run.journal.append({ kind: 'tool.started', tool_call: { name: 'unlock', arguments: { pin: '4821' } } });
    const r = await verifyReceipt(await receiptBytes(run.journal, { to: req.seq + 1 }), {
      approvers: [{ key: alice.publicKey, name: 'alice' }],
    });
    expect(r.ok).toBe(true);
    expect(r.approvals?.[0]).toMatchObject({ status: 'denied', effect_seq: null, unchecked: true });
  });
});
