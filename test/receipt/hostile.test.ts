/**
 * Hostile archives (issue 4, "Done when"): each is refused with a clear code, early (counted in bytes or
 * entries read, not timed: timing lives in bench/), with bounded memory, and verifyReceipt never throws.
 */
import { describe, expect, test } from 'vitest';
import { createGzip, gzipSync } from 'node:zlib';
import { Readable } from 'node:stream';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { genesisHash } from '../../src/record/index.js';
import { receiptBytes, verifyReceipt, keyPairFromSeed } from '../../src/receipt/index.js';
import { ustarHeader } from '../../src/receipt/tar.js';
import { makeFixture, testSeed } from './fixture.js';
import { entriesOf, rawHeader, tarOf, text, padded, type RawEntry } from './craft.js';

/** A scale case, not a rule: `npm test` runs it; `npm run mutate` leaves it out (test/mutation/vitest.config.ts). */
const scale = process.env.STEPCHAIN_MUTATION ? test.skip : test;

const fixture = makeFixture({ steps: 8, bucketSize: 3 });
const good = await receiptBytes(fixture, { sign: keyPairFromSeed(testSeed()).privateKey });
const goodEntries = entriesOf(good);

const codes = async (bytes: Uint8Array | AsyncIterable<Uint8Array>): Promise<string[]> =>
  (await verifyReceipt(bytes)).problems.map((p) => p.code);

/** Peak of heapUsed + arrayBuffers while `fn` runs, above the level before it. */
async function peakMemory<T>(fn: () => Promise<T>): Promise<{ value: T; peak: number }> {
  const base = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  globalThis.gc?.();
  const start = base();
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, base() - start);
  }, 2);
  try {
    const value = await fn();
    peak = Math.max(peak, base() - start);
    return { value, peak };
  } finally {
    clearInterval(timer);
  }
}

function manifestFor(
  chain: Array<{ name: string; size: number; steps: number; digest?: string }>,
  blobs: Array<{ digest: string; size: number }> = [],
): Uint8Array {
  const g = fixture.genesis;
  return text(
    canonicalJson({
      blobs,
      chain: chain.map((c) => ({
        digest: c.digest ?? 'sha256:' + '0'.repeat(64),
        name: c.name,
        size: c.size,
        steps: c.steps,
      })),
      exporter: 'test',
      format: 'stepchain-receipt/v1',
      genesis: g,
      head: { seq: chain.reduce((n, c) => n + c.steps, 0) - 1, step_hash: 'sha256:' + '1'.repeat(64) },
      range: { from: 0, prev_hash: genesisHash(g), to: chain.reduce((n, c) => n + c.steps, 0) - 1 },
    }),
  );
}

const replace = (name: string, patch: Partial<RawEntry>): RawEntry[] =>
  goodEntries.map((e) => (e.name === name ? { ...e, ...patch } : e));

describe('hostile archives are refused with clear codes', () => {
  test('the good receipt verifies (baseline)', async () => {
    expect(await codes(good)).toEqual([]);
  });

  test.each<{ id: string; tar: () => Uint8Array; code: string }>([
    { id: 'path traversal with ..', code: 'ARCHIVE_UNSAFE', tar: () => tarOf([{ name: '../evil', data: text('x') }]) },
    { id: 'absolute path', code: 'ARCHIVE_UNSAFE', tar: () => tarOf([{ name: '/etc/passwd', data: text('x') }]) },
    {
      id: 'traversal after a valid manifest',
      code: 'ARCHIVE_UNSAFE',
      tar: () => tarOf([goodEntries[0]!, goodEntries[1]!, { name: 'chain/../../x', data: text('x') }]),
    },
    {
      id: 'symlink',
      code: 'ARCHIVE_UNSAFE',
      tar: () =>
        tarOf([
          {
            name: 'manifest.json',
            data: new Uint8Array(0),
            patch: [
              [156, '2'],
              [157, '/etc/passwd'],
            ],
          },
        ]),
    },
    {
      id: 'hard link',
      code: 'ARCHIVE_UNSAFE',
      tar: () =>
        tarOf([
          goodEntries[0]!,
          {
            name: 'chain/0000000000000000.jsonl',
            data: new Uint8Array(0),
            patch: [
              [156, '1'],
              [157, 'manifest.json'],
            ],
          },
        ]),
    },
    {
      id: 'character device',
      code: 'ARCHIVE_UNSAFE',
      tar: () => tarOf([{ name: 'manifest.json', data: new Uint8Array(0), patch: [[156, '3']] }]),
    },
    {
      id: 'directory',
      code: 'ARCHIVE_UNSAFE',
      tar: () => tarOf([{ name: 'chain/', data: new Uint8Array(0), patch: [[156, '5']] }]),
    },
    {
      id: 'PAX extended header',
      code: 'ARCHIVE_UNSAFE',
      tar: () =>
        tarOf([
          {
            name: 'PaxHeader/manifest.json',
            data: text('30 path=chain/0000000000000000.jsonl\n'),
            patch: [[156, 'x']],
          },
          ...goodEntries,
        ]),
    },
    {
      id: 'PAX global header',
      code: 'ARCHIVE_UNSAFE',
      tar: () =>
        tarOf([{ name: 'pax_global_header', data: text('20 comment=hello!!\n'), patch: [[156, 'g']] }, ...goodEntries]),
    },
    {
      id: 'GNU long name',
      code: 'ARCHIVE_UNSAFE',
      tar: () => tarOf([{ name: '././@LongLink', data: text('manifest.json\0'), patch: [[156, 'L']] }, ...goodEntries]),
    },
    {
      id: 'bad header checksum',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(goodEntries.map((e, i) => (i === 2 ? { ...e, patch: [[0, 'd']], keepChecksum: true } : e))),
    },
    {
      id: 'GNU magic',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf([{ ...goodEntries[0]!, patch: [[257, 'ustar  \0']] }, ...goodEntries.slice(1)]),
    },
    {
      id: 'nonzero mtime',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(replace('manifest.json', { patch: [[136, '14000000000 ']] })),
    },
    {
      id: 'owner name set',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(replace('manifest.json', { patch: [[265, 'root']] })),
    },
    {
      id: 'mode 0755',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(replace('manifest.json', { patch: [[100, '000755 ']] })),
    },
    {
      id: 'ustar prefix field used',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(replace('manifest.json', { patch: [[345, 'x']] })),
    },
    {
      id: 'nonzero padding after an entry',
      code: 'ARCHIVE_INVALID',
      tar: () => tarOf(replace('manifest.json', { padByte: 0x20 })),
    },
    {
      id: 'duplicate entry',
      code: 'ARCHIVE_UNSAFE',
      tar: () => tarOf([...goodEntries.slice(0, 3), goodEntries[2]!, ...goodEntries.slice(3)]),
    },
    { id: 'duplicate manifest', code: 'ARCHIVE_UNSAFE', tar: () => tarOf([goodEntries[0]!, goodEntries[0]!]) },
    {
      id: 'entry not in the manifest',
      code: 'ENTRY_UNEXPECTED',
      tar: () => tarOf([...goodEntries, { name: 'README', data: text('hi') }]),
    },
    { id: 'first entry is not the manifest', code: 'ENTRY_UNEXPECTED', tar: () => tarOf(goodEntries.slice(1)) },
    {
      id: 'signature not right after the manifest',
      code: 'ENTRY_UNEXPECTED',
      tar: () => tarOf([goodEntries[0]!, goodEntries[2]!, goodEntries[1]!, ...goodEntries.slice(3)]),
    },
    { id: 'no end marker', code: 'ARCHIVE_INVALID', tar: () => tarOf(goodEntries, { end: false }) },
    {
      id: 'garbage after the end marker',
      code: 'ARCHIVE_INVALID',
      tar: () => {
        const t = tarOf(goodEntries, { trailing: 512 });
        t[t.length - 3] = 1;
        return t;
      },
    },
    { id: 'empty input', code: 'ARCHIVE_INVALID', tar: () => new Uint8Array(0) },
    { id: 'only an end marker', code: 'ENTRY_MISSING', tar: () => new Uint8Array(1024) },
    { id: 'truncated inside a header', code: 'ARCHIVE_INVALID', tar: () => good.subarray(0, 700) },
    { id: 'truncated inside data', code: 'ARCHIVE_INVALID', tar: () => good.subarray(0, 512 * 6 + 100) },
    {
      id: 'corrupt gzip',
      code: 'ARCHIVE_INVALID',
      tar: () => {
        const z = gzipSync(good);
        z[z.length - 6]! ^= 0xff;
        return new Uint8Array(z);
      },
    },
    {
      id: 'manifest not canonical',
      code: 'MANIFEST_INVALID',
      tar: () => tarOf([{ name: 'manifest.json', data: text('{ "format": "stepchain-receipt/v1" }') }]),
    },
    {
      id: 'manifest from the future',
      code: 'MANIFEST_INVALID',
      tar: () => tarOf([{ name: 'manifest.json', data: text('{"format":"stepchain-receipt/v2"}') }]),
    },
    {
      id: 'manifest too big (declared)',
      code: 'ARCHIVE_LIMIT',
      tar: () => rawHeader({ name: 'manifest.json', size: 17 * 1024 * 1024 }),
    },
    {
      id: 'manifest listing a chain file beyond the limit',
      code: 'ARCHIVE_LIMIT',
      tar: () =>
        tarOf([
          {
            name: 'manifest.json',
            data: manifestFor([{ name: 'chain/0000000000000000.jsonl', size: 2 ** 31, steps: 1 }]),
          },
        ]),
    },
  ])('$id → $code', async ({ tar, code }) => {
    const r = await verifyReceipt(tar());
    expect(r.ok).toBe(false);
    expect(r.problems[0]?.code, JSON.stringify(r.problems[0])).toBe(code);
    expect(r.proves).toEqual([]);
  });

  test('entries out of order: the skipped one is missing, then unexpected when it comes late', async () => {
    const r = await verifyReceipt(
      tarOf([goodEntries[0]!, goodEntries[1]!, goodEntries[3]!, goodEntries[2]!, ...goodEntries.slice(4)]),
    );
    const c = r.problems.map((p) => p.code);
    expect(c[0]).toBe('ENTRY_MISSING');
    expect(c).toContain('ENTRY_UNEXPECTED');
    expect(r.ok).toBe(false);
  });

  test('a manifest naming files that are absent: ENTRY_MISSING for each', async () => {
    const blobs = goodEntries.filter((e) => e.name.startsWith('blobs/'));
    const r = await verifyReceipt(tarOf(goodEntries.filter((e) => !e.name.startsWith('blobs/'))));
    expect(r.problems.map((p) => p.code)).toEqual(blobs.map(() => 'ENTRY_MISSING'));
    expect(r.problems.map((p) => p.location.file)).toEqual(blobs.map((b) => b.name));
    // a chain entry absent from the middle: missing, and the chain shows the gap
    const r2 = await verifyReceipt(tarOf(goodEntries.filter((e) => e.name !== 'chain/0000000000000003.jsonl')));
    const c2 = r2.problems.map((p) => p.code);
    expect(c2[0]).toBe('ENTRY_MISSING');
    expect(r2.problems[0]!.location.file).toBe('chain/0000000000000003.jsonl');
    expect(c2).toContain('SEQ_GAP');
    expect(r2.ok).toBe(false);
  });

  test('a tampered signature is SIGNATURE_INVALID; a re-signed manifest by another key is reported by key id', async () => {
    const sig = goodEntries[1]!;
    const t = new TextDecoder()
      .decode(sig.data)
      .replace(/"sig":"(.)/, (_m, c: string) => `"sig":"${c === 'A' ? 'B' : 'A'}`);
    const r = await verifyReceipt(tarOf(replace('manifest.sig.json', { data: text(t) })));
    expect(r.problems.map((p) => p.code)).toEqual(['SIGNATURE_INVALID']);
    const other = await receiptBytes(fixture, { sign: keyPairFromSeed(testSeed(9)).privateKey });
    const r2 = await verifyReceipt(other, { publicKey: keyPairFromSeed(testSeed()).publicKey });
    expect(r2.problems.map((p) => p.code)).toEqual(['KEY_MISMATCH']);
    expect(r2.signed_by).toBe(keyPairFromSeed(testSeed(9)).keyId);
    // a signature over a different manifest: payload and manifest differ
    const shorter = entriesOf(await receiptBytes(fixture, { to: 5 }));
    const swapped = tarOf([shorter[0]!, goodEntries[1]!, ...shorter.slice(1)]);
    expect(await codes(swapped)).toEqual(['SIGNATURE_INVALID']);
  });

  test('a tampered chain line or blob is caught by digest and by the chain', async () => {
    const chainEntry = goodEntries[2]!;
    const line = new TextDecoder().decode(chainEntry.data).replace('input 0', 'input Z');
    const c = await codes(tarOf(replace(chainEntry.name, { data: text(line) })));
    expect(c).toContain('DIGEST_MISMATCH');
    expect(c).toContain('HASH_MISMATCH');
    const blob = goodEntries.find((e) => e.name.startsWith('blobs/'))!;
    const b = await codes(tarOf(replace(blob.name, { data: text('{"answer":"forged","items":[0,0,""]}') })));
    expect(b).toContain('BLOB_CORRUPT');
  });

  scale('100 000 entries: refused at once, bounded memory', async () => {
    const manifest = manifestFor([{ name: 'chain/0000000000000000.jsonl', size: 10, steps: 1 }]);
    let pulled = 0;
    async function* many(): AsyncGenerator<Uint8Array> {
      yield tarOf([{ name: 'manifest.json', data: manifest }], { end: false });
      for (let i = 0; i < 100_000; i++) {
        pulled++;
        yield rawHeader({ name: `blobs/${i.toString(16).padStart(64, '0')}`, size: 0 });
      }
      yield new Uint8Array(1024);
    }
    const { value, peak } = await peakMemory(() => verifyReceipt(many()));
    expect(value.problems[0]!.code).toBe('ENTRY_UNEXPECTED');
    // "At once" counted, not timed: the verifier stops reading at the first unlisted entry.
    expect(pulled).toBeLessThanOrEqual(2);
    expect(peak).toBeLessThan(64 * 1024 * 1024);
    // a manifest that lists 100 000 entries is refused by the entry limit before any entry is read
    const blobs = Array.from({ length: 100_000 }, (_, i) => ({
      digest: 'sha256:' + i.toString(16).padStart(64, '0'),
      size: 1,
    }));
    const big = tarOf([
      {
        name: 'manifest.json',
        data: manifestFor([{ name: 'chain/0000000000000000.jsonl', size: 10, steps: 1 }], blobs),
      },
    ]);
    const r = await verifyReceipt(big);
    expect(r.problems.map((p) => p.code)).toEqual(['ARCHIVE_LIMIT']);
    expect(r.problems[0]!.message).toContain('65536');
  });

  scale('a 100 MB line: LINE_TOO_LONG without holding it, bounded memory', async () => {
    const size = 100 * 1024 * 1024 + 1;
    const manifest = manifestFor([{ name: 'chain/0000000000000000.jsonl', size, steps: 1 }]);
    async function* archive(): AsyncGenerator<Uint8Array> {
      yield tarOf([{ name: 'manifest.json', data: manifest }], { end: false });
      yield rawHeader({ name: 'chain/0000000000000000.jsonl', size });
      const chunk = new Uint8Array(1 << 20).fill(0x61);
      for (let i = 0; i < 100; i++) yield chunk;
      yield Uint8Array.from([0x0a]);
      yield new Uint8Array(padded(size) - size + 1024);
    }
    const { value, peak } = await peakMemory(() => verifyReceipt(archive()));
    const c = value.problems.map((p) => p.code);
    expect(c).toContain('LINE_TOO_LONG');
    expect(c).toContain('DIGEST_MISMATCH');
    expect(peak).toBeLessThan(64 * 1024 * 1024);
  });

  /** A gzip stream of `plain`, counting how much of the plain stream the compressor was asked for. */
  function gzipCounting(plain: () => AsyncGenerator<Uint8Array>): {
    bytes: AsyncGenerator<Uint8Array>;
    produced: () => number;
    compressed: () => number;
    stop: () => void;
  } {
    let produced = 0;
    let compressed = 0;
    async function* counting(): AsyncGenerator<Uint8Array> {
      for await (const c of plain()) {
        produced += c.length;
        yield c;
      }
    }
    const gz = Readable.from(counting()).pipe(createGzip({ level: 9 }));
    async function* out(): AsyncGenerator<Uint8Array> {
      for await (const c of gz as AsyncIterable<Buffer>) {
        compressed += c.length;
        yield new Uint8Array(c.buffer, c.byteOffset, c.length);
      }
    }
    return { bytes: out(), produced: () => produced, compressed: () => compressed, stop: () => gz.destroy() };
  }

  test('a 1 GB gzip bomb behind a header that claims more than the manifest lists: ARCHIVE_LIMIT at that header, bounded memory', async () => {
    // The manifest lists a 1 KiB chain entry; the entry's header claims 1 GiB - 1 (within the entry limit),
    // and a gigabyte of zeros follows. The bound is what the manifest declares (RECEIPT.md §6.1), so the
    // verifier refuses at the header, before inflating the data.
    const size = 2 ** 30 - 1;
    const manifest = manifestFor([{ name: 'chain/0000000000000000.jsonl', size: 1024, steps: 1 }]);
    const bomb = gzipCounting(async function* () {
      yield tarOf([{ name: 'manifest.json', data: manifest }], { end: false });
      yield ustarHeader('chain/0000000000000000.jsonl', size);
      const zeros = new Uint8Array(1 << 20);
      for (let i = 0; i < 1024; i++) yield zeros;
    });
    const { value, peak } = await peakMemory(() => verifyReceipt(bomb.bytes));
    bomb.stop();
    expect(value.problems.map((p) => p.code)).toEqual(['DIGEST_MISMATCH', 'ARCHIVE_LIMIT']);
    const declared = 512 + padded(manifest.length) + 512 + 1024 + 1024;
    expect(value.problems[1]!.message).toContain(`past ${declared + 1024 * 1024}`);
    expect(value.problems[1]!.message).toMatch(/the manifest declares/);
    expect(bomb.produced()).toBeLessThan(2 ** 26); // the compressor ran ahead a little; the verifier read none of it
    expect(bomb.compressed()).toBeLessThan(2 ** 20);
    expect(peak).toBeLessThan(96 * 1024 * 1024);
  });

  test('a valid receipt inflating into a gigabyte of zeros after its end marker: ARCHIVE_LIMIT at the first byte past the declared size and 1 MiB', async () => {
    const bomb = gzipCounting(async function* () {
      yield good;
      const zeros = new Uint8Array(1 << 20);
      for (let i = 0; i < 1024; i++) yield zeros;
    });
    const { value, peak } = await peakMemory(() => verifyReceipt(bomb.bytes));
    bomb.stop();
    expect(value.problems.map((p) => p.code)).toEqual(['ARCHIVE_LIMIT']);
    const declared = good.length; // our writer adds no zeros after the end marker: the tar is exactly the declared size
    expect(value.problems[0]!.message).toContain(
      `to ${declared + 1024 * 1024 + 1} bytes, past ${declared + 1024 * 1024}`,
    );
    expect(bomb.produced()).toBeLessThan(2 ** 26);
    expect(peak).toBeLessThan(96 * 1024 * 1024);
  });

  scale(
    'a complete 1 GB bomb of zeros (compressed ahead of time) is refused after at most 1 MiB past the end marker',
    async () => {
      const gz = createGzip({ level: 1 });
      const parts: Buffer[] = [];
      gz.on('data', (b: Buffer) => parts.push(b));
      const done = new Promise((r) => gz.on('end', r));
      const zeros = Buffer.alloc(1 << 22);
      for (let i = 0; i < 256; i++) if (!gz.write(zeros)) await new Promise((r) => gz.once('drain', r));
      gz.end();
      await done;
      const bomb = new Uint8Array(Buffer.concat(parts));
      expect(bomb.length).toBeLessThan(8 * 1024 * 1024);
      // Fed in 4 KiB slices and counted: 1 MiB of zeros is ~5 KiB of this gzip, so a verifier that stops
      // 1 MiB past the end marker reads a few slices, and one that inflated the whole bomb would read all
      // 4.6 MB of it.
      let fed = 0;
      async function* slices(): AsyncGenerator<Uint8Array> {
        for (let i = 0; i < bomb.length; i += 4096) {
          const slice = bomb.subarray(i, i + 4096);
          fed += slice.length;
          yield slice;
        }
      }
      const r = await verifyReceipt(slices());
      expect(r.problems.map((p) => p.code)).toEqual(['ARCHIVE_LIMIT']);
      expect(r.problems[0]!.message).toMatch(/zero bytes follow the end marker/);
      expect(fed).toBeLessThan(256 * 1024);
      expect(await codes(bomb)).toEqual(['ARCHIVE_LIMIT']); // the same whole, as one Uint8Array
    },
  );

  test('verifyReceipt never throws, whatever it is given', async () => {
    for (const input of [null, undefined, 42, 'a string', {}, [1, 2], new ArrayBuffer(4)] as unknown[]) {
      const r = await verifyReceipt(input as Uint8Array);
      expect(r.ok).toBe(false);
      expect(r.problems[0]!.code).toBe('ARCHIVE_INVALID');
    }
    async function* failing(): AsyncGenerator<Uint8Array> {
      yield good.subarray(0, 1024);
      throw new Error('disk on fire');
    }
    const r = await verifyReceipt(failing());
    expect(r.problems[0]!.code).toBe('ARCHIVE_INVALID');
    expect(r.problems[0]!.message).toContain('disk on fire');
    const d = digestBytes(good);
    expect(d).toMatch(/^sha256:/);
  });
});
