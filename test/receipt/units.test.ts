/** Small units of the receipt format: strict base64, DSSE PAE, key encodings, the ustar header. */
import { describe, expect, test } from 'vitest';
import { base64Decode, base64Encode } from '../../src/receipt/base64.js';
import { pae } from '../../src/receipt/dsse.js';
import {
  keyPairFromSeed,
  parsePrivateKey,
  parsePublicKey,
  privateKeyToPem,
  publicKeyToPem,
} from '../../src/receipt/keys.js';
import { inspectHeader, ustarHeader } from '../../src/receipt/tar.js';
import { testSeed } from './fixture.js';

describe('base64', () => {
  test('round trips every length and matches Buffer', () => {
    for (let n = 0; n < 40; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 255);
      const text = base64Encode(bytes);
      expect(text).toBe(Buffer.from(bytes).toString('base64'));
      expect(base64Decode(text)).toEqual(bytes);
    }
  });
  test.each(['Q', 'QQ', 'QQ=', 'QR==', 'QUJ=', 'Q Q=', 'QQ==\n', '====', 'QQ=A', 'é===', 'QUJD-A=='])(
    'refuses non-canonical %j',
    (t) => {
      expect(base64Decode(t)).toBeNull();
    },
  );
});

describe('DSSE', () => {
  test('PAE matches the DSSE specification example', () => {
    const out = new TextDecoder().decode(pae('http://example.com/HelloWorld', new TextEncoder().encode('hello world')));
    expect(out).toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });
});

describe('keys', () => {
  test('PEM round trips, and the key id is the SHA-256 of the raw public key', async () => {
    const k = keyPairFromSeed(testSeed());
    expect(parsePrivateKey({ pem: privateKeyToPem(k.privateKey) })).toEqual(k.privateKey);
    expect(parsePublicKey(publicKeyToPem(k.publicKey))).toEqual(k.publicKey);
    expect(parsePublicKey(Buffer.from(k.publicKey).toString('base64'))).toEqual(k.publicKey);
    const { createHash, createPublicKey } = await import('node:crypto');
    expect(k.keyId).toBe('sha256:' + createHash('sha256').update(k.publicKey).digest('hex'));
    // OpenSSL (through node:crypto) reads the SPKI PEM as the same Ed25519 key
    const jwk = createPublicKey(publicKeyToPem(k.publicKey)).export({ format: 'jwk' });
    expect(Buffer.from(jwk.x!, 'base64url')).toEqual(Buffer.from(k.publicKey));
    expect(parsePublicKey('-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n')).toBeNull();
    expect(() => parsePrivateKey(new Uint8Array(31))).toThrow(/KEY_INVALID/);
  });
});

describe('ustar header', () => {
  test('the profile header passes inspection and equals what tar-stream writes', async () => {
    const h = ustarHeader('chain/0000000000000000.jsonl', 1234);
    expect(inspectHeader(h)).toEqual({ ok: true, name: 'chain/0000000000000000.jsonl', size: 1234 });
    const { pack } = await import('tar-stream');
    const p = pack();
    p.entry(
      {
        name: 'chain/0000000000000000.jsonl',
        size: 3,
        mode: 0o644,
        uid: 0,
        gid: 0,
        mtime: new Date(0),
        type: 'file',
        uname: '',
        gname: '',
      },
      Buffer.from('abc'),
    );
    p.finalize();
    const chunks: Buffer[] = [];
    for await (const c of p as AsyncIterable<Buffer>) chunks.push(c);
    expect(new Uint8Array(Buffer.concat(chunks).subarray(0, 512))).toEqual(
      ustarHeader('chain/0000000000000000.jsonl', 3),
    );
  });
});
