// Builds dist/page/verify.html: the offline verification page as one self-contained file (README,
// "Verifying without Node"). esbuild bundles src/page/main.ts — the page, its worker and the verifier —
// into one inline script; the stylesheet is inlined too; a Content-Security-Policy meta tag admits exactly
// those two by their SHA-256 and the worker started from a blob: URL, and nothing else: no connection,
// no remote script, style, font or image, no form target. Run by `npm run build`.
import * as esbuild from 'esbuild';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const at = (p) => root + p;
const sha256 = (text) => createHash('sha256').update(text, 'utf8').digest('base64');

const { VERSION } = await import(at('dist/version.js')).catch(() => {
  throw new Error('dist/version.js is missing: run `tsc -p tsconfig.build.json` first (npm run build does)');
});

const result = await esbuild.build({
  entryPoints: [at('src/page/main.ts')],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  // Readable rather than small: an auditor may read the script they are asked to trust.
  minify: false,
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  logLevel: 'warning',
});
// Inside an inline <script>, "</script" would end it early; "<!--" could start an escaped state.
const script = result.outputFiles[0].text.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
const style = await readFile(at('src/page/page.css'), 'utf8');
const csp = [
  "default-src 'none'",
  // 'wasm-unsafe-eval' lets the worker compile the line hashes' SHA-256 kernel (src/canonical/sha256x4-module.ts,
  // bytes inside this same hashed script); it admits no eval() of JavaScript and no other script (docs/page.md).
  `script-src 'sha256-${sha256(script)}' 'wasm-unsafe-eval'`,
  'worker-src blob:',
  `style-src 'sha256-${sha256(style)}'`,
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

const template = await readFile(at('src/page/page.html'), 'utf8');
const fill = { CSP: csp, VERSION, STYLE: style, SCRIPT: script };
const html = template.replace(/\{\{(CSP|VERSION|STYLE|SCRIPT)\}\}/g, (_, key) => fill[key]);
if (/\{\{[A-Z]+\}\}/.test(html.replace(script, '')))
  throw new Error('src/page/page.html has a placeholder the build does not fill');
if (/\bhttps?:\/\//i.test(html.replace(script, ''))) throw new Error('the page markup names a remote address');

await mkdir(at('dist/page'), { recursive: true });
await writeFile(at('dist/page/verify.html'), html);
const digest = createHash('sha256').update(html, 'utf8').digest('hex');
console.error(`dist/page/verify.html: ${Buffer.byteLength(html)} bytes, sha256 ${digest}`);
