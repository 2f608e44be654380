/**
 * The page makes no network request (docs/threat-model.md §1.4, "The offline verification page"). Three layers:
 *   1. the built file: its CSP admits only its own inline script and style (by hash) and a blob: worker —
 *      no connect-src, nothing remote — and the markup names nothing remote;
 *   2. driving it through every feature in Chromium, the browser's request log (pages and workers) holds
 *      the page's own file and its worker's blob: URL and nothing else — everything else is aborted and
 *      recorded, and none was attempted;
 *   3. with nothing aborted, script injected into the page and its worker tries every way to reach a
 *      local HTTP server (fetch, XHR, beacon, image, script, style, font, frame, WebSocket, EventSource,
 *      form, worker importScripts): the CSP blocks each one and the server sees no request.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { PAGE_URL, launch, openPage, pageHtml, verify } from './browser.js';
import { agentReceipts, type AgentReceipts } from './fixtures.js';

const dir = tempDir('stepchain-page-net-');
let browser: Browser;
let f: AgentReceipts;
const spec = (path: string) => ({ name: path.slice(path.lastIndexOf('/') + 1), buffer: readFileSync(path) });

beforeAll(async () => {
  [browser, f] = await Promise.all([launch(), agentReceipts(dir)]);
});
afterAll(async () => {
  await browser?.close();
});

describe('the built file', () => {
  const html = pageHtml();
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
  const directives = new Map(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([k, ...v]) => [k!, v]),
  );
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  const hash = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const markup = html.replace(scripts[0] ?? '', '');

  test('its CSP comes first and admits only the inline script and style by hash, WebAssembly compilation, and a blob: worker', () => {
    expect(html.indexOf('http-equiv="Content-Security-Policy"')).toBeLessThan(html.indexOf('<style>'));
    expect([...directives.keys()].sort()).toEqual([
      'base-uri',
      'default-src',
      'form-action',
      'script-src',
      'style-src',
      'worker-src',
    ]);
    expect(directives.get('default-src')).toEqual(["'none'"]);
    // 'wasm-unsafe-eval' admits compiling WebAssembly (the worker's SHA-256 kernel, inside this same script), not eval().
    expect(directives.get('script-src')).toEqual([hash(scripts[0]!), "'wasm-unsafe-eval'"]);
    expect(directives.get('style-src')).toEqual([hash(styles[0]!)]);
    expect(directives.get('worker-src')).toEqual(['blob:']);
    expect(directives.get('base-uri')).toEqual(["'none'"]);
    expect(directives.get('form-action')).toEqual(["'none'"]);
    expect(csp.replace(" 'wasm-unsafe-eval'", '')).not.toMatch(/unsafe|connect-src|https?:|\*/);
  });

  test('one inline script, one inline style, and no element that loads anything', () => {
    expect(scripts).toHaveLength(1);
    expect(styles).toHaveLength(1);
    expect(markup).not.toMatch(
      /<(link|img|iframe|object|embed|base|audio|video|source)\b|\bsrc=|\bhref="(?!#)|https?:\/\/|url\(/i,
    );
  });
});

describe('in Chromium', () => {
  test('verifying, disclosing, listing and opening steps makes no request but the page file and its worker', async () => {
    const o = await openPage(browser);
    try {
      await verify(o.page, { receipt: spec(f.signed), key: spec(f.publicKey), head: f.head });
      await verify(o.page, { receipt: spec(f.tampered) });
      await o.page.click('#step-rows tr:nth-child(1) button');
      await o.page.waitForSelector('#step-tree');
      const v = await verify(o.page, { receipt: spec(f.published), key: spec(f.publicKey), proof: spec(f.proof) });
      expect(v.disclosure?.ok).toBe(true);
      await o.page.click('#json-details summary');
      expect(await o.page.evaluate(() => document.body.dataset.engine)).toBe('worker');
      expect(o.offending).toEqual([]);
      // The page's file, once. (With request interception on, Chromium does not report the worker's own
      // blob: script as a request; the worker is running all the same, as data-engine says.)
      expect(o.requests.filter((u) => u === PAGE_URL)).toHaveLength(1);
      expect(o.requests.every((u) => u === PAGE_URL || /^blob:null\/[0-9a-f-]{36}$/.test(u))).toBe(true);
      expect(o.errors).toEqual([]);
      // Control: the log does catch an attempt (an image the CSP refuses is still reported as a request).
      await o.page.evaluate(() => {
        const img = document.createElement('img');
        img.src = 'http://127.0.0.1:9/probe';
        document.body.append(img);
      });
      await expect.poll(() => o.offending).toEqual(['http://127.0.0.1:9/probe']);
    } finally {
      await o.context.close();
    }
  });

  test('its CSP blocks every way the page or its worker could reach a server; the server sees nothing', async () => {
    let hits = 0;
    const server: Server = createServer((_req, res) => {
      hits++;
      res.setHeader('access-control-allow-origin', '*');
      res.end('hit');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // Nothing is aborted here: only the page's own policy stands between it and the server.
    const context = await browser.newContext({ serviceWorkers: 'block' });
    const page = await context.newPage();
    try {
      await page.goto(PAGE_URL);
      const violations = await page.evaluate(async (base) => {
        const seen: string[] = [];
        document.addEventListener('securitypolicyviolation', (e) => seen.push(e.effectiveDirective));
        const attempts: Array<Promise<unknown>> = [];
        attempts.push(fetch(`${base}/fetch`).catch(() => null));
        attempts.push(
          new Promise((resolve) => {
            const x = new XMLHttpRequest();
            x.onloadend = resolve;
            x.open('GET', `${base}/xhr`);
            try {
              x.send();
            } catch {
              resolve(null);
            }
          }),
        );
        navigator.sendBeacon(`${base}/beacon`, 'x');
        const add = (el: HTMLElement) => {
          document.body.append(el);
          attempts.push(
            new Promise((resolve) => {
              el.addEventListener('load', resolve);
              el.addEventListener('error', resolve);
              setTimeout(resolve, 1500);
            }),
          );
        };
        const img = document.createElement('img');
        img.src = `${base}/img`;
        add(img);
        const script = document.createElement('script');
        script.src = `${base}/script.js`;
        add(script);
        const link = document.createElement('link');
        link.rel = 'stylesheet';
        link.href = `${base}/style.css`;
        add(link);
        const frame = document.createElement('iframe');
        frame.src = `${base}/frame`;
        add(frame);
        const style = document.createElement('style');
        style.textContent = `@font-face { font-family: x; src: url(${base}/font.woff2); } body { font-family: x; }`;
        document.head.append(style);
        try {
          const ws = new WebSocket(base.replace('http', 'ws') + '/ws');
          attempts.push(
            new Promise((resolve) => {
              ws.onerror = resolve;
              ws.onclose = resolve;
              setTimeout(resolve, 1500);
            }),
          );
        } catch {
          // blocked synchronously
        }
        try {
          const es = new EventSource(`${base}/events`);
          attempts.push(
            new Promise((resolve) => {
              es.onerror = () => {
                es.close();
                resolve(null);
              };
              setTimeout(resolve, 1500);
            }),
          );
        } catch {
          // blocked synchronously
        }
        const form = document.createElement('form');
        form.action = `${base}/form`;
        form.method = 'post';
        document.body.append(form);
        try {
          form.submit();
        } catch {
          // blocked
        }
        // A worker like the page's own, trying from inside: it inherits the page's policy.
        const src = `onmessage = async (e) => {
          const out = [];
          try { await fetch(e.data + '/worker-fetch'); out.push('fetch reached'); } catch { out.push('fetch blocked'); }
          try { importScripts(e.data + '/worker-import.js'); out.push('import reached'); } catch { out.push('import blocked'); }
          postMessage(out);
        };`;
        const worker = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
        const fromWorker = await new Promise<string[]>((resolve) => {
          worker.onmessage = (e) => resolve(e.data as string[]);
          worker.onerror = () => resolve(['worker failed']);
          worker.postMessage(base);
        });
        await Promise.all(attempts);
        await new Promise((resolve) => setTimeout(resolve, 300));
        return { seen, fromWorker };
      }, base);
      expect(violations.fromWorker).toEqual(['fetch blocked', 'import blocked']);
      for (const directive of [
        'connect-src',
        'img-src',
        'script-src-elem',
        'style-src-elem',
        'frame-src',
        'form-action',
      ])
        expect(violations.seen).toContain(directive);
      expect(hits).toBe(0);
      expect(page.url()).toBe(PAGE_URL); // the form did not navigate away
    } finally {
      await context.close();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
