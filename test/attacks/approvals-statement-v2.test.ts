/**
 * An outsider's attacks on approval records after statement v2 (spec/APPROVALS.md §2, §3, §3.1, §5 step 4):
 * guessing a withheld low-entropy argument from the request's digest, moving a statement between the two
 * statement types, stripping what binds the request, replaying a decision into another journal, and running
 * a call before presenting it so that its denial reads "never executed". Real runs in a file store, real keys,
 * a real publication; each attack is asserted to fail.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { publish } from '../../src/redact/node.js';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { signApproval } from '../../src/approval/sign.js';
import { LEGACY_APPROVAL_WRITER } from '../../src/store/prepare.js';
import { approvalLines } from '../../src/cli/verbs/approve-lines.js';
import type { Output } from '../../src/cli/output.js';
import { alice, v3Run } from '../approval/helpers.js';
import { approvalWorld } from '../helpers/attack-world.js';

const { dir: fresh } = approvalWorld();
const pins = [{ key: alice.publicKey, name: 'alice' }];
const plain = { style: (_s: string, t: string) => t } as unknown as Output;

describe('approval statement v2: attacks', () => {
  it('a PIN withheld from a publication cannot be guessed from anything the receipt shows', async () => {
    const dir = fresh();
    const { run, store } = await v3Run(dir);
    const call = { name: 'unlock_door', args: { door: 'D-2', pin: '4821' } };
    const req = await run.requestApproval(call);
    await run.decideApproval(req, 'granted', { key: alice.privateKey, name: 'alice' });
    await (await run.beginTool({ ...call, approval: req })).complete({ open: true });
    await run.close();
    const journal = await store.open('r1');
    const out = join(dir, 'public.tar.gz');
    const published = await publish(journal, {
      optIn: true,
      out,
      policy: { rules: [{ id: 'pin', paths: ['/input/presented/arguments/pin', '/tool_call/arguments/pin'] }] },
    });
    await journal.close();
    const report = await verifyPublishedReceipt(readFileSync(out), { expectHead: published.original_head.step_hash });
    expect(report.problems).toEqual([]);
    const text = gunzipSync(readFileSync(out)).toString('latin1');
    // As a JSON string, the only way the value itself is written: four digits alone also turn up by chance in
    // the receipt's random hex digests and base64 salts now and then, which would prove nothing.
    expect(text).not.toContain('"4821"');
    // The outsider's guess: every 4-digit PIN, hashed as APPROVALS.md §2.1's digest, looked for in the receipt.
    const found: string[] = [];
    for (let n = 0; n < 10_000; n++) {
      const pin = String(n).padStart(4, '0');
      const hex = createHash('sha256')
        .update(canonicalJson({ arguments: { door: 'D-2', pin }, name: 'unlock_door' }))
        .digest('hex');
      if (text.includes(hex)) found.push(pin);
    }
    expect(found).toEqual([]);
  });

  it('a v1 statement (with the digest) signed onto a request without one is refused, and the effect has no grant', async () => {
    const dir = fresh();
    const { run } = await v3Run(dir);
    const call = { name: 'pay_invoice', args: { amount: 120 } };
    const req = await run.requestApproval(call);
    const digest = `sha256:${createHash('sha256')
      .update(canonicalJson({ arguments: call.args, name: call.name }))
      .digest('hex')}`;
    const v1 = {
      decided_at: new Date().toISOString(),
      decision: 'granted',
      digest,
      genesis_hash: req.genesisHash,
      reason: null,
      request: req.id,
      request_hash: req.stepHash,
      request_seq: req.seq,
      type: 'stepchain-approval/v1',
    } as const;
    const meta = signApproval(v1, alice.privateKey, 'alice');
    // The writer refuses to record it...
    await expect(run.recordApprovalDecision(req, { input: v1 as never, meta })).rejects.toMatchObject({
      code: 'APPROVAL_INVALID',
    });
    // ...and one appended raw is no decision: the effect after it has no grant.
    const raw = { kind: 'approval.granted', ref: req.id, ts: v1.decided_at, input: v1, meta };
    await run.journal.append({ ...raw, [LEGACY_APPROVAL_WRITER]: true } as never);
    await run.journal.append({
      kind: 'tool.started',
      tool_call: { name: call.name, arguments: call.args },
      meta: { approval: { request: req.id, request_hash: req.stepHash } },
    } as never);
    const r = await run.journal.verify({ approvers: pins });
    expect(r.problems.map((p) => [p.code, p.location.seq, p.location.field])).toEqual([
      ['APPROVAL_INVALID', req.seq + 1, 'input'],
      ['APPROVAL_MISSING', req.seq + 2, 'meta'],
    ]);
    await run.close();
  });

  it('a v2 statement without request_hash, or relabelled v1, binds nothing', async () => {
    const dir = fresh();
    const { run } = await v3Run(dir);
    const req = await run.requestApproval({ name: 't', args: { x: 1 } });
    const full = {
      decided_at: new Date().toISOString(),
      decision: 'granted' as const,
      genesis_hash: req.genesisHash,
      reason: null,
      request: req.id,
      request_hash: req.stepHash,
      request_seq: req.seq,
      type: 'stepchain-approval/v2' as const,
    };
    const { request_hash: _gone, ...stripped } = full;
    await expect(
      run.recordApprovalDecision(req, {
        input: stripped as never,
        meta: signApproval(stripped as never, alice.privateKey),
      }),
    ).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    const relabelled = { ...full, type: 'stepchain-approval/v1', digest: `sha256:${'0'.repeat(64)}` };
    await expect(
      run.recordApprovalDecision(req, { input: relabelled as never, meta: signApproval(full, alice.privateKey) }),
    ).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    expect((await run.approvals())[0]!.status).toBe('pending');
    await run.close();
  });

  it('a grant replayed from another journal presenting the same call does not bind', async () => {
    const call = { name: 'pay_invoice', args: { amount: 120 } };
    const a = await v3Run(fresh(), 'a');
    const reqA = await a.run.requestApproval(call, { id: 'req-1' });
    await a.run.decideApproval(reqA, 'granted', { key: alice.privateKey, name: 'alice' });
    let grant: Record<string, unknown> | undefined;
    for await (const r of a.run.journal.read())
      if ((r as { kind?: unknown }).kind === 'approval.granted') grant = r as never;
    await a.run.close();
    const b = await v3Run(fresh(), 'b');
    const reqB = await b.run.requestApproval(call, { id: 'req-1' });
    await expect(
      b.run.recordApprovalDecision(reqB, { input: grant!.input as never, meta: grant!.meta as never }),
    ).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    await b.run.journal.append({
      kind: 'approval.granted',
      ref: 'req-1',
      ts: grant!.ts,
      input: grant!.input,
      meta: grant!.meta,
    } as never);
    await expect(b.run.beginTool({ ...call, approval: reqB })).rejects.toMatchObject({ code: 'APPROVAL_PENDING' });
    const r = await b.run.journal.verify({ approvers: pins });
    expect(r.problems.map((p) => p.code)).toEqual(['APPROVAL_INVALID']);
    expect(r.approvals![0]!.status).toBe('pending');
    await b.run.close();
  });

  it('a call run first and presented afterwards (then denied) is APPROVAL_MISSING, never "never executed"', async () => {
    const dir = fresh();
    const { run } = await v3Run(dir);
    const call = { name: 'wire_money', args: { to: 'mallory', eur: 9000 } };
    const early = await run.beginTool(call);
    await early.complete({ sent: true });
    const req = await run.requestApproval(call);
    await run.decideApproval(req, 'denied', { key: alice.privateKey, name: 'alice', reason: 'no' });
    const r = await run.journal.verify({ approvers: pins });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => [p.code, p.location.seq, p.location.field])).toEqual([
      ['APPROVAL_MISSING', early.seq, 'meta'],
    ]);
    expect(r.approvals![0]).toMatchObject({ status: 'denied', effect: early.id, effect_seq: early.seq });
    const line = approvalLines(plain, r.approvals)[0]!;
    expect(line).toContain(`executed at seq ${early.seq}`);
    expect(line).not.toContain('never executed');
    await run.close();
  });
});
