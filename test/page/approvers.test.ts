/**
 * Approver pins on the verification page in real Chromium (dist/page/verify.html), as `stepchain verify
 * --approver KEY` (spec/APPROVALS.md §5, §6): a receipt whose grant alice signed names her "(pinned)" when her
 * key file is given, "calling itself … (unpinned, self-named)" when none is, and fails with APPROVER_UNKNOWN
 * when only another key is pinned; each sentence is the CLI's verdict line for the same report. A key file that
 * is not a key, or the same key twice, is an error on the field and nothing is verified.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { approvalLines } from '../../src/cli/verbs/approve-lines.js';
import type { Output } from '../../src/cli/output.js';
import { exportReceipt } from '../../src/receipt/node.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import { alice, mallory, tempDir, v3Run } from '../approval/helpers.js';
import { launch, openPage, verify, type Opened } from './browser.js';

let browser: Browser;
let opened: Opened;
let receipt: Buffer;
let dir: string;
const pub = (name: string, key: Uint8Array) => ({ name, buffer: Buffer.from(Buffer.from(key).toString('base64')) });
const plain = { style: (_s: string, t: string) => t } as unknown as Output;

beforeAll(async () => {
  dir = tempDir();
  const { run } = await v3Run(dir);
  const req = await run.requestApproval({ name: 'pay_invoice', args: { invoice: 'INV-9' } }, { id: 'req-1' });
  await run.decideApproval(req, 'granted', { key: alice.privateKey, name: 'alice' });
  await (await run.beginTool({ name: 'pay_invoice', args: { invoice: 'INV-9' }, approval: req })).complete({});
  const out = join(dir, 'r.tar');
  await exportReceipt(run.journal, { out });
  await run.close();
  receipt = readFileSync(out);
  browser = await launch();
  opened = await openPage(browser);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(() => {
  expect(opened.offending).toEqual([]);
  expect(opened.errors).toEqual([]);
});

/** The page's approval sentences, and the CLI's verdict lines (less the leading word) for the same pins. */
async function both(approvers: Array<{ key: Uint8Array; name: string }>) {
  const page = await opened.page.$$eval('#approvals li', (lis) =>
    lis.map((li) => (li.textContent ?? '').slice((li.querySelector('.tag')?.textContent ?? '').length)),
  );
  const report = await verifyReceipt(receipt, approvers.length ? { approvers } : {});
  const cli = approvalLines(plain, report.approvals).map((l) => l.replace(/^\s+\S+\s+/, ''));
  return { page, cli };
}

describe('approver pins on the page', () => {
  test('pinned, self-named, and another key pinned: the CLI verdict, sentence for sentence', async () => {
    const { page } = opened;
    const pinned = await verify(page, {
      receipt: { name: 'r.tar', buffer: receipt },
      approvers: [pub('alice.pub', alice.publicKey)],
    });
    expect(pinned.ok).toBe(true);
    const a = await both([{ key: alice.publicKey, name: 'alice' }]);
    expect(a.page).toEqual(a.cli);
    expect(a.page[0]).toContain('by "alice" (pinned) at seq');

    const unpinned = await verify(page, { receipt: { name: 'r.tar', buffer: receipt } });
    expect(unpinned.ok).toBe(true);
    const u = await both([]);
    expect(u.page).toEqual(u.cli);
    expect(u.page[0]).toContain('calling itself "alice" (unpinned, self-named)');

    const other = await verify(page, {
      receipt: { name: 'r.tar', buffer: receipt },
      approvers: [pub('mallory.key.pub', mallory.publicKey)],
    });
    expect(other.ok).toBe(false);
    expect(other.problems.map((p) => p.code)).toEqual(['APPROVER_UNKNOWN']);
    const o = await both([{ key: mallory.publicKey, name: 'mallory' }]);
    expect(o.page).toEqual(o.cli);
  });

  test('a file that is not a key, or the same key twice, is an error on the field', async () => {
    const { page } = opened;
    const bad = await verify(page, {
      receipt: { name: 'r.tar', buffer: receipt },
      approvers: [{ name: 'notes.txt', buffer: Buffer.from('not a key') }],
    });
    expect(bad.state).toBe('error');
    expect(bad.fieldErrors.approvers).toMatch(/approver key notes\.txt/);
    const twice = await verify(page, {
      receipt: { name: 'r.tar', buffer: receipt },
      approvers: [pub('alice.pub', alice.publicKey), pub('alice2.pub', alice.publicKey)],
    });
    expect(twice.state).toBe('error');
    expect(twice.fieldErrors.approvers).toMatch(/the same key is given twice/);
  });
});
