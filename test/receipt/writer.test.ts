/**
 * The receipt writer's rules one at a time (spec/RECEIPT.md §3–§6), against src/receipt/plan.ts and
 * writer.ts directly: what pass 1 puts in the manifest (the range's start hash, the head, chain entries cut
 * at the source's segments, the blobs the range references, sorted), what it refuses and with which code,
 * and what pass 2 writes (the archive layout byte for byte) or refuses when the source changed between the
 * passes. Written from the survivors of `npm run mutate -- receipt/writer.ts,plan.ts`
 * (test/mutation/SURVIVORS.md): the round-trip tests reached these rules only through whole exports.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { genesisHash } from '../../src/record/index.js';
import type { StoredLine } from '../../src/chain/source.js';
import { MAX_BLOB_BYTES, MAX_MANIFEST_BYTES } from '../../src/receipt/limits.js';
import { blobEntryName, chainEntryName, declaredArchiveBytes } from '../../src/receipt/manifest.js';
import { fetchBlob, planReceipt, type ReceiptPlan, type ReceiptWriterInput } from '../../src/receipt/plan.js';
import { BLOCK, paddedSize, ustarHeader } from '../../src/receipt/tar.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { keyPairFromSeed } from '../../src/receipt/keys.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestUtf8 } from '../../src/canonical/sha256.js';
import { sealRecord } from '../../src/record/index.js';
import { makeFixture, sourceOf, testSeed, type Fixture } from './fixture.js';

const enc = new TextEncoder();
const hashOf = (text: string): string => (JSON.parse(text) as { step_hash: string }).step_hash;
const sha = (b: Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');

/** A writer input over `lines` (all of them, whatever the range), as a caller of the core would build it. */
function inputOf(
  src: Fixture,
  from: number,
  to: number,
  more: Partial<ReceiptWriterInput> = {},
  lines: StoredLine[] = src.stored,
): ReceiptWriterInput {
  return {
    genesis: src.genesis,
    lines: async function* () {
      yield* lines;
    },
    from,
    to,
    blob: async (d) => src.blobs.get(d) ?? null,
    ...more,
  };
}

async function written(plan: ReceiptPlan): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of writeReceipt(plan)) parts.push(Uint8Array.from(c));
  return concatBytes(parts);
}

async function drain(plan: ReceiptPlan): Promise<void> {
  for await (const c of writeReceipt(plan)) void c;
}

describe('RECEIPT §4: pass 1, the manifest planReceipt builds', () => {
  const src = makeFixture({ steps: 14, bucketSize: 4 });

  test('range.prev_hash is the genesis hash from 0 and the step before `from` otherwise; head is `to` and its step_hash', async () => {
    const whole = await planReceipt(inputOf(src, 0, 13));
    expect(whole.manifest.range).toEqual({ from: 0, prev_hash: genesisHash(src.genesis), to: 13 });
    expect(whole.manifest.head).toEqual({ seq: 13, step_hash: hashOf(src.stored[13]!.text) });
    const part = await planReceipt(inputOf(src, 5, 9));
    expect(part.manifest.range).toEqual({ from: 5, prev_hash: hashOf(src.stored[4]!.text), to: 9 });
    expect(part.manifest.head).toEqual({ seq: 9, step_hash: hashOf(src.stored[9]!.text) });
  });

  test("chain entries start at `from` and at each of the source's segments, each with its lines' bytes, count and SHA-256", async () => {
    const plan = await planReceipt(inputOf(src, 2, 10));
    const groups = [
      [2, 3],
      [4, 5, 6, 7],
      [8, 9, 10],
    ];
    expect(plan.manifest.chain).toEqual(
      groups.map((seqs) => {
        const bytes = enc.encode(seqs.map((s) => src.stored[s]!.text + '\n').join(''));
        return { digest: sha(bytes), name: chainEntryName(seqs[0]!), size: bytes.length, steps: seqs.length };
      }),
    );
  });

  test('the blobs are those the range references (not the steps before it), sorted by digest, with their sizes', async () => {
    const plan = await planReceipt(inputOf(src, 1, 13));
    const referenced = [3, 6, 9, 12].map(
      (s) => JSON.parse(src.stored[s]!.text).result['$stepchain:blob'] as { digest: string; size: number },
    );
    expect(plan.manifest.blobs).toEqual([...referenced].sort((a, b) => (a.digest < b.digest ? -1 : 1)));
    expect(plan.manifest.blobs.map((b) => b.digest)).not.toContain(
      JSON.parse(src.stored[0]!.text).result['$stepchain:blob'].digest,
    );
  });

  test('lines after `to` are neither verified nor written; the plan is the same whether the source stops at `to` or runs on', async () => {
    const stops = await planReceipt(inputOf(src, 3, 8, {}, src.stored.slice(0, 9)));
    const runsOn = await planReceipt(inputOf(src, 3, 8));
    expect(runsOn.manifestBytes).toEqual(stops.manifestBytes);
    // a broken line after `to` does not matter
    const broken = src.stored.map((l) => (l.seq === 11 ? { ...l, text: l.text.replace('input 11', 'input X') } : l));
    expect((await planReceipt(inputOf(src, 3, 8, {}, broken))).manifestBytes).toEqual(stops.manifestBytes);
  });

  test('a re-anchored source (start) may be exported from its first seq; its prev_hash opens the range', async () => {
    const start = { seq: 6, prev_hash: hashOf(src.stored[5]!.text) };
    const plan = await planReceipt(inputOf(src, 6, 9, { start }, src.stored.slice(6)));
    expect(plan.manifest.range).toEqual({ from: 6, prev_hash: start.prev_hash, to: 9 });
    await expect(planReceipt(inputOf(src, 5, 9, { start }, src.stored.slice(6)))).rejects.toMatchObject({
      code: 'RANGE_INVALID',
    });
    // a start at seq 0 is the genesis's place, given explicitly
    const zero = await planReceipt(inputOf(src, 0, 2, { start: { seq: 0, prev_hash: genesisHash(src.genesis) } }));
    expect(zero.manifest.range).toEqual({ from: 0, prev_hash: genesisHash(src.genesis), to: 2 });
  });

  test("extra members join the manifest; one reusing a base member's name, or not I-JSON, is MANIFEST_INVALID", async () => {
    const plan = await planReceipt(inputOf(src, 0, 2, { extra: { zz: [1, 'a'] } }));
    expect(plan.manifest.zz).toEqual([1, 'a']);
    for (const name of ['blobs', 'chain', 'exporter', 'format', 'genesis', 'head', 'range']) {
      await expect(planReceipt(inputOf(src, 0, 2, { extra: { [name]: 1 } })), name).rejects.toMatchObject({
        code: 'MANIFEST_INVALID',
      });
    }
    // Not I-JSON: the canonicalizer's own error is kept as the cause.
    await expect(planReceipt(inputOf(src, 0, 2, { extra: { x: Number.NaN } }))).rejects.toMatchObject({
      code: 'MANIFEST_INVALID',
      cause: expect.any(Error),
    });
    await expect(planReceipt(inputOf(src, 0, 2, { extra: { x: '\ud800' } }))).rejects.toMatchObject({
      code: 'MANIFEST_INVALID',
      cause: expect.any(Error),
    });
  });

  test('a signed plan carries the signature entry and the key id; an unsigned one neither; manifestDigest is the SHA-256 of manifestBytes', async () => {
    const key = keyPairFromSeed(testSeed(3));
    const signed = await planReceipt(inputOf(src, 0, 3, { sign: key.privateKey }));
    expect(signed.signedBy).toBe(key.keyId);
    expect(signed.signatureBytes).not.toBeNull();
    expect(JSON.parse(new TextDecoder().decode(signed.signatureBytes!)).public_key).toBe(
      Buffer.from(key.publicKey).toString('base64'),
    );
    const unsigned = await planReceipt(inputOf(src, 0, 3));
    expect([unsigned.signatureBytes, unsigned.signedBy]).toEqual([null, null]);
    expect(unsigned.manifestDigest).toBe(sha(unsigned.manifestBytes));
    expect(unsigned.manifestBytes).toEqual(signed.manifestBytes);
  });
});

describe('RECEIPT §4.2, §9: pass 1, what planReceipt refuses, and with which code', () => {
  const src = makeFixture({ steps: 8, bucketSize: 3 });

  test.each([
    [1.5, 3],
    [0, 2.5],
    [Number.NaN, 3],
    [0, Number.POSITIVE_INFINITY],
    [-1, 3],
    [4, 3],
    [2 ** 53, 2 ** 53],
  ])('the range %s..%s is RANGE_INVALID before the source is read', async (from, to) => {
    let read = false;
    const input = {
      ...inputOf(src, from, to),
      lines: async function* () {
        read = true;
        yield* src.stored;
      },
    };
    await expect(planReceipt(input)).rejects.toMatchObject({ code: 'RANGE_INVALID' });
    expect(read).toBe(false);
  });

  test.each([
    [{ seq: -1, prev_hash: 'sha256:' + '0'.repeat(64) }],
    [{ seq: 0.5, prev_hash: 'sha256:' + '0'.repeat(64) }],
    [{ seq: 0, prev_hash: 'sha256:00' }],
    [{ seq: 0, prev_hash: 'x' }],
  ])('a malformed start %j is ARGUMENT_INVALID', async (start) => {
    await expect(planReceipt(inputOf(src, 1, 3, { start }))).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
  });

  test("a range past the source's last line is RANGE_INVALID; a range the source holds no line of is EMPTY_RANGE", async () => {
    await expect(planReceipt(inputOf(src, 2, 8))).rejects.toMatchObject({ code: 'RANGE_INVALID' });
    await expect(planReceipt(inputOf(src, 2, 7))).resolves.toBeDefined();
    await expect(planReceipt(inputOf(src, 0, 3, {}, []))).rejects.toMatchObject({ code: 'EMPTY_RANGE' });
  });

  test('a broken chain is CHAIN_INVALID, before or inside the range, with the verify hint', async () => {
    for (const at of [1, 5]) {
      const broken = src.stored.map((l) =>
        l.seq === at ? { ...l, text: l.text.replace(`input ${at}`, 'input X') } : l,
      );
      await expect(planReceipt(inputOf(src, 3, 6, {}, broken)), `at ${at}`).rejects.toMatchObject({
        code: 'CHAIN_INVALID',
        hint: expect.stringMatching(/stepchain verify/),
      });
    }
  });

  test('a source that gives a line another seq than its own is CHAIN_INVALID', async () => {
    const lying = src.stored.map((l) => (l.seq === 4 ? { ...l, seq: 5 } : l.seq === 5 ? { ...l, seq: 4 } : l));
    await expect(planReceipt(inputOf(src, 0, 7, {}, lying))).rejects.toMatchObject({ code: 'CHAIN_INVALID' });
    const shifted = src.stored.map((l) => (l.seq === 6 ? { ...l, seq: 60 } : l));
    await expect(planReceipt(inputOf(src, 0, 5, {}, shifted))).resolves.toBeDefined(); // past `to`: not read
  });

  test('a referenced blob missing is BLOB_MISSING, one with other bytes BLOB_CORRUPT, one over the blob limit LIMIT_EXCEEDED unread', async () => {
    const missing = { ...inputOf(src, 0, 7), blob: async () => null };
    await expect(planReceipt(missing)).rejects.toMatchObject({ code: 'BLOB_MISSING' });
    const other = { ...inputOf(src, 0, 7), blob: async () => enc.encode('{"answer":"forged"}') };
    await expect(planReceipt(other)).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    let asked = 0;
    const input = {
      ...inputOf(src, 0, 7),
      blob: async () => {
        asked++;
        return null;
      },
    };
    await expect(
      fetchBlob(input, { digest: 'sha256:' + '1'.repeat(64), size: MAX_BLOB_BYTES + 1 }),
    ).rejects.toMatchObject({ code: 'LIMIT_EXCEEDED' });
    expect(asked).toBe(0);
    const [d, bytes] = [...src.blobs.entries()][0]!;
    await expect(fetchBlob(inputOf(src, 0, 7), { digest: d, size: bytes.length })).resolves.toEqual(bytes);
  });
});

describe('RECEIPT §4.2, §6: pass 1, blob sizes and the manifest limit', () => {
  /** Steps whose results all reference one blob, step `wrong` declaring it one byte longer. */
  function sharedBlob(steps: number, wrong: number | null): Fixture {
    const base = makeFixture({ steps: 0 });
    const bytes = enc.encode(canonicalJson({ shared: true }));
    const digest = digestUtf8(canonicalJson({ shared: true }));
    let prev = genesisHash(base.genesis);
    const stored: StoredLine[] = [];
    for (let seq = 0; seq < steps; seq++) {
      const { record, line } = sealRecord({
        v: 1,
        seq,
        step_id: `s${seq}`,
        ts: '2026-01-01T00:00:00.000Z',
        prev_hash: prev,
        input: { n: seq },
        model: 'm',
        prompt: null,
        tool_call: null,
        result: { '$stepchain:blob': { digest, size: bytes.length + (seq === wrong ? 1 : 0) } },
      });
      prev = record.step_hash;
      stored.push({ segment: '0000000000000000.jsonl', seq, text: line.slice(0, -1) });
    }
    return sourceOf(base.genesis, stored, new Map([[digest, bytes]]));
  }

  test('a blob referenced twice in the range with two sizes is BLOB_CORRUPT; with one size it is listed once', async () => {
    const same = sharedBlob(4, null);
    expect((await planReceipt(inputOf(same, 0, 3))).manifest.blobs).toHaveLength(1);
    const conflict = sharedBlob(4, 2);
    await expect(planReceipt(inputOf(conflict, 0, 3))).rejects.toMatchObject({ code: 'BLOB_CORRUPT' });
    // a conflicting reference before the range is not part of the receipt
    const before = sharedBlob(4, 0);
    expect((await planReceipt(inputOf(before, 1, 3))).manifest.blobs).toHaveLength(1);
  });

  test('a manifest of exactly MAX_MANIFEST_BYTES is planned; one byte more is LIMIT_EXCEEDED, with what to do', async () => {
    const src = makeFixture({ steps: 2 });
    const small = await planReceipt(inputOf(src, 0, 1, { extra: { pad: '' } }));
    const room = MAX_MANIFEST_BYTES - small.manifestBytes.length;
    const edge = await planReceipt(inputOf(src, 0, 1, { extra: { pad: 'x'.repeat(room) } }));
    expect(edge.manifestBytes.length).toBe(MAX_MANIFEST_BYTES);
    await expect(planReceipt(inputOf(src, 0, 1, { extra: { pad: 'x'.repeat(room + 1) } }))).rejects.toMatchObject({
      code: 'LIMIT_EXCEEDED',
      hint: 'export a shorter range',
    });
  });
});

describe('RECEIPT §3.2, §3.3: pass 2, the archive writeReceipt writes', () => {
  const src = makeFixture({ steps: 9, bucketSize: 4 });

  test('entries in order, each header H(name, size), data, zero padding, then the two-block end marker and nothing else', async () => {
    const key = keyPairFromSeed(testSeed(4));
    const plan = await planReceipt(inputOf(src, 1, 8, { sign: key.privateKey }));
    const tar = await written(plan);
    const entries: Array<[string, Uint8Array]> = [
      ['manifest.json', plan.manifestBytes],
      ['manifest.sig.json', plan.signatureBytes!],
    ];
    for (const c of plan.manifest.chain) {
      const first = Number(/(\d{16})/.exec(c.name)![1]);
      entries.push([
        c.name,
        enc.encode(
          src.stored
            .slice(first, first + c.steps)
            .map((l) => l.text + '\n')
            .join(''),
        ),
      ]);
    }
    for (const b of plan.manifest.blobs) entries.push([blobEntryName(b.digest), src.blobs.get(b.digest)!]);
    const expected = concatBytes([
      ...entries.flatMap(([name, data]) => [
        ustarHeader(name, data.length),
        data,
        new Uint8Array(paddedSize(data.length) - data.length),
      ]),
      new Uint8Array(2 * BLOCK),
    ]);
    expect(tar.length).toBe(expected.length);
    expect(tar).toEqual(expected);
    expect(tar.length).toBe(
      declaredArchiveBytes(plan.manifestBytes.length, plan.signatureBytes!.length, plan.manifest),
    );
  });

  test('long lines are written in runs (past 64 Ki characters) and come out as the plan measured them', async () => {
    const big = makeFixture({ steps: 7, bucketSize: 7, filler: 30_000 });
    const plan = await planReceipt(inputOf(big, 0, 6));
    const tar = await written(plan);
    const data = enc.encode(big.stored.map((l) => l.text + '\n').join(''));
    expect(plan.manifest.chain).toHaveLength(1);
    expect(
      tar.subarray(
        BLOCK + paddedSize(plan.manifestBytes.length),
        BLOCK + paddedSize(plan.manifestBytes.length) + BLOCK,
      ),
    ).toEqual(ustarHeader(chainEntryName(0), data.length));
    const at = 2 * BLOCK + paddedSize(plan.manifestBytes.length);
    expect(tar.subarray(at, at + data.length)).toEqual(data);
  });

  test('a source changed between the passes is SOURCE_CHANGED: a line edited, grown, added, dropped, or a blob gone', async () => {
    const plan = async (lines: StoredLine[], blobs = src.blobs) => {
      const p = await planReceipt(inputOf(src, 1, 8));
      return {
        ...p,
        input: {
          ...p.input,
          lines: async function* () {
            yield* lines;
          },
          blob: async (d: string) => blobs.get(d) ?? null,
        },
      };
    };
    const edit = (seq: number, f: (t: string) => string) =>
      src.stored.map((l) => (l.seq === seq ? { ...l, text: f(l.text) } : l));
    const cases: Array<[string, StoredLine[], Map<string, Uint8Array>?]> = [
      ['edited, same length', edit(6, (t) => t.replace('input 6', 'input 7'))],
      ["edited in the last entry's last line", edit(8, (t) => t.replace('input 8', 'input 9'))],
      ['grown', edit(2, (t) => t.replace('input 2', 'input 22'))],
      ['shrunk', edit(2, (t) => t.replace('input 2 ', 'input '))],
      [
        'a step added inside the range',
        [
          ...src.stored.slice(0, 5),
          { ...src.stored[4]!, seq: 5 },
          ...src.stored.slice(5).map((l) => ({ ...l, seq: l.seq + 1 })),
        ].filter((l) => l.seq <= 8),
      ],
      ['a step dropped', src.stored.filter((l) => l.seq !== 8)],
      ['the source ends early', src.stored.slice(0, 6)],
      ['a blob gone', src.stored, new Map()],
    ];
    for (const [what, lines, blobs] of cases)
      await expect(drain(await plan(lines, blobs)), what).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    // a blob source that fails in pass 2 with its own error: that error, as it is
    const failing = await planReceipt(inputOf(src, 1, 8));
    const io = new Error('EIO: the disk went away');
    await expect(
      drain({
        ...failing,
        input: {
          ...failing.input,
          blob: async () => {
            throw io;
          },
        },
      }),
    ).rejects.toBe(io);
    // lines before `from` and after `to` are not part of the archive: changing them changes nothing
    const outside = src.stored
      .map((l) => (l.seq === 0 ? { ...l, text: 'x' } : l))
      .concat([{ ...src.stored[8]!, seq: 9, text: 'y' }]);
    expect(await written(await plan(outside))).toEqual(await written(await planReceipt(inputOf(src, 1, 8))));
  });

  test('a source that yields more steps in the range than pass 1 measured is SOURCE_CHANGED', async () => {
    const p = await planReceipt(inputOf(src, 2, 6));
    expect(p.manifest.chain.map((c) => c.steps)).toEqual([2, 3]);
    // a plan that listed only the first entry (steps 2–3): the source's steps 4–6 have no entry to go to
    await expect(
      drain({ ...p, manifest: { ...p.manifest, chain: p.manifest.chain.slice(0, 1) } }),
    ).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
  });
});
