/**
 * The receipt verifier's rules one at a time (spec/RECEIPT.md §7): each receipt here is a good one with a
 * single defect planted — re-tarred by hand, its manifest rewritten where the defect needs it — and each
 * test names the rule, the codes in §7.1's order and where they are located. Each case was a mutant of
 * src/receipt/verify.ts that survived the suite (npm run mutate; test/mutation/SURVIVORS.md): the
 * vectors and the hostile-archive tests reach these rules only together with others.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { scanCanonical } from '../../src/canonical/scan.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { checkBatch, type LineBatch, type LineCheckPool, type PackedFacts } from '../../src/chain/batch.js';
import { genesisHash } from '../../src/record/index.js';
import {
  MAX_ARCHIVE_BYTES,
  MAX_BLOB_BYTES,
  MAX_CHAIN_ENTRY_BYTES,
  MAX_MANIFEST_BYTES,
  MAX_SIGNATURE_BYTES,
} from '../../src/receipt/limits.js';
import {
  blobEntryName,
  declaredArchiveBytes,
  entryNames,
  MANIFEST_NAME,
  SIGNATURE_NAME,
  type ReceiptManifest,
} from '../../src/receipt/manifest.js';
import { keyPairFromSeed, receiptBytes, verifyReceipt, type ReceiptReport } from '../../src/receipt/index.js';
import { entriesOf, rawHeader, tarOf, text, type RawEntry } from './craft.js';
import { makeFixture, testSeed } from './fixture.js';

// 6 steps in buckets of 3; the results of steps 0 and 3 are blobs.
const fixture = makeFixture({ steps: 6, bucketSize: 3 });
const plain = entriesOf(await receiptBytes(fixture, {}));
const manifest0 = JSON.parse(new TextDecoder().decode(plain[0]!.data)) as ReceiptManifest;
/** blobA is the result of step 0, blobB of step 3. */
const refersTo = (seq: number) => manifest0.blobs.find((b) => fixture.stored[seq]!.text.includes(b.digest))!;
const blobA = refersTo(0);
const blobB = refersTo(3);
const dataOf = (name: string): Uint8Array => plain.find((e) => e.name === name)!.data;

/**
 * An unsigned receipt from `m` (default: the good manifest) and `data` (entry name → bytes; default: the
 * good entries), its entries in the order the manifest fixes unless `order` is given.
 */
function receipt(m: ReceiptManifest = manifest0, data: Record<string, Uint8Array> = {}, order?: string[]): Uint8Array {
  const names = order ?? entryNames(m, false);
  const entries: RawEntry[] = names.map((name) => ({
    name,
    data: name === MANIFEST_NAME ? text(canonicalJson(m as never)) : (data[name] ?? dataOf(name)),
  }));
  return tarOf(entries);
}
const withBlobs = (blobs: ReceiptManifest['blobs']): ReceiptManifest => ({
  ...manifest0,
  blobs: [...blobs].sort((a, b) => (a.digest < b.digest ? -1 : 1)),
});
const where = (r: ReceiptReport) => r.problems.map((p) => [p.code, p.location]);

describe('RECEIPT §7 step 6: blob entries', () => {
  test('the good receipt, re-tarred by these helpers, verifies', async () => {
    expect((await verifyReceipt(receipt())).problems).toEqual([]);
  });

  // Located at the step and field that reference the blob too (issue 35): a changed value names its step.
  test('bytes that do not hash to the name they are stored under are BLOB_CORRUPT at that entry and the step and field referencing it, and nothing more is checked', async () => {
    const bytes = dataOf(blobEntryName(blobA.digest)).slice();
    bytes[bytes.length - 2]! ^= 1; // same length, still canonical JSON: only the digest tells
    const r = await verifyReceipt(receipt(manifest0, { [blobEntryName(blobA.digest)]: bytes }));
    expect(where(r)).toEqual([['BLOB_CORRUPT', { file: blobEntryName(blobA.digest), seq: 0, field: 'result' }]]);
  });

  test("a listed size that is not the entry's size is BLOB_CORRUPT at the entry; a line whose reference records another size is BLOB_CORRUPT at its field", async () => {
    const m = withBlobs([{ ...blobA, size: blobA.size + 1 }, blobB]);
    const r = await verifyReceipt(receipt(m));
    expect(where(r)).toEqual([
      ['BLOB_CORRUPT', { file: 'chain/0000000000000000.jsonl', line: 1, seq: 0, field: 'result' }],
      ['BLOB_CORRUPT', { file: blobEntryName(blobA.digest) }],
    ]);
  });

  test('a line whose seq is unreadable still has its blob references checked, located without a seq (FORMAT §6.3: no seq is known)', async () => {
    const chain0 = 'chain/0000000000000000.jsonl';
    const text0 = new TextDecoder().decode(dataOf(chain0)).replace('"seq":0,', '"seq":"0",');
    const r = await verifyReceipt(receipt(withBlobs([blobB]), { [chain0]: text(text0) }));
    const missing = r.problems.filter((p) => p.code === 'BLOB_MISSING');
    expect(missing.map((p) => p.location)).toEqual([{ file: chain0, line: 1, field: 'result' }]);
  });

  test("a blob a line references that the manifest does not list is BLOB_MISSING at the line's field", async () => {
    const r = await verifyReceipt(receipt(withBlobs([blobA])));
    expect(where(r)).toEqual([
      ['BLOB_MISSING', { file: 'chain/0000000000000003.jsonl', line: 1, seq: 3, field: 'result' }],
    ]);
  });

  test.each([
    ['not UTF-8', Uint8Array.of(0x22, 0xff, 0x22), undefined],
    ['not canonical JSON', text('{"b":1,"a":2}'), scanCanonical('{"b":1,"a":2}', { members: false }).defect?.path],
  ])(
    'a listed blob whose bytes are %s is BLOB_CORRUPT at its entry (and, referenced by no step, ENTRY_UNEXPECTED)',
    async (_what, bytes, path) => {
      const digest = digestBytes(bytes);
      const m = withBlobs([blobA, blobB, { digest, size: bytes.length }]);
      const r = await verifyReceipt(receipt(m, { [blobEntryName(digest)]: bytes }));
      expect(where(r)).toEqual([
        ['BLOB_CORRUPT', { file: blobEntryName(digest), ...(path ? { path } : {}) }],
        ['ENTRY_UNEXPECTED', { file: blobEntryName(digest) }],
      ]);
    },
  );

  test('a canonical blob is handed to onBlob with its digest and text; a listed blob no step references is ENTRY_UNEXPECTED, located at its entry', async () => {
    const extra = text('[1,2]');
    const digest = digestBytes(extra);
    const seen: string[] = [];
    const r = await verifyReceipt(
      receipt(withBlobs([blobA, blobB, { digest, size: extra.length }]), { [blobEntryName(digest)]: extra }),
      { onBlob: (d, t) => seen.push(`${d} ${t}`) },
    );
    expect(where(r)).toEqual([['ENTRY_UNEXPECTED', { file: blobEntryName(digest) }]]);
    expect(seen).toContain(`${digest} [1,2]`);
    expect(seen).toHaveLength(3);
  });

  test('a listing that declares exactly the archive limit is read; 512 bytes more (one block) is ARCHIVE_LIMIT at the manifest (§6.1)', async () => {
    // 127 blobs at their own limit and one sized so that the declared archive (headers, data, padding, end
    // marker) is exactly MAX_ARCHIVE_BYTES; the archive holds the manifest only.
    const full = Array.from({ length: 127 }, (_, i) => ({
      digest: 'sha256:' + i.toString(16).padStart(64, 'a'),
      size: MAX_BLOB_BYTES,
    }));
    const declaring = (last: number) => {
      const m = withBlobs([blobA, blobB, ...full, { digest: 'sha256:' + 'f'.repeat(64), size: last }]);
      const bytes = text(canonicalJson(m as never));
      return { bytes, declared: declaredArchiveBytes(bytes.length, null, m) };
    };
    let last = 1024;
    last += MAX_ARCHIVE_BYTES - declaring(last).declared;
    last += MAX_ARCHIVE_BYTES - declaring(last).declared; // the manifest's length moved with the size's digits
    expect(declaring(last).declared).toBe(MAX_ARCHIVE_BYTES);
    const at = await verifyReceipt(tarOf([{ name: MANIFEST_NAME, data: declaring(last).bytes }]));
    expect(at.problems.map((p) => p.code)).not.toContain('ARCHIVE_LIMIT');
    expect(at.problems[0]).toMatchObject({ code: 'ENTRY_MISSING', location: { file: 'chain/0000000000000000.jsonl' } });
    const over = declaring(last + 1);
    expect(over.declared).toBe(MAX_ARCHIVE_BYTES + 512);
    expect(where(await verifyReceipt(tarOf([{ name: MANIFEST_NAME, data: over.bytes }])))).toEqual([
      ['ARCHIVE_LIMIT', { file: MANIFEST_NAME }],
    ]);
  });

  test('listed blobs whose sizes add up past the archive limit are ARCHIVE_LIMIT at the manifest, before any entry is read', async () => {
    const many = Array.from({ length: 129 }, (_, i) => ({
      digest: 'sha256:' + i.toString(16).padStart(64, 'a'),
      size: MAX_BLOB_BYTES,
    }));
    const m = withBlobs([blobA, blobB, ...many]);
    const r = await verifyReceipt(tarOf([{ name: MANIFEST_NAME, data: text(canonicalJson(m as never)) }]));
    expect(where(r)).toEqual([['ARCHIVE_LIMIT', { file: MANIFEST_NAME }]]);
    expect(r.entries).toBe(1);
  });
});

describe('RECEIPT §3.3, §7 step 6: the order of entries', () => {
  const names = entryNames(manifest0, false);
  test('an entry that comes before one listed ahead of it: the skipped one is ENTRY_MISSING, the late one ENTRY_UNEXPECTED (fatal)', async () => {
    const swapped = [...names];
    [swapped[3], swapped[4]] = [swapped[4]!, swapped[3]!]; // the two blobs
    const r = await verifyReceipt(receipt(manifest0, {}, swapped));
    expect(where(r)).toEqual([
      ['ENTRY_MISSING', { file: names[3] }],
      ['ENTRY_UNEXPECTED', { file: names[3] }],
    ]);
  });

  test('an archive with no entries is ENTRY_MISSING at the manifest; one that starts with another entry is ENTRY_UNEXPECTED at that entry', async () => {
    expect(where(await verifyReceipt(tarOf([])))).toEqual([['ENTRY_MISSING', { file: MANIFEST_NAME }]]);
    expect(where(await verifyReceipt(tarOf(plain.slice(1))))).toEqual([['ENTRY_UNEXPECTED', { file: plain[1]!.name }]]);
  });

  test('an entry the manifest does not list is ENTRY_UNEXPECTED at it, and reading stops', async () => {
    const r = await verifyReceipt(
      tarOf([...plain.slice(0, 2), { name: 'chain/0000000000000099.jsonl', data: text('{}\n') }, ...plain.slice(2)]),
    );
    expect(where(r)).toEqual([['ENTRY_UNEXPECTED', { file: 'chain/0000000000000099.jsonl' }]]);
  });

  test('a signature entry anywhere but right after the manifest is ENTRY_UNEXPECTED', async () => {
    const r = await verifyReceipt(
      tarOf([...plain.slice(0, 2), { name: SIGNATURE_NAME, data: text('{}') }, ...plain.slice(2)]),
    );
    expect(where(r)).toEqual([['ENTRY_UNEXPECTED', { file: SIGNATURE_NAME }]]);
  });
});

describe('RECEIPT §7 steps 5, 9: the manifest against the chain', () => {
  test('a complete range whose prev_hash is not the genesis hash is GENESIS_MISMATCH at /range/prev_hash; the chain still starts from the genesis', async () => {
    const m = { ...manifest0, range: { ...manifest0.range, prev_hash: 'sha256:' + 'e'.repeat(64) } };
    const r = await verifyReceipt(receipt(m));
    expect(where(r)).toEqual([['GENESIS_MISMATCH', { file: MANIFEST_NAME, path: '/range/prev_hash' }]]);
    expect(r.start_hash).toBe(genesisHash(manifest0.genesis));
  });

  test('a chain entry whose last line has no newline: TRUNCATED_LINE, and its size, digest and count no longer match', async () => {
    const name = 'chain/0000000000000003.jsonl';
    const torn = dataOf(name).slice(0, -1);
    const r = await verifyReceipt(receipt(manifest0, { [name]: torn }));
    expect(r.problems.map((p) => p.code)).toEqual([
      'DIGEST_MISMATCH',
      'DIGEST_MISMATCH',
      'COUNT_MISMATCH',
      'TRUNCATED_LINE',
      'HEAD_MISMATCH',
    ]);
    expect(r.problems.slice(0, 4).map((p) => p.location)).toEqual([
      { file: name },
      { file: name },
      { file: name },
      { file: name, line: 3 },
    ]);
  });
});

describe('RECEIPT §5.2, §7 step 0: pins and their locations', () => {
  const key = keyPairFromSeed(testSeed(5));
  const other = keyPairFromSeed(testSeed(6));
  test('signed by another key than the pinned one: KEY_MISMATCH at the signature entry', async () => {
    const r = await verifyReceipt(await receiptBytes(fixture, { sign: other.privateKey }), {
      publicKey: key.publicKey,
    });
    expect(where(r)).toEqual([['KEY_MISMATCH', { file: SIGNATURE_NAME }]]);
    expect(r.signed_by).toBe(other.keyId);
  });

  test('a key pinned and no signature: SIGNATURE_MISSING at the signature entry', async () => {
    const r = await verifyReceipt(receipt(), { publicKey: key.publicKey });
    expect(where(r)).toEqual([['SIGNATURE_MISSING', { file: SIGNATURE_NAME }]]);
  });

  test('a pinned head the chain does not end at: HEAD_MISMATCH at /head/step_hash', async () => {
    const r = await verifyReceipt(receipt(), { expectHead: 'sha256:' + 'c'.repeat(64) });
    expect(where(r)).toEqual([['HEAD_MISMATCH', { file: MANIFEST_NAME, path: '/head/step_hash' }]]);
  });
});

describe('RECEIPT §7, §8: inputs and the report', () => {
  test.each([
    ['a string', 'not bytes'],
    ['a number', 42],
    ['null', null],
    ['an object that is neither a stream nor iterable', { length: 3 }],
    // A ByteInput is bytes, a web stream or an async iterable; an array of chunks is none of them, though
    // `for await` would read it.
    ['an array holding the bytes of a good receipt', [receipt()]],
  ])(
    '%s is ARCHIVE_INVALID, never a throw; the report is the empty one (nothing read, nothing dropped)',
    async (_what, input) => {
      const r = await verifyReceipt(input as never);
      expect(r.problems.map((p) => p.code)).toEqual(['ARCHIVE_INVALID']);
      expect(r).toMatchObject({
        ok: false,
        problems_truncated: false,
        compressed: false,
        format: null,
        entries: 0,
        steps: 0,
        head: null,
        proves: [],
      });
    },
  );

  test('a web ReadableStream and an async iterable of chunks verify like the bytes', async () => {
    const bytes = receipt();
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes.subarray(0, 700));
        c.enqueue(bytes.subarray(700));
        c.close();
      },
    });
    async function* chunks(): AsyncGenerator<Uint8Array> {
      yield bytes.subarray(0, 1000);
      yield bytes.subarray(1000);
    }
    for (const input of [stream, chunks()]) {
      const r = await verifyReceipt(input);
      expect(r.problems).toEqual([]);
      expect(r.entries).toBe(entryNames(manifest0, false).length);
    }
  });

  test('options given as null mean none', async () => {
    expect((await verifyReceipt(receipt(), null as never)).ok).toBe(true);
  });

  test('the report of a good unsigned receipt: its members as §8 lists them', async () => {
    const r = await verifyReceipt(receipt());
    expect(r).toMatchObject({
      ok: true,
      format: 'stepchain-receipt/v1',
      compressed: false,
      scope: 'complete',
      range: manifest0.range,
      genesis: manifest0.genesis,
      journal_id: 'fixture-journal',
      signed_by: null,
      entries: 5,
      blobs: 2,
      warnings: [],
      problems_truncated: false,
      steps: 6,
      head_seq: 5,
    });
  });

  test('more problems than maxProblems: the report keeps that many, says it is truncated, and is not ok', async () => {
    const m = { ...manifest0, range: { ...manifest0.range, prev_hash: 'sha256:' + 'e'.repeat(64) } };
    const r = await verifyReceipt(receipt(m, { [blobEntryName(blobA.digest)]: text('x') }), { maxProblems: 1 });
    expect(r.problems).toHaveLength(1);
    expect(r.problems_truncated).toBe(true);
    expect(r.ok).toBe(false);
  });

  test("a chain with more problems than maxProblems: truncated too, though the receipt's own list is not", async () => {
    // No blobs, and the manifest lists the broken entry as it is: every problem is the chain's.
    const bare = entriesOf(await receiptBytes(makeFixture({ steps: 6, bucketSize: 3, blobEvery: 0 }), {}));
    const bareManifest = JSON.parse(new TextDecoder().decode(bare[0]!.data)) as ReceiptManifest;
    const name = 'chain/0000000000000003.jsonl';
    const broken = text('{}\n{}\n{}\n');
    const m = {
      ...bareManifest,
      chain: bareManifest.chain.map((c) =>
        c.name === name ? { ...c, size: broken.length, digest: digestBytes(broken) } : c,
      ),
    };
    const archive = tarOf([
      { name: MANIFEST_NAME, data: text(canonicalJson(m as never)) },
      ...bare.slice(1).map((e) => (e.name === name ? { name, data: broken } : e)),
    ]);
    const all = await verifyReceipt(archive);
    expect(all.problems.length).toBeGreaterThan(2);
    expect(all.problems.every((p) => p.location.file === name)).toBe(true);
    const r = await verifyReceipt(archive, { maxProblems: 2 });
    expect(r.problems).toEqual(all.problems.slice(0, 2));
    expect(r.problems_truncated).toBe(true);
    expect(r.ok).toBe(false);
  });
});

describe('RECEIPT §6: entry sizes at their limits', () => {
  const chain0 = 'chain/0000000000000000.jsonl';
  /** A manifest listing one chain entry of `chainSize` bytes and one blob of `blobSize` (the digests do not matter here). */
  const listing = (chainSize: number, blobSize: number): Uint8Array =>
    text(
      canonicalJson({
        ...manifest0,
        chain: [{ digest: 'sha256:' + '0'.repeat(64), name: chain0, size: chainSize, steps: 6 }],
        blobs: [{ digest: 'sha256:' + 'b'.repeat(64), size: blobSize }],
      } as never),
    );
  const blob = blobEntryName('sha256:' + 'b'.repeat(64));
  const cases: Array<[string, (size: number) => Uint8Array, number, string]> = [
    ['the manifest', (size) => rawHeader({ name: MANIFEST_NAME, size }), MAX_MANIFEST_BYTES, MANIFEST_NAME],
    [
      'the signature',
      (size) =>
        concat(
          tarOf([{ name: MANIFEST_NAME, data: listing(10, 10) }], { end: false }),
          rawHeader({ name: SIGNATURE_NAME, size }),
        ),
      MAX_SIGNATURE_BYTES,
      SIGNATURE_NAME,
    ],
    [
      'a chain entry',
      (size) =>
        concat(
          tarOf([{ name: MANIFEST_NAME, data: listing(MAX_CHAIN_ENTRY_BYTES, 10) }], { end: false }),
          rawHeader({ name: chain0, size }),
        ),
      MAX_CHAIN_ENTRY_BYTES,
      chain0,
    ],
    [
      'a blob entry',
      (size) =>
        concat(
          tarOf(
            [
              { name: MANIFEST_NAME, data: listing(10, MAX_BLOB_BYTES) },
              { name: chain0, data: text('0123456789') },
            ],
            { end: false },
          ),
          rawHeader({ name: blob, size }),
        ),
      MAX_BLOB_BYTES,
      blob,
    ],
  ];
  test.each(cases)(
    '%s at exactly its limit is read (and here ends too soon); one byte more is ARCHIVE_LIMIT at it',
    async (_what, archive, limit, file) => {
      // The archive's own problem; the chain's, read before it stopped, come after it (§7.1).
      const fatal = (r: ReceiptReport) => r.problems.filter((p) => p.code.startsWith('ARCHIVE_'));
      expect(fatal(await verifyReceipt(archive(limit)))).toMatchObject([
        { code: 'ARCHIVE_INVALID', location: { file } },
      ]);
      expect(fatal(await verifyReceipt(archive(limit + 1)))).toMatchObject([
        { code: 'ARCHIVE_LIMIT', location: { file } },
      ]);
    },
  );
});

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

describe("RECEIPT §7 steps 8–9, §7.1: the chain's problems in the receipt's report", () => {
  test("a manifest naming a head the chain does not end at: the chain's HEAD_MISMATCH is reported", async () => {
    const m = { ...manifest0, head: { ...manifest0.head, step_hash: 'sha256:' + 'd'.repeat(64) } };
    const r = await verifyReceipt(receipt(m));
    expect(r.problems.map((p) => p.code)).toEqual(['HEAD_MISMATCH']);
    expect(r.ok).toBe(false);
  });

  test("after a fatal problem the chain's problems so far are still reported, but not the head it never reached", async () => {
    const chain0 = 'chain/0000000000000000.jsonl';
    const edited = dataOf(chain0).slice();
    edited[edited.indexOf(0x22) + 1]! ^= 0x20; // the first member name's first letter changes case: a broken line 1
    const whole = receipt(manifest0, { [chain0]: edited });
    const padded = (n: number) => Math.ceil(n / 512) * 512;
    const end = 512 + padded(plain[0]!.data.length) + 512 + padded(edited.length) + 512; // through chain/3's header
    const r = await verifyReceipt(whole.slice(0, end));
    const codes = r.problems.map((p) => p.code);
    expect(codes.slice(0, 2)).toEqual(['DIGEST_MISMATCH', 'ARCHIVE_INVALID']);
    expect(codes.slice(2).length).toBeGreaterThan(0);
    expect(r.problems.slice(2).every((p) => p.location.file === chain0 && p.location.line === 1)).toBe(true);
    expect(codes).not.toContain('HEAD_MISMATCH');
    // Nor is a pinned head compared with where the cut-short chain stopped.
    const pinned = await verifyReceipt(whole.slice(0, end), { expectHead: manifest0.head.step_hash });
    expect(pinned.problems).toEqual(r.problems);
  });
});

describe('RECEIPT §7, REDACTION §7: the extension points onLine and finish', () => {
  test('onLine sees every chain line in chain order, with its entry, line number, seq, step_hash and text as stored', async () => {
    const seen: Array<[string | undefined, number, number | null, string | null, string, boolean]> = [];
    const r = await verifyReceipt(receipt(), {
      onLine: (l) => void seen.push([l.file, l.line, l.seq, l.step_hash, l.text, l.clean]),
    });
    expect(r.ok).toBe(true);
    expect(seen).toEqual(
      fixture.stored.map((s, i) => [
        `chain/${String(3 * Math.floor(i / 3)).padStart(16, '0')}.jsonl`,
        (i % 3) + 1,
        s.seq,
        JSON.parse(s.text).step_hash,
        s.text,
        true,
      ]),
    );
  });

  test('with a pool whose answers come late, the report and what onLine sees are the ones without it: lines still in flight at the end marker are finished before blobs are counted unreferenced', async () => {
    let batches = 0;
    const pool: LineCheckPool = {
      threads: 2,
      batchBytes: 256,
      check(batch: LineBatch): Promise<PackedFacts | null> {
        batches++;
        const copy = { format: batch.format, bytes: batch.bytes.slice(), ends: batch.ends.slice() };
        return new Promise((resolve) => setTimeout(() => setTimeout(() => resolve(checkBatch(copy)), 0), 0));
      },
    };
    const seen: Array<Array<number | null>> = [[], []];
    const without = await verifyReceipt(receipt(), { onLine: (l) => void seen[0]!.push(l.seq) });
    const withPool = await verifyReceipt(receipt(), { pool, onLine: (l) => void seen[1]!.push(l.seq) });
    expect(batches).toBeGreaterThan(1);
    expect(withPool).toEqual(without);
    expect(withPool.problems).toEqual([]);
    expect(seen[1]).toEqual(seen[0]);
  });

  test('finish is called once with the finished report, what it proves included, and verifyReceipt returns what finish returns', async () => {
    const calls: ReceiptReport[] = [];
    const r = await verifyReceipt(receipt(), {
      finish: (report) => {
        calls.push(report);
        return { ...report, extra: 'mine' };
      },
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ ok: true, steps: 6, head_seq: 5, entries: 5 });
    expect(calls[0]!.proves.length).toBeGreaterThan(0);
    expect(r).toEqual({ ...calls[0], extra: 'mine' });
  });

  test('a broken receipt reaches finish too, its problems already listed', async () => {
    const calls: ReceiptReport[] = [];
    await verifyReceipt(receipt(), {
      expectHead: 'sha256:' + 'c'.repeat(64),
      finish: (report) => {
        calls.push(report);
        return report;
      },
    });
    expect(calls.map((c) => [c.ok, c.problems.map((p) => p.code)])).toEqual([[false, ['HEAD_MISMATCH']]]);
  });
});
