/**
 * Approval records attacked as an outsider would (spec/APPROVALS.md §3, §5): someone who can append to the
 * journal, or rewrite it whole, but does not hold the approver's key. A forged signature, a grant replayed
 * onto another request, a denial stored as a grant, presented arguments edited after the grant with the
 * chain rebuilt around them: each is refused by the runtime (the effect does not begin) and found by verify.
 * Then properties (fast-check): hostile decision records never make the verifier throw nor count as a
 * grant, and an effect matches its grant exactly when its call is canonically the presented one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import fc from 'fast-check';
import { ApprovalLedger } from '../../src/approval/ledger.js';
import { approvalStatement } from '../../src/approval/records.js';
import { signApproval } from '../../src/approval/sign.js';
import { RuntimeError } from '../../src/runtime/errors.js';
import { Run } from '../../src/runtime/run.js';
import { isDeepStrictEqual } from 'node:util';
import type { Journal } from '../../src/store/types.js';
import { alice, mallory, tempDir, v3Run } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
const code = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof RuntimeError ? e.code : String(e)),
  );
const problems = async (j: Journal): Promise<string[]> =>
  (await j.verify()).problems.map((p) => `${p.code}@${p.location.seq}`);
const PAY = { name: 'pay_invoice', args: { invoice: 'INV-9', amount: 120 } };
const recordAt = async (j: Journal, seq: number) => (await j.get(seq))! as unknown as Record<string, any>;

describe("an outsider without the approver's key", () => {
  it('forges a signature: the decision does not count, the effect is refused, verify says APPROVAL_INVALID', async () => {
    const { run } = await v3Run(fresh());
    const req = await run.requestApproval(PAY);
    const statement = approvalStatement(req, 'granted', { decidedAt: new Date() });
    const real = signApproval(statement, alice.privateKey, 'alice');
    const forged = { ...real, signature: Buffer.from(new Uint8Array(64).fill(1)).toString('base64') };
    const at = await run.journal.append({
      kind: 'approval.granted',
      ref: req.id,
      ts: statement.decided_at,
      input: statement as never,
      meta: forged as never,
    });
    const agent = Run.of(run.journal);
    expect(await code(agent.beginTool({ ...PAY, approval: req.id }))).toBe('APPROVAL_PENDING');
    expect(await problems(run.journal)).toEqual([`APPROVAL_INVALID@${at.seq}`]);
    // Mallory signs with her own key under alice's name: the signature holds for her key only, which no pin names.
    const hers = signApproval(statement, mallory.privateKey, 'alice');
    const second = await run.journal.append({
      kind: 'approval.granted',
      ref: req.id,
      ts: statement.decided_at,
      input: statement as never,
      meta: hers as never,
    });
    const pinned = await run.journal.verify({ approvers: [{ key: alice.publicKey, name: 'alice' }] });
    expect(pinned.problems.map((p) => `${p.code}@${p.location.seq}`)).toEqual([
      `APPROVAL_INVALID@${at.seq}`,
      `APPROVER_UNKNOWN@${second.seq}`,
    ]);
    expect(pinned.approvals![0]!.approver).toEqual({ keyid: mallory.keyId, name: 'alice', pinned: false });
    await run.journal.close();
  });

  it('replays a real grant onto another request, or stores a denial as a grant: refused and found', async () => {
    const { run } = await v3Run(fresh());
    const a = await run.requestApproval(PAY);
    const grantA = await run.decideApproval(a, 'granted', { key: alice.privateKey });
    const b = await run.requestApproval(PAY);
    const copied = await recordAt(run.journal, grantA.seq!);
    const replay = await run.journal.append({
      kind: 'approval.granted',
      ref: b.id,
      ts: copied.ts,
      input: copied.input,
      meta: copied.meta,
    });
    const c = await run.requestApproval({ name: 'delete_repo', args: { repo: 'prod' } });
    const denial = await run.decideApproval(c, 'denied', { key: alice.privateKey });
    const d = await recordAt(run.journal, denial.seq!);
    const flipped = await run.journal.append({
      kind: 'approval.granted',
      ref: c.id,
      ts: d.ts,
      input: d.input,
      meta: d.meta,
    });
    const agent = Run.of(run.journal);
    expect(await code(agent.beginTool({ ...PAY, approval: b }))).toBe('APPROVAL_PENDING');
    expect(await code(agent.beginTool({ name: 'delete_repo', args: { repo: 'prod' }, approval: c }))).toBe(
      'APPROVAL_DENIED',
    );
    expect(await problems(run.journal)).toEqual([`APPROVAL_INVALID@${replay.seq}`, `APPROVAL_INVALID@${flipped.seq}`]);
    // An outsider who begins the effect anyway, naming the request, is found too — also when worker threads
    // check the lines (the built pool, small batches), where an effect's line comes back packed, not flagged.
    const begun = await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: 'pay_invoice', arguments: PAY.args },
      meta: { approval: { request: b.id, request_hash: b.stepHash } },
    });
    const alone = await run.journal.verify();
    expect(alone.problems.map((p) => `${p.code}@${p.location.seq}`)).toContain(`APPROVAL_MISSING@${begun.seq}`);
    const { createLineCheckPool } = (await import(
      '../../dist/parallel/index.js' as string
    )) as typeof import('../../src/parallel/index.js');
    const pool = createLineCheckPool({ threads: 2, batchBytes: 700 });
    try {
      const threaded = await run.journal.verify({ pool });
      expect(threaded.problems).toEqual(alone.problems);
      expect(threaded.approvals).toEqual(alone.approvals);
    } finally {
      await pool.close();
    }
    await run.journal.close();
  });

  it('edits the presented arguments after the grant and rebuilds the whole chain: the grant no longer binds', async () => {
    const dir = fresh();
    const { run, store } = await v3Run(dir, 'orig');
    const req = await run.requestApproval(PAY);
    await run.decideApproval(req, 'granted', { key: alice.privateKey });
    await (await run.beginTool({ ...PAY, approval: req })).complete({ paid: true });
    expect((await run.journal.verify()).ok).toBe(true);
    // A new journal with the same genesis: every record copied, the request's (and the effect's) amount raised.
    const g = run.journal.genesis as unknown as Record<string, any>;
    const forged = await store.create('forged', {
      journalId: g.journal_id,
      createdAt: g.created_at,
      format: 'stepchain/v3',
      run: g.run,
    } as never);
    const raised = { invoice: 'INV-9', amount: 12000 };
    for await (const r of run.journal.read()) {
      const x = r as unknown as Record<string, any>;
      let input = x.input;
      let toolCall = x.tool_call;
      if (x.kind === 'approval.requested')
        input = {
          presented: { name: 'pay_invoice', arguments: raised },
          expires_at: null,
        };
      // The start and its completion alike (a completion carrying another call than its start's is a problem too).
      if (x.kind === 'tool.started' || x.kind === 'tool.completed') toolCall = { ...toolCall, arguments: raised };
      await forged.append({
        kind: x.kind,
        ref: x.ref,
        step_id: x.step_id,
        ts: x.ts,
        input,
        model: x.model,
        prompt: x.prompt,
        tool_call: toolCall,
        result: x.result,
        error: x.error,
        ...(x.meta === undefined ? {} : { meta: x.meta }),
      });
    }
    const report = await forged.verify();
    expect(report.problems.map((p) => p.code)).toEqual(['APPROVAL_INVALID', 'APPROVAL_MISMATCH']);
    expect(report.problems[0]!.message).toMatch(/request seq 1 sha256:[0-9a-f]{64}, but the request is seq 1 sha256:/);
    // The effect still names the original request's step hash, which the rebuilt request no longer has.
    expect(report.problems[1]!.message).toMatch(/names request .* with step hash/);
    await forged.close();
    await run.journal.close();
  });
});

describe('properties (fast-check)', () => {
  const G = 'sha256:' + '1'.repeat(64);
  const H = 'sha256:' + '2'.repeat(64);
  const request = (args: unknown) => ({
    seq: 0,
    step_id: 'req',
    step_hash: H,
    kind: 'approval.requested',
    ts: '2026-11-27T10:00:00.000Z',
    input: {
      presented: { name: 't', arguments: args },
      expires_at: null,
    },
  });
  const grant = () => {
    const s = approvalStatement({ id: 'req', seq: 0, stepHash: H, genesisHash: G }, 'granted', {
      decidedAt: new Date('2026-11-27T10:00:01.000Z'),
    });
    return {
      seq: 1,
      step_id: 'd',
      kind: 'approval.granted',
      ref: 'req',
      ts: s.decided_at,
      input: s,
      meta: signApproval(s, alice.privateKey),
    };
  };
  const json = fc.jsonValue({ maxDepth: 3 });

  /** The same JSON value with every object's members in reverse order (JCS sorts them back). */
  const reordered = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(reordered)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.keys(v)
              .reverse()
              .map((k) => [k, reordered((v as Record<string, unknown>)[k])]),
          )
        : v;
  const asJson = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? 'null');

  it('an effect matches its grant exactly when its arguments are the presented JSON value (member order aside)', () => {
    fc.assert(
      fc.property(json, json, fc.constantFrom('same', 'reordered', 'other'), (presented, other, mode) => {
        const executed = mode === 'same' ? presented : mode === 'reordered' ? reordered(presented) : other;
        const ledger = new ApprovalLedger({ genesisHash: G });
        ledger.record(request(presented));
        ledger.record(grant());
        ledger.record({
          seq: 2,
          step_id: 'e',
          kind: 'tool.started',
          ts: '2026-11-27T10:00:02.000Z',
          tool_call: { name: 't', arguments: executed },
          meta: { approval: { request: 'req', request_hash: H } },
        });
        const equal = isDeepStrictEqual(asJson(presented), asJson(executed));
        expect(ledger.finish().map((f) => f.code)).toEqual(
          equal ? ['APPROVER_UNPINNED'] : ['APPROVAL_MISMATCH', 'APPROVER_UNPINNED'],
        );
      }),
      { numRuns: 80 },
    );
  });

  it('a hostile decision never throws and never counts as a grant', () => {
    const hostile = fc.record(
      {
        ref: fc.oneof(fc.constant('req'), fc.string()),
        ts: fc.string(),
        input: fc.oneof(json, fc.constant(grant().input)),
        meta: fc.oneof(json, fc.record({ approver: json, signature: fc.string() })),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(hostile, (d) => {
        const ledger = new ApprovalLedger({ genesisHash: G });
        ledger.record(request({}));
        ledger.record({ seq: 1, step_id: 'd', kind: 'approval.granted', ...d });
        expect(ledger.state('req')!.status).toBe('pending');
        expect(() => ledger.finish()).not.toThrow();
      }),
      { numRuns: 200 },
    );
  });
});
