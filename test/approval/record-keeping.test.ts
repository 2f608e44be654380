/** The Art. 12 view names the approvers of a v3 journal's approval records as the persons involved (issue 39). */
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runRecordKeeping } from '../../src/attest/record-keeping.js';
import { startRun } from '../../src/runtime/start.js';
import { FileStore } from '../../src/store/file/store.js';
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
const view = async (journal: Journal, approvers?: Array<{ key: Uint8Array; name?: string }>) => {
  const report = await journal.verify(approvers ? { approvers } : {});
  expect(report.ok).toBe(true);
  return runRecordKeeping(journal.genesis as never, journal.read() as never, true, report.approvals);
};

describe('record-keeping --profile art12: persons involved', () => {
  it('lists each approver once, with their decisions; pinned names are authenticated', async () => {
    const { run } = await v3Run(fresh());
    const a = await run.requestApproval({ name: 'pay_invoice', args: { invoice: 'INV-9' } });
    await run.decideApproval(a, 'granted', { key: alice.privateKey, name: 'alice' });
    const b = await run.requestApproval({ name: 'send_mail', args: { to: 'bob' } });
    await run.decideApproval(b, 'denied', { key: mallory.privateKey, name: 'the boss' });
    const c = await run.requestApproval({ name: 'pay_invoice', args: { invoice: 'INV-10' } });
    await run.decideApproval(c, 'granted', { key: alice.privateKey, name: 'alice' });
    await run.requestApproval({ name: 'undecided' });
    const unpinned = (await view(run.journal)).persons_involved;
    expect(
      unpinned.persons.map((p) => [p.name, p.authenticated, p.decisions.map((d) => `${d.tool}:${d.decision}`)]),
    ).toEqual([
      ['alice', false, ['pay_invoice:granted', 'pay_invoice:granted']],
      ['the boss', false, ['send_mail:denied']],
    ]);
    expect(unpinned.source).toMatch(/2 approvers' names are their own claim/);
    const pinned = (
      await view(run.journal, [
        { key: alice.publicKey, name: 'Alice Liddell' },
        { key: mallory.publicKey, name: 'Mallory' },
      ])
    ).persons_involved;
    expect(pinned.persons.map((p) => [p.name, p.keyid, p.authenticated])).toEqual([
      ['Alice Liddell', alice.keyId, true],
      ['Mallory', mallory.keyId, true],
    ]);
    expect(pinned.source).toMatch(/every key was pinned/);
    await run.journal.close();
  });

  it('a v2 journal names no person and says why', async () => {
    const run = await startRun(new FileStore(fresh()), { runId: 'old', input: null, format: 'stepchain/v2' });
    const p = (await view(run.journal)).persons_involved;
    expect(p.persons).toEqual([]);
    expect(p.source).toMatch(/only in stepchain\/v3 journals; this one is stepchain\/v2/);
    await run.journal.close();
  });
});
