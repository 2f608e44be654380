/**
 * The verification page's script (dist/page/verify.html, built by scripts/build-page.mjs). The same
 * script is the page and its Web Worker: on the page it reads its own text and starts itself as a
 * worker from a blob: URL, so the verifier is inlined once and the CSP needs only `worker-src blob:`.
 */
import { startVerifier } from './client.js';
import { mountPage } from './view.js';
import { runWorker } from './worker.js';

if (typeof document === 'undefined') runWorker();
else {
  // Read now: currentScript is only set while the script first runs.
  const source = document.currentScript?.textContent ?? null;
  mountPage(startVerifier(source));
}
