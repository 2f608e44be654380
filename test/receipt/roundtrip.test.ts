import { describe, expect, test } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { tempDir } from '../helpers/tmp.js';
import { makeFixture, testSeed } from './fixture.js';
import {
  exportReceipt,
  openReceiptSource,
  receiptBytes,
  verifyReceipt,
  verifyReceiptFile,
  keyPairFromSeed,
  keygen,
  readKeyFile,
  publicKeyToPem,
  privateKeyToPem,
  ReceiptError,
  receiptTar,
  planReceipt,
  receiptInput,
} from '../../src/receipt/index.js';
import { EXPORTER } from '../../src/receipt/version.js';

const dir = tempDir('stepchain-receipt-');

describe('export → verify round trips', () => {
  test.each([
    { name: 'complete, unsigned, .tar', steps: 10, from: undefined, to: undefined, sign: false, file: 'a.tar' },
    { name: 'complete, signed, .tar.gz', steps: 10, from: undefined, to: undefined, sign: true, file: 'b.tar.gz' },
    { name: 'partial middle, signed, .tgz', steps: 20, from: 5, to: 13, sign: true, file: 'c.tgz' },
    { name: 'partial from 0 (prefix)', steps: 20, from: 0, to: 6, sign: false, file: 'd.tar' },
    { name: 'partial single step', steps: 20, from: 7, to: 7, sign: true, file: 'e.tar' },
    { name: 'no blobs', steps: 9, from: 2, to: undefined, sign: false, file: 'f.tar.gz', blobEvery: 0 },
  ])('$name', async ({ steps, from, to, sign, file, blobEvery }) => {
    const src = makeFixture({ steps, ...(blobEvery === undefined ? {} : { blobEvery }) });
    const key = keyPairFromSeed(testSeed());
    const out = join(dir, file);
    const res = await exportReceipt(src, {
      out,
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to }),
      ...(sign ? { sign: key.privateKey } : {}),
    });
    expect(res.bytes).toBe(statSync(out).size);
    const head = await src.head();
    const r = await verifyReceiptFile(out, sign ? { publicKey: key.publicKey } : {});
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.compressed).toBe(/gz$/.test(file));
    const f = from ?? 0;
    const t = to ?? head!.seq;
    expect(r.range).toMatchObject({ from: f, to: t });
    expect(r.scope).toBe(f === 0 ? 'complete' : 'partial');
    expect(r.steps).toBe(t - f + 1);
    expect(r.head_seq).toBe(t);
    expect(r.head).toBe(JSON.parse(src.stored[t]!.text).step_hash);
    expect(r.start_hash).toBe(f === 0 ? r.range!.prev_hash : JSON.parse(src.stored[f - 1]!.text).step_hash);
    expect(r.signed_by).toBe(sign ? key.keyId : null);
    expect(r.manifest_digest).toBe(res.manifest_digest);
    expect(r.manifest!.exporter).toBe(EXPORTER);
    const referenced = new Set(
      src.stored
        .slice(f, t + 1)
        .flatMap((l) => [...l.text.matchAll(/"digest":"(sha256:[0-9a-f]{64})"/g)].map((m) => m[1])),
    );
    expect(r.blobs).toBe(referenced.size);
    expect(r.proves.length).toBeGreaterThan(0);
    if (f > 0) expect(r.does_not_prove.join(' ')).toContain(`steps 0–${f - 1}`);
    // in-memory bytes verify the same
    const bytes = readFileSync(out);
    const again = await verifyReceipt(new Uint8Array(bytes), sign ? { publicKey: publicKeyToPem(key.publicKey) } : {});
    expect(again.ok).toBe(true);
  });

  test('exporting twice gives identical bytes (tar and tar.gz), and the tar inside the .tar.gz is the .tar', async () => {
    const src = makeFixture({ steps: 25, bucketSize: 6 });
    const sign = keyPairFromSeed(testSeed(2)).privateKey;
    const a = join(dir, 'twice-a.tar.gz');
    const b = join(dir, 'twice-b.tar.gz');
    const c = join(dir, 'twice-c.tar');
    await exportReceipt(src, { out: a, from: 3, sign });
    await exportReceipt(src, { out: b, from: 3, sign });
    await exportReceipt(src, { out: c, from: 3, sign });
    const ga = readFileSync(a);
    expect(ga.equals(readFileSync(b))).toBe(true);
    expect(ga[9]).toBe(0xff); // gzip OS byte fixed
    expect(gunzipSync(ga).equals(readFileSync(c))).toBe(true);
    const mem = await receiptBytes(src, { from: 3, sign });
    expect(Buffer.from(mem).equals(readFileSync(c))).toBe(true);
  });

  test('a pinned key that did not sign is KEY_MISMATCH; an unsigned receipt with a pinned key is SIGNATURE_MISSING', async () => {
    const src = makeFixture({ steps: 5 });
    const signer = keyPairFromSeed(testSeed(3));
    const other = keyPairFromSeed(testSeed(4));
    const signed = await receiptBytes(src, { sign: signer.privateKey });
    const r1 = await verifyReceipt(signed, { publicKey: other.publicKey });
    expect(r1.ok).toBe(false);
    expect(r1.problems.map((p) => p.code)).toEqual(['KEY_MISMATCH']);
    expect(r1.signed_by).toBe(signer.keyId);
    const unsigned = await receiptBytes(src);
    const r2 = await verifyReceipt(unsigned, { publicKey: other.publicKey });
    expect(r2.problems.map((p) => p.code)).toEqual(['SIGNATURE_MISSING']);
    const r3 = await verifyReceipt(unsigned, { publicKey: 'not a key' });
    expect(r3.problems.map((p) => p.code)).toContain('KEY_MISMATCH');
  });

  test('a pinned head: equal passes, different is HEAD_MISMATCH', async () => {
    const src = makeFixture({ steps: 6 });
    const bytes = await receiptBytes(src, { to: 3 });
    const h3 = JSON.parse(src.stored[3]!.text).step_hash as string;
    const h5 = JSON.parse(src.stored[5]!.text).step_hash as string;
    expect((await verifyReceipt(bytes, { expectHead: h3 })).ok).toBe(true);
    const bad = await verifyReceipt(bytes, { expectHead: h5 });
    expect(bad.problems.map((p) => p.code)).toEqual(['HEAD_MISMATCH']);
  });

  test('export refuses a broken chain, a missing or corrupt blob, bad ranges and empty journals', async () => {
    const broken = makeFixture({ steps: 6 });
    broken.stored[2] = { ...broken.stored[2]!, text: broken.stored[2]!.text.replace('input 2', 'input X') };
    await expect(receiptBytes(broken, { from: 4 })).rejects.toMatchObject({ code: 'CHAIN_INVALID' });
    const missing = makeFixture({ steps: 6 });
    missing.blobs.clear();
    await expect(receiptBytes(missing)).rejects.toMatchObject({ code: 'BLOB_MISSING' });
    const corrupt = makeFixture({ steps: 6 });
    for (const k of corrupt.blobs.keys()) corrupt.blobs.set(k, new TextEncoder().encode('{"answer":"forged"}'));
    await expect(receiptBytes(corrupt)).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    const ok = makeFixture({ steps: 6 });
    await expect(receiptBytes(ok, { from: 4, to: 2 })).rejects.toMatchObject({ code: 'RANGE_INVALID' });
    await expect(receiptBytes(ok, { to: 9 })).rejects.toMatchObject({ code: 'RANGE_INVALID' });
    await expect(receiptBytes(makeFixture({ steps: 0 }))).rejects.toMatchObject({ code: 'EMPTY_RANGE' });
    await expect(receiptBytes(ok, { sign: { pem: 'nope' } })).rejects.toBeInstanceOf(ReceiptError);
    // A bare string is no key input (PEM? base64? a path?): refused by the compiler, and at run time.
    const pem = privateKeyToPem(keyPairFromSeed(testSeed()).privateKey);
    // @ts-expect-error a key is bytes, { pem } or { keyFile }
    await expect(receiptBytes(ok, { sign: pem })).rejects.toMatchObject({ code: 'KEY_INVALID' });
    await expect(receiptBytes(ok, { sign: { pem } })).resolves.toBeInstanceOf(Uint8Array);
    await expect(exportReceipt(ok, { out: '' })).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
    await expect(exportReceipt(ok, { out: join(dir, 'no-such-dir', 'r.tar') })).rejects.toMatchObject({
      code: 'OUTPUT_FAILED',
    });
  });

  test('a source that changes between the passes is SOURCE_CHANGED, not a bad receipt', async () => {
    const src = makeFixture({ steps: 6 });
    const input = await receiptInput(src);
    const plan = await planReceipt(input);
    src.stored[4] = { ...src.stored[4]!, text: src.stored[4]!.text.replace('input 4', 'input Y') };
    const { writeReceipt } = await import('../../src/receipt/writer.js');
    await expect(
      (async () => {
        for await (const _ of writeReceipt(plan)) void _;
      })(),
    ).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    void receiptTar;
  });

  test('keygen writes a 0600 PKCS#8 key and a .pub, refuses to overwrite, and the key signs', async () => {
    const file = join(dir, 'signing.key');
    const k = await keygen(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(readFileSync(`${file}.pub`, 'utf8')).toMatch(/^-----BEGIN PUBLIC KEY-----\n/);
    await expect(keygen(file)).rejects.toMatchObject({ code: 'KEY_EXISTS' });
    const src = makeFixture({ steps: 3 });
    const out = join(dir, 'keyfile.tar');
    const res = await exportReceipt(src, { out, sign: { keyFile: file } });
    expect(res.signed_by).toBe(k.keyId);
    const r = await verifyReceiptFile(out, { publicKey: readFileSync(`${file}.pub`, 'utf8') });
    expect(r.ok).toBe(true);
    expect(r.signed_by).toBe(k.keyId);
    expect((await readKeyFile(file)).length).toBe(32);
  });

  test('the exporter string matches package.json', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      name: string;
      version: string;
    };
    expect(EXPORTER).toBe(`${pkg.name}/${pkg.version}`);
  });

  test.each(['src.tar', 'src.tar.gz'])('a verified receipt reads back as a ChainSource (%s)', async (file) => {
    const src = makeFixture({ steps: 30, bucketSize: 7 });
    const out = join(dir, file);
    await exportReceipt(src, { out, from: 4, to: 25 });
    const rs = await openReceiptSource(out);
    expect(rs.genesis).toEqual(src.genesis);
    expect(await rs.head()).toEqual({ seq: 25, step_hash: JSON.parse(src.stored[25]!.text).step_hash });
    const all: Array<{ seq: number; text: string }> = [];
    for await (const l of rs.lines()) all.push({ seq: l.seq, text: l.text });
    expect(all).toEqual(src.stored.slice(4, 26).map((l) => ({ seq: l.seq, text: l.text })));
    const some: number[] = [];
    for await (const l of rs.lines({ from: 9, to: 16 })) some.push(l.seq);
    expect(some).toEqual([9, 10, 11, 12, 13, 14, 15, 16]);
    for (const d of rs.manifest.blobs.map((b) => b.digest)) expect(await rs.blob(d)).toEqual(src.blobs.get(d));
    expect(await rs.blob('sha256:' + '0'.repeat(64))).toBeNull();
    const bad = join(dir, 'bad-' + file);
    const bytes = readFileSync(out);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(bad, bytes.subarray(0, bytes.length - 2000));
    await expect(openReceiptSource(bad)).rejects.toMatchObject({ code: 'RECEIPT_INVALID' });
  });

  test('the writer core takes extra manifest members; a verifier refuses them unless it implements the extension', async () => {
    const src = makeFixture({ steps: 5 });
    const input = { ...(await receiptInput(src)), extra: { anchor: { note: 'x' } } };
    const parts: Uint8Array[] = [];
    for await (const c of receiptTar(input)) parts.push(Uint8Array.from(c));
    const bytes = new Uint8Array(Buffer.concat(parts));
    const plain = await verifyReceipt(bytes);
    expect(plain.problems.map((p) => [p.code, p.location.path])).toEqual([['MANIFEST_INVALID', '/anchor']]);
    const ext = await verifyReceipt(bytes, {
      extensions: { anchor: (v) => (typeof v === 'object' && v !== null ? null : 'anchor must be an object') },
    });
    expect(ext.ok).toBe(true);
    expect(ext.manifest!.anchor).toEqual({ note: 'x' });
    await expect(planReceipt({ ...input, extra: { head: 1 } })).rejects.toMatchObject({ code: 'MANIFEST_INVALID' });
    // a web ReadableStream works as input too
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += 100) c.enqueue(bytes.subarray(i, i + 100));
        c.close();
      },
    });
    expect((await verifyReceipt(stream, { extensions: { anchor: () => null } })).ok).toBe(true);
  });

  test('a consumer that stops reading early does not leave the writer hanging', async () => {
    const src = makeFixture({ steps: 200, filler: 2000 });
    const plan = await planReceipt(await receiptInput(src));
    const { writeReceipt } = await import('../../src/receipt/writer.js');
    let n = 0;
    for await (const _ of writeReceipt(plan)) if (++n === 2) break;
    expect(n).toBe(2);
  });
});
