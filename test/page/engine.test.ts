/**
 * The page's engine, summaries and pins, in Node (no browser): the report equals the CLI's library path
 * (verifyReceiptFile with the published hooks), the step list is bounded by KEEP_CHARS and a step beyond
 * it is read again from the file, a changed file is noticed, and pins follow the CLI's rules.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, test } from 'vitest';
import { publishedReceiptHooks } from '../../src/redact/index.js';
import { verifyReceiptFile } from '../../src/receipt/index.js';
import { Session, type ReceiptFile } from '../../src/page/engine.js';
import { serveDigests } from '../../src/page/entry-hasher.js';
import { verifyReceipt } from '../../src/verifier/index.js';
import { readPins, MAX_KEY_FILE_BYTES } from '../../src/page/pins.js';
import { preview, promptPreview, segmentsText, summarize } from '../../src/page/summary.js';
import { tempDir } from '../helpers/tmp.js';
import { agentReceipts } from './fixtures.js';

const dir = tempDir('stepchain-page-engine-');
const fixtures = agentReceipts(dir);
const file = async (path: string): Promise<ReceiptFile> => new Blob([await readFile(path)]);

describe('Session', () => {
  test.each(['signed', 'unsigned', 'tampered', 'published'] as const)(
    'the %s receipt gets the report stepchain verify computes',
    async (which) => {
      const f = await fixtures;
      const session = new Session();
      const outcome = await session.verify({ receipt: await file(f[which]), name: which });
      const cli = await verifyReceiptFile(f[which], publishedReceiptHooks().options);
      expect(outcome.report).toEqual(cli);
      expect(outcome.listed).toBe(f.steps);
      expect(outcome.published).toBe(which === 'published');
      expect(outcome.flagged).toBe(which === 'tampered' ? 1 : 0);
    },
  );

  test("with the chain entries hashed across a real MessageChannel (the page's second worker), every report is the same", async () => {
    const f = await fixtures;
    const channel = new MessageChannel();
    serveDigests(channel.port2);
    try {
      for (const which of ['signed', 'unsigned', 'tampered', 'published'] as const) {
        const session = new Session();
        session.hashOn(channel.port1);
        const outcome = await session.verify({ receipt: await file(f[which]), name: which });
        expect(outcome.entryHash).toBe('second worker');
        expect(outcome.report).toEqual(await verifyReceiptFile(f[which], publishedReceiptHooks().options));
      }
    } finally {
      channel.port1.close();
      channel.port2.close();
    }
    // The verifier compares the digest it is given with the manifest's: a hasher answering another is caught.
    const wrong = await verifyReceipt(await readFile(f.signed), {
      entryHasher: () => ({ update: () => {}, digest: () => Promise.resolve(new Uint8Array(32)) }),
    });
    expect(wrong.ok).toBe(false);
    expect(wrong.problems.map((p) => p.code)).toEqual(['DIGEST_MISMATCH']);
  });

  test('rows summarize model, tool, prompt and result; markers stay markers; flagged rows are listed apart', async () => {
    const f = await fixtures;
    const session = new Session();
    await session.verify({ receipt: await file(f.tampered), name: 't' });
    const rows = session.rows(0, 100);
    expect(rows.map((r) => r.seq)).toEqual([...Array(f.steps).keys()]);
    expect(segmentsText(rows[0]!.model)).toBe('gpt-4o-2024-08-06');
    expect(segmentsText(rows[0]!.tool)).toBe('get_weather');
    expect(segmentsText(rows[0]!.result)).toContain('"forecast": "snowy"');
    expect(session.rows(0, 100, 'flagged').map((r) => [r.seq, r.clean])).toEqual([[0, false]]);
    // Step 1's 100 KB result is a blob: the row shows its content, resolved from the kept blob.
    expect(segmentsText(rows[1]!.result)).toMatch(/^\{"count": 420, "flights": \[/);

    await session.verify({ receipt: await file(f.published), name: 'p' });
    const published = session.rows(0, 100);
    expect(published.map((r) => r.redactions)).toEqual([0, 0, 3, 0]);
    expect(published[2]!.result.filter((s) => s.kind === 'redacted')).toMatchObject([{ rule: 'secrets' }]);
    expect(segmentsText(published[2]!.result)).toContain('"contact": [redacted: secrets]');
  });

  test('beyond KEEP_CHARS the text is not kept; opening such a step reads it again and checks the second pass', async () => {
    const f = await fixtures;
    const bytes = await readFile(f.unsigned);
    const small = new Session(2000); // room for the first line or two only
    const outcome = await small.verify({ receipt: new Blob([bytes]), name: 'u' });
    expect(outcome.kept).toBeLessThan(outcome.listed);
    const rows = small.rows(0, 100);
    const last = rows[rows.length - 1]!;
    expect(last.kept).toBe(false);
    const detail = await small.step(last.index);
    expect(detail.reread).toBe(true);
    const full = new Session();
    await full.verify({ receipt: new Blob([bytes]), name: 'u' });
    const expected = await full.step(last.index);
    expect(expected.reread).toBe(false);
    expect(detail.text).toBe(expected.text);
    expect(detail.row.step_hash).toBe(expected.row.step_hash);
  });

  test('a file that changed since it was verified is refused when a step is read again', async () => {
    const f = await fixtures;
    let current = await readFile(f.unsigned);
    const changing: ReceiptFile = {
      get size() {
        return current.length;
      },
      stream: () => new Blob([current]).stream(),
    };
    const session = new Session(2000);
    const outcome = await session.verify({ receipt: changing, name: 'u' });
    expect(outcome.report.ok).toBe(true);
    current = await readFile(f.tampered);
    await expect(session.step(outcome.listed - 1)).rejects.toThrow(/changed since it was verified/);
  });

  test('find locates a step by seq and by file and line', async () => {
    const f = await fixtures;
    const session = new Session();
    await session.verify({ receipt: await file(f.unsigned), name: 'u' });
    expect(session.find({ seq: 2 })).toBe(2);
    expect(session.find({ file: 'chain/0000000000000000.jsonl', line: 3 })).toBe(2);
    expect(session.find({ seq: 99 })).toBe(-1);
  });

  test('a disclosure proof gets the verdict `stepchain disclose --check` prints', async () => {
    const f = await fixtures;
    const session = new Session();
    const outcome = await session.verify({
      receipt: await file(f.published),
      name: 'p',
      proof: { name: 'proof.json', bytes: await readFile(f.proof) },
    });
    expect(outcome.disclosure).toMatchObject({ ok: true, kind: 'value', receipt_ok: true });
    const broken = await session.verify({
      receipt: await file(f.published),
      name: 'p',
      proof: { name: 'proof.json', bytes: new TextEncoder().encode('{"format":') },
    });
    expect(broken.disclosure).toMatchObject({ ok: false, problems: [{ code: 'PROOF_INVALID' }] });
    expect(broken.disclosure!.problems[0]!.message).toMatch(/^cannot read proof\.json as JSON: /);
  });
});

describe('summaries', () => {
  const none = () => null;
  test.each([
    ['a string is shown without quotes', 'You are careful.', 'You are careful.'],
    ['an object compactly', { a: 1, b: [true, null] }, '{"a": 1, "b": [true, null]}'],
    ['a long value is cut with an ellipsis', 'x'.repeat(200), `${'x'.repeat(95)}…`],
    [
      'a redaction marker as a marker',
      { k: { '$stepchain:redacted': { commitment: 'sha256:' + '0'.repeat(64), rule: 'secrets' } } },
      '{"k": [redacted: secrets]}',
    ],
    [
      'an unresolved blob as a reference',
      { '$stepchain:blob': { digest: 'sha256:' + 'a'.repeat(64), size: 12 } },
      `[blob sha256:aaaaaaaaaaaa…, 12 bytes]`,
    ],
  ])('%s', (_, value, expected) => {
    expect(segmentsText(preview(value, none))).toBe(expected);
  });

  test('a prompt of chat messages reads as how many, then the last one', () => {
    expect(
      segmentsText(
        promptPreview(
          [
            { role: 'system', content: 'Be brief.' },
            { content: 'Hi', role: 'user' },
          ],
          none,
        ),
      ),
    ).toBe('2 messages, last user: Hi');
    expect(
      segmentsText(
        promptPreview(
          [
            {
              role: 'user',
              content: { '$stepchain:redacted': { commitment: 'sha256:' + '1'.repeat(64), rule: 'prompts' } },
            },
          ],
          none,
        ),
      ),
    ).toBe('1 message, last user: [redacted: prompts]');
    expect(segmentsText(promptPreview([1, 2], none))).toBe('[1, 2]');
  });

  test('a row of a line whose text was not kept says so and shows nothing of it', () => {
    const row = summarize(
      { index: 3, seq: 3, file: 'chain/x', line: 4, clean: true, step_hash: null, blobs: 0 },
      null,
      none,
    );
    expect(row).toMatchObject({ kept: false, model: [], prompt: [], result: [], redactions: 0 });
  });
});

describe('pins', () => {
  const key = (text: string | Uint8Array, size?: number) => {
    const bytes = typeof text === 'string' ? new TextEncoder().encode(text) : text;
    return { name: 'k.pub', size: size ?? bytes.length, bytes };
  };
  test.each([
    ['no pins', { key: null, head: '' }, { ok: true }],
    [
      'a head with surrounding whitespace',
      { key: null, head: ` sha256:${'a'.repeat(64)}\n` },
      { ok: true, expectHead: `sha256:${'a'.repeat(64)}` },
    ],
    [
      'a head of only spaces is a pin that cannot be used',
      { key: null, head: '   ' },
      { ok: false, errors: [{ field: 'head' }] },
    ],
    ['an uppercase head', { key: null, head: `sha256:${'A'.repeat(64)}` }, { ok: false, errors: [{ field: 'head' }] }],
    [
      'an empty key file',
      { key: key(''), head: '' },
      { ok: false, errors: [{ field: 'key', message: 'public key file k.pub: is empty (0 bytes)' }] },
    ],
    [
      'a private key',
      { key: key('-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n'), head: '' },
      { ok: false, errors: [{ field: 'key' }] },
    ],
    [
      'an oversized key file',
      { key: key(new Uint8Array(10), MAX_KEY_FILE_BYTES + 1), head: '' },
      {
        ok: false,
        errors: [
          {
            field: 'key',
            message: `public key file k.pub: is ${MAX_KEY_FILE_BYTES + 1} bytes; a public key file is at most ${MAX_KEY_FILE_BYTES}`,
          },
        ],
      },
    ],
    [
      'both wrong: both reported',
      { key: key('nope'), head: 'sha256:' },
      { ok: false, errors: [{ field: 'key' }, { field: 'head' }] },
    ],
  ])('%s', (_, input, expected) => {
    expect(readPins(input)).toMatchObject(expected);
  });

  test('a usable key file decodes to its 32 bytes', async () => {
    const f = await fixtures;
    const pins = readPins({ key: key(await readFile(f.publicKey, 'utf8')), head: '' });
    expect(pins.ok && pins.publicKey?.length).toBe(32);
  });
});

describe('the earlier checkpoint and the log key (spec/PROOFS.md §9.8), as stepchain verify --checkpoint --log-key', () => {
  const proofs = async () => {
    const { FileStore } = await import('../../src/store/index.js');
    const p = await import('../../src/proofs/index.js');
    const { genesisHash } = await import('../../src/record/formats.js');
    const { receiptBytes } = await import('../../src/receipt/node.js');
    const store = new FileStore(`${dir}/cp-${Math.random().toString(16).slice(2)}`, { fsync: 'none' });
    const j = await store.create('page');
    await j.appendMany(Array.from({ length: 30 }, (_, i) => ({ input: { i } })));
    const origin = p.journalOrigin({
      authority: 'agents.example.com',
      journalId: 'page',
      genesisHash: genesisHash(j.genesis),
    });
    const log = p.noteSigner(origin, new Uint8Array(32).fill(5));
    const first = await j.checkpoint(log);
    await j.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: { more: i } })));
    const second = await j.checkpoint(log);
    const member = await p.proveReceiptRange((await j.treeView()).reader, second.note, 0, 39);
    const receipt = new Blob([Uint8Array.from(await receiptBytes(j, { extra: { proof: member as never } }))]);
    const truncated = new Blob([Uint8Array.from(await receiptBytes(j, { to: 20 }))]);
    return { vkey: p.verifierKey(log), first: first.note, receipt, truncated };
  };

  test('a receipt that extends the earlier checkpoint passes with the log key pinned; a truncated one fails SIZE_DECREASED', async () => {
    const t = await proofs();
    const pins = readPins({ key: null, head: '', logKey: t.vkey, checkpoint: { name: 'a.checkpoint', text: t.first } });
    expect(pins.ok).toBe(true);
    if (!pins.ok) return;
    const session = new Session();
    const good = await session.verify({
      receipt: t.receipt,
      name: 'r',
      logKey: pins.logKey!,
      checkpoint: pins.checkpoint!,
    });
    expect(good.report.problems).toEqual([]);
    expect((good.report as { tlog?: { pinned: boolean; extends: { size: number } | null } }).tlog).toMatchObject({
      pinned: true,
      extends: { size: 30 },
    });
    const bad = await session.verify({
      receipt: t.truncated,
      name: 't',
      logKey: pins.logKey!,
      checkpoint: pins.checkpoint!,
    });
    expect(bad.report.problems.map((p) => p.code)).toEqual(['SIZE_DECREASED']);
  });

  test('a log key or a checkpoint that cannot be used is an error on its field, never "no pin"', async () => {
    const t = await proofs();
    expect(readPins({ key: null, head: '', logKey: 'not a vkey' })).toMatchObject({
      ok: false,
      errors: [{ field: 'logkey' }],
    });
    expect(readPins({ key: null, head: '', checkpoint: { name: 'x', text: 'garbage' } })).toMatchObject({
      ok: false,
      errors: [{ field: 'checkpoint' }],
    });
    const other = (await import('../../src/proofs/index.js')).noteSigner(
      'agents.example.com/page/' + 'a'.repeat(64),
      new Uint8Array(32).fill(6),
    );
    const otherKey = (await import('../../src/proofs/index.js')).verifierKey(other);
    expect(
      readPins({ key: null, head: '', logKey: otherKey, checkpoint: { name: 'a.checkpoint', text: t.first } }),
    ).toMatchObject({ ok: false, errors: [{ field: 'checkpoint' }] });
  });
});
