import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { RuntimeError } from '../../src/runtime/errors.js';
import { startRun } from '../../src/runtime/start.js';
import { FileStore } from '../../src/store/file/store.js';
import { alice, mallory, tempDir, v3Run } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const dir = (): string => {
  const d = tempDir();
  dirs.push(d);
  return d;
};
const code = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'resolved',
    (e: unknown) => (e instanceof RuntimeError ? e.code : String(e)),
  );
const pay = { name: 'pay_invoice', args: { invoice: 'INV-9', amount: 120 } };

describe('approvals in the runtime (spec/APPROVALS.md §4)', () => {
  it('a granted call runs once, names its request, and the journal verifies naming the approver', async () => {
    const { run } = await v3Run(dir());
    const req = await run.requestApproval(pay);
    expect(await code(run.beginTool({ ...pay, approval: req }))).toBe('APPROVAL_PENDING');
    expect(await code(run.beginTool(pay))).toBe('APPROVAL_REQUIRED');
    const decided = await run.decideApproval(req, 'granted', {
      key: alice.privateKey,
      name: 'alice',
      reason: 'invoice checked',
    });
    expect(decided).toMatchObject({
      status: 'granted',
      request: req.id,
      approver: { keyid: alice.keyId, name: 'alice', pinned: false },
    });
    expect(await run.awaitApproval(req)).toMatchObject({ status: 'granted' });
    expect(await code(run.beginTool({ ...pay, args: { invoice: 'INV-9', amount: 1200 }, approval: req }))).toBe(
      'APPROVAL_MISMATCH',
    );
    const effect = await run.beginTool({ ...pay, approval: req });
    await effect.complete({ paid: true });
    expect(await code(run.beginTool({ ...pay, approval: req }))).toBe('APPROVAL_USED');
    expect(await code(run.decideApproval(req, 'denied', { key: alice.privateKey }))).toBe('APPROVAL_DECIDED');
    const report = await run.journal.verify();
    expect(report.problems).toEqual([]);
    expect(report.approvals).toEqual([
      expect.objectContaining({
        request: req.id,
        status: 'granted',
        tool: 'pay_invoice',
        approver: { keyid: alice.keyId, name: 'alice', pinned: false },
        effect: effect.id,
        reason: 'invoice checked',
      }),
    ]);
    expect(report.warnings.map((w) => w.code)).toContain('APPROVER_UNPINNED');
    const pinned = await run.journal.verify({ approvers: [{ key: alice.publicKey, name: 'Alice Liddell' }] });
    expect(pinned.ok).toBe(true);
    expect(pinned.approvals![0]!.approver).toEqual({ keyid: alice.keyId, name: 'Alice Liddell', pinned: true });
    const wrong = await run.journal.verify({ approvers: [{ key: mallory.publicKey }] });
    expect(wrong.problems.map((p) => p.code)).toEqual(['APPROVER_UNKNOWN']);
    await run.journal.close();
  });

  it('denied and expired requests refuse the effect', async () => {
    const { run } = await v3Run(dir());
    const denied = await run.requestApproval(pay);
    await run.decideApproval(denied, 'denied', { key: alice.privateKey, reason: 'duplicate invoice' });
    expect(await run.awaitApproval(denied.id)).toMatchObject({ status: 'denied', reason: 'duplicate invoice' });
    expect(await code(run.beginTool({ ...pay, approval: denied }))).toBe('APPROVAL_DENIED');
    const expiring = await run.requestApproval(
      { name: 'send_mail', args: { to: 'x' } },
      { expiresAt: new Date(Date.now() + 30) },
    );
    expect(await run.awaitApproval(expiring, { pollMs: 10 })).toMatchObject({ status: 'expired', seq: null });
    expect(await code(run.decideApproval(expiring, 'granted', { key: alice.privateKey }))).toBe('APPROVAL_EXPIRED');
    expect(await code(run.beginTool({ name: 'send_mail', args: { to: 'x' }, approval: expiring }))).toBe(
      'APPROVAL_EXPIRED',
    );
    const ac = new AbortController();
    const waiting = run.awaitApproval(await run.requestApproval({ name: 'other' }), { signal: ac.signal, pollMs: 5 });
    ac.abort(new Error('stopped'));
    await expect(waiting).rejects.toThrow('stopped');
    expect((await run.journal.verify()).ok).toBe(true);
    await run.journal.close();
  });

  it('a v2 run refuses every approval call (APPROVAL_FORMAT)', async () => {
    const run = await startRun(new FileStore(dir()), { runId: 'old', input: null, format: 'stepchain/v2' });
    expect(await code(run.requestApproval(pay))).toBe('APPROVAL_FORMAT');
    expect(await code(run.approvals())).toBe('APPROVAL_FORMAT');
    expect(await code(run.awaitApproval('x'))).toBe('APPROVAL_FORMAT');
    expect(await code(run.beginTool({ ...pay, approval: 'x' }))).toBe('APPROVAL_FORMAT');
    await run.journal.close();
  });
  // A name that long would be stored as a part in a journal of the least part threshold, where the verifier finds
  // no name (APPROVALS.md §2): refused at the writer, nothing appended, rather than an invalid journal.
  it("a tool's name of 256 bytes or more as JSON text is refused at the request, and nothing is appended", async () => {
    const { store, run } = await v3Run(dir());
    const reader = await store.open('r1', { readOnly: true });
    const before = (await reader.head())!.seq;
    for (const name of ['t'.repeat(254), 'é'.repeat(127), 'x'.repeat(2000)]) {
      const e = await run.requestApproval({ name, args: {} }).catch((err: unknown) => err);
      expect(e).toMatchObject({ code: 'APPROVAL_INVALID' });
      expect(String((e as Error).message)).toMatch(/input\.presented\.name is \d+ bytes as JSON text; .* under 256/);
    }
    const fits = await run.requestApproval({ name: 't'.repeat(253), args: {} });
    expect(fits.seq).toBe(before + 1);
    await run.close();
    expect((await reader.verify()).ok).toBe(true);
    await reader.close();
  });
});
