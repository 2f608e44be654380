/**
 * A 100 000-step receipt in the page: it verifies in the worker while the page keeps running (the progress
 * bar moves, timers keep firing), the step list stays at one page of rows in the DOM, and the last step can
 * be reached and opened. Times are measured and printed, never asserted (timing lives in bench/).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exportReceipt } from '../../src/receipt/index.js';
import { tempDir } from '../helpers/tmp.js';
import { launch, openPage, rows, shown } from './browser.js';
import { largeRun } from './fixtures.js';

const STEPS = 100_000;
const dir = tempDir('stepchain-page-large-');
let browser: Browser;
let receipt: string;
let built = 0;

beforeAll(async () => {
  const started = Date.now();
  receipt = join(dir, 'large.tar.gz');
  [browser] = await Promise.all([launch(), exportReceipt(largeRun(STEPS), { out: receipt })]);
  built = Date.now() - started;
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

test(`a ${STEPS.toLocaleString('en')}-step receipt verifies off the page's thread, with progress, and its list stays small`, async () => {
  const o = await openPage(browser);
  const { page } = o;
  await page.setInputFiles('#receipt', receipt);
  // Watch the page while it waits: how often its timers ran, and what the progress bar showed.
  await page.evaluate(() => {
    const w = window as unknown as { watch: { gaps: number[]; values: Set<number>; last: number; timer: number } };
    w.watch = { gaps: [], values: new Set(), last: performance.now(), timer: 0 };
    w.watch.timer = window.setInterval(() => {
      const now = performance.now();
      w.watch.gaps.push(now - w.watch.last);
      w.watch.last = now;
      w.watch.values.add((document.getElementById('progress') as HTMLProgressElement).value);
    }, 20);
  });
  const started = Date.now();
  await page.click('#verify');
  // The page's thread answers while the worker verifies.
  expect(await page.evaluate(() => document.body.dataset.state)).toBe('verifying');
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), null, {
    timeout: 240_000,
  });
  const elapsed = Date.now() - started;
  const watch = await page.evaluate(() => {
    const w = (window as unknown as { watch: { gaps: number[]; values: Set<number>; timer: number } }).watch;
    clearInterval(w.timer);
    return { maxGap: Math.max(...w.gaps), ticks: w.gaps.length, progress: [...w.values] };
  });
  const v = await shown(page);
  expect(v.ok).toBe(true);
  expect(v.headline).toMatch(
    new RegExp(
      `^⚠ intact, NOT authenticated receipt large\\.tar\\.gz: ${STEPS.toLocaleString('en')} steps, head sha256:[0-9a-f]{64} \\(seq ${STEPS - 1}\\)$`,
    ),
  );
  expect(await page.evaluate(() => document.body.dataset.engine)).toBe('worker');
  // The bar showed a value between empty and full (hashing 100 000 steps alone takes far longer than
  // the bar's 100 ms refresh, so this is no race).
  expect(watch.progress.filter((x) => x > 0 && x < statSync(receipt).size).length).toBeGreaterThan(0);

  // One page of rows in the DOM, whatever the receipt's size.
  expect(await page.$$eval('#step-rows tr', (trs) => trs.length)).toBe(50);
  expect(await page.textContent('#page-info')).toBe(
    `Steps 1–50 of ${STEPS.toLocaleString('en')} (page 1 of ${(STEPS / 50).toLocaleString('en')})`,
  );
  expect(await page.evaluate(() => document.getElementsByTagName('*').length)).toBeLessThan(2500);
  await page.click('#next');
  await page.waitForFunction(() => document.querySelector('#step-rows tr')?.getAttribute('data-index') === '50');
  expect((await rows(page))[0]!.cells[0]).toBe('50');

  const opening = Date.now();
  await page.fill('#goto', String(STEPS - 1));
  await page.click('#goto-btn');
  await page.waitForFunction(
    (seq) => document.getElementById('step-title')?.textContent?.startsWith(`Step ${seq} `),
    STEPS - 1,
  );
  const opened = Date.now() - opening;
  expect(await page.textContent('#step-tree')).toContain(`Step ${STEPS - 1}: decide the next action`);
  expect(await page.textContent('#page-info')).toBe(
    `Steps 99,951–100,000 of ${STEPS.toLocaleString('en')} (page 2,000 of 2,000)`,
  );
  expect(o.offending).toEqual([]);
  expect(o.errors).toEqual([]);

  const facts = await page.textContent('#facts');
  const kept = await page.$eval('#kept-note', (p) => ((p as HTMLElement).hidden ? '' : (p.textContent ?? '')));
  console.log(
    [
      `page: ${STEPS} steps, receipt ${(statSync(receipt).size / 1048576).toFixed(1)} MiB gzip (built in ${(built / 1000).toFixed(1)} s)`,
      `  verified in ${(elapsed / 1000).toFixed(2)} s from the click (${/verified in([^)]*\))/.exec(facts ?? '')?.[1]?.trim()} in the worker)`,
      `  page timers meanwhile: ${watch.ticks} ticks of 20 ms, longest gap ${watch.maxGap.toFixed(0)} ms; ${watch.progress.length} progress values`,
      `  last step found and opened in ${opened} ms${kept ? ` (${kept})` : ' (its text was kept in memory)'}`,
    ].join('\n'),
  );
}, 300_000);
