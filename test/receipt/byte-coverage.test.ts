/**
 * Property: mutate arbitrary bytes of a receipt (flip, delete, insert, truncate). Every mutation that
 * changes covered content is reported invalid — never a silent pass; a mutation that verifies must leave
 * the verified content identical (same manifest digest, signer, head and entries byte for byte).
 */
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { gunzipSync, gzipSync } from 'node:zlib';
import { receiptBytes, verifyReceipt, keyPairFromSeed, type ReceiptReport } from '../../src/receipt/index.js';
import { makeFixture, testSeed } from './fixture.js';
import { entriesOf } from './craft.js';

const key = keyPairFromSeed(testSeed());
const tar = await receiptBytes(makeFixture({ steps: 6, bucketSize: 2, filler: 3 }), { from: 1, sign: key.privateKey });
const gz = new Uint8Array(gzipSync(tar, { level: 9 }));
const original = await verifyReceipt(tar);
const originalEntries = entriesOf(tar).map((e) => [e.name, Buffer.from(e.data).toString('hex')]);

type Mutation =
  | { kind: 'flip'; at: number; mask: number }
  | { kind: 'delete'; at: number; len: number }
  | { kind: 'insert'; at: number; bytes: number[] }
  | { kind: 'truncate'; at: number };

const mutation = (size: number): fc.Arbitrary<Mutation> =>
  fc.oneof(
    fc.record({ kind: fc.constant('flip' as const), at: fc.nat(size - 1), mask: fc.integer({ min: 1, max: 255 }) }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat(size - 1), len: fc.integer({ min: 1, max: 600 }) }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(size),
      bytes: fc.array(fc.nat(255), { minLength: 1, maxLength: 600 }),
    }),
    fc.record({ kind: fc.constant('truncate' as const), at: fc.nat(size - 1) }),
  );

function apply(bytes: Uint8Array, m: Mutation): Uint8Array {
  switch (m.kind) {
    case 'flip': {
      const out = Uint8Array.from(bytes);
      out[m.at]! ^= m.mask;
      return out;
    }
    case 'delete':
      return Uint8Array.from([...bytes.subarray(0, m.at), ...bytes.subarray(m.at + m.len)]);
    case 'insert':
      return Uint8Array.from([...bytes.subarray(0, m.at), ...m.bytes, ...bytes.subarray(m.at)]);
    case 'truncate':
      return bytes.slice(0, m.at);
  }
}

/** The content a passing mutant verified: must equal the original's. */
function contentOf(bytes: Uint8Array, r: ReceiptReport): unknown {
  const plain = r.compressed ? new Uint8Array(gunzipSync(bytes)) : bytes;
  return {
    manifest: r.manifest_digest,
    signer: r.signed_by,
    head: r.head,
    steps: r.steps,
    entries: entriesOf(plain).map((e) => [e.name, Buffer.from(e.data).toString('hex')]),
  };
}
const originalContent = {
  manifest: original.manifest_digest,
  signer: original.signed_by,
  head: original.head,
  steps: original.steps,
  entries: originalEntries,
};

describe('RECEIPT §3, §7: every byte of a receipt is covered', () => {
  test('the unmutated receipt verifies', () => {
    expect(original.ok).toBe(true);
    expect(original.signed_by).toBe(key.keyId);
  });

  test.each([
    { form: 'tar', bytes: tar, runs: 400 },
    { form: 'tar.gz', bytes: gz, runs: 300 },
  ])('$form: every mutation is reported invalid or leaves the verified content identical', async ({ bytes, runs }) => {
    let passed = 0;
    await fc.assert(
      fc.asyncProperty(mutation(bytes.length), async (m) => {
        const mutant = apply(bytes, m);
        const r = await verifyReceipt(mutant, { publicKey: key.publicKey });
        if (r.ok) {
          passed++;
          expect(contentOf(mutant, r)).toEqual(originalContent);
        } else {
          expect(r.problems.length).toBeGreaterThan(0);
          expect(r.proves).toEqual([]);
        }
      }),
      { numRuns: runs, seed: 4 },
    );
    // Nearly all random mutations hit covered bytes; the rare pass must have been content-neutral.
    expect(passed).toBeLessThan(runs / 4);
  });

  test('every single-byte flip anywhere in the tar is refused (no byte of the tar is uncovered)', async () => {
    const end = tar.length - 1024; // the end marker itself is checked too, below
    for (let at = 0; at < tar.length; at += at < end ? 29 : 17) {
      const r = await verifyReceipt(apply(tar, { kind: 'flip', at, mask: 0x01 }));
      expect(r.ok, `flip at ${at}`).toBe(false);
    }
  });

  test('content-neutral changes verify with identical content: zeros after the end marker, gzip header mtime and OS byte', async () => {
    const padded = Uint8Array.from([...tar, ...new Uint8Array(10240 - (tar.length % 10240))]);
    const r1 = await verifyReceipt(padded);
    expect(r1.ok).toBe(true);
    expect(contentOf(padded, r1)).toEqual(originalContent);
    const g = Uint8Array.from(gz);
    g[4] = 0x12;
    g[5] = 0x34;
    g[9] = 0x07; // MTIME and OS are not covered by the gzip CRC or by the receipt
    const r2 = await verifyReceipt(g);
    expect(r2.ok).toBe(true);
    expect(contentOf(g, r2)).toEqual(originalContent);
  });
});
