/**
 * The signature entry's rules one at a time (spec/RECEIPT.md §5, §5.1, §7 step 3), the DSSE encoding and the
 * key formats (§5, §5.2): a good signed receipt with one defect planted in manifest.sig.json, each
 * SIGNATURE_INVALID at that entry — and with the check gone, the receipt would verify. Keys are compared
 * with what OpenSSL (node:crypto) writes and reads. Each case was a mutant of signature.ts, dsse.ts or
 * keys.ts that the suite let through (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { createPrivateKey, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { base64Encode } from '../../src/receipt/base64.js';
import { PAYLOAD_TYPE, pae, signManifest, verifySignatureBytes } from '../../src/receipt/dsse.js';
import {
  decodePublicKey,
  keyIdOf,
  keyPairFromSeed,
  publicKeyDefect,
  parsePrivateKey,
  privateKeyToPem,
  publicKeyToPem,
  receiptBytes,
  verifyReceipt,
} from '../../src/receipt/index.js';
import { entriesOf, tarOf } from './craft.js';
import { makeFixture, testSeed } from './fixture.js';

const key = keyPairFromSeed(testSeed(1));
const other = keyPairFromSeed(testSeed(2));
const signed = entriesOf(await receiptBytes(makeFixture({ steps: 4 }), { sign: key.privateKey }));
const manifestBytes = signed[0]!.data;
const doc = JSON.parse(new TextDecoder().decode(signed[1]!.data)) as Record<string, unknown>;
const enc = new TextEncoder();
const withSignature = (bytes: Uint8Array): Uint8Array =>
  tarOf(signed.map((e, i) => (i === 1 ? { ...e, data: bytes } : e)));
const edited = (patch: (d: Record<string, any>) => void): Uint8Array => {
  const d = structuredClone(doc);
  patch(d);
  return enc.encode(canonicalJson(d as never));
};
const where = async (bytes: Uint8Array) => (await verifyReceipt(bytes)).problems.map((p) => [p.code, p.location]);
const INVALID = [['SIGNATURE_INVALID', { file: 'manifest.sig.json' }]];
const flipped = (b64: string, at: number): string => {
  const raw = Buffer.from(b64, 'base64');
  raw[at]! ^= 1;
  return raw.toString('base64');
};

describe('RECEIPT §5: the signature entry, one defect each is SIGNATURE_INVALID at manifest.sig.json', () => {
  test('the good entry verifies, signed by its key', async () => {
    const r = await verifyReceipt(withSignature(signed[1]!.data));
    expect(r.problems).toEqual([]);
    expect(r.signed_by).toBe(key.keyId);
  });

  test.each<[string, () => Uint8Array]>([
    ['not UTF-8', () => Uint8Array.of(0x7b, 0xff, 0x7d)],
    ['not canonical JSON', () => enc.encode(canonicalJson(doc as never).replace('{"envelope"', '{ "envelope"'))],
    ["canonical text that is not JSON's one value", () => enc.encode(canonicalJson(doc as never) + '1')],
    ['not an object', () => enc.encode('[]')],
    ['an extra member', () => edited((d) => (d.x = 1))],
    ['another format', () => edited((d) => (d.format = 'stepchain-receipt-signature/v2'))],
    ['a public_key that is not a string', () => edited((d) => (d.public_key = 1))],
    ['a public_key that is not canonical base64', () => edited((d) => (d.public_key = d.public_key.replace(/=$/, '')))],
    ['a public_key of 31 bytes', () => edited((d) => (d.public_key = base64Encode(key.publicKey.subarray(0, 31))))],
    ['an envelope with an extra member', () => edited((d) => (d.envelope.x = 1))],
    ['an envelope that is not an object', () => edited((d) => (d.envelope = []))],
    ['another payloadType', () => edited((d) => (d.envelope.payloadType = 'application/json'))],
    ['a payload that is not a string', () => edited((d) => (d.envelope.payload = 1))],
    ['a payload that is not canonical base64', () => edited((d) => (d.envelope.payload = d.envelope.payload + '='))],
    ['a payload of other bytes', () => edited((d) => (d.envelope.payload = base64Encode(enc.encode('{}'))))],
    [
      'a payload of the manifest less its last byte',
      () => edited((d) => (d.envelope.payload = base64Encode(manifestBytes.subarray(0, manifestBytes.length - 1)))),
    ],
    [
      'a payload that is an array of four strings',
      () => edited((d) => (d.envelope.payload = ['AAAA', 'AAAA', 'AAAA', 'AAAA'])),
    ],
    [
      'a public_key that is an array of four strings',
      () => edited((d) => (d.public_key = ['AAAA', 'AAAA', 'AAAA', 'AAAA'])),
    ],
    [
      'a sig that is an array of four strings',
      () => edited((d) => (d.envelope.signatures[0].sig = ['AAAA', 'AAAA', 'AAAA', 'AAAA'])),
    ],
    [
      'a payload of the manifest with one byte changed',
      () => edited((d) => (d.envelope.payload = flipped(d.envelope.payload, 10))),
    ],
    ['no signature', () => edited((d) => (d.envelope.signatures = []))],
    ['two signatures', () => edited((d) => d.envelope.signatures.push(d.envelope.signatures[0]))],
    ['signatures that are not an array', () => edited((d) => (d.envelope.signatures = d.envelope.signatures[0]))],
    ['a signature with an extra member', () => edited((d) => (d.envelope.signatures[0].x = 1))],
    ["a keyid that is not the public key's", () => edited((d) => (d.envelope.signatures[0].keyid = other.keyId))],
    ['a sig that is not a string', () => edited((d) => (d.envelope.signatures[0].sig = 1))],
    [
      'a sig of 63 bytes',
      () =>
        edited(
          (d) =>
            (d.envelope.signatures[0].sig = base64Encode(
              Buffer.from(d.envelope.signatures[0].sig, 'base64').subarray(0, 63),
            )),
        ),
    ],
    [
      'a sig that does not verify',
      () => edited((d) => (d.envelope.signatures[0].sig = flipped(d.envelope.signatures[0].sig, 5))),
    ],
    [
      'another key, with its key id, that did not sign',
      () =>
        edited((d) => ((d.public_key = base64Encode(other.publicKey)), (d.envelope.signatures[0].keyid = other.keyId))),
    ],
    [
      'a small-order public key with its key id',
      () => {
        const small = Uint8Array.from(
          Buffer.from('0100000000000000000000000000000000000000000000000000000000000000', 'hex'),
        );
        return edited((d) => ((d.public_key = base64Encode(small)), (d.envelope.signatures[0].keyid = keyIdOf(small))));
      },
    ],
  ])('%s', async (_name, bytes) => {
    expect(await where(withSignature(bytes()))).toEqual(INVALID);
  });
});

describe('RECEIPT §5: DSSE', () => {
  test('PAE counts bytes, not characters, and the body is copied whole', () => {
    const body = Uint8Array.of(0, 1, 2, 255);
    const out = pae('tÿpe', body);
    expect([...out]).toEqual([...enc.encode('DSSEv1 5 tÿpe 4 '), 0, 1, 2, 255]);
  });

  test('a signed manifest is the DSSE envelope of §5, and OpenSSL verifies its signature over PAE', () => {
    const d = signManifest(manifestBytes, key.privateKey);
    expect(d).toEqual(doc);
    const spki = createPublicKey(publicKeyToPem(key.publicKey));
    expect(
      cryptoVerify(null, pae(PAYLOAD_TYPE, manifestBytes), spki, Buffer.from(d.envelope.signatures[0]!.sig, 'base64')),
    ).toBe(true);
  });

  test('verifySignatureBytes is true for a good signature and false, never throwing, for anything else', () => {
    const message = pae(PAYLOAD_TYPE, manifestBytes);
    const sig = Uint8Array.from(
      Buffer.from((doc.envelope as { signatures: Array<{ sig: string }> }).signatures[0]!.sig, 'base64'),
    );
    expect(verifySignatureBytes(message, sig, key.publicKey)).toBe(true);
    expect(verifySignatureBytes(message, sig, other.publicKey)).toBe(false);
    expect(verifySignatureBytes(message, sig.subarray(0, 63), key.publicKey)).toBe(false);
    expect(verifySignatureBytes(message, sig, null as never)).toBe(false);
    expect(verifySignatureBytes('not bytes' as never, sig, key.publicKey)).toBe(false);
  });
});

describe('RECEIPT §5, §5.2: key files', () => {
  test("the PEM texts are byte for byte what OpenSSL writes for the same key, and OpenSSL's read back", () => {
    const der = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(key.privateKey)]);
    const openssl = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    expect(privateKeyToPem(key.privateKey)).toBe(openssl.export({ format: 'pem', type: 'pkcs8' }));
    expect(publicKeyToPem(key.publicKey)).toBe(createPublicKey(openssl).export({ format: 'pem', type: 'spki' }));
    expect(parsePrivateKey({ pem: openssl.export({ format: 'pem', type: 'pkcs8' }) as string })).toEqual(
      key.privateKey,
    );
  });

  test('a PEM of more than one base64 line is read (lines of 64, CRLF line ends, whitespace around)', () => {
    // A 48-byte PKCS#8 is 64 base64 characters: one line. Split it to two, as a longer key would be.
    const pem = privateKeyToPem(key.privateKey);
    const [head, b64, tail] = pem.trim().split('\n');
    expect(b64).toHaveLength(64);
    expect(parsePrivateKey({ pem: `${head}\n${b64!.slice(0, 32)}\n${b64!.slice(32)}\n${tail}\n` })).toEqual(
      key.privateKey,
    );
    expect(parsePrivateKey({ pem: `\n  ${pem.replace(/\n/g, '\r\n')}  \n` })).toEqual(key.privateKey);
  });

  test.each<[string, unknown]>([
    ['31 bytes', new Uint8Array(31)],
    ['a public key PEM', publicKeyToPem(key.publicKey)],
    [
      'a PKCS#8 PEM of another algorithm (X25519)',
      privateKeyToPem(key.privateKey).replace('MC4CAQAwBQYDK2VwBCIEI', 'MC4CAQAwBQYDK2VuBCIEI'),
    ],
    [
      'a PKCS#8 PEM one byte short',
      `-----BEGIN PRIVATE KEY-----\n${base64Encode(Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(key.privateKey.subarray(0, 31))]))}\n-----END PRIVATE KEY-----\n`,
    ],
    ['text before the PEM block', `x${privateKeyToPem(key.privateKey)}`],
    ['a number', 42],
  ])('a signing key that is %s is KEY_INVALID', (_name, k) => {
    // Text goes in as { pem }, so each is refused for what it holds, not for being a bare string.
    const input = typeof k === 'string' ? { pem: k } : k;
    expect(() => parsePrivateKey(input as never)).toThrow(expect.objectContaining({ code: 'KEY_INVALID' }));
  });

  test("a pinned key's surrounding whitespace is ASCII whitespace only: SP, HT, CR, LF", () => {
    const b64 = base64Encode(key.publicKey);
    expect(decodePublicKey(`\t \r\n${b64}\t\r\n `).ok).toBe(true);
    for (const ws of ['\u00a0', '\ufeff', '\u2028', '\v', '\f']) expect(decodePublicKey(`${ws}${b64}`).ok).toBe(false);
  });

  test('a pinned key of more than 16 KiB of text is refused before it is read as PEM', () => {
    const pem = publicKeyToPem(key.publicKey);
    expect(decodePublicKey(pem + ' '.repeat(16 * 1024 - pem.length)).ok).toBe(true);
    const r = decodePublicKey(pem + ' '.repeat(16 * 1024 - pem.length + 1));
    expect(r.ok ? null : r.reason).toMatch(/16385 characters of text/);
  });

  test('32 raw bytes are the raw form, and the key returned is a copy', () => {
    const raw = Uint8Array.from(key.publicKey);
    const d = decodePublicKey(raw);
    raw[0]! ^= 1;
    expect(d.ok && Buffer.from(d.key).equals(Buffer.from(key.publicKey))).toBe(true);
  });
});

describe('RECEIPT §5.2: an unusable pinned key, the reason says what it is', () => {
  const pem = publicKeyToPem(key.publicKey);
  const [, body] = pem.trim().split('\n');
  const hex = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, 'hex'));
  test.each<[string, unknown, RegExp]>([
    ['empty bytes', new Uint8Array(0), /^the pinned key is empty \(0 bytes\)$/],
    [
      'bytes that are not UTF-8',
      Uint8Array.of(0xff, 0xfe),
      /is 2 bytes that are neither 32 raw key bytes nor UTF-8 text/,
    ],
    ['null', null, /is null, not bytes or text/],
    ['a number', 42, /is number, not bytes or text/],
    ['an object', {}, /is object, not bytes or text/],
    ['the empty string', '', /^the pinned key is empty$/],
    ['whitespace only', ' \r\n\t', /only whitespace/],
    ['more than 16 KiB of text', 'A'.repeat(16 * 1024 + 1), /16385 characters of text/],
    ['a PEM private key', privateKeyToPem(key.privateKey), /PEM private key/],
    ['a PEM certificate', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', /labelled "CERTIFICATE"/],
    [
      'a PEM label in lower case',
      `-----BEGIN public key-----\n${body}\n-----END public key-----`,
      /labelled "-----BEGIN public key-----"/,
    ],
    [
      'text after the BEGIN line',
      `-----BEGIN PUBLIC KEY-----x\n${body}\n-----END PUBLIC KEY-----`,
      /labelled "-----BEGIN PUBLIC KEY-----x"/,
    ],
    [
      'a second BEGIN inside the first line',
      `-----BEGIN FOO-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY-----`,
      /labelled "-----BEGIN FOO-----BEGIN PUBLIC KEY-----"/,
    ],
    [
      'a PEM block without its END line',
      `-----BEGIN PUBLIC KEY-----\n${body}`,
      /does not end with "-----END PUBLIC KEY-----"/,
    ],
    [
      'a PEM block with no body',
      '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----',
      /does not end with "-----END PUBLIC KEY-----"/,
    ],
    [
      'a PEM block whose last line is not the END line',
      `-----BEGIN PUBLIC KEY-----\n${body}\n-----END PUBLIC KEY----- x`,
      /does not end with/,
    ],
    [
      'a PEM block whose END is not on its own line',
      `-----BEGIN PUBLIC KEY-----\n${body}-----END PUBLIC KEY-----`,
      /does not end with/,
    ],
    [
      'a PEM header line',
      `-----BEGIN PUBLIC KEY-----\nProc-Type: 4,ENCRYPTED\n${body}\n-----END PUBLIC KEY-----`,
      /a line that is not base64/,
    ],
    [
      'a body line with a space inside',
      `-----BEGIN PUBLIC KEY-----\n${body!.slice(0, 20)} ${body!.slice(20)}\n-----END PUBLIC KEY-----`,
      /a line that is not base64/,
    ],
    [
      'an X25519 SubjectPublicKeyInfo',
      pem.replace('MCowBQYDK2Vw', 'MCowBQYDK2Vu'),
      /not an Ed25519 SubjectPublicKeyInfo/,
    ],
    ['text that is not base64', 'not a key', /neither canonical base64/],
    [
      'hex text (the base64 alphabet holds hex digits)',
      Buffer.from(key.publicKey).toString('hex'),
      /base64 of 48 bytes/,
    ],
    [
      'the base64 of 31 bytes',
      base64Encode(key.publicKey.subarray(0, 31)),
      /base64 of 31 bytes; an Ed25519 public key is 32/,
    ],
    ['the identity point', hex('0100000000000000000000000000000000000000000000000000000000000000'), /small order/],
    [
      'y = p',
      hex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'),
      /not the canonical encoding of a point/,
    ],
  ])('%s', (_name, k, reason) => {
    const r = decodePublicKey(k);
    expect(r.ok ? null : r.reason).toMatch(reason);
  });

  test('a PEM body split over several lines is joined; the key is read', () => {
    const split = `-----BEGIN PUBLIC KEY-----\n${body!.slice(0, 30)}\n${body!.slice(30)}\n-----END PUBLIC KEY-----`;
    const r = decodePublicKey(split);
    expect(r.ok && Buffer.from(r.key).equals(Buffer.from(key.publicKey))).toBe(true);
  });

  test('publicKeyDefect and keyPairFromSeed refuse anything but 32 bytes', () => {
    for (const k of [new Uint8Array(31), new Uint8Array(33), null, 'x'.repeat(32)]) {
      expect(publicKeyDefect(k as never)).toBe('is not 32 bytes');
      expect(() => keyPairFromSeed(k as never)).toThrow(expect.objectContaining({ code: 'KEY_INVALID' }));
    }
  });
});
