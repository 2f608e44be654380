/**
 * The page's line hashes (issue 45): in its worker the page hashes each batch of lines with the 4-lane
 * WebAssembly SIMD kernel (its CSP admits 'wasm-unsafe-eval' for that alone); where WebAssembly is refused —
 * the same page with 'wasm-unsafe-eval' taken out of its CSP — the portable batch does the work. Both must give
 * the same report, byte for byte, on intact and tampered receipts, including a tampered line inside a batch of
 * thousands (the kernel groups lines four to an entry by block count).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { exportReceipt } from '../../src/receipt/index.js';
import { tempDir } from '../helpers/tmp.js';
import { launch, openPage, pageHtml, reportJson, verify, type Opened } from './browser.js';
import { agentReceipts, largeRun, type AgentReceipts } from './fixtures.js';

const dir = tempDir('stepchain-page-hash-');
let browser: Browser;
let f: AgentReceipts;
let run: string;
let forged: string;

beforeAll(async () => {
  run = join(dir, 'run.tar');
  [browser, f] = await Promise.all([launch(), agentReceipts(dir), exportReceipt(largeRun(3000), { out: run })]);
  // One stored step_hash edited in the middle of the run: its line no longer hashes to it, and the next line's link breaks.
  const tar = readFileSync(run);
  const line = tar.indexOf('"seq":1777,');
  const at = tar.indexOf('"step_hash":"sha256:', line) + '"step_hash":"sha256:'.length;
  if (line < 0 || at < line) throw new Error('the fixture run has no step 1777');
  const copy = Buffer.from(tar);
  copy[at] = copy[at] === 0x30 ? 0x31 : 0x30;
  forged = join(dir, 'run-forged.tar');
  writeFileSync(forged, copy);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

async function reports(o: Opened): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const path of [f.unsigned, f.tampered, f.signed, run, forged]) {
    const v = await verify(o.page, {
      receipt: { name: path.slice(path.lastIndexOf('/') + 1), buffer: readFileSync(path) },
    });
    out.push({
      shown: v,
      json: await reportJson(o.page),
      lineHash: await o.page.evaluate(() => document.body.dataset.lineHash),
      entryHash: await o.page.evaluate(() => document.body.dataset.entryHash),
    });
  }
  return out;
}

test('the page gives the same verdicts with the WebAssembly kernel and with the portable fallback', async () => {
  const kernel = await openPage(browser);
  const html = pageHtml();
  expect(html).toContain(" 'wasm-unsafe-eval'");
  const path = join(dir, 'no-wasm.html');
  writeFileSync(path, html.replace(" 'wasm-unsafe-eval'", ''));
  const portable = await openPage(browser, pathToFileURL(path).href);
  try {
    expect(await kernel.page.evaluate(() => document.body.dataset.engine)).toBe('worker');
    expect(await portable.page.evaluate(() => document.body.dataset.engine)).toBe('worker');
    const a = await reports(kernel);
    const b = await reports(portable);
    // Which engine hashed: the kernel where the CSP allows it, the portable batch where it refuses it.
    expect(a.map((r) => (r as { lineHash: string }).lineHash)).toEqual(Array(5).fill('wasm-simd-4'));
    expect(b.map((r) => (r as { lineHash: string }).lineHash)).toEqual(Array(5).fill('@noble/hashes'));
    // Both pages digest the chain entries on their second worker (entry-hasher.ts), tampered entries included.
    for (const r of [...a, ...b]) expect((r as { entryHash: string }).entryHash).toBe('second worker');
    const strip = (rs: unknown[]) =>
      rs.map((r) => {
        const { lineHash: _, ...rest } = r as { lineHash: string };
        return rest;
      });
    expect(strip(b)).toEqual(strip(a));
    // And the verdicts are the expected ones, not merely equal.
    const codes = (r: unknown) =>
      (r as { shown: { problems: Array<{ code: string }> } }).shown.problems.map((p) => p.code);
    expect(a.map((r) => (r as { shown: { ok: boolean } }).shown.ok)).toEqual([true, false, true, true, false]);
    expect(codes(a[1])).toEqual(['DIGEST_MISMATCH', 'HASH_MISMATCH']);
    expect(codes(a[4])).toContain('HASH_MISMATCH');
    expect(codes(a[4])).toContain('DIGEST_MISMATCH');
    const located = (
      a[4] as { json: { report: { problems: Array<{ code: string; location: { seq?: number } }> } } }
    ).json.report.problems.find((p) => p.code === 'HASH_MISMATCH');
    expect(located?.location.seq).toBe(1777);
    for (const o of [kernel, portable]) {
      expect(o.offending).toEqual([]);
      expect(o.errors).toEqual([]);
    }
  } finally {
    await kernel.context.close();
    await portable.context.close();
  }
}, 240_000);

test('a hashing worker that fails stops the verification with its reason, and the page never waits on it', async () => {
  const o = await openPage(browser);
  const receipt = { name: 'run.tar', buffer: readFileSync(run) };
  try {
    // The page's thread starts the verifying worker, then the hashing worker (client.ts).
    const workers = o.page.workers();
    expect(workers).toHaveLength(2);
    const before = await verify(o.page, { receipt });
    expect(before.ok).toBe(true);
    expect(await o.page.evaluate(() => document.body.dataset.entryHash)).toBe('second worker');
    // An uncaught error in the hashing worker: its `error` event reaches the page's thread, which stops both.
    await workers[1]!.evaluate(() => {
      setTimeout(() => {
        throw new Error('the hashing worker breaks (test)');
      }, 0);
    });
    // A verification already under way when the event arrives may still finish; the next one cannot start.
    let after = await verify(o.page, { receipt });
    if (after.state !== 'error') after = await verify(o.page, { receipt });
    expect(after.state).toBe('error');
    expect(after.ok).toBeNull();
    expect(after.headline).toContain('the hashing worker stopped (');
    expect(after.headline).toContain('the hashing worker breaks (test)');
    expect(after.headline).toContain('reload the page and verify again');
    // And it stays stopped: no verdict from a page whose workers are gone.
    expect((await verify(o.page, { receipt })).state).toBe('error');
    expect(o.offending).toEqual([]);
  } finally {
    await o.context.close();
  }
}, 240_000);
