// `npm run screenshots`: renders the built verification page (dist/page/verify.html) in the npm-shipped
// Chromium with two receipts of the demo's travel-agent run and writes the PNGs the README shows:
//   docs/page-verified.png  a signed, published (redacted) receipt with the signer's key pinned, a step opened;
//   docs/page-tampered.png  the signed receipt with one character of a tool result changed;
//   docs/verdict-{authenticated,intact,invalid}-{desktop,phone}.png  the three verdicts (spec/RECEIPT.md §8.1)
//     as the page shows them right after Verify, at 1280 px and on a 390 px phone: the signed receipt with its
//     key pinned, the same receipt with nothing pinned, and the tampered one.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { ensureChromium, launchOptions } from './chromium.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const lib = await import(pathToFileURL(join(root, 'dist/index.js')).href);
const { publish } = await import(pathToFileURL(join(root, 'dist/publish.js')).href);
const { agentRun, DEMO_POLICY } = await import(pathToFileURL(join(root, 'dist/demo/agent.js')).href);

const work = await mkdtemp(join(tmpdir(), 'stepchain-screenshots-'));
const browser = await chromium.launch(launchOptions(await ensureChromium()));
try {
  const journal = await new lib.MemoryStore().create('trip');
  await journal.appendMany(agentRun());
  const keys = await lib.keygen(join(work, 'alice.key'));
  const signed = join(work, 'trip.tar.gz');
  await lib.exportReceipt(journal, { out: signed, sign: { keyFile: keys.keyFile } });
  const published = join(work, 'trip-public.tar.gz');
  await publish(journal, { policy: DEMO_POLICY, optIn: true, out: published, sign: { keyFile: keys.keyFile } });
  const tar = gunzipSync(await readFile(signed));
  const at = tar.indexOf('"forecast":"sunny"');
  tar.write('"forecast":"snowy"', at, 'latin1');
  const tampered = join(work, 'trip-tampered.tar');
  await writeFile(tampered, tar);

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, serviceWorkers: 'block' });
  await context.route(
    (u) => !/^(file|blob):/.test(u.href),
    (route) => route.abort('blockedbyclient'),
  );
  const page = await context.newPage();
  await page.goto(pathToFileURL(join(root, 'dist/page/verify.html')).href);
  await page.waitForFunction(() => document.body.dataset.state === 'idle');

  const shoot = async (receipt, name, after) => {
    await page.locator('#form').evaluate((form) => form.reset());
    await page.setInputFiles('#receipt', receipt);
    await page.setInputFiles('#pubkey', keys.publicKeyFile);
    await page.click('#verify');
    await page.waitForFunction(() => document.body.dataset.state === 'done');
    await after();
    await page.evaluate(() => window.scrollTo(0, 0));
    const out = join(root, 'docs', name);
    await page.screenshot({ path: out, fullPage: true });
    console.error(`wrote ${out}`);
  };
  await shoot(published, 'page-verified.png', async () => {
    await page.click('#step-rows tr:nth-child(3) button');
    await page.waitForSelector('#step-tree');
  });
  await shoot(tampered, 'page-tampered.png', async () => {});

  // The three verdicts, as the auditor sees them when Verify returns (the verdict has focus and is in view).
  for (const [device, viewport] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844 }],
  ]) {
    const ctx = await browser.newContext({
      viewport,
      serviceWorkers: 'block',
      deviceScaleFactor: device === 'phone' ? 2 : 1,
    });
    await ctx.route(
      (u) => !/^(file|blob):/.test(u.href),
      (route) => route.abort('blockedbyclient'),
    );
    const view = await ctx.newPage();
    await view.goto(pathToFileURL(join(root, 'dist/page/verify.html')).href);
    await view.waitForFunction(() => document.body.dataset.state === 'idle');
    for (const [verdict, receipt, pinned] of [
      ['authenticated', signed, true],
      ['intact', signed, false],
      ['invalid', tampered, true],
    ]) {
      await view.locator('#form').evaluate((form) => form.reset());
      await view.setInputFiles('#receipt', receipt);
      await view.setInputFiles('#pubkey', pinned ? keys.publicKeyFile : []);
      await view.click('#verify');
      await view.waitForFunction(() => document.body.dataset.state === 'done');
      const out = join(root, 'docs', `verdict-${verdict}-${device}.png`);
      await view.screenshot({ path: out });
      console.error(`wrote ${out}`);
    }
    await ctx.close();
  }
  await journal.close();
} finally {
  await browser.close();
  await rm(work, { recursive: true, force: true });
}
