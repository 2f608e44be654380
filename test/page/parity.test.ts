/**
 * The page's verdicts equal the CLI's: every receipt of vectors/receipts.json and every published receipt
 * and disclosure proof of vectors/redaction.json, verified by the built CLI (`stepchain verify --json`,
 * `stepchain disclose --check --json`, one child process each batch) and by the built page in Chromium with the same
 * files and pins. Compared: validity, the JSON report, and what the page shows — each problem's code,
 * location and message, the proves and does-not-prove statements. A pin the CLI refuses (exit 2) must be
 * refused by the page on its field, with the same reason.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { describeLocation, type ProblemLocation } from '../../src/chain/report.js';
import { cliBatchAsync } from '../helpers/cli-batch.js';
import { tempDir } from '../helpers/tmp.js';
import { loadVectors } from '../helpers/vectors.js';
import { launch, openPage, reportJson, verify, type Opened } from './browser.js';

const dir = tempDir('stepchain-page-parity-');

interface Cli {
  code: number;
  doc: Record<string, unknown>;
}
/**
 * `stepchain <args> --json` for each of `calls`, in one process of the built CLI (test/helpers/cli-batch.ts:
 * each call runs the built entry afresh), started while the page works through the same cases.
 */
async function cliAll(calls: string[][]): Promise<Cli[]> {
  const outs = await cliBatchAsync(calls.map((args) => ({ args: [...args, '--json'], cwd: dir })));
  return outs.map((o, i) => {
    const stdout = Buffer.from(o.out, 'latin1').toString('utf8');
    try {
      return { code: o.rc, doc: JSON.parse(stdout) as Record<string, unknown> };
    } catch (e) {
      throw new Error(`stepchain ${calls[i]!.join(' ')} printed no JSON: ${String(e)}\n${stdout}`);
    }
  });
}

interface Case {
  id: string;
  receipt: Buffer;
  name: string;
  key?: string;
  head?: string;
}

interface ReceiptVector {
  id: string;
  base64: string;
  options: { publicKey?: string; expectHead?: string };
}
interface RedactionVector {
  id: string;
  kind: string;
  base64?: string;
  publicKey?: string;
  receipt?: string;
  proof?: unknown;
}

const receipts = loadVectors<ReceiptVector>('receipts.json').cases;
const redaction = loadVectors<RedactionVector>('redaction.json').cases;
const published = redaction.filter((c) => c.kind === 'published');
const disclosures = redaction.filter((c) => c.kind.endsWith('disclosure'));

const cases: Case[] = [
  ...receipts.map((c) => {
    const bytes = Buffer.from(c.base64, 'base64');
    const gz = bytes[0] === 0x1f && bytes[1] === 0x8b;
    return {
      id: c.id,
      receipt: bytes,
      name: `${c.id}.tar${gz ? '.gz' : ''}`,
      ...(c.options.publicKey !== undefined ? { key: c.options.publicKey } : {}),
      ...(c.options.expectHead !== undefined ? { head: c.options.expectHead } : {}),
    };
  }),
  ...published.map((c) => ({
    id: c.id,
    receipt: Buffer.from(c.base64!, 'base64'),
    name: `${c.id}.tar`,
    ...(c.publicKey !== undefined ? { key: c.publicKey } : {}),
  })),
];

let browser: Browser;
let opened: Opened;
beforeAll(async () => {
  browser = await launch();
  opened = await openPage(browser);
});
afterAll(async () => {
  await browser?.close();
});

test('the vectors cover what this test compares', () => {
  expect(receipts.length).toBeGreaterThanOrEqual(30);
  expect(published.length).toBeGreaterThanOrEqual(14);
  expect(disclosures.length).toBeGreaterThanOrEqual(27);
  // Pins the CLI refuses with exit 2 are among them (an empty key file, a small-order key, an empty head).
  expect(
    cases
      .filter((c) => c.key === '' || c.head === '')
      .map((c) => c.id)
      .sort(),
  ).toEqual(['invalid-pinned-head-empty', 'invalid-pinned-key-empty']);
});

test(`every receipt of the vectors (${cases.length}): the page's verdict is the CLI's`, async () => {
  const files = cases.map((c) => {
    const receipt = join(dir, c.name);
    writeFileSync(receipt, c.receipt);
    const key = c.key === undefined ? undefined : join(dir, `${c.id}.pub`);
    if (key) writeFileSync(key, c.key!);
    return { receipt, key };
  });
  // The CLI runs in child processes while the page works through the same cases.
  const cliRuns = cliAll(
    cases.map((c, i) => {
      const { receipt, key } = files[i]!;
      return [
        'verify',
        receipt,
        ...(key ? ['--pubkey', key] : []),
        ...(c.head !== undefined ? ['--head', c.head] : []),
      ];
    }),
  );
  const fromPage: Array<{
    shown: Awaited<ReturnType<typeof verify>>;
    json: Awaited<ReturnType<typeof reportJson>> | null;
  }> = [];
  for (const c of cases) {
    // An empty text field means "no pin" on the page; a pinned head that is given but empty is typed as a space.
    const head = c.head === '' ? ' ' : c.head;
    const shown = await verify(opened.page, {
      receipt: { name: c.name, buffer: c.receipt },
      ...(c.key !== undefined ? { key: { name: `${c.id}.pub`, buffer: Buffer.from(c.key) } } : {}),
      ...(head !== undefined ? { head } : {}),
    });
    fromPage.push({ shown, json: shown.state === 'done' ? await reportJson(opened.page) : null });
  }
  const fromCli = await cliRuns;
  const compared: string[] = [];
  for (const [i, c] of cases.entries()) {
    const expected = fromCli[i]!;
    const { shown: page, json } = fromPage[i]!;
    const where = `vector ${c.id}`;
    if (expected.code === 2) {
      // The CLI refused a pin: the page refuses it on its field, with the same reason, and verifies nothing.
      const error = expected.doc.error as { code: string; message: string };
      expect(page.state, where).toBe('error');
      const shownError = page.fieldErrors.key || page.fieldErrors.head;
      expect(shownError, where).not.toBe('');
      const reason = (s: string) =>
        s
          .replace(/^[A-Z_]+: /, '')
          .replace(/^--head/, 'the pinned head')
          .replace(/ \(give the signer's public key:.*\)$/, '')
          .replace(files[i]!.key ?? '\0', `${c.id}.pub`);
      expect(reason(shownError), where).toBe(reason(error.message));
      compared.push(`${c.id}: refused`);
      continue;
    }
    const report = expected.doc.report as {
      ok: boolean;
      problems: Array<{ code: string; message: string; location: ProblemLocation }>;
      proves: string[];
      does_not_prove: string[];
    };
    expect(expected.code, where).toBe(report.ok ? 0 : 1);
    expect(page.ok, where).toBe(report.ok);
    expect(page.problems, where).toEqual(
      report.problems.map((p) => ({ code: p.code, location: describeLocation(p.location), message: p.message })),
    );
    expect(page.proves, where).toEqual(report.proves);
    expect(page.doesNotProve, where).toEqual(report.does_not_prove);
    expect(json?.report, where).toEqual(report);
    compared.push(`${c.id}: ${report.ok ? 'valid' : report.problems.map((p) => p.code).join(',')}`);
  }
  expect(compared).toHaveLength(cases.length);
  expect(opened.offending).toEqual([]);
});

test(`every disclosure proof of the vectors (${disclosures.length}): the page's check is the CLI's`, async () => {
  const byId = new Map(published.map((c) => [c.id, c]));
  const inputs = disclosures.map((d) => {
    const r = byId.get(d.receipt!)!;
    const receipt = join(dir, `${r.id}.tar`);
    writeFileSync(receipt, Buffer.from(r.base64!, 'base64'));
    const proof = join(dir, `${d.id}.json`);
    writeFileSync(proof, JSON.stringify(d.proof));
    const key = r.publicKey === undefined ? undefined : join(dir, `${r.id}.pub`);
    if (key) writeFileSync(key, r.publicKey!);
    return { d, r, receipt, proof, key };
  });
  const cliRuns = cliAll(
    inputs.map((x) => ['disclose', x.receipt, '--check', x.proof, ...(x.key ? ['--pubkey', x.key] : [])]),
  );
  const fromPage: Array<Awaited<ReturnType<typeof verify>>> = [];
  for (const x of inputs) {
    fromPage.push(
      await verify(opened.page, {
        receipt: { name: `${x.r.id}.tar`, buffer: Buffer.from(x.r.base64!, 'base64') },
        proof: { name: `${x.d.id}.json`, buffer: Buffer.from(JSON.stringify(x.d.proof)) },
        ...(x.r.publicKey !== undefined ? { key: { name: `${x.r.id}.pub`, buffer: Buffer.from(x.r.publicKey) } } : {}),
      }),
    );
  }
  const fromCli = await cliRuns;
  for (const [i, x] of inputs.entries()) {
    const expected = fromCli[i]!.doc as { ok: boolean; problems: Array<{ code: string }>; proves: string[] };
    const page = fromPage[i]!;
    const where = `vector ${x.d.id}`;
    expect(fromCli[i]!.code, where).toBe(expected.ok ? 0 : 1);
    expect(page.disclosure?.ok, where).toBe(expected.ok);
    expect(page.disclosure?.codes, where).toEqual(expected.problems.map((p) => p.code));
    expect(page.disclosure?.proves, where).toEqual(expected.proves);
  }
  expect(opened.offending).toEqual([]);
});
