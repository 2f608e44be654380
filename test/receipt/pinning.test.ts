/**
 * Pins through the library (spec/RECEIPT.md §5.2, §7 step 0; issue 14 item 1): a pinned key or head that is
 * given but cannot be used is a problem (KEY_MISMATCH, HEAD_MISMATCH), never "unpinned" — for every entry
 * point that takes pins: verifyReceipt, verifyReceiptFile, verifyPublishedReceipt, verifyDisclosure and the
 * receipt as a chain source. And each accepted key form, exactly as specified, pins.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  preparePublication,
  publicationBytes,
  verifyDisclosure,
  verifyPublishedReceipt,
} from '../../src/redact/index.js';
import {
  decodePublicKey,
  keyPairFromSeed,
  openReceiptSource,
  publicKeyToPem,
  receiptBytes,
  verifyReceipt,
  verifyReceiptFile,
} from '../../src/receipt/index.js';
import { base64Encode } from '../../src/receipt/base64.js';
import { SAMPLE_POLICY, memoryJournal } from '../redact/helpers.js';
import { tempDir } from '../helpers/tmp.js';
import { makeFixture, testSeed } from './fixture.js';

const fixture = makeFixture({ steps: 5 });
const alice = keyPairFromSeed(testSeed(1));
const mallory = keyPairFromSeed(testSeed(2));
const byAlice = await receiptBytes(fixture, { sign: alice.privateKey });
const byMallory = await receiptBytes(fixture, { sign: mallory.privateKey });
const unsigned = await receiptBytes(fixture);
const enc = new TextEncoder();
const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));

/** Pins that are given but unusable. Each must make every receipt invalid. */
const UNUSABLE_KEYS: Array<[string, unknown]> = [
  ['the empty string', ''],
  ['whitespace', ' \n'],
  ['empty bytes', new Uint8Array(0)],
  ['31 raw bytes', alice.publicKey.subarray(0, 31)],
  ['33 raw bytes', new Uint8Array(33)],
  ['base64 of 31 bytes', base64Encode(alice.publicKey.subarray(0, 31))],
  ['non-canonical base64 (no padding)', base64Encode(alice.publicKey).replace(/=$/, '')],
  ['hex text', Buffer.from(alice.publicKey).toString('hex')],
  [
    'a PEM private key',
    '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8g\n-----END PRIVATE KEY-----\n',
  ],
  [
    'a PEM block with a header line',
    publicKeyToPem(alice.publicKey).replace('-----\n', '-----\nProc-Type: 4,ENCRYPTED\n'),
  ],
  ['a PEM block cut short', publicKeyToPem(alice.publicKey).replace('-----END PUBLIC KEY-----\n', '')],
  ['an X25519 SPKI PEM', publicKeyToPem(alice.publicKey).replace('MCowBQYDK2Vw', 'MCowBQYDK2Vu')],
  ['the identity point (small order)', hex('0100000000000000000000000000000000000000000000000000000000000000')],
  ['an order-8 point', hex('c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a')],
  ['y = p (non-canonical encoding)', hex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f')],
  [
    'x = 0 with the sign bit set ("negative zero")',
    hex('0100000000000000000000000000000000000000000000000000000000000080'),
  ],
  ['a y with no point on the curve', hex('0200000000000000000000000000000000000000000000000000000000000000')],
  ['null', null],
  ['a number', 42],
  ['an object', { key: base64Encode(alice.publicKey) }],
];

describe('an unusable pinned key is KEY_MISMATCH, never unpinned', () => {
  test.each(UNUSABLE_KEYS)('%s', async (_name, key) => {
    expect(decodePublicKey(key).ok).toBe(false);
    for (const [bytes, extra] of [
      [byAlice, []],
      [byMallory, []],
      [unsigned, ['SIGNATURE_MISSING']],
    ] as const) {
      const r = await verifyReceipt(bytes, { publicKey: key as string });
      expect(r.ok).toBe(false);
      expect(r.problems.map((p) => p.code)).toEqual(['KEY_MISMATCH', ...extra]);
      expect(r.proves).toEqual([]);
    }
  });

  test('the reason names what the key is', () => {
    const reason = (k: unknown): string => (decodePublicKey(k) as { reason: string }).reason;
    expect(reason('')).toMatch(/empty/);
    expect(reason(UNUSABLE_KEYS[8]![1])).toMatch(/private key/);
    expect(reason(hex('0100000000000000000000000000000000000000000000000000000000000000'))).toMatch(/small order/);
    expect(reason(hex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'))).toMatch(
      /canonical encoding/,
    );
    expect(reason(base64Encode(new Uint8Array(31)))).toMatch(/base64 of 31 bytes/);
  });

  test('every entry point that takes a key refuses an empty one', async () => {
    const file = join(tempDir('stepchain-pins-'), 'r.tar');
    writeFileSync(file, byAlice);
    expect((await verifyReceiptFile(file, { publicKey: '' })).problems.map((p) => p.code)).toEqual(['KEY_MISMATCH']);
    await expect(openReceiptSource(file, { publicKey: '' })).rejects.toThrow(/RECEIPT_INVALID.*KEY_MISMATCH/);
    await expect(openReceiptSource(file, { publicKey: alice.publicKey })).resolves.toBeTruthy();
    const published = await publicationBytes(
      await preparePublication(await memoryJournal(), { policy: SAMPLE_POLICY, optIn: true, sign: alice.privateKey }),
    );
    expect((await verifyPublishedReceipt(published, { publicKey: alice.publicKey })).ok).toBe(true);
    const pr = await verifyPublishedReceipt(published, { publicKey: '' });
    expect(pr.ok).toBe(false);
    expect(pr.problems.map((p) => p.code)).toEqual(['KEY_MISMATCH']);
    const proof = { format: 'nonsense' };
    const dr = await verifyDisclosure(published, proof, { publicKey: '' });
    expect(dr.ok).toBe(false);
  });
});

describe('an unusable pinned head is HEAD_MISMATCH, never unpinned', () => {
  test.each<[string, unknown]>([
    ['the empty string', ''],
    ['"sha256:" alone', 'sha256:'],
    ['upper-case hex', `sha256:${'A'.repeat(64)}`],
    ['null', null],
    ['a number', 5],
  ])('%s', async (_name, head) => {
    const r = await verifyReceipt(unsigned, { expectHead: head as string });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.code)).toEqual(['HEAD_MISMATCH']);
  });
});

describe("a journal's pinned head is a pin too", () => {
  test.each<[string, unknown]>([
    ['the empty string', ''],
    ['null', null],
    ['"sha256:" alone', 'sha256:'],
  ])('%s: the journal does not verify', async (_name, head) => {
    const j = await memoryJournal();
    expect((await j.verify()).ok).toBe(true);
    const r = await j.verify({ expectHead: head as string });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.code)).toContain('HEAD_MISMATCH');
  });
});

describe('the accepted key forms (spec/RECEIPT.md §5.2) pin', () => {
  const pem = publicKeyToPem(alice.publicKey);
  const b64 = base64Encode(alice.publicKey);
  test.each<[string, Uint8Array | string]>([
    ['32 raw bytes', alice.publicKey],
    ['base64 text', b64],
    ['base64 text with surrounding whitespace and a newline', ` ${b64}\r\n`],
    ['base64 text as the bytes of a file', enc.encode(`${b64}\n`)],
    ['SPKI PEM text', pem],
    ['SPKI PEM with CRLF line ends', pem.replace(/\n/g, '\r\n')],
    ['SPKI PEM as the bytes of a file', enc.encode(pem)],
    [
      'SPKI PEM with its base64 on one long line',
      `-----BEGIN PUBLIC KEY-----\n${pem.split('\n').slice(1, -2).join('')}\n-----END PUBLIC KEY-----`,
    ],
  ])('%s', async (_name, key) => {
    const d = decodePublicKey(key);
    expect(d.ok && Buffer.from(d.key).equals(Buffer.from(alice.publicKey))).toBe(true);
    expect((await verifyReceipt(byAlice, { publicKey: key })).problems).toEqual([]);
    expect((await verifyReceipt(byMallory, { publicKey: key })).problems.map((p) => p.code)).toEqual(['KEY_MISMATCH']);
    expect((await verifyReceipt(unsigned, { publicKey: key })).problems.map((p) => p.code)).toEqual([
      'SIGNATURE_MISSING',
    ]);
  });
});
