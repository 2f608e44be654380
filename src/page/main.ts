/**
 * The verification page's script (dist/page/verify.html, built by scripts/build-page.mjs). The same
 * script is the page and its Web Worker: on the page it reads its own text and starts itself as a
 * worker from a blob: URL, so the verifier is inlined once and the CSP needs only `worker-src blob:`.
 */
import { startVerifier } from './client.js';
import { mountPage } from './view.js';
import { LINE_WORKER, runLineWorker } from './line-pool.js';
import { runWorker } from './worker.js';

// A worker started as LINE_WORKER checks a chain's batches for the verifying worker (line-pool.ts).
if (typeof document === 'undefined') {
  if ((globalThis as { name?: string }).name === LINE_WORKER) runLineWorker();
  else runWorker();
} else {
  // Read now: currentScript is only set while the script first runs.
  const source = document.currentScript?.textContent ?? null;
  mountPage(startVerifier(source));
}
