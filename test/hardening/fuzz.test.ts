/**
 * Fuzzing (issue 8), thousands of cases per target in the normal run and 20× with STEPCHAIN_LONG=1:
 * the canonical-line scanner, the chain verifier and the journal-directory verifier on arbitrary bytes, the
 * receipt verifier on random and mutated archives (tar-level and gzip-level), the redaction policy parser
 * and the secret detectors. The property everywhere: no crash, no hang, no unbounded memory — a report
 * with known codes, or a coded error.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, gzipSync } from 'node:zlib';
import { verifyPublishedReceipt } from '../../src/redact/verify.js';
import { describe, expect, test } from 'vitest';
import fc from 'fast-check';
import { scanCanonical, canonicalJson } from '../../src/canonical/index.js';
import { ChainVerifier, declaredFirstSeq, verifyFile, type ChainReport } from '../../src/chain/index.js';
import { FileStore } from '../../src/store/index.js';
import { StepchainError } from '../../src/errors.js';
import {
  receiptBytes,
  verifyReceipt,
  verifyReceiptFile,
  keyPairFromSeed,
  type VerifyReceiptOptions,
} from '../../src/receipt/index.js';
import { ustarHeader, checksum } from '../../src/receipt/tar.js';
import { parsePolicyText, compilePolicy, PolicyError, findSecrets, DETECTOR_IDS } from '../../src/redact/index.js';
import { buildChain } from '../helpers/chains.js';
import { tempDir } from '../helpers/tmp.js';
import { makeFixture, testSeed } from '../receipt/fixture.js';
import { runs } from './support.js';

const enc = new TextEncoder();

/** Every code a ChainReport or ReceiptReport may carry (src/chain/report.ts). */
const CODES = new Set([
  'MALFORMED_LINE',
  'NONCANONICAL_LINE',
  'DUPLICATE_KEY',
  'LONE_SURROGATE',
  'NOT_FINITE_NUMBER',
  'DEPTH_LIMIT',
  'LINE_TOO_LONG',
  'TRUNCATED_LINE',
  'MISSING_FIELD',
  'UNKNOWN_FIELD',
  'FIELD_INVALID',
  'UNSUPPORTED_VERSION',
  'MARKER_INVALID',
  'GENESIS_INVALID',
  'GENESIS_MISMATCH',
  'HASH_MISMATCH',
  'LINK_BROKEN',
  'SEQ_GAP',
  'SEQ_OUT_OF_ORDER',
  'DUPLICATE_STEP',
  'HEAD_MISMATCH',
  'BUCKET_MISNAMED',
  'BLOB_MISSING',
  'BLOB_CORRUPT',
  'JOURNAL_INVALID',
  'HEAD_CACHE_STALE',
  'BATCH_PENDING',
  'ARCHIVE_INVALID',
  'ARCHIVE_UNSAFE',
  'ARCHIVE_LIMIT',
  'ENTRY_MISSING',
  'ENTRY_UNEXPECTED',
  'MANIFEST_INVALID',
  'DIGEST_MISMATCH',
  'COUNT_MISMATCH',
  'SIGNATURE_INVALID',
  'SIGNATURE_MISSING',
  'KEY_MISMATCH',
]);

function expectWellFormed(report: ChainReport<string>): void {
  expect(typeof report.ok).toBe('boolean');
  for (const p of [...report.problems, ...report.warnings]) {
    expect(CODES.has(p.code), `unknown code ${p.code}`).toBe(true);
    expect(typeof p.message).toBe('string');
  }
  if (report.ok) expect(report.problems).toEqual([]);
  else expect(report.problems.length).toBeGreaterThan(0);
}

/** JSON-shaped noise: the tokens a scanner has to get right, in any order. */
const TOKENS = [
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '"',
  '\\',
  '"a"',
  '"seq"',
  '0',
  '-0',
  '1e400',
  '-',
  '1.',
  '.5',
  '01',
  'tru',
  'true',
  'null',
  'nul',
  '\\u',
  '\\ud800',
  '\\udc00',
  '\\u0000',
  ' ',
  '\t',
  '\r',
  '\n',
  '\u2028',
  '\uFFFF',
  '\uD800',
  '\u{1F600}',
  '"$stepchain:blob"',
  '{"$stepchain:redacted":',
  '1e-7',
  '9'.repeat(400),
];
const tokenSoup = fc.array(fc.constantFrom(...TOKENS), { maxLength: 80 }).map((t) => t.join(''));

describe('the canonical-line scanner', () => {
  test('never throws and terminates on arbitrary text and JSON-shaped noise', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary', maxLength: 300 }),
          tokenSoup,
          fc.json().map((j) => j.replace(/,/, ', ')),
        ),
        (text) => {
          const r = scanCanonical(text);
          if (r.defect) {
            expect(typeof r.defect.code).toBe('string');
            expect(r.defect.index).toBeGreaterThanOrEqual(0);
            expect(r.defect.index).toBeLessThanOrEqual(text.length);
          }
        },
      ),
      { numRuns: runs(4000) },
    );
  });

  test('accepts exactly its own output: whatever it accepts re-serializes to the same text', () => {
    fc.assert(
      fc.property(fc.oneof(tokenSoup, fc.json()), (text) => {
        const r = scanCanonical(text, { members: false });
        if (r.defect === null) expect(canonicalJson(JSON.parse(text), { refuseReserved: false })).toBe(text);
      }),
      { numRuns: runs(3000) },
    );
  });

  test('nesting a million deep is refused without recursion', () => {
    for (const open of ['[', '{"a":']) {
      const r = scanCanonical(open.repeat(1_000_000));
      expect(r.defect?.code).toBe('DEPTH_LIMIT');
    }
  });
});

describe('the chain verifier', () => {
  const chain = buildChain(
    Array.from({ length: 6 }, (_, i) => ({ input: { i }, result: i % 2 ? { x: 'y'.repeat(i * 10) } : null })),
  );

  test('never throws on arbitrary bytes in arbitrary files, chunks, genesis and start', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 2000 }),
      tokenSoup.map((s) => enc.encode(s + '\n')),
      // a real chain with bytes flipped, cut or spliced
      fc
        .tuple(fc.nat(chain.bytes.length - 1), fc.integer({ min: 1, max: 255 }), fc.nat(chain.bytes.length))
        .map(([at, mask, cut]) => {
          const b = Uint8Array.from(chain.bytes);
          b[at]! ^= mask;
          return b.subarray(0, Math.max(cut, at + 1));
        }),
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ name: fc.oneof(fc.constant('0000000000000000.jsonl'), fc.string({ maxLength: 30 })), bytes }),
          { maxLength: 4 },
        ),
        fc.oneof(fc.constant(chain.genesis as unknown), fc.anything()),
        fc.option(fc.record({ seq: fc.integer({ min: -3, max: 10 }), prev_hash: fc.string() })),
        fc.option(fc.string()),
        fc.integer({ min: 1, max: 5 }),
        (files, genesis, start, expectHead, maxProblems) => {
          const v = new ChainVerifier({
            genesis,
            ...(start ? { start } : {}),
            ...(expectHead !== null ? { expectHead } : {}),
            maxProblems,
          });
          for (const f of files) verifyFile(v, f.name, f.bytes);
          const report = v.finish();
          expectWellFormed(report);
          expect(report.problems.length).toBeLessThanOrEqual(maxProblems);
        },
      ),
      { numRuns: runs(3000) },
    );
  });

  test('fed line by line with random split points, a damaged chain gives the same report as whole', () => {
    fc.assert(
      fc.property(fc.nat(chain.bytes.length - 1), fc.integer({ min: 1, max: 255 }), (at, mask) => {
        const b = Uint8Array.from(chain.bytes);
        b[at]! ^= mask;
        const whole = new ChainVerifier({ genesis: chain.genesis });
        verifyFile(whole, '0000000000000000.jsonl', b);
        const byLine = new ChainVerifier({ genesis: chain.genesis });
        byLine.beginSegment('0000000000000000.jsonl', declaredFirstSeq('0000000000000000.jsonl'));
        let start = 0;
        for (let i = 0; i < b.length; i++) {
          if (b[i] === 10) {
            byLine.line(b.subarray(start, i), true);
            start = i + 1;
          }
        }
        if (start < b.length) byLine.line(b.subarray(start), false);
        const w = whole.finish();
        expect(w.ok).toBe(false);
        expect(byLine.finish()).toEqual(w);
      }),
      { numRuns: runs(1500) },
    );
  });
});

describe('the journal-directory verifier', () => {
  const root = tempDir('stepchain-fuzzdir-');
  const chain = buildChain(Array.from({ length: 4 }, (_, i) => ({ input: { i } })));
  let n = 0;

  test('random bucket files, metadata and head caches end in a report or a coded StoreError', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.oneof(
              fc.constant('0000000000000000.jsonl'),
              fc.constant('0000000000000002.jsonl'),
              fc.stringMatching(/^[0-9a-z]{1,16}(\.jsonl)?$/),
            ),
            fc.oneof(
              fc.uint8Array({ maxLength: 600 }),
              fc.constant(chain.bytes),
              tokenSoup.map((s) => enc.encode(s)),
            ),
          ),
          { maxLength: 3 },
        ),
        fc.oneof(fc.constant(null), fc.string({ maxLength: 60 }), fc.json()),
        fc.oneof(fc.constant(null), fc.string({ maxLength: 60 }), fc.json()),
        async (buckets, meta, headCache) => {
          const id = `d${n++}`;
          const dir = join(root, id);
          mkdirSync(join(dir, 'buckets'), { recursive: true });
          mkdirSync(join(dir, 'blobs', 'sha256'), { recursive: true });
          writeFileSync(
            join(dir, 'journal.json'),
            meta ??
              canonicalJson({
                format: 'stepchain-journal/v1',
                genesis: chain.genesis,
                config: { bucket_bytes: 4096, blob_threshold: 1024 },
                lineage: null,
              }) + '\n',
          );
          if (headCache !== null) writeFileSync(join(dir, 'head.json'), headCache);
          for (const [name, bytes] of buckets) writeFileSync(join(dir, 'buckets', name), bytes);
          try {
            const j = await new FileStore(root).open(id, { readOnly: true });
            try {
              expectWellFormed(await j.verify());
              for await (const _ of j.read()) break;
            } catch (e) {
              expect(e).toBeInstanceOf(StepchainError);
            } finally {
              await j.close();
            }
          } catch (e) {
            expect(e, String(e)).toBeInstanceOf(StepchainError);
          }
          rmSync(dir, { recursive: true, force: true });
        },
      ),
      { numRuns: runs(300) },
    );
  });
});

describe('a last line that is JSON but not an object', () => {
  // Regression (found by the journal-directory fuzz in long mode): a bucket whose last line was `null`
  // made head(), get() and read() throw a bare TypeError ("Cannot read properties of null").
  const root = tempDir('stepchain-nullline-');
  const genesis = buildChain([]).genesis;
  test.each(['null', '1', '"x"', '[1]', 'true'])(
    '%s: verify reports it; head, get and read fail with JOURNAL_CORRUPT',
    async (line) => {
      const id = `n${Buffer.from(line).toString('hex')}`;
      const dir = join(root, id);
      mkdirSync(join(dir, 'buckets'), { recursive: true });
      writeFileSync(
        join(dir, 'journal.json'),
        canonicalJson({
          format: 'stepchain-journal/v1',
          genesis,
          config: { bucket_bytes: 4096, blob_threshold: 1024 },
          lineage: null,
        }) + '\n',
      );
      writeFileSync(join(dir, 'buckets', '0000000000000000.jsonl'), line + '\n');
      const j = await new FileStore(root).open(id, { readOnly: true });
      try {
        expect((await j.verify()).ok).toBe(false);
        for (const f of [
          () => j.head(),
          () => j.get(0),
          async () => {
            for await (const _ of j.read()) void _;
          },
        ]) {
          const err = await f().catch((e: unknown) => e);
          expect(err, String(err)).toBeInstanceOf(StepchainError);
          expect((err as StepchainError).code).toBe('JOURNAL_CORRUPT');
        }
      } finally {
        await j.close();
      }
    },
  );
});

describe('the receipt verifier', () => {
  const key = keyPairFromSeed(testSeed(3));
  const BLOCK = 512;

  /** A real receipt to mutate: 7 steps, 3 chain entries, blobs, signed. */
  const realTar = receiptBytes(makeFixture({ steps: 7, bucketSize: 3, filler: 2 }), { sign: key.privateKey });

  function concat(parts: Uint8Array[]): Uint8Array {
    const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
    let o = 0;
    for (const p of parts) (out.set(p, o), (o += p.length));
    return out;
  }

  /** Random ustar headers: hostile names, types, sizes and checksums, data that may disagree with the size. */
  const NAMES = [
    'manifest.json',
    'manifest.sig.json',
    'chain/0000000000000000.jsonl',
    `blobs/${'a'.repeat(64)}`,
    '../etc/passwd',
    '/abs',
    'chain/../../x',
    'a'.repeat(100),
    'chain/',
    '.',
    '',
    'manifest.json\u0000x',
    'ünï/cödé',
    'C:\\win',
    'chain//0000000000000000.jsonl',
    './manifest.json',
  ];
  const sizeField = fc.oneof(
    fc.nat(3000).map((n) => n.toString(8).padStart(11, '0') + '\0'),
    fc.constantFrom(
      '77777777777\0',
      '00000000000 ',
      '           \0',
      '-0000000001\0',
      'zzzzzzzzzzz\0',
      '0x100000000\0',
      '\u0080\0\0\0\0\0\0\0\u00ff\u00ff\u00ff\u00ff',
      '\u00ff'.repeat(12),
    ),
  );
  const header = fc.record({
    name: fc.oneof(fc.constantFrom(...NAMES), fc.string({ maxLength: 120 })),
    typeflag: fc.constantFrom('0', '\0', '1', '2', '3', '5', '7', 'x', 'g', 'L', 'K', 'S'),
    size: sizeField,
    prefix: fc.oneof(fc.constant(''), fc.constantFrom('..', '/', 'chain', 'x'.repeat(155))),
    magic: fc.constantFrom('ustar\u000000', 'ustar  \u0000', 'garbage'),
    mode: fc.constantFrom('0000644\0', '0004755\0', '7777777\0'),
    goodChecksum: fc.boolean(),
    data: fc.uint8Array({ maxLength: 1500 }),
  });
  function rawEntry(h: {
    name: string;
    typeflag: string;
    size: string;
    prefix: string;
    magic: string;
    mode: string;
    goodChecksum: boolean;
    data: Uint8Array;
  }): Uint8Array {
    const b = new Uint8Array(BLOCK);
    const put = (at: number, len: number, s: string) =>
      b.set(Uint8Array.from([...s].slice(0, len).map((c) => c.charCodeAt(0) & 0xff)), at);
    put(0, 100, h.name);
    put(100, 8, h.mode);
    put(108, 8, '0000000\0');
    put(116, 8, '0000000\0');
    put(124, 12, h.size);
    put(136, 12, '00000000000\0');
    put(156, 1, h.typeflag);
    put(257, 8, h.magic);
    put(345, 155, h.prefix);
    b.fill(0x20, 148, 156);
    const sum = checksum(b) + (h.goodChecksum ? 0 : 1);
    put(148, 8, sum.toString(8).padStart(6, '0') + '\0 ');
    return concat([b, h.data, new Uint8Array((BLOCK - (h.data.length % BLOCK)) % BLOCK)]);
  }

  async function expectRefusedOrIdentical(
    bytes: Uint8Array,
    original: { manifest_digest: string | null } | null,
  ): Promise<void> {
    const r = await verifyReceipt(bytes);
    expectWellFormed(r);
    if (r.ok) {
      // A mutant may verify only if what it verified is the original content.
      expect(original, 'a random archive verified').not.toBeNull();
      expect(r.manifest_digest).toBe(original!.manifest_digest);
    }
  }

  test('random bytes, with and without a gzip magic, are refused with known codes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 3000 }), fc.boolean(), async (b, gz) => {
        await expectRefusedOrIdentical(gz ? concat([Uint8Array.of(0x1f, 0x8b, 8), b]) : b, null);
      }),
      { numRuns: runs(1500) },
    );
  });

  test('archives of random ustar headers (names, types, sizes, checksums, prefixes) are refused and never hang', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(header, { minLength: 1, maxLength: 5 }),
        fc.constantFrom(0, 1, 2, 3),
        async (hs, endBlocks) => {
          await expectRefusedOrIdentical(concat([...hs.map(rawEntry), new Uint8Array(endBlocks * BLOCK)]), null);
        },
      ),
      { numRuns: runs(1500) },
    );
  });

  test('a real receipt with entries dropped, duplicated, reordered or replaced by hostile ones', async () => {
    const tar = await realTar;
    const original = await verifyReceipt(tar);
    expect(original.ok).toBe(true);
    // split into entries (our own writer's output: header + padded data)
    const entries: Uint8Array[] = [];
    for (let o = 0; o + BLOCK <= tar.length;) {
      const h = tar.subarray(o, o + BLOCK);
      if (h.every((x) => x === 0)) break;
      const size = parseInt(new TextDecoder().decode(h.subarray(124, 135)), 8);
      const len = BLOCK + Math.ceil(size / BLOCK) * BLOCK;
      entries.push(tar.subarray(o, o + len));
      o += len;
    }
    expect(entries.length).toBeGreaterThan(4);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('drop' as const), i: fc.nat(entries.length - 1) }),
      fc.record({ kind: fc.constant('dup' as const), i: fc.nat(entries.length - 1) }),
      fc.record({ kind: fc.constant('swap' as const), i: fc.nat(entries.length - 2) }),
      fc.record({ kind: fc.constant('hostile' as const), i: fc.nat(entries.length), h: header }),
      fc.record({
        kind: fc.constant('rename' as const),
        i: fc.nat(entries.length - 1),
        name: fc.constantFrom(...NAMES),
      }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 3 }), async (ops) => {
        let es = [...entries];
        for (const o of ops) {
          const i = Math.min(o.i, es.length - 1);
          if (o.kind === 'drop' && es.length > 1) es.splice(i, 1);
          else if (o.kind === 'dup' && es.length > 0) es.splice(i, 0, es[i]!);
          else if (o.kind === 'swap' && es.length > 1)
            es = es.map((e, k) => (k === i ? (es[i + 1] ?? e) : k === i + 1 ? es[i]! : e));
          else if (o.kind === 'hostile') es.splice(o.i, 0, rawEntry(o.h));
          else if (o.kind === 'rename' && es.length > 0) {
            const e = Uint8Array.from(es[i]!);
            const size = parseInt(new TextDecoder().decode(e.subarray(124, 135)), 8);
            e.set(ustarHeader(o.name.replace(/\0/g, ''), size));
            es[i] = e;
          }
        }
        const bytes = concat([...es, new Uint8Array(2 * BLOCK)]);
        // A mutant may verify only with the original manifest (for example, the signature entry dropped
        // leaves a valid unsigned receipt of the same content); anything else must be refused.
        await expectRefusedOrIdentical(bytes, original);
      }),
      { numRuns: runs(600) },
    );
  });

  test('gzip-level mutations: header flags and fields, CRC and ISIZE, extra members, truncation, trailing bytes', async () => {
    const tar = await realTar;
    const original = await verifyReceipt(tar);
    const deflated = gzipSync(tar, { level: 6 });
    const body = deflated.subarray(10, deflated.length - 8);
    const crc = deflated.subarray(deflated.length - 8, deflated.length - 4);
    const isize = deflated.subarray(deflated.length - 4);
    const u32 = (n: number) => Uint8Array.of(n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff);
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          flags: fc.nat(255),
          method: fc.constantFrom(8, 8, 8, 0, 7),
          extra: fc.uint8Array({ maxLength: 40 }),
          extraLen: fc.option(fc.nat(0xffff)),
          name: fc.uint8Array({ maxLength: 20 }),
          crcDelta: fc.constantFrom(0, 0, 1),
          isizeDelta: fc.constantFrom(0, 0, -1, 1, 0x10000),
          second: fc.oneof(fc.constant(null), fc.constant('copy'), fc.uint8Array({ minLength: 1, maxLength: 40 })),
          cut: fc.option(fc.nat(2000)),
          trailing: fc.uint8Array({ maxLength: 10 }),
        }),
        async (m) => {
          const parts: Uint8Array[] = [Uint8Array.of(0x1f, 0x8b, m.method, m.flags, 0, 0, 0, 0, 0, 255)];
          if (m.flags & 4) parts.push(u32(m.extraLen ?? m.extra.length).subarray(0, 2), m.extra);
          if (m.flags & 8)
            parts.push(
              m.name.map((x) => x || 1),
              Uint8Array.of(0),
            );
          if (m.flags & 16)
            parts.push(
              m.name.map((x) => x || 1),
              Uint8Array.of(0),
            );
          if (m.flags & 2) {
            const soFar = concat(parts);
            parts.push(u32(crc32(soFar) & 0xffff).subarray(0, 2));
          }
          parts.push(
            body,
            u32((crc[0]! | (crc[1]! << 8) | (crc[2]! << 16) | (crc[3]! << 24)) + m.crcDelta),
            u32((isize[0]! | (isize[1]! << 8) | (isize[2]! << 16) | (isize[3]! << 24)) + m.isizeDelta),
          );
          if (m.second === 'copy') parts.push(deflated);
          else if (m.second) parts.push(Uint8Array.of(0x1f, 0x8b, 8, 0), m.second);
          parts.push(m.trailing);
          let bytes = concat(parts);
          if (m.cut !== null) bytes = bytes.subarray(0, Math.max(2, bytes.length - 1 - m.cut));
          await expectRefusedOrIdentical(bytes, original);
        },
      ),
      { numRuns: runs(800) },
    );
  });

  // Regression (found by this battery): verifyReceipt(bytes, null) threw a TypeError reading maxProblems.
  test('hostile options (null, wrong types, garbage keys and heads) give a report, never an exception', async () => {
    const tar = await realTar;
    const options: unknown[] = [
      null,
      5,
      'str',
      [],
      { publicKey: 'garbage' },
      { publicKey: 42 },
      { publicKey: null },
      { expectHead: 5 },
      { expectHead: 'sha256:xyz' },
      { maxProblems: -1 },
      { maxProblems: NaN },
      { maxProblems: 'x' },
      { extensions: null },
      { extensions: { x: 5 } },
      JSON.parse('{"__proto__":{"maxProblems":0}}'),
    ];
    for (const o of options) {
      const r = await verifyReceipt(tar, o as VerifyReceiptOptions);
      expectWellFormed(r);
    }
    expect((await verifyReceipt(tar, null as unknown as VerifyReceiptOptions)).ok).toBe(true);
    const file = join(tempDir('stepchain-nullopts-'), 'r.tar');
    writeFileSync(file, tar);
    expect((await verifyReceiptFile(file, null as unknown as VerifyReceiptOptions)).ok).toBe(true);
    // The published-receipt verifier had the same flaw (found by this battery): null options destructured.
    for (const o of [null, 5, 'str', []]) {
      const r = await verifyPublishedReceipt(tar, o as never);
      expect(r.problems.map((p) => p.code)).toContain('ANCHOR_INVALID'); // an ordinary receipt is not a published one
    }
  });

  test('headers that claim gigabytes with a few bytes behind them do not allocate them', async () => {
    const before = process.memoryUsage().rss;
    for (const size of ['77777777777\0', '10000000000\0', '\u0080\0\0\0\0\0\0\u0002\0\0\0\0']) {
      for (const name of ['manifest.json', 'chain/0000000000000000.jsonl', `blobs/${'b'.repeat(64)}`]) {
        const bytes = rawEntry({
          name,
          typeflag: '0',
          size,
          prefix: '',
          magic: 'ustar\u000000',
          mode: '0000644\0',
          goodChecksum: true,
          data: new Uint8Array(700),
        });
        const r = await verifyReceipt(concat([bytes, new Uint8Array(1024)]));
        expect(r.ok).toBe(false);
      }
    }
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });
});

describe('the redaction policy parser', () => {
  const rule = fc.record(
    {
      id: fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/),
        fc.string(),
        fc.constant('__proto__'),
        fc.integer(),
      ),
      paths: fc.oneof(
        fc.array(
          fc.oneof(
            fc.constantFrom(
              '/input',
              '/result/**',
              '/*/token',
              '/meta/a~1b',
              '/seq',
              '',
              '/**/**',
              '/input/~2',
              'input',
              '/tool_call/*/x~0',
            ),
            fc.string({ maxLength: 12 }),
          ),
          { maxLength: 4 },
        ),
        fc.anything(),
      ),
      detectors: fc.oneof(
        fc.array(fc.oneof(fc.constantFrom(...DETECTOR_IDS), fc.string({ maxLength: 8 })), { maxLength: 3 }),
        fc.anything(),
      ),
      tools: fc.oneof(fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.anything()),
      seq: fc.oneof(
        fc.record(
          { from: fc.integer({ min: -2, max: 10 }), to: fc.integer({ min: -2, max: 10 }) },
          { requiredKeys: [] },
        ),
        fc.anything(),
      ),
      mode: fc.oneof(fc.constantFrom('substring', 'value', 'other'), fc.anything()),
      constructor: fc.anything(),
    },
    { requiredKeys: ['id'] },
  );
  const policy = fc.record(
    {
      format: fc.oneof(fc.constant('stepchain-redaction-policy/v1'), fc.string()),
      rules: fc.oneof(fc.array(rule, { maxLength: 4 }), fc.anything()),
    },
    { requiredKeys: ['rules'] },
  );

  function expectCodedOrPolicy(f: () => unknown): void {
    try {
      const p = f() as { rules: unknown[]; digest: string };
      expect(Array.isArray(p.rules)).toBe(true);
      expect(p.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    } catch (e) {
      expect(e, `not a PolicyError: ${String(e)}`).toBeInstanceOf(PolicyError);
      expect((e as PolicyError).message.startsWith((e as PolicyError).code)).toBe(true);
    }
  }

  test('arbitrary text and JSON-shaped noise: a Policy or a coded PolicyError, nothing else', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), tokenSoup, fc.json()), (text) =>
        expectCodedOrPolicy(() => parsePolicyText(text)),
      ),
      { numRuns: runs(3000) },
    );
  });

  test('structured hostile policies (wrong types, prototype-named members, bad patterns): a Policy or a coded PolicyError', () => {
    fc.assert(
      fc.property(policy, (p) => {
        expectCodedOrPolicy(() => compilePolicy(p));
        expectCodedOrPolicy(() => parsePolicyText(JSON.stringify(p) ?? 'null'));
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: runs(3000) },
    );
  });

  test('the secret detectors run in linear time on adversarial text', () => {
    // No stopwatch per call (it flaked on a loaded machine; bench/detectors.mjs measures the time per MiB).
    // The texts are long enough instead that one super-linear detector needs minutes for a single call,
    // where the linear scan takes a few milliseconds: the test's own timeout is the bound.
    const alphabet = [
      'A',
      'a',
      '0',
      '-',
      '_',
      '=',
      '.',
      '@',
      '/',
      '+',
      ':',
      ' ',
      'sk-',
      'ghp_',
      'AKIA',
      'eyJ',
      'Bearer ',
      '-----BEGIN ',
      'xox',
      'https://',
    ];
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...alphabet), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 100_000, max: 400_000 }),
        (unit, length) => {
          const text = unit.join('').repeat(Math.ceil(length / unit.join('').length));
          for (const m of findSecrets(text, DETECTOR_IDS)) expect(m.end).toBeGreaterThan(m.start);
        },
      ),
      { numRuns: runs(150) },
    );
  });
});
