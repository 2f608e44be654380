/**
 * The verification page (dist/page/verify.html) in a real headless Chromium, driven as an auditor would:
 * valid, signed (right and wrong key), tampered, published receipts and a disclosure proof; pins that
 * cannot be used; drag and drop; the step list and one step opened; keyboard use; and the fallback to
 * the page's own thread when no worker may start. Every test also checks that the page made no request
 * beyond its own file and its worker's blob: URL (test/page/network.test.ts proves that in depth).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { tempDir } from '../helpers/tmp.js';
import { launch, openPage, pageHtml, reportJson, rows, shown, verify, type FileSpec, type Opened } from './browser.js';
import { exportReceipt } from '../../src/receipt/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { agentReceipts, type AgentReceipts } from './fixtures.js';

const dir = tempDir('stepchain-page-');
const file = (path: string, name = path.slice(path.lastIndexOf('/') + 1)): FileSpec => ({
  name,
  buffer: readFileSync(path),
});

let browser: Browser;
let f: AgentReceipts;
let opened: Opened;

beforeAll(async () => {
  [browser, f] = await Promise.all([launch(), agentReceipts(dir)]);
  opened = await openPage(browser);
});
afterAll(async () => {
  await browser?.close();
});
afterEach(() => {
  expect(opened.offending).toEqual([]);
  expect(opened.errors).toEqual([]);
});

describe('verdicts', () => {
  test("a valid unpinned receipt: intact but NOT authenticated, the CLI's headline, proves and does not prove, and the worker did the work", async () => {
    const { page } = opened;
    expect(await page.evaluate(() => document.body.dataset.engine)).toBe('worker');
    const v = await verify(page, { receipt: file(f.signed) });
    expect(v.ok).toBe(true);
    expect(v.verdict).toBe('intact');
    expect(v.headline).toBe(
      `⚠ intact, NOT authenticated receipt trip.tar.gz: ${f.steps} steps, head ${f.head} (seq ${f.steps - 1})`,
    );
    expect(v.problems).toEqual([]);
    expect(v.proves[0]).toMatch(
      /^Steps 0–3 of journal .* form an unbroken hash chain from its genesis to head sha256:/,
    );
    expect(v.doesNotProve.some((s) => s.startsWith('That key sha256:'))).toBe(true);
    expect(await page.textContent('#scope')).toMatch(
      /^scope: complete \(steps 0\.\.3\); signed by: sha256:[0-9a-f]{64}$/,
    );
    expect(await page.textContent('#to-pin')).toContain(
      "nothing ties this receipt to anyone: pin the signer's public key",
    );
  });

  test('signed with the pinned key: valid, and the key is named as pinned', async () => {
    const v = await verify(opened.page, { receipt: file(f.signed), key: file(f.publicKey), head: f.head });
    expect(v.ok).toBe(true);
    expect(v.proves.some((s) => s.includes('(the key you pinned)'))).toBe(true);
    expect(v.proves).toContain(`The receipt ends at the head you pinned (${f.head}).`);
    expect(v.verdict).toBe('authenticated');
    expect(await opened.page.$('#to-pin')).toBeNull();
  });

  test('signed, another key pinned: KEY_MISMATCH at the signature entry', async () => {
    const v = await verify(opened.page, { receipt: file(f.signed), key: file(f.otherKey) });
    expect(v.ok).toBe(false);
    expect(v.headline).toBe('✘ INVALID receipt trip.tar.gz: 1 problem');
    expect(v.problems).toHaveLength(1);
    expect(v.problems[0]).toMatchObject({ code: 'KEY_MISMATCH', location: 'manifest.sig.json' });
    expect(v.problems[0]!.message).toMatch(
      /^the receipt is signed by key sha256:[0-9a-f]{64}, not by the pinned key sha256:[0-9a-f]{64}$/,
    );
    expect(v.proves).toEqual([]);
    expect(v.doesNotProve).toEqual([
      'Anything: the receipt failed verification, so none of its contents can be relied on.',
    ]);
  });

  test('tampered: each problem with its code and location, the step flagged, and "show this step" opens it', async () => {
    const { page } = opened;
    const v = await verify(page, { receipt: file(f.tampered) });
    expect(v.ok).toBe(false);
    expect(v.problems.map((p) => [p.code, p.location])).toEqual([
      ['DIGEST_MISMATCH', 'chain/0000000000000000.jsonl'],
      ['HASH_MISMATCH', 'chain/0000000000000000.jsonl:1, seq 0, step_hash'],
    ]);
    expect(v.problems[1]!.message).toMatch(
      /^stored step_hash sha256:[0-9a-f]{64} does not match the record's content \(sha256:[0-9a-f]{64}\)/,
    );
    const list = await rows(page);
    expect(list.map((r) => r.flagged)).toEqual([true, false, false, false]);
    expect(list[0]!.cells[0]).toContain('0');
    expect(list[0]!.cells[5]).toContain('"forecast": "snowy"');
    await page.click('#problems li:nth-child(2) button');
    await page.waitForSelector('#step-title');
    expect(await page.textContent('#step-title')).toBe('Step 0 — chain/0000000000000000.jsonl:1');
    expect(await page.textContent('#step-detail .error-box')).toContain('problems of its own');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('step-title');
    await page.check('#only-flagged');
    await page.waitForFunction(() => document.querySelectorAll('#step-rows tr').length === 1);
    expect(await page.textContent('#page-info')).toBe('Steps with problems 1–1 of 1 (page 1 of 1)');
  });

  test('a published receipt with its key: valid, its redactions shown as markers in the list and in the step', async () => {
    const { page } = opened;
    const v = await verify(page, { receipt: file(f.published), key: file(f.publicKey) });
    expect(v.ok).toBe(true);
    expect(v.proves.some((s) => s.startsWith('Every redaction marker in the chain is declared in the manifest'))).toBe(
      true,
    );
    expect(v.doesNotProve.some((s) => s.startsWith('The original head'))).toBe(true);
    expect(await page.textContent('#facts')).toContain('published receipt3 declared redactions');
    const list = await rows(page);
    expect(list[2]!.redacted).toEqual(['secrets']);
    expect(list[2]!.cells[5]).toContain('redacted · rule secrets');
    await page.click('#step-rows tr:nth-child(3) button');
    await page.waitForSelector('#step-tree');
    const markers = await page.$$eval('#step-tree .redacted', (spans) => spans.map((s) => s.getAttribute('data-rule')));
    expect(markers.sort()).toEqual(['secrets', 'secrets', 'tool-secrets']);
    const tree = await page.textContent('#step-tree');
    expect(tree).not.toContain('sk-live-'); // the secret the demo planted is not in the published receipt
  });

  test('a disclosure proof: the disclosed value, as `stepchain disclose --check` says it', async () => {
    const v = await verify(opened.page, { receipt: file(f.published), key: file(f.publicKey), proof: file(f.proof) });
    expect(v.ok).toBe(true);
    expect(v.disclosure?.ok).toBe(true);
    const proof = JSON.parse(readFileSync(f.proof, 'utf8')) as {
      seq: number;
      path: string;
      rule: string;
      value: unknown;
    };
    expect(v.disclosure?.headline).toBe(
      `✔ disclosure holds: seq ${proof.seq}, ${proof.path} (rule ${proof.rule}) = ${JSON.stringify(proof.value)}`,
    );
    const forged = { ...proof, value: 'something else' };
    const bad = await verify(opened.page, {
      receipt: file(f.published),
      proof: { name: 'forged.json', buffer: Buffer.from(JSON.stringify(forged)) },
    });
    expect(bad.disclosure).toMatchObject({ ok: false, codes: ['COMMITMENT_MISMATCH'] });
    expect(bad.disclosure?.headline).toBe(`✘ disclosure does NOT hold for seq ${proof.seq}, ${proof.path}`);
  });

  test('the JSON report is the report `stepchain verify --json` prints', async () => {
    await verify(opened.page, { receipt: file(f.tampered) });
    const doc = await reportJson(opened.page);
    expect(doc).toMatchObject({
      format: 'stepchain-cli/v1',
      command: 'verify',
      ok: false,
      kind: 'receipt',
      file: 'trip-tampered.tar',
    });
    expect((doc.report.problems as unknown[]).length).toBe(2);
  });
});

describe('hostile content', () => {
  test('markup inside a step is shown as text: no element is made from it and nothing is fetched', async () => {
    const hostile =
      '<img src="http://127.0.0.1:9/x" onerror="document.title=\'owned\'"><script>document.title=\'owned\'</script>';
    const journal = await new MemoryStore().create('hostile');
    await journal.append({
      input: { html: hostile },
      model: hostile,
      prompt: hostile,
      tool_call: { name: hostile, arguments: {} },
      result: hostile,
    });
    const out = join(dir, 'hostile.tar');
    await exportReceipt(journal, { out });
    const { page } = opened;
    const v = await verify(page, { receipt: file(out) });
    expect(v.ok).toBe(true);
    await page.click('#step-rows tr:nth-child(1) button');
    await page.waitForSelector('#step-tree');
    expect(await page.$$('main img, main script, #step-tree *:not(span)')).toEqual([]);
    expect(await page.textContent('#step-rows')).toContain(hostile.slice(0, 60)); // previews are cut at 96 characters
    expect(await page.textContent('#step-tree')).toContain(JSON.stringify(hostile));
    expect(await page.title()).toBe('Verify a stepchain receipt (offline)');
  });
});

describe('inputs', () => {
  test('a pin that cannot be used stops verification with an error on its field, as the CLI exits 2', async () => {
    const { page } = opened;
    const v = await verify(page, {
      receipt: file(f.signed),
      key: { name: 'alice.key', buffer: readFileSync(join(dir, 'alice.key')) },
      head: 'sha256:nope',
    });
    expect(v.state).toBe('error');
    expect(v.ok).toBeNull();
    expect(v.fieldErrors.key).toBe(
      'public key file alice.key: is a PEM private key ("BEGIN PRIVATE KEY"); pin the public key (keyfile.pub), and keep the private key private',
    );
    expect(v.fieldErrors.head).toBe('the pinned head must be "sha256:" followed by 64 lowercase hex digits');
    expect(await page.getAttribute('#pubkey', 'aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pubkey');
    expect(v.headline).toMatch(/^error: public key file alice\.key: /);
  });

  test('an earlier checkpoint and the log key: a receipt that extends it passes, a truncated one fails SIZE_DECREASED, an unusable pin is an error on its field', async () => {
    const { page } = opened;
    const { FileStore } = await import('../../src/store/index.js');
    const p = await import('../../src/proofs/index.js');
    const { genesisHash } = await import('../../src/record/formats.js');
    const { receiptBytes } = await import('../../src/receipt/node.js');
    const store = new FileStore(join(dir, 'proofs-store'), { fsync: 'none' });
    const j = await store.create('pg');
    await j.appendMany(Array.from({ length: 30 }, (_, i) => ({ input: { i } })));
    const log = p.noteSigner(
      p.journalOrigin({ authority: 'agents.example.com', journalId: 'pg', genesisHash: genesisHash(j.genesis) }),
      new Uint8Array(32).fill(4),
    );
    const first = await j.checkpoint(log);
    await j.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: { more: i } })));
    const second = await j.checkpoint(log);
    const member = await p.proveReceiptRange((await j.treeView()).reader, second.note, 25, 35);
    const spec = (name: string, bytes: Uint8Array | string): FileSpec => ({ name, buffer: Buffer.from(bytes) });
    const logKey = p.verifierKey(log);
    const whole = await verify(page, {
      receipt: spec('whole.tar', await receiptBytes(j)),
      checkpoint: spec('first.checkpoint', first.note),
      logKey,
    });
    expect(whole.problems).toEqual([]);
    expect(whole.ok).toBe(true);
    expect(whole.proves.some((s) => s.includes('extends the earlier checkpoint of size 30'))).toBe(true);
    const partial = await verify(page, {
      receipt: spec('part.tar', await receiptBytes(j, { from: 25, to: 35, extra: { proof: member as never } })),
      logKey,
    });
    expect(partial.ok).toBe(true);
    expect(partial.proves.some((s) => s.includes('steps 25..35 are in the tree of'))).toBe(true);
    const cut = await verify(page, {
      receipt: spec('cut.tar', await receiptBytes(j, { to: 20 })),
      checkpoint: spec('first.checkpoint', first.note),
      logKey,
    });
    expect(cut.ok).toBe(false);
    expect(cut.problems.map((x) => x.code)).toEqual(['SIZE_DECREASED']);
    const badKey = await verify(page, {
      receipt: spec('whole.tar', await receiptBytes(j)),
      checkpoint: spec('first.checkpoint', first.note),
      logKey: 'nope',
    });
    expect(badKey.state).toBe('error');
    expect(badKey.fieldErrors.logkey).toMatch(/^the log key: /);
    const badCp = await verify(page, {
      receipt: spec('whole.tar', await receiptBytes(j)),
      checkpoint: spec('x.checkpoint', 'garbage'),
    });
    expect(badCp.state).toBe('error');
    expect(badCp.fieldErrors.checkpoint).toMatch(/^earlier checkpoint x\.checkpoint: /);
    await j.close();
  });

  test('independent time and a 2-of-3 co-signature policy (spec/TIME.md): verified in the browser as on the CLI', async () => {
    const { page } = opened;
    const a = await import('../../src/attest/index.js');
    const { genesisHash } = await import('../../src/record/formats.js');
    const { receiptBytes, keygen } = await import('../../src/receipt/node.js');
    const { startTsa } = await import('../helpers/tsa.js');
    const tsa = await startTsa(join(dir, 'tsa'));
    try {
      const j = await new MemoryStore().create('page-attest');
      await j.appendMany(Array.from({ length: 4 }, (_, i) => ({ input: { i } })));
      const head = (await j.head())!;
      const g = genesisHash(j.genesis);
      const subject = a.timestampSubject(g, head.seq, head.step_hash);
      const nonce = Uint8Array.of(9, 9, 9, 9);
      const reply = await fetch(tsa.url, { method: 'POST', body: Buffer.from(a.timeStampRequest(subject, nonce)) });
      const token = a.tokenFromResponse(new Uint8Array(await reply.arrayBuffer()), subject, nonce);
      if (!token.ok) throw new Error(token.reason);
      const keys = await Promise.all(['ada', 'ben', 'cy'].map((n) => keygen(join(dir, `${n}.key`))));
      const { readKeyFile } = await import('../../src/receipt/node.js');
      let envelope = a.cosign(
        a.statementBytes({ from: 0, genesis_hash: g, prev_hash: g, step_hash: head.step_hash, to: head.seq }),
        await readKeyFile(keys[0]!.keyFile),
      );
      envelope = a.cosign(envelope, await readKeyFile(keys[1]!.keyFile));
      const receipt = {
        name: 'attested.tar',
        buffer: await receiptBytes(j, {
          extra: {
            timestamps: [
              { seq: head.seq, step_hash: head.step_hash, token: Buffer.from(token.token).toString('base64') },
            ],
            cosignatures: [envelope],
          } as never,
        }),
      };
      const cosigners = keys.map((k) => file(k.publicKeyFile));
      const good = await verify(page, { receipt, tsaCerts: [file(tsa.cert.tsa)], cosigners, threshold: '2' });
      expect(good.problems).toEqual([]);
      expect(good.verdict).toBe('authenticated');
      expect(good.proves.join('\n')).toMatch(/Steps 0–3 existed no later than .*, per TSA Test TSA/);
      expect(good.proves.join('\n')).toMatch(
        /Co-signer ada\.key\.pub \(sha256:[0-9a-f]{64}\), whom you pinned, signed steps 0–3/,
      );
      expect(good.doesNotProve.join('\n')).not.toMatch(/content and timestamps are true/);
      const short = await verify(page, { receipt, cosigners, threshold: '3' });
      expect(short.problems.map((x) => x.code)).toEqual(['COSIGN_QUORUM']);
      const wrongTsa = await verify(page, { receipt, tsaCerts: [file(tsa.cert.other)] });
      expect(wrongTsa.problems.map((x) => x.code)).toEqual(['TIMESTAMP_SIGNER']);
      const unusable = await verify(page, {
        receipt,
        tsaCerts: [file(join(dir, 'ada.key.pub'))],
        cosigners,
        threshold: '4',
      });
      expect(unusable.state).toBe('error');
      expect(unusable.fieldErrors.tsacert).toMatch(/^TSA certificate ada\.key\.pub: /);
      expect(unusable.fieldErrors.threshold).toMatch(/threshold must be/);
    } finally {
      await tsa.close();
    }
  });

  test('no receipt chosen: an error, nothing verified', async () => {
    const { page } = opened;
    await page.locator('#form').evaluate((form: HTMLFormElement) => form.reset());
    await page.click('#verify');
    await page.waitForFunction(() => document.body.dataset.state === 'error');
    expect(await page.textContent('#verdict')).toBe('error: choose a receipt file first (.tar or .tar.gz)');
  });

  test('drag and drop: a receipt, its key and a proof dropped together go to their fields', async () => {
    const { page } = opened;
    await page.locator('#form').evaluate((form: HTMLFormElement) => form.reset());
    const files = [file(f.published), file(f.publicKey), file(f.proof)].map((x) => ({
      name: x.name,
      b64: Buffer.from(x.buffer).toString('base64'),
    }));
    const dt = await page.evaluateHandle((list) => {
      const d = new DataTransfer();
      for (const x of list) d.items.add(new File([Uint8Array.from(atob(x.b64), (c) => c.charCodeAt(0))], x.name));
      return d;
    }, files);
    await page.dispatchEvent('#drop', 'drop', { dataTransfer: dt });
    expect(await page.textContent('#dropped')).toBe(
      'Dropped — receipt: trip-public.tar.gz; public key: alice.key.pub; disclosure proof: proof.json',
    );
    await page.click('#verify');
    await page.waitForFunction(() => document.body.dataset.state === 'done');
    const v = await shown(page);
    expect(v.ok).toBe(true);
    expect(v.proves.some((s) => s.includes('(the key you pinned)'))).toBe(true);
    expect(v.disclosure?.ok).toBe(true);
  });

  test('keyboard only: tab to the receipt, verify with Enter, open a step with Enter, close it, focus returns', async () => {
    const { page } = opened;
    await page.locator('#form').evaluate((form: HTMLFormElement) => form.reset());
    await page.setInputFiles('#receipt', {
      name: 'trip.tar',
      mimeType: 'application/x-tar',
      buffer: readFileSync(f.unsigned),
    });
    await page.focus('#receipt');
    // receipt → key → head → proof → log key → earlier checkpoint → witnesses → quorum → consistency proof →
    // TSA certificates → co-signer keys → threshold → approver keys → Verify
    for (let i = 0; i < 13; i++) await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('verify');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.body.dataset.state === 'done');
    expect((await shown(page)).ok).toBe(true);
    // Focus lands on the verdict (issue 35), not on the page's body.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('verdict');
    await page.focus('#step-rows tr:nth-child(2) button');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#step-title');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('step-title');
    expect(await page.getAttribute('#step-rows tr:nth-child(2) button', 'aria-expanded')).toBe('true');
    await page.click('#step-detail button.secondary');
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.getAttribute('data-index'))).toBe('1');
  });

  test('every input has a label and the verdict is announced (aria-live)', async () => {
    const { page } = opened;
    const unlabelled = await page.$$eval('input', (inputs) =>
      inputs.filter((i) => !(i as HTMLInputElement).labels?.length).map((i) => i.id),
    );
    expect(unlabelled).toEqual([]);
    expect(await page.getAttribute('#verdict', 'aria-live')).toBe('polite');
    expect(await page.getAttribute('#verdict', 'role')).toBe('status');
    expect(await page.textContent('#offline')).toContain('This page makes no network requests.');
  });
});

describe('without a worker', () => {
  test('when the browser refuses the worker, the page says so and verifies on its own thread', async () => {
    // The same page with `worker-src blob:` taken out of its CSP: the browser then refuses the worker.
    const html = pageHtml().replace('worker-src blob:; ', '');
    expect(html).not.toContain('worker-src');
    const path = join(dir, 'no-worker.html');
    writeFileSync(path, html);
    const alt = await openPage(browser, pathToFileURL(path).href);
    try {
      expect(await alt.page.evaluate(() => document.body.dataset.engine)).toBe('main-thread');
      expect(await alt.page.textContent('#engine')).toMatch(
        /^No Web Worker could start \(.+\): verifying on this page's thread, in slices/,
      );
      const v = await verify(alt.page, { receipt: file(f.tampered) });
      expect(v.problems.map((p) => p.code)).toEqual(['DIGEST_MISMATCH', 'HASH_MISMATCH']);
      expect(alt.offending).toEqual([]);
    } finally {
      await alt.context.close();
    }
  });
});
