/**
 * Outside attacks on the verdicts, on the verification page (dist/page/verify.html) in real headless Chromium,
 * each beside the built CLI on the same files and pins (docs/auditors.md: "the same answer for the same file
 * and pins"). Fixtures are made with the CLI (in one process of its own, test/helpers/cli-sync.ts) in a temporary directory: the genuine journal, alice's key, a
 * log key and a witness; the attacker's own journal and key; rewritten archives (test/attacks/verdicts.test.ts
 * has the CLI-only cases and the tar profile).
 *
 * A test that FAILS here is an attack that succeeded (see the comment above it); a passing test is an attack
 * the product held, kept as a regression test.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launch, openPage, verify, type FileSpec, type Opened, type Shown } from './browser.js';
import { MORE, POLICY, STEP } from '../helpers/attack-world.js';
import { jcs, sha, tarOf, untar } from '../helpers/receipt-tar.js';
import { syncCli } from '../helpers/cli-sync.js';
import { tempDir } from '../helpers/tmp.js';
import { pageInputs, verifyArgs, type Pins } from './pins.js';

const dir = tempDir('stepchain-attack-verdicts-page-');
const f = (n: string): string => join(dir, n);

// biome-ignore lint: JSON
const inProcess = syncCli({ NO_COLOR: '1' });
function cli(args: string[], input?: string): { rc: number | null; out: string; err: string; json: any } {
  const r = inProcess({ args, cwd: dir, input });
  const out = r.stdout;
  let json = null;
  try {
    json = JSON.parse(out);
  } catch {}
  return { rc: r.status, out, err: r.stderr, json };
}
const ok = (args: string[], input?: string): string => {
  const r = cli(args, input);
  if (r.rc !== 0) throw new Error(`stepchain ${args.join(' ')}: ${r.err}`);
  return r.out + r.err;
};

// ---- the tar profile of `stepchain export` (ustar, mtime 0), copied from a genuine header ----
let TEMPLATE: Buffer;
const tar = (entries: Array<[string, Buffer]>): Buffer => tarOf(TEMPLATE, entries);
function rewriteLine(src: string, out: string, seq: number, edit: (l: string) => string): void {
  const files = new Map(untar(readFileSync(f(src))));
  const m = JSON.parse(files.get('manifest.json')!.toString());
  const c = m.chain[0];
  const ls = files.get(c.name)!.toString().split('\n');
  ls[seq] = edit(ls[seq]!);
  const b = Buffer.from(ls.join('\n'));
  c.digest = sha(b);
  c.size = b.length;
  writeFileSync(
    f(out),
    tar([
      ['manifest.json', Buffer.from(jcs(m))],
      [c.name, b],
    ]),
  );
}

let HEAD: string;
let OTHER_HEAD: string;
let LOG_VKEY: string;
let GLOG_VKEY: string;
let W1: string;

beforeAll(() => {
  const lines = `${MORE.map((s) => JSON.stringify(s)).join('\n')}\n`;
  writeFileSync(f('step.json'), JSON.stringify(STEP));
  writeFileSync(f('policy.json'), JSON.stringify(POLICY));
  for (const k of ['alice', 'mallory', 'log', 'w1']) ok(['keygen', '-o', `${k}.key`]);
  // The matrix of the v2 publication (secrets file, redacted views), as test/attacks/verdicts.test.ts.
  for (const j of ['runs/today', 'mal']) {
    ok(['init', j, '--format', 'v2']);
    ok(['append', j, '--file', 'step.json']);
    ok(['append', j, '--jsonl'], lines);
  }
  HEAD = ok(['head', 'runs/today']).trim().split(' ')[1]!;
  OTHER_HEAD = ok(['head', 'mal']).trim().split(' ')[1]!;
  ok(['export', 'runs/today', '-o', 'receipt.tar.gz', '--sign', 'alice.key']);
  ok(['export', 'runs/today', '-o', 'receipt.tar']);
  TEMPLATE = readFileSync(f('receipt.tar')).subarray(0, 512);
  ok(['export', 'mal', '-o', 'forged.tar.gz', '--sign', 'mallory.key']);
  ok([
    'publish',
    'runs/today',
    '--policy',
    'policy.json',
    '--opt-in',
    '-o',
    'public.tar',
    '--secrets-out',
    'public.secrets.json',
  ]);
  LOG_VKEY = cli([
    'checkpoint',
    'runs/today',
    '--sign',
    'log.key',
    '--authority',
    'agents.example.com',
    '-o',
    'cp3.checkpoint',
    '--json',
  ]).json.vkey;
  ok(['checkpoint', 'mal', '--sign', 'log.key', '--authority', 'agents.example.com', '-o', 'mal.checkpoint']);
  W1 = ok(['witness', '--key', 'w1.key', '--name', 'witness.example/w1']).split('\n')[0]!.trim();
  ok([
    'witness',
    'cp3.checkpoint',
    '--key',
    'w1.key',
    '--name',
    'witness.example/w1',
    '--state',
    'w1state',
    '--log-key',
    LOG_VKEY,
    '-o',
    'cp3.w1',
  ]);
  // equal-size fork
  mkdirSync(f('g'));
  mkdirSync(f('fk'));
  ok(['init', 'g/today', '--format', 'v2']);
  ok(['append', 'g/today', '--file', 'step.json']);
  cpSync(f('g/today'), f('fk/today'), { recursive: true });
  ok(['append', 'g/today', '--jsonl'], lines);
  writeFileSync(f('alt.json'), JSON.stringify({ input: { user: 'x' }, model: 'm', prompt: 'p', result: 'FORKED' }));
  ok(['append', 'fk/today', '--file', 'alt.json']);
  ok(['append', 'fk/today', '--file', 'alt.json']);
  GLOG_VKEY = cli([
    'checkpoint',
    'g/today',
    '--sign',
    'log.key',
    '--authority',
    'agents.example.com',
    '-o',
    'g3.checkpoint',
    '--json',
  ]).json.vkey;
  ok(['checkpoint', 'fk/today', '--sign', 'log.key', '--authority', 'agents.example.com', '-o', 'f3.checkpoint']);
  ok(['export', 'g/today', '-o', 'g.tar', '--sign', 'alice.key']);
  // rewritten publication: view text, and a disclosed value
  rewriteLine('public.tar', 'view-rewritten.tar', 1, (l) => l.replace('"price":59', '"price":5'));
  rewriteLine('public.tar', 'disclosed-rewritten.tar', 0, (l) => l.replace('"forecast":"sunny"', '"forecast":"rainy"'));
  rewriteLine('public.tar', 'disclosed-number.tar', 0, (l) =>
    l.replace('"high_c":14}', '"high_c":14.0000000000000001}'),
  );
  // duplicate chain entry
  const e = untar(readFileSync(f('receipt.tar.gz')));
  writeFileSync(f('dup.tar'), tar([...e, e[2]!]));
}, 180_000);

let browser: Browser;
let opened: Opened;
beforeAll(async () => {
  browser = await launch();
  opened = await openPage(browser);
}, 120_000);
afterAll(async () => {
  await browser?.close();
});
afterEach(() => {
  expect(opened.offending).toEqual([]);
  expect(opened.errors).toEqual([]);
});

const spec = (n: string): FileSpec => ({ name: n, buffer: readFileSync(f(n)) });
async function both(file: string, p: Pins = {}): Promise<{ cli: ReturnType<typeof cli>; page: Shown }> {
  const c = cli(verifyArgs(file, p));
  return { cli: c, page: await verify(opened.page, pageInputs(dir, file, p)) };
}
const BLANKET = /every (disclosed|shown) value is the original/i;

describe('page and CLI, case by case', () => {
  it("held: the attacker's re-chained receipt against alice's key is invalid on both", async () => {
    const { cli: c, page } = await both('forged.tar.gz', { pubkey: 'alice.key.pub' });
    expect(c.rc).toBe(1);
    expect(page.verdict).toBe('invalid');
  });
  it('held: the same unpinned is intact, NOT authenticated on both', async () => {
    const { cli: c, page } = await both('forged.tar.gz');
    expect([c.rc, c.json.verdict]).toEqual([0, 'intact']);
    expect(page.verdict).toBe('intact');
  });
  it('held: a head of another run is invalid on both', async () => {
    const { cli: c, page } = await both('receipt.tar.gz', { head: OTHER_HEAD });
    expect(c.rc).toBe(1);
    expect(page.verdict).toBe('invalid');
  });
  it('held: a checkpoint of another journal, signed by the same log key, is refused on both', async () => {
    const { cli: c, page } = await both('forged.tar.gz', { checkpoint: 'mal.checkpoint', logKey: LOG_VKEY });
    expect(c.rc).toBe(2);
    expect(page.state).toBe('error');
    expect(Object.values(page.fieldErrors).some((x) => x !== '')).toBe(true);
  });
  it('held: an equal-size checkpoint with another root is FORKED on both', async () => {
    const { cli: c, page } = await both('g.tar', { checkpoint: 'f3.checkpoint', logKey: GLOG_VKEY });
    expect(c.rc).toBe(1);
    expect(page.verdict).toBe('invalid');
    expect(page.problems.map((p) => p.code)).toContain('FORKED');
  });
  it('held: a checkpoint lacking the witness cosignature with quorum 1 is refused on both; cosigned, authenticated on both', async () => {
    const r = await both('receipt.tar.gz', {
      checkpoint: 'cp3.checkpoint',
      logKey: LOG_VKEY,
      witnesses: [W1],
      quorum: '1',
    });
    expect(r.cli.rc).toBe(2);
    expect(r.page.state).toBe('error');
    const g = await both('receipt.tar.gz', { checkpoint: 'cp3.w1', logKey: LOG_VKEY, witnesses: [W1], quorum: '1' });
    expect(g.cli.json.verdict).toBe('authenticated');
    expect(g.page.verdict).toBe('authenticated');
  });
  it('held (page): an empty quorum field with a witness means all of them: a checkpoint lacking the cosignature is refused', async () => {
    const page = await verify(opened.page, {
      receipt: spec('receipt.tar.gz'),
      checkpoint: spec('cp3.checkpoint'),
      logKey: LOG_VKEY,
      witnesses: [W1],
      quorum: '',
    });
    expect(page.verdict).not.toBe('authenticated');
  });

  // ATTACK (succeeded on the CLI; the page and CLI disagreed): `--quorum ""` (an empty variable) was read by
  // the CLI as 0 — a checkpoint with no witness cosignature authenticated under --witness W1 — while the page,
  // whose quorum field is empty by default, required every witness. Repro (before the fix):
  //   stepchain verify receipt.tar.gz --checkpoint cp3.checkpoint --log-key "$LOG_VKEY" --witness "$W1" --quorum ""
  //   → ✔ authenticated, exit 0; the page with the same pins and an empty quorum: refused.
  // The one rule now (spec/PROOFS.md §8.4): the page's empty quorum field is the CLI without --quorum (every
  // witness), so both() pins an empty field as no --quorum; `--quorum ""` itself is a usage error (verdicts.test.ts);
  // a non-empty field that is not such a number is an error on both.
  it('fixed: an empty quorum field is the CLI without --quorum — every witness — and both refuse a checkpoint no witness cosigned', async () => {
    const { cli: c, page } = await both('receipt.tar.gz', {
      checkpoint: 'cp3.checkpoint',
      logKey: LOG_VKEY,
      witnesses: [W1],
      quorum: '',
    });
    expect(page.state).toBe('error');
    expect(c.rc).toBe(2);
    expect(c.json?.authenticated).not.toBe(true);
    const g = await both('receipt.tar.gz', { checkpoint: 'cp3.w1', logKey: LOG_VKEY, witnesses: [W1], quorum: '' });
    expect(g.cli.json.verdict).toBe('authenticated');
    expect(g.page.verdict).toBe('authenticated');
  });
  it('fixed: a non-empty quorum that is not a plain whole number (" ", "-0", "00", "0.0", " 1", "+1", "1e0") is an error on both, even with the cosignature', async () => {
    for (const quorum of [' ', '-0', '00', '0.0', ' 1', '+1', '1e0']) {
      const { cli: c, page } = await both('receipt.tar.gz', {
        checkpoint: 'cp3.w1',
        logKey: LOG_VKEY,
        witnesses: [W1],
        quorum,
      });
      expect({ quorum, rc: c.rc, state: page.state }).toEqual({ quorum, rc: 2, state: 'error' });
      expect(page.fieldErrors.quorum, quorum).not.toBe('');
    }
  });
  it('held (page): a blank quorum (" ") on the page: not authenticated without the cosignature', async () => {
    const page = await verify(opened.page, {
      receipt: spec('receipt.tar.gz'),
      checkpoint: spec('cp3.checkpoint'),
      logKey: LOG_VKEY,
      witnesses: [W1],
      quorum: ' ',
    });
    expect(page.verdict).not.toBe('authenticated');
  });

  it('held: rewritten view text with the original head is not green on the page and listed as not bound on both; no blanket sentence', async () => {
    const { cli: c, page } = await both('view-rewritten.tar', { head: HEAD });
    expect(c.json.report.unbound).toContainEqual({ seq: 1, field: 'result', path: '/result', why: 'view' });
    expect(page.ok).toBe(true);
    expect(await opened.page.getAttribute('#verdict', 'data-unbound')).toBe('2');
    expect([...page.proves, ...page.doesNotProve].join('\n')).not.toMatch(BLANKET);
    expect(page.doesNotProve.some((s) => /NOT bound to the head/.test(s))).toBe(true);
  });
  it('held: a rewritten disclosed value (or its number spelling) is invalid against the original head on both', async () => {
    for (const file of ['disclosed-rewritten.tar', 'disclosed-number.tar']) {
      const { cli: c, page } = await both(file, { head: HEAD });
      expect(c.rc, file).toBe(1);
      expect(page.verdict, file).toBe('invalid');
      expect(
        page.problems.map((p) => p.code),
        file,
      ).toEqual(c.json.report.problems.map((p: { code: string }) => p.code));
    }
  });
  it('held: a duplicate chain entry is rejected on both, with the same codes', async () => {
    const { cli: c, page } = await both('dup.tar', { pubkey: 'alice.key.pub' });
    expect(c.rc).toBe(1);
    expect(['invalid', 'not-a-receipt']).toContain(page.verdict);
    expect(page.problems.map((p) => p.code)).toEqual(c.json.report.problems.map((p: { code: string }) => p.code));
  });
  it('held: a public key file over 64 KiB (the key, then spaces) is an error on both, never "no pin"', async () => {
    writeFileSync(f('bigpub.txt'), Buffer.concat([readFileSync(f('alice.key.pub')), Buffer.alloc(100_000, 0x20)]));
    const { cli: c, page } = await both('receipt.tar.gz', { pubkey: 'bigpub.txt' });
    expect(c.rc).toBe(2);
    expect(page.state).toBe('error');
    expect(page.fieldErrors.key).not.toBe('');
  });
  it("held: mallory's public key on alice's receipt is invalid on both; a private key file as the pin is an error on both", async () => {
    const a = await both('receipt.tar.gz', { pubkey: 'mallory.key.pub' });
    expect(a.cli.rc).toBe(1);
    expect(a.page.verdict).toBe('invalid');
    const b = await both('receipt.tar.gz', { pubkey: 'alice.key' });
    expect(b.cli.rc).toBe(2);
    expect(b.page.state).toBe('error');
    expect(b.page.fieldErrors.key).not.toBe('');
  });
  // PARITY (succeeded, low severity: the strict side errs, nothing is authenticated wrongly): the same log key
  // with one trailing space authenticates on the page (the field is trimmed) while the CLI refuses it as
  // KEY_INVALID (exit 2) — yet the CLI trims the same key read from a --log-key FILE. Repro:
  //   stepchain verify receipt.tar.gz --checkpoint cp3.checkpoint --log-key "$LOG_VKEY "   → exit 2
  //   the page, Log key field "$LOG_VKEY " with the same checkpoint → ✔ authenticated
  it('PARITY: a log key with a trailing space — the page authenticates, the CLI refuses', async () => {
    const spaced = `${LOG_VKEY} `;
    const page = await verify(opened.page, {
      receipt: spec('receipt.tar.gz'),
      checkpoint: spec('cp3.checkpoint'),
      logKey: spaced,
    });
    const c = cli(['verify', 'receipt.tar.gz', '--checkpoint', 'cp3.checkpoint', '--log-key', spaced, '--json']);
    const onPage = page.state === 'error' ? 'refused' : page.verdict;
    const onCli = c.rc === 2 ? 'refused' : c.json?.verdict;
    expect(onPage).toBe(onCli);
  });
});

describe('more than 1000 redacted views (the listing cap)', () => {
  let BIG_HEAD: string;
  beforeAll(() => {
    ok(['init', 'big', '--format', 'v2']); // redacted views exist in v2 publications only
    let lines = '';
    for (let i = 0; i < 1100; i++)
      lines += `${JSON.stringify({ input: { user: `q${i}` }, model: 'm', prompt: 'p', result: { note: 'ok', contact: `u${i}@ex.example.com` } })}\n`;
    ok(['append', 'big', '--jsonl'], lines);
    BIG_HEAD = ok(['head', 'big']).trim().split(' ')[1]!;
    ok(['publish', 'big', '--policy', 'policy.json', '--opt-in', '-o', 'big.tar', '--secrets-out', 'big.secrets.json']);
    rewriteLine('big.tar', 'big-rewritten.tar', 1050, (l) => l.replace('"note":"ok"', '"note":"APPROVED BY CFO"'));
  }, 120_000);
  it('held: the view rewritten at seq 1050 (past the first 1000 listed) is still counted on the CLI and badged on the page', async () => {
    const c = cli(['verify', 'big-rewritten.tar', '--head', BIG_HEAD, '--json']);
    expect(c.json.ok).toBe(true);
    expect(c.json.report.unbound_count).toBe(1100);
    const h = cli(['verify', 'big-rewritten.tar', '--head', BIG_HEAD]);
    expect(h.err).toMatch(/NOT BOUND this receipt shows 1100 values/);
    expect(h.err).toMatch(/and 1080 more/);
    const page = await verify(opened.page, { receipt: spec('big-rewritten.tar'), head: BIG_HEAD });
    expect(page.ok).toBe(true);
    expect(await opened.page.getAttribute('#verdict', 'data-unbound')).toBe('1100');
    expect([...page.proves, ...page.doesNotProve].join('\n')).not.toMatch(BLANKET);
    for (let i = 0; i < 21; i++) await opened.page.click('#next');
    await opened.page.waitForSelector('#step-rows tr[data-index="1050"]');
    expect(
      await opened.page.$$eval('#step-rows tr[data-index="1050"] td.unbound', (tds) =>
        tds.map((td) => td.textContent ?? ''),
      ),
    ).toEqual([expect.stringMatching(/^not bound.*APPROVED BY CFO/)]);
    await opened.page.click('#step-rows tr[data-index="1050"] button');
    await opened.page.waitForSelector('#step-tree');
    expect(await opened.page.$eval('#step-tree span.unbound[data-slot="result"]', (x) => x.textContent)).toMatch(
      /^not bound.*APPROVED BY CFO/s,
    );
  });
});
