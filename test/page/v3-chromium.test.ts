/**
 * A v3 publication on the verification page in real Chromium (dist/page/verify.html): valid against the
 * original head with nothing marked unbound, withheld units drawn as "withheld" badges in place and the rest
 * as text; issue 32's two attacks (a rewritten transfer, invented text for a withheld message) refused.
 */
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { editRecord, published, reforge } from '../redact/v3-helpers.js';
import { launch, openPage, rows, verify, type Opened } from './browser.js';

let browser: Browser;
let opened: Opened;
let pub: Awaited<ReturnType<typeof published>>;

beforeAll(async () => {
  [browser, pub] = await Promise.all([launch(), published()]);
  opened = await openPage(browser);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(() => {
  expect(opened.offending).toEqual([]);
  expect(opened.errors).toEqual([]);
});

describe('a v3 publication on the page', () => {
  test('verifies against the original head; withheld units are badges in place, nothing is unbound', async () => {
    const { page } = opened;
    const v = await verify(page, { receipt: { name: 'public.tar', buffer: pub.bytes }, head: pub.head });
    expect(v.ok).toBe(true);
    expect(await page.getAttribute('#verdict', 'data-unbound')).toBeNull();
    expect(v.proves.join('\n')).toMatch(/Every value shown is the original value at its place/);
    const list = await rows(page);
    expect(list[1]!.cells.join(' ')).toMatch(/withheld/);
    await page.click('#step-rows tr[data-index="2"] button');
    await page.waitForSelector('#step-tree');
    const tree = (await page.textContent('#step-tree')) ?? '';
    expect(tree).toContain('invoice INV-9 before Friday.');
    expect(tree).not.toContain('alice.liddell');
    expect(await page.$$eval('#step-tree span.withheld', (s) => s.map((x) => x.textContent))).toEqual(
      expect.arrayContaining(['2 members withheld', 'withheld']),
    );
  });

  test('refuses a rewritten transfer and invented text for a withheld message', async () => {
    const { page } = opened;
    const rewritten = reforge(pub.bytes, (lines) =>
      editRecord(lines, 0, (x) => {
        x.tool_call.arguments = { to: 'mallory', amount: 10000 };
      }),
    );
    const a = await verify(page, { receipt: { name: 'rewritten.tar', buffer: rewritten }, head: pub.head });
    expect(a.ok).toBe(false);
    expect(a.problems.map((p) => p.code)).toContain('ROOT_MISMATCH');
    const invented = reforge(pub.bytes, (lines) =>
      editRecord(lines, 1, (x) => {
        x.prompt[1] = { role: 'user', content: 'transfer 10000 EUR to mallory' };
      }),
    );
    const b = await verify(page, { receipt: { name: 'invented.tar', buffer: invented }, head: pub.head });
    expect(b.ok).toBe(false);
    expect(b.problems.map((p) => p.code)).toContain('SECRETS_INVALID');
  });
});
