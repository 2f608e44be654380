/**
 * The verification page's engine (the code its worker runs; Node here) on a receipt holding approval records:
 * the report names who approved what; a journal with a replayed grant is not exported at all.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Session } from '../../src/page/engine.js';
import { exportReceipt } from '../../src/receipt/node.js';
import { alice, tempDir, v3Run } from './helpers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the page engine on a receipt with approval records', () => {
  it('lists the approvals; a grant replayed onto another request stops the export', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { run } = await v3Run(dir);
    const a = await run.requestApproval({ name: 'pay_invoice', args: { invoice: 'INV-9' } });
    const grant = await run.decideApproval(a, 'granted', { key: alice.privateKey, name: 'alice' });
    await (
      await run.beginTool({ name: 'pay_invoice', args: { invoice: 'INV-9' }, approval: a })
    ).complete({ paid: true });
    const out = join(dir, 'r.tar');
    await exportReceipt(run.journal, { out });
    const session = new Session();
    const ok = await session.verify({ receipt: new Blob([readFileSync(out)]), name: 'r.tar' });
    expect(ok.report.ok).toBe(true);
    expect(ok.report.approvals).toEqual([
      expect.objectContaining({
        request: a.id,
        status: 'granted',
        tool: 'pay_invoice',
        approver: { keyid: alice.keyId, name: 'alice', pinned: false },
      }),
    ]);
    // The same grant copied onto a second request of the same call, then exported again.
    const b = await run.requestApproval({ name: 'pay_invoice', args: { invoice: 'INV-9' } });
    const g = (await run.journal.get(grant.seq!))! as unknown as Record<string, never>;
    await run.journal.append({ kind: 'approval.granted', ref: b.id, ts: g.ts, input: g.input, meta: g.meta });
    // Export verifies the chain first: no receipt is written for it.
    await expect(exportReceipt(run.journal, { out: join(dir, 'r2.tar') })).rejects.toThrow(
      /CHAIN_INVALID.*APPROVAL_INVALID/,
    );
    await run.journal.close();
  });
});
