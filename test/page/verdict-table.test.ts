/**
 * One table of receipt × pin cases, verified by the built CLI (`stepchain verify --json`, child processes)
 * and by the built page in real Chromium with the same files and pins (issue 35): plain, signed, partial,
 * published and proof-carrying receipts, each intact, tampered, and with right and wrong pins, a forged
 * receipt re-signed with an attacker's key, and a file that is not a receipt. Each row names the verdict
 * both must give — authenticated, intact (not authenticated), invalid, not a receipt, or a pin refused
 * (CLI exit 2, the page's field error) — and the two must agree on it and on every problem code.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { asRun, cliBatchAsync } from '../helpers/cli-batch.js';
import { cliIn, witnessedJournal } from '../helpers/cli-in.js';
import { tempDir } from '../helpers/tmp.js';
import { launch, openPage, verify, type FileSpec, type Opened } from './browser.js';
import { agentReceipts, type AgentReceipts } from './fixtures.js';
import { pageInputs, verifyArgs, type Pins } from './pins.js';

const dir = tempDir('stepchain-verdict-table-');
const cliDir = cliIn(dir, {}, { inProcess: true });
const { ok, append } = cliDir;

/** A receipt with one character of a step's content changed, the same length: the chain breaks there. */
function tamper(name: string, out: string, from: string, to: string): string {
  const raw = readFileSync(join(dir, name));
  const gz = raw[0] === 0x1f && raw[1] === 0x8b;
  const tar = Buffer.from(gz ? gunzipSync(raw) : raw);
  const at = tar.indexOf(from);
  if (at < 0 || from.length !== to.length) throw new Error(`${from} is not in ${name}`);
  tar.write(to, at);
  writeFileSync(join(dir, out), gz ? gzipSync(tar) : tar);
  return out;
}

type Expect = 'authenticated' | 'intact' | 'invalid' | 'not-a-receipt' | 'refused';
interface Case {
  id: string;
  file: string;
  pins: Pins;
  expect: Expect;
  codes?: string[];
}

let f: AgentReceipts;
let logKey: string;
let strangerKey: string;
let w1: string;
let head: string;
let cases: Case[] = [];

beforeAll(async () => {
  mkdirSync(join(dir, 'agent'));
  f = await agentReceipts(join(dir, 'agent'));
  for (const k of ['log', 'w1', 'alice', 'mallory', 'stranger']) await ok('keygen', '-o', `${k}.key`);
  ({ logKey, w1 } = await witnessedJournal(cliDir));
  await append('j', 40, 10, 'genuine');
  await ok('checkpoint', 'j', '--sign', 'log.key', '-o', 'b.checkpoint');
  await ok('prove', 'j', '--checkpoint', 'b.checkpoint', '--old', 'a.checkpoint', '-o', 'cons.proof');
  head = (JSON.parse((await ok('verify', 'j', '--json')).stdout) as { report: { head: string } }).report.head;
  await ok('export', 'j', '-o', 'plain.tar');
  await ok('export', 'j', '--sign', 'alice.key', '-o', 'signed.tar.gz');
  await ok('export', 'j', '--from', '10', '--to', '20', '--checkpoint', 'a.w1', '-o', 'partial.tar');
  await ok('export', 'j', '--from', '42', '--to', '45', '--checkpoint', 'b.checkpoint', '-o', 'proven.tar');
  mkdirSync(join(dir, 'evil'));
  await ok('init', 'evil/j');
  await append('evil/j', 0, 50, 'forged');
  await ok('export', 'evil/j', '--sign', 'mallory.key', '-o', 'forged.tar.gz');
  strangerKey = JSON.parse(
    (
      await ok(
        'checkpoint',
        'evil/j',
        '--sign',
        'stranger.key',
        '--authority',
        'agents.example.com',
        '-o',
        'evil.checkpoint',
        '--json',
      )
    ).stdout,
  ).vkey as string;
  writeFileSync(join(dir, 'published.tar.gz'), readFileSync(f.published));
  writeFileSync(join(dir, 'signer.pub'), readFileSync(f.publicKey));
  writeFileSync(join(dir, 'other.pub'), readFileSync(f.otherKey));
  writeFileSync(
    join(dir, 'photo.png'),
    Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'), Buffer.alloc(600, 7)]),
  );
  const t = (name: string, out: string) => tamper(name, out, '"i":15,"tag":"genuine"', '"i":15,"tag":"genuinf"');
  const other = '0'.repeat(64);
  const log = (x: Pins): Pins => ({ logKey, ...x });
  cases = [
    { id: 'plain, unpinned', file: 'plain.tar', pins: {}, expect: 'intact' },
    { id: 'plain, right head', file: 'plain.tar', pins: { head }, expect: 'authenticated' },
    {
      id: 'plain, wrong head',
      file: 'plain.tar',
      pins: { head: `sha256:${other}` },
      expect: 'invalid',
      codes: ['HEAD_MISMATCH'],
    },
    { id: 'plain, malformed head', file: 'plain.tar', pins: { head: 'sha256:xyz' }, expect: 'refused' },
    { id: 'plain, tampered', file: t('plain.tar', 'plain-tampered.tar'), pins: {}, expect: 'invalid' },
    {
      id: 'plain, earlier checkpoint with its log key',
      file: 'plain.tar',
      pins: log({ checkpoint: 'a.checkpoint' }),
      expect: 'authenticated',
    },
    {
      id: 'plain, earlier checkpoint without a log key',
      file: 'plain.tar',
      pins: { checkpoint: 'a.checkpoint' },
      expect: 'intact',
    },
    { id: 'signed, unpinned', file: 'signed.tar.gz', pins: {}, expect: 'intact' },
    { id: 'signed, right key', file: 'signed.tar.gz', pins: { pubkey: 'alice.key.pub' }, expect: 'authenticated' },
    {
      id: 'signed, wrong key',
      file: 'signed.tar.gz',
      pins: { pubkey: 'mallory.key.pub' },
      expect: 'invalid',
      codes: ['KEY_MISMATCH'],
    },
    { id: 'signed, a private key as the key', file: 'signed.tar.gz', pins: { pubkey: 'alice.key' }, expect: 'refused' },
    {
      id: 'signed, tampered, right key',
      file: t('signed.tar.gz', 'signed-tampered.tar.gz'),
      pins: { pubkey: 'alice.key.pub' },
      expect: 'invalid',
    },
    { id: 'forged (re-signed by the attacker), unpinned', file: 'forged.tar.gz', pins: {}, expect: 'intact' },
    {
      id: "forged, the genuine signer's key",
      file: 'forged.tar.gz',
      pins: { pubkey: 'alice.key.pub' },
      expect: 'invalid',
      codes: ['KEY_MISMATCH'],
    },
    {
      id: 'forged, the genuine head',
      file: 'forged.tar.gz',
      pins: { head },
      expect: 'invalid',
      codes: ['HEAD_MISMATCH'],
    },
    { id: 'partial, unpinned', file: 'partial.tar', pins: {}, expect: 'intact' },
    { id: 'partial, right log key', file: 'partial.tar', pins: log({}), expect: 'authenticated' },
    {
      id: 'partial, right log key and witness, quorum 1',
      file: 'partial.tar',
      pins: log({ witnesses: [w1], quorum: '1' }),
      expect: 'authenticated',
    },
    { id: 'partial, wrong log key', file: 'partial.tar', pins: { logKey: strangerKey }, expect: 'invalid' },
    {
      id: 'partial, its own checkpoint pinned (equal sizes)',
      file: 'partial.tar',
      pins: log({ checkpoint: 'a.checkpoint' }),
      expect: 'authenticated',
    },
    { id: 'partial, tampered', file: t('partial.tar', 'partial-tampered.tar'), pins: log({}), expect: 'invalid' },
    { id: 'proof-carrying, log key', file: 'proven.tar', pins: log({}), expect: 'authenticated' },
    {
      id: 'proof-carrying, earlier checkpoint and consistency proof',
      file: 'proven.tar',
      pins: log({ checkpoint: 'a.checkpoint', proof: 'cons.proof' }),
      expect: 'authenticated',
    },
    {
      id: 'proof-carrying, earlier checkpoint, no consistency proof',
      file: 'proven.tar',
      pins: log({ checkpoint: 'a.checkpoint' }),
      expect: 'invalid',
      codes: ['CONSISTENCY_UNPROVEN'],
    },
    {
      id: 'proof-carrying, earlier checkpoint a witness did not cosign, quorum 1',
      file: 'proven.tar',
      pins: log({ checkpoint: 'a.checkpoint', witnesses: [w1], quorum: '1', proof: 'cons.proof' }),
      expect: 'refused',
    },
    { id: 'published, unpinned', file: 'published.tar.gz', pins: {}, expect: 'intact' },
    { id: 'published, right key', file: 'published.tar.gz', pins: { pubkey: 'signer.pub' }, expect: 'authenticated' },
    {
      id: 'published, wrong key',
      file: 'published.tar.gz',
      pins: { pubkey: 'other.pub' },
      expect: 'invalid',
      codes: ['KEY_MISMATCH'],
    },
    {
      id: 'published, tampered, right key',
      file: tamper('published.tar.gz', 'published-tampered.tar.gz', '"forecast":"sunny"', '"forecast":"snowy"'),
      pins: { pubkey: 'signer.pub' },
      expect: 'invalid',
    },
    {
      id: 'published, a value in a blob changed, right key',
      file: tamper('published.tar.gz', 'published-blob.tar.gz', '"count":420,"flights"', '"count":421,"flights"'),
      pins: { pubkey: 'signer.pub' },
      expect: 'invalid',
      codes: ['BLOB_CORRUPT'],
    },
    { id: 'not a receipt (a PNG)', file: 'photo.png', pins: {}, expect: 'not-a-receipt' },
  ];
}, 300_000);

let browser: Browser;
let opened: Opened;
beforeAll(async () => {
  browser = await launch();
  opened = await openPage(browser);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});

const spec = (name: string): FileSpec => ({ name, buffer: readFileSync(join(dir, name)) });

describe('the CLI and the page give the same verdict on every case (issue 35)', () => {
  // test.each cannot see the cases built in beforeAll: one test walks the table, naming each row it checks.
  test('every row of the table', async () => {
    expect(cases.length).toBeGreaterThanOrEqual(31);
    const seen = new Set<Expect>();
    // The people's text is read for these rows (the same arguments without --json).
    const withText = (c: (typeof cases)[number]): boolean =>
      c.expect === 'intact' || c.expect === 'not-a-receipt' || c.id.includes('tampered') || c.id.includes('blob');
    // Every CLI run of the table in one process of the built CLI (test/helpers/cli-batch.ts), started while
    // the page works through the rows: each row's `verify --json`, then the text runs in the rows' order.
    const texts = cases.filter(withText);
    const cliRuns = cliBatchAsync(
      [
        ...cases.map((c) => verifyArgs(c.file, c.pins)),
        ...texts.map((c) => verifyArgs(c.file, c.pins).filter((a) => a !== '--json')),
      ].map((args) => ({ args, cwd: dir })),
    ).then((outs) => outs.map(asRun));
    const pages: Array<Awaited<ReturnType<typeof verify>>> = [];
    for (const c of cases) pages.push(await verify(opened.page, pageInputs(dir, c.file, c.pins)));
    const fromCli = await cliRuns;
    for (const [i, c] of cases.entries()) {
      const cli = fromCli[i]!;
      const page = pages[i]!;
      const row = `${c.id}\nCLI: exit ${cli.code} ${cli.stderr}\npage: ${JSON.stringify(page)}`;
      seen.add(c.expect);
      if (c.expect === 'refused') {
        expect(cli.code, row).toBe(2);
        expect(page.state, row).toBe('error');
        expect(
          Object.values(page.fieldErrors).some((e) => e !== ''),
          row,
        ).toBe(true);
        continue;
      }
      const doc = JSON.parse(cli.stdout) as {
        ok: boolean;
        authenticated: boolean;
        verdict: string;
        report: { problems: Array<{ code: string; location: { seq?: number } }> };
      };
      const cliCodes = doc.report.problems.map((x) => x.code);
      expect(page.state, row).toBe('done');
      expect(page.verdict, row).toBe(c.expect);
      expect(doc.verdict, row).toBe(c.expect === 'not-a-receipt' ? 'invalid' : c.expect);
      expect(doc.authenticated, row).toBe(c.expect === 'authenticated');
      expect(cli.code, row).toBe(doc.ok ? 0 : 1);
      expect(page.ok, row).toBe(doc.ok);
      expect(
        page.problems.map((x) => x.code),
        row,
      ).toEqual(cliCodes);
      if (c.codes) expect(cliCodes, row).toEqual(c.codes);
      // Codes are shown beside their messages, never repeated inside them.
      for (const x of page.problems) expect(x.message.startsWith(`${x.code}:`), row).toBe(false);
      // The CLI's people's text, from the same arguments without --json.
      const text = withText(c) ? fromCli[cases.length + texts.indexOf(c)]!.stderr : '';
      // A changed value in a blob of a publication names its step and field (issue 35 item 4), not only the blob entry.
      if (c.id.includes('blob')) {
        expect(page.altered, row).toMatch(/^Altered: step \d+, result \(BLOB_CORRUPT\)/);
        expect(text.split('\n')[1], row).toMatch(/^ {2}altered {2}step \d+, result \(BLOB_CORRUPT\)$/);
      }
      if (c.expect === 'intact') {
        expect(page.headline, row).toMatch(/^⚠ intact, NOT authenticated receipt /);
        expect(text.split('\n')[0], row).toMatch(
          /^⚠ intact, NOT authenticated receipt .*\(pin --pubkey, --head, or --log-key\)$/,
        );
      }
      if (c.expect === 'authenticated') expect(page.headline, row).toMatch(/^✔ authenticated receipt /);
      if (c.expect === 'not-a-receipt') {
        expect(page.headline, row).toBe('✘ this is not a receipt: photo.png');
        expect(text, row).toMatch(/^✘ not a receipt photo\.png: nothing in it reads as a stepchain receipt/);
      }
      // A tampered chain, published or not, names its altered step first (before the chain file's digest
      // mismatch), on the page and in the CLI: the step the first located problem names.
      if (c.id.includes('tampered')) {
        const seq = c.id.startsWith('published')
          ? doc.report.problems.find((x) => x.location.seq !== undefined)!.location.seq!
          : 15;
        expect(page.altered, row).toMatch(new RegExp(`^Altered: step ${seq}, step_hash \\(HASH_MISMATCH\\)`));
        expect(text.split('\n')[1], row).toMatch(
          new RegExp(`^ {2}altered {2}step ${seq}, step_hash \\(HASH_MISMATCH\\)$`),
        );
        expect(cliCodes[0], row).toBe('DIGEST_MISMATCH');
      }
    }
    expect([...seen].sort()).toEqual(['authenticated', 'intact', 'invalid', 'not-a-receipt', 'refused']);
  }, 600_000);
});

describe('a 390-px phone (issue 35)', () => {
  test('after Verify the verdict comes first and has focus; the step table keeps its result column', async () => {
    const phone = await openPage(browser, undefined, { viewport: { width: 390, height: 844 } });
    try {
      await verify(phone.page, { receipt: spec('signed-tampered.tar.gz'), key: spec('alice.key.pub') });
      expect(await phone.page.evaluate(() => document.activeElement?.id)).toBe('verdict');
      const box = await phone.page.evaluate(() => {
        const v = document.getElementById('verdict')!.getBoundingClientRect();
        const form = document.getElementById('form')!.getBoundingClientRect();
        const result = document.querySelector('#step-table thead th:nth-child(6)')!.getBoundingClientRect();
        return {
          verdictTop: v.top + window.scrollY,
          formTop: form.top + window.scrollY,
          inView: v.top >= 0 && v.top < window.innerHeight,
          resultWidth: result.width,
        };
      });
      expect(box.verdictTop).toBeLessThan(box.formTop);
      expect(box.inView).toBe(true);
      expect(box.resultWidth).toBeGreaterThan(100);
    } finally {
      await phone.context.close();
    }
  }, 120_000);
});
