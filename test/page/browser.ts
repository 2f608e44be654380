/**
 * Driving the built verification page (dist/page/verify.html, the file the package ships) in a real
 * headless Chromium: launch, open the page with every request logged and every non-local one aborted,
 * set the inputs as an auditor would, press Verify, and read back what the page shows.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { launchOptions } from '../../scripts/chromium.mjs';

export const PAGE_FILE = fileURLToPath(new URL('../../dist/page/verify.html', import.meta.url));
export const PAGE_URL = pathToFileURL(PAGE_FILE).href;

/** Launches Chromium or throws why not: the page tests fail, loudly, when no browser can start. */
export async function launch(): Promise<Browser> {
  const c = inject('chromium');
  if (!c.path)
    throw new Error(
      `the page tests need Chromium (from the npm package @sparticuz/chromium), and it could not be prepared:\n${c.error}`,
    );
  try {
    return await chromium.launch(launchOptions(c.path));
  } catch (e) {
    throw new Error(`Chromium (${c.path}) did not start: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export interface Opened {
  page: Page;
  context: BrowserContext;
  /** Every request the browser made, pages and workers included, in order. */
  requests: string[];
  /** Requests to anything but the page file itself and the blob: URL of its worker; each was aborted. */
  offending: string[];
  /** Errors thrown by the page's scripts, and console errors. */
  errors: string[];
}

/** The only requests the page may make: its own file, and the blob: URL it starts its worker from. */
export const allowed = (url: string, page = PAGE_URL): boolean =>
  url === page || /^blob:null\/[0-9a-f-]{36}$/.test(url);

/** Opens the page (or another file:// page) with a request log and every other request aborted. */
export async function openPage(
  browser: Browser,
  url = PAGE_URL,
  options: { viewport?: { width: number; height: number } } = {},
): Promise<Opened> {
  const context = await browser.newContext({
    serviceWorkers: 'block',
    viewport: options.viewport ?? { width: 1280, height: 900 },
  });
  const requests: string[] = [];
  const offending: string[] = [];
  const errors: string[] = [];
  context.on('request', (r) => {
    requests.push(r.url());
    if (!allowed(r.url(), url)) offending.push(r.url());
  });
  await context.route(
    (u) => !allowed(u.href, url),
    (route) => route.abort('blockedbyclient'),
  );
  const page = await context.newPage();
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  await page.goto(url);
  await page.waitForFunction(() => ['idle', 'broken'].includes(document.body.dataset.state ?? ''), null, {
    timeout: 20_000,
  });
  return { page, context, requests, offending, errors };
}

export type FileSpec = { name: string; buffer: Buffer | Uint8Array; mimeType?: string };

const asPayload = (f: FileSpec) => ({
  name: f.name,
  mimeType: f.mimeType ?? 'application/octet-stream',
  buffer: Buffer.from(f.buffer),
});

export interface Inputs {
  receipt: FileSpec;
  key?: FileSpec;
  head?: string;
  proof?: FileSpec;
  /** An earlier checkpoint and the log key (spec/PROOFS.md §9.8). */
  checkpoint?: FileSpec;
  logKey?: string;
  /** Witness vkeys (one a line in the field) and the quorum, as --witness and --quorum. */
  witnesses?: string[];
  quorum?: string;
  /** A consistency proof file, as --proof with a partial receipt. */
  consistency?: FileSpec;
  /** TSA certificates, co-signer key files and the threshold, as --tsa-cert, --cosigner and --threshold (spec/TIME.md). */
  tsaCerts?: FileSpec[];
  cosigners?: FileSpec[];
  threshold?: string;
  /** Approvers' public key files, as --approver (spec/APPROVALS.md §5). */
  approvers?: FileSpec[];
}

export interface Shown {
  state: string;
  ok: boolean | null;
  /** The verdict box's data-verdict: authenticated, intact, invalid or not-a-receipt (null before one). */
  verdict: string | null;
  headline: string;
  /** The line naming the first altered step, or ''. */
  altered: string;
  problems: Array<{ code: string; location: string; message: string }>;
  proves: string[];
  doesNotProve: string[];
  fieldErrors: {
    key: string;
    head: string;
    logkey: string;
    checkpoint: string;
    witnesses: string;
    quorum: string;
    tsacert: string;
    cosigners: string;
    threshold: string;
    approvers: string;
  };
  disclosure: { ok: boolean; headline: string; codes: string[]; proves: string[] } | null;
}

/** Sets the inputs, presses Verify and waits for the verdict. */
export async function verify(page: Page, inputs: Inputs, timeout = 60_000): Promise<Shown> {
  await page.locator('#form').evaluate((f: HTMLFormElement) => f.reset());
  await page.setInputFiles('#receipt', asPayload(inputs.receipt));
  await page.setInputFiles('#pubkey', inputs.key ? asPayload(inputs.key) : []);
  await page.setInputFiles('#proof', inputs.proof ? asPayload(inputs.proof) : []);
  await page.fill('#head', inputs.head ?? '');
  await page.setInputFiles('#checkpoint', inputs.checkpoint ? asPayload(inputs.checkpoint) : []);
  await page.fill('#logkey', inputs.logKey ?? '');
  await page.fill('#witnesses', (inputs.witnesses ?? []).join('\n'));
  await page.fill('#quorum', inputs.quorum ?? '');
  await page.setInputFiles('#consistency', inputs.consistency ? asPayload(inputs.consistency) : []);
  await page.setInputFiles('#tsacert', (inputs.tsaCerts ?? []).map(asPayload));
  await page.setInputFiles('#cosigners', (inputs.cosigners ?? []).map(asPayload));
  await page.fill('#threshold', inputs.threshold ?? '');
  await page.setInputFiles('#approvers', (inputs.approvers ?? []).map(asPayload));
  await page.click('#verify');
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), null, { timeout });
  return shown(page);
}

/** What the page shows now. */
export async function shown(page: Page): Promise<Shown> {
  return page.evaluate(() => {
    const text = (el: Element | null) => el?.textContent ?? '';
    const statement = (li: Element) => text(li).slice(text(li.querySelector('.tag')).length);
    const verdict = document.getElementById('verdict')!;
    const d = document.getElementById('disclosure');
    return {
      state: document.body.dataset.state ?? '',
      ok: verdict.dataset.ok === undefined ? null : verdict.dataset.ok === 'true',
      verdict: verdict.dataset.verdict ?? null,
      headline: text(verdict.querySelector('.headline')),
      altered: text(verdict.querySelector('.altered')),
      problems: [...document.querySelectorAll('#problems > li')].map((li) => ({
        code: text(li.querySelector('.code')),
        location: text(li.querySelector('.loc')),
        message: text(li.querySelector('.msg')),
      })),
      proves: [...document.querySelectorAll('#statements li.proves')].map(statement),
      doesNotProve: [...document.querySelectorAll('#statements li.not')].map(statement),
      fieldErrors: {
        key: text(document.getElementById('pubkey-error')),
        head: text(document.getElementById('head-error')),
        logkey: text(document.getElementById('logkey-error')),
        checkpoint: text(document.getElementById('checkpoint-error')),
        witnesses: text(document.getElementById('witnesses-error')),
        quorum: text(document.getElementById('quorum-error')),
        tsacert: text(document.getElementById('tsacert-error')),
        cosigners: text(document.getElementById('cosigners-error')),
        threshold: text(document.getElementById('threshold-error')),
        approvers: text(document.getElementById('approvers-error')),
      },
      disclosure: d
        ? {
            ok: d.dataset.ok === 'true',
            headline: text(d.querySelector('.headline')),
            codes: [...d.querySelectorAll('li[data-code]')].map((li) => li.getAttribute('data-code')!),
            proves: [...d.querySelectorAll('.statements li')].map(statement),
          }
        : null,
    };
  });
}

/** The JSON report the page offers (as `stepchain verify --json` prints it). */
export async function reportJson(page: Page): Promise<{ ok: boolean; kind: string; report: Record<string, unknown> }> {
  await page.click('#json-details summary');
  // The page fills the view when it is opened (the details' toggle event comes a moment after the click).
  await page.waitForFunction(() => (document.getElementById('report-json')?.textContent ?? '') !== '');
  return JSON.parse((await page.textContent('#report-json')) ?? 'null');
}

/** Rows of the step list as shown: cells' text, and whether the row is flagged. */
export async function rows(page: Page): Promise<Array<{ cells: string[]; flagged: boolean; redacted: string[] }>> {
  return page.$$eval('#step-rows tr', (trs) =>
    trs.map((tr) => ({
      cells: [...tr.querySelectorAll('td')].map((td) => td.textContent ?? ''),
      flagged: tr.classList.contains('flagged'),
      redacted: [...tr.querySelectorAll('.redacted')].map((s) => s.getAttribute('data-rule') ?? ''),
    })),
  );
}

export const pageHtml = (): string => readFileSync(PAGE_FILE, 'utf8');
