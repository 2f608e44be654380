/**
 * Issue 32 on the verification page, in real Chromium: the outsider's forgeries of a real default journal's
 * publication (made and published with the built CLI, test/redact/outsider.ts). A withheld prompt replaced
 * by invented text beside a kept marker still verifies — and the page shows it as NOT bound to the head: the
 * verdict is not green, a box lists the unbound places, the step list badges the cell, the opened step badges
 * the value, and no statement says every disclosed value is the original. The marker-less rewrite of a
 * disclosed value is refused, as on the CLI. STEPCHAIN_PAGE_UNDER_TEST=<verify.html> runs it against
 * another build (how it was shown to fail before the fix).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import {
  INVENTED,
  asView,
  marker,
  publishedRun,
  read,
  rewrite,
  sortDeclarations,
  withheldAsView,
  type Published,
} from '../redact/outsider.js';
import { launch, openPage, reportJson, rows, verify, type FileSpec, type Opened } from './browser.js';

const dir = tempDir('stepchain-page-unbound-');
const url = process.env.STEPCHAIN_PAGE_UNDER_TEST
  ? pathToFileURL(process.env.STEPCHAIN_PAGE_UNDER_TEST).href
  : undefined;

let browser: Browser;
let opened: Opened;
let pub: Published;

beforeAll(async () => {
  [browser, pub] = await Promise.all([launch(), publishedRun(dir)]);
  opened = await openPage(browser, url);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(() => {
  expect(opened.offending).toEqual([]);
  expect(opened.errors).toEqual([]);
});

const spec = (name: string, bytes: Uint8Array): FileSpec => {
  writeFileSync(join(dir, name), bytes);
  return { name, buffer: bytes };
};
const BLANKET = /every disclosed value is the original/i;

describe('a withheld prompt replaced by invented text beside a kept marker', () => {
  test('verifies, and the page shows it as NOT bound: amber verdict, the places listed, the cell and the value badged', async () => {
    const forged = rewrite(read(pub.receipt), {
      record: (r, seq) => seq === 1 && withheldAsView(r, 'prompt', [INVENTED, marker('prompts')]),
      manifest: (m) => {
        m.redactions = m.redactions.map((d) => (d.seq === 1 && d.path === '/prompt' ? { ...d, path: '/prompt/1' } : d));
        sortDeclarations(m);
      },
    });
    const { page } = opened;
    const v = await verify(page, { receipt: spec('forged.tar.gz', forged), head: pub.head });
    expect(v.ok).toBe(true);
    expect([...v.proves, ...v.doesNotProve].join('\n')).not.toMatch(BLANKET);
    expect(
      v.doesNotProve.some((s) =>
        /^That the text of the 2 redacted views \(seq 1 \/prompt and seq 2 \/input\) is the original: it is NOT bound to the head/.test(
          s,
        ),
      ),
    ).toBe(true);
    // Not green: the verdict says how many values are unbound and is drawn in the warning colour.
    expect(await page.getAttribute('#verdict', 'data-unbound')).toBe('2');
    const colours = await page.evaluate(() => {
      const css = (el: Element | null) => (el ? getComputedStyle(el).borderTopColor : '');
      return {
        verdict: css(document.getElementById('verdict')),
        ok: getComputedStyle(document.documentElement).getPropertyValue('--ok').trim(),
      };
    });
    expect(colours.verdict).not.toBe('rgb(11, 107, 46)'); // --ok, #0b6b2e
    expect(await page.textContent('#unbound')).toMatch(
      /Not bound to the head: 2 values.*seq 1 \/prompt — redacted view.*seq 2 \/input — redacted view/s,
    );
    // The step list: the prompt cell of step 1 carries the badge before the invented text, and its class.
    const list = await rows(page);
    expect(list[1]!.cells[4]).toMatch(new RegExp(`^not bound.*${INVENTED}`));
    expect(await page.$eval('#step-rows tr[data-index="1"] td:nth-child(5)', (td) => td.className)).toBe('unbound');
    expect(await page.$eval('#step-rows tr[data-index="0"] td:nth-child(5)', (td) => td.className)).toBe('');
    // The opened step: the view's value is wrapped and badged, with a sentence that it is not bound.
    await page.click('#step-rows tr[data-index="1"] button');
    await page.waitForSelector('#step-tree');
    expect(await page.textContent('.unbound-note')).toMatch(
      /^prompt is a redacted view: the text shown is NOT bound to the head/,
    );
    expect(await page.$eval('#step-tree span.unbound[data-slot="prompt"]', (s) => s.textContent)).toMatch(
      new RegExp(`^not bound.*${INVENTED}`, 's'),
    );
    // The JSON view carries the report's places, as `stepchain verify --json` does.
    const json = await reportJson(page);
    expect(json.report.unbound).toEqual([
      { seq: 1, field: 'prompt', path: '/prompt', why: 'view' },
      { seq: 2, field: 'input', path: '/input', why: 'view' },
    ]);
  });
});

describe('a disclosed value rewritten as a marker-less view', () => {
  test('is refused: VIEW_INVALID at seq 0, tool_call', async () => {
    const forged = rewrite(read(pub.receipt), {
      record: (r, seq) =>
        seq === 0 && asView(r, 'tool_call', { name: 'transfer', arguments: { to: 'mallory', amount: 10000 } }),
    });
    const v = await verify(opened.page, { receipt: spec('rewritten.tar.gz', forged), head: pub.head });
    expect(v.ok).toBe(false);
    expect(v.problems.map((p) => p.code)).toEqual(['VIEW_INVALID']);
    expect(v.problems[0]!.location).toMatch(/seq 0/);
  });
});

describe("the publisher's own receipt", () => {
  test('the price beside the redacted e-mail address is badged as not bound; disclosed cells are not', async () => {
    const { page } = opened;
    const v = await verify(page, { receipt: { name: 'public.tar.gz', buffer: read(pub.receipt) }, head: pub.head });
    expect(v.ok).toBe(true);
    expect(await page.getAttribute('#verdict', 'data-unbound')).toBe('1');
    expect(await page.$$eval('#step-rows td.unbound', (tds) => tds.length)).toBe(0); // input is not a column of the list
    await page.click('#step-rows tr[data-index="2"] button');
    await page.waitForSelector('#step-tree');
    expect(await page.$eval('#step-tree span.unbound[data-slot="input"]', (s) => s.textContent)).toMatch(
      /^not bound.*"price": 59/s,
    );
    expect(await page.$$eval('#step-tree span.unbound', (s) => s.length)).toBe(1);
  });
});
