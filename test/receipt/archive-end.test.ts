/**
 * Nothing may follow a receipt (spec/RECEIPT.md §3.1, §3.2 item 5; issue 14 item 2): after the one gzip
 * member, no byte at all; after the tar end marker, at most 1 MiB of zeros. The attack: a signed receipt
 * with "\x00" and a second gzip member (a tar holding evil.txt) appended verified here — the platform
 * inflater dropped everything after a member when the next byte was 0x00 — while `tarfile` with
 * ignore_zeros extracted evil.txt from the same file.
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import { keyPairFromSeed, receiptBytes, verifyReceipt } from '../../src/receipt/index.js';
import { concatBytes } from '../../src/bytes.js';
import { makeFixture, testSeed } from './fixture.js';
import { tarOf, text } from './craft.js';

const key = keyPairFromSeed(testSeed());
const tar = await receiptBytes(makeFixture({ steps: 6 }), { sign: key.privateKey });
const gz = new Uint8Array(gzipSync(tar, { level: 9 }));
const evil = new Uint8Array(gzipSync(tarOf([{ name: 'evil.txt', data: text('rm -rf ~\n') }])));

/** The same bytes as a stream of pieces of `size` bytes, so trailing bytes arrive in a chunk of their own. */
async function* pieces(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, Math.min(bytes.length, i + size));
}

const codes = async (bytes: Uint8Array | AsyncIterable<Uint8Array>): Promise<string[]> =>
  (await verifyReceipt(bytes, { publicKey: key.publicKey })).problems.map((p) => p.code);

describe('bytes after a receipt are refused', () => {
  test('baseline: the signed .tar.gz verifies against its key, whole and in pieces', async () => {
    expect(await codes(gz)).toEqual([]);
    for (const size of [1, 7, 4096]) expect(await codes(pieces(gz, size))).toEqual([]);
  });

  test('the smuggling attack: "\\x00" and a second gzip member holding evil.txt after a signed receipt is ARCHIVE_INVALID', async () => {
    const smuggled = concatBytes([gz, Uint8Array.of(0), evil]);
    for (const input of [smuggled, pieces(smuggled, 1), pieces(smuggled, 7), pieces(smuggled, gz.length)]) {
      const r = await verifyReceipt(input, { publicKey: key.publicKey });
      expect(r.ok).toBe(false);
      expect(r.problems.map((p) => p.code)).toEqual(['ARCHIVE_INVALID']);
      expect(r.problems[0]!.message).toMatch(/bytes follow the gzip member, which ends at byte \d+/);
      expect(r.proves).toEqual([]);
    }
  });

  test.each<[string, Uint8Array]>([
    ['a second gzip member right after the first', evil],
    ['a copy of the receipt itself as a second member', gz],
    ['one zero byte', Uint8Array.of(0)],
    ['a 512-byte block of zeros (tape padding)', new Uint8Array(512)],
    ['one byte of garbage', Uint8Array.of(0x41)],
    ['the first byte of a gzip magic', Uint8Array.of(0x1f)],
  ])('after the gzip member: %s → ARCHIVE_INVALID', async (_name, after) => {
    expect(await codes(concatBytes([gz, after]))).toEqual(['ARCHIVE_INVALID']);
    expect(await codes(pieces(concatBytes([gz, after]), 1000))).toEqual(['ARCHIVE_INVALID']);
  });

  test('a bare tar: up to 1 MiB of zeros after the end marker verify; one more is ARCHIVE_LIMIT; anything else, even after zeros, is ARCHIVE_INVALID', async () => {
    const zeros = (n: number): Uint8Array => new Uint8Array(n);
    expect(await codes(concatBytes([tar, zeros(10240 - (tar.length % 10240))]))).toEqual([]); // a tar program's record padding
    expect(await codes(concatBytes([tar, zeros(1024 * 1024)]))).toEqual([]);
    expect(await codes(concatBytes([tar, zeros(1024 * 1024 + 1)]))).toEqual(['ARCHIVE_LIMIT']);
    // a second tar after zeros: what a reader that skips zero blocks (tar -i, ignore_zeros) would extract
    const second = tarOf([{ name: 'evil.txt', data: text('rm -rf ~\n') }]);
    expect(await codes(concatBytes([tar, zeros(512), second]))).toEqual(['ARCHIVE_INVALID']);
    expect(await codes(concatBytes([tar, Uint8Array.of(1)]))).toEqual(['ARCHIVE_INVALID']);
  });

  test('zeros inside the gzip member, after the end marker, follow the tar rule (they are part of the tar stream)', async () => {
    expect(await codes(new Uint8Array(gzipSync(concatBytes([tar, new Uint8Array(4096)]))))).toEqual([]);
    expect(
      await codes(
        new Uint8Array(
          gzipSync(concatBytes([tar, new Uint8Array(512), tarOf([{ name: 'evil.txt', data: text('x') }])])),
        ),
      ),
    ).toEqual(['ARCHIVE_INVALID']);
  });

  test('a truncated gzip member, and a corrupt CRC or ISIZE, are ARCHIVE_INVALID', async () => {
    expect(await codes(gz.subarray(0, gz.length - 1))).toEqual(['ARCHIVE_INVALID']);
    expect(await codes(gz.subarray(0, gz.length - 8))).toEqual(['ARCHIVE_INVALID']);
    for (const at of [gz.length - 8, gz.length - 1]) {
      const bad = Uint8Array.from(gz);
      bad[at]! ^= 0x01;
      expect(await codes(bad)).toEqual(['ARCHIVE_INVALID']);
    }
  });
});
