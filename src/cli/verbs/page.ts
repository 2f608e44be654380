/**
 * `stepchain page`: writes the offline verification page — dist/page/verify.html, built by
 * scripts/build-page.mjs from src/page — for auditors who verify receipts in a browser instead of Node.
 * The verb only copies the built file (atomically, never over an existing one without --force) and says
 * its SHA-256, so a recipient can compare it with the copy in the published package.
 */
import { createHash } from 'node:crypto';
import { link, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StepchainError } from '../../errors.js';
import { VERSION } from '../../version.js';
import { EXIT_OK, UsageError, type Verb } from '../cli.js';
import { inline } from '../safe-text.js';
import { nonRegularTarget } from '../../receipt/node.js';

export class PageError extends StepchainError<'OUTPUT_EXISTS' | 'OUTPUT_FAILED' | 'PAGE_MISSING'> {}

/** The built page, beside dist/cli in the package. */
const BUILT_PAGE = fileURLToPath(new URL('../../page/verify.html', import.meta.url));

export const pageVerb: Verb = {
  name: 'page',
  summary: 'write the offline verification page: one HTML file that verifies receipts in a browser, with no network',
  usage: '-o verify.html [--force]',
  description: [
    'Writes a single self-contained HTML file that runs the same verifier as `stepchain verify` in any current browser,',
    "opened from disk: drop a receipt (.tar or .tar.gz, published receipts too), optionally the signer's public key, a",
    'pinned head and a disclosure proof, and it shows the verdict with every problem and its location, what the receipt',
    'proves and does not prove, and the steps. Its Content-Security-Policy forbids every network request. The file is',
    'also in the npm package at dist/page/verify.html; the printed sha256 lets a recipient compare the two.',
  ].join('\n'),
  options: {
    out: { type: 'string', short: 'o', arg: 'file', description: 'where to write the page' },
    force: {
      type: 'boolean',
      description: 'replace the file if it exists (otherwise an existing file is an error, exit 2)',
    },
  },
  args: { min: 0, max: 0, names: [] },
  examples: [
    [
      'stepchain page -o verify.html',
      'write the page; open it in a browser, or send it to an auditor with the receipt',
    ],
    ['stepchain page -o verify.html --force --json', 'replace an older copy and print its path and sha256 as JSON'],
  ],
  async run({ out, values }) {
    if (values.out === undefined) throw new UsageError('-o <file> is required', 'page');
    const target = values.out as string;
    let html: Buffer;
    try {
      html = await readFile(BUILT_PAGE);
    } catch (e) {
      throw new PageError(
        'PAGE_MISSING',
        `the built page ${BUILT_PAGE} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
        {
          hint: 'in a source checkout, run `npm run build` first',
        },
      );
    }
    await writeNew(target, html, values.force === true);
    const sha256 = createHash('sha256').update(html).digest('hex');
    if (out.json)
      out.document('page', {
        ok: true,
        out: resolve(target),
        bytes: html.length,
        sha256: `sha256:${sha256}`,
        version: VERSION,
      });
    else {
      out.say(`wrote ${inline(target)} (${html.length} bytes): the stepchain ${VERSION} offline verification page`);
      out.say(`  sha256 ${sha256}`);
      out.say('  open it in a browser (it works from disk and makes no network request) and drop a receipt on it');
    }
    return EXIT_OK;
  },
};

/** Writes through a temporary file: the target is whole or untouched; without `force` an existing one stays. */
async function writeNew(target: string, bytes: Uint8Array, force: boolean): Promise<void> {
  // A FIFO, device or directory at the target is refused, --force or not: rename would replace the node itself.
  const kind = await nonRegularTarget(target);
  if (kind !== null)
    throw new PageError(
      'OUTPUT_FAILED',
      `cannot write ${target}: it is ${kind}, not a regular file; name a file to write`,
      { location: { file: target } },
    );
  const tmp = `${target}.tmp-${process.pid}-${Date.now()}`;
  try {
    await writeFile(tmp, bytes, { flag: 'wx', mode: 0o644 });
    if (force) await rename(tmp, target);
    else await link(tmp, target); // fails with EEXIST, atomically, when the target exists
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new PageError('OUTPUT_EXISTS', `${target} exists; pass --force to replace it`, {
        location: { file: target },
      });
    throw new PageError('OUTPUT_FAILED', `cannot write ${target}: ${e instanceof Error ? e.message : String(e)}`, {
      location: { file: target },
      cause: e,
    });
  } finally {
    await rm(tmp, { force: true });
  }
}
