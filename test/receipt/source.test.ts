/**
 * A verified receipt read back as a ChainSource (src/receipt/source.ts): ranges across chain entries, blobs,
 * the cache the module promises, the caller's stream released when a reader stops early, and an archive
 * that changed after it was verified — an error (SOURCE_CHANGED naming the entry), never different data.
 * Each case was a mutant of source.ts that the suite let through (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { gzipSync } from 'node:zlib';
import { describe, expect, test } from 'vitest';
import type { StoredLine } from '../../src/chain/source.js';
import { concatBytes } from '../../src/bytes.js';
import { receiptBytes } from '../../src/receipt/index.js';
import { receiptSource, type ReceiptSource } from '../../src/receipt/source.js';
import type { ByteInput } from '../../src/receipt/inflate.js';
import { MemoryStore } from '../../src/store/index.js';
import type { JsonInput } from '../../src/record/input.js';
import { entriesOf, tarOf } from './craft.js';
import { makeFixture } from './fixture.js';

// 10 steps in buckets of 3: chain entries 0–2, 3–5, 6–8 and 9; blobs hold the results of steps 0, 3, 6, 9.
const fixture = makeFixture({ steps: 10, bucketSize: 3 });
const good = await receiptBytes(fixture);
const entries = entriesOf(good);
const chainName = (first: number): string => `chain/${String(first).padStart(16, '0')}.jsonl`;

async function all(lines: AsyncIterable<StoredLine>): Promise<StoredLine[]> {
  const out: StoredLine[] = [];
  for await (const l of lines) out.push(l);
  return out;
}

/** The receipt's entries again with one entry's data replaced (same length: only its bytes differ). */
function withEntry(name: string, edit: (data: Uint8Array) => Uint8Array): Uint8Array {
  return tarOf(entries.map((e) => (e.name === name ? { ...e, data: edit(e.data) } : e)));
}
/** A copy of `data` with the first occurrence of `from` replaced by `to` (same length). */
function replaced(data: Uint8Array, from: string, to: string): Uint8Array {
  const text = new TextDecoder().decode(data);
  const at = text.indexOf(from);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(to.length).toBe(from.length);
  return new TextEncoder().encode(text.slice(0, at) + to + text.slice(at + from.length));
}

/** Opens `first` for the verification and `later` for every read after it: an archive that changed under the reader. */
function changing(later: () => ByteInput, first: Uint8Array = good): () => ByteInput {
  let opened = 0;
  return () => (opened++ === 0 ? first : later());
}

describe('lines(range) across chain entries', () => {
  test.each<[string, { from?: number; to?: number }, number[]]>([
    ['the whole range', {}, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['from the last step of an entry', { from: 2, to: 4 }, [2, 3, 4]],
    ['from the first step of an entry to the last step of one', { from: 3, to: 8 }, [3, 4, 5, 6, 7, 8]],
    ['to the first step of an entry', { from: 5, to: 6 }, [5, 6]],
    ['one step, the last of an entry', { from: 5, to: 5 }, [5]],
    ['one step, the first', { to: 0 }, [0]],
    ['the last entry alone', { from: 9 }, [9]],
  ])('%s: the stored lines, each labelled with its entry', async (_name, range, seqs) => {
    const rs = await receiptSource(() => good);
    const got = await all(rs.lines(range));
    expect(got.map((l) => l.seq)).toEqual(seqs);
    for (const l of got) {
      expect(l.text).toBe(fixture.stored[l.seq]!.text);
      expect(l.segment).toBe(chainName(Math.floor(l.seq / 3) * 3));
    }
  });

  test("a partial receipt counts seqs from its range's first step", async () => {
    const part = await receiptBytes(fixture, { from: 4, to: 8 });
    const rs = await receiptSource(() => part);
    expect((await all(rs.lines({ from: 5, to: 6 }))).map((l) => [l.seq, l.text])).toEqual(
      [5, 6].map((s) => [s, fixture.stored[s]!.text]),
    );
    expect((await all(rs.lines())).map((l) => l.seq)).toEqual([4, 5, 6, 7, 8]);
  });
});

describe('blob(digest)', () => {
  test('every listed blob reads back; a digest the manifest does not list is null without opening the archive', async () => {
    let opens = 0;
    const rs = await receiptSource(() => (opens++, good));
    expect(opens).toBe(1);
    expect(await rs.blob('sha256:' + 'a'.repeat(64))).toBeNull();
    expect(opens).toBe(1);
    for (const b of rs.manifest.blobs) expect(await rs.blob(b.digest)).toEqual(fixture.blobs.get(b.digest));
  });

  test('blobs within the cache bound are read once: later calls do not open the archive again', async () => {
    let opens = 0;
    const rs = await receiptSource(() => (opens++, good));
    const [a, b] = rs.manifest.blobs;
    expect(await rs.blob(a!.digest)).toEqual(fixture.blobs.get(a!.digest));
    expect(opens).toBe(2);
    expect(await rs.blob(b!.digest)).toEqual(fixture.blobs.get(b!.digest));
    expect(await rs.blob(a!.digest)).toEqual(fixture.blobs.get(a!.digest));
    expect(opens).toBe(2);
  });

  test('a receipt with one blob returns it', async () => {
    const one = makeFixture({ steps: 2, blobEvery: 3 });
    const rs = await receiptSource(async () => receiptBytes(one));
    expect(rs.manifest.blobs).toHaveLength(1);
    const [d] = [...one.blobs.keys()];
    expect(await rs.blob(d!)).toEqual(one.blobs.get(d!));
  });
});

describe('an archive that changed after it was verified is SOURCE_CHANGED, never different data', () => {
  const source = (later: () => ByteInput, first?: Uint8Array): Promise<ReceiptSource> =>
    receiptSource(changing(later, first));

  test.each<[string, number, { from?: number; to?: number }]>([
    ['a line in an entry before the last', 3, {}],
    ['the last line of the last entry', 9, {}],
    ['a line in the entry where the range ends', 3, { from: 0, to: 4 }],
  ])('%s edited (same size)', async (_name, first, range) => {
    const seq = first === 9 ? 9 : first + 1;
    const later = withEntry(chainName(first), (d) => replaced(d, `"input ${seq} `, `"input X `));
    const rs = await source(() => later);
    await expect(all(rs.lines(range))).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
      message: expect.stringContaining(`receipt entry ${chainName(first)} changed`),
    });
  });

  test('an entry cut short: SOURCE_CHANGED names the entry', async () => {
    const cut = good.subarray(
      0,
      good.indexOf(
        0x0a,
        entries.slice(0, 3).reduce((n, e) => n + 512 + Math.ceil(e.data.length / 512) * 512, 0) + 512,
      ) + 1,
    );
    const rs = await source(() => cut);
    await expect(all(rs.lines())).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
      message: expect.stringContaining(chainName(6)),
    });
  });

  test('a blob with other bytes of the same length', async () => {
    const b = entries.find((e) => e.name.startsWith('blobs/'))!;
    const later = withEntry(b.name, (d) => replaced(d, 'result', 'resulT'));
    const rs = await source(() => later);
    await expect(rs.blob('sha256:' + b.name.slice(6))).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
      message: expect.stringContaining(`receipt entry ${b.name} changed`),
    });
  });

  test("more than 1 MiB of zeros after the end marker (the reader's own limit, §3.2 item 5); up to 1 MiB is the same receipt", async () => {
    const d = fixture.blobs.keys().next().value!;
    const ok = await source(() => concatBytes([good, new Uint8Array(1024 * 1024)]));
    expect(await ok.blob(d)).toEqual(fixture.blobs.get(d));
    const rs = await source(() => concatBytes([good, new Uint8Array(2 * 1024 * 1024)]));
    await expect(rs.blob(d)).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
      message: expect.stringContaining('the archive changed'),
    });
  });

  test('a gzip member cut short', async () => {
    const gz = new Uint8Array(gzipSync(good));
    const rs = await source(() => gz.subarray(0, gz.length - 4), gz);
    expect(rs.report.compressed).toBe(true);
    await expect(rs.blob(rs.manifest.blobs[0]!.digest)).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
      message: expect.stringMatching(
        /the receipt changed after it was verified: the gzip stream ends inside its member/,
      ),
    });
  });

  test('any other error from opening the archive again reaches the caller as it is', async () => {
    const gone = new Error('the disk went away');
    const rs = await source(() => {
      throw gone;
    });
    await expect(all(rs.lines())).rejects.toBe(gone);
    await expect(rs.blob(rs.manifest.blobs[0]!.digest)).rejects.toBe(gone);
  });
});

test('a reader that stops early releases the stream it was given (the stream is cancelled)', async () => {
  const cancelled: unknown[] = [];
  const stream = (): ReadableStream<Uint8Array> => {
    let at = 0;
    return new ReadableStream<Uint8Array>(
      {
        pull(c) {
          if (at >= good.length) return c.close();
          c.enqueue(good.slice(at, (at += 1024)));
        },
        cancel(reason) {
          cancelled.push(reason);
        },
      },
      { highWaterMark: 0 },
    );
  };
  const rs = await receiptSource(stream);
  expect(await all(rs.lines({ to: 0 }))).toHaveLength(1);
  expect(cancelled).toHaveLength(1);
});

// A chat whose every turn adds a page of its own: each page is a part, and each prompt references the pages so far.
const chatStore = new MemoryStore();
const chat = await chatStore.create('chat', { format: 'stepchain/v3' });
const messages: JsonInput[] = [{ role: 'user', content: 'go' }];
for (let t = 0; t < 24; t++) {
  const page = `page ${t} ` + `text${t} `.repeat(300);
  await chat.append({ input: { turn: t }, prompt: [...messages], result: { text: page } });
  messages.push({ role: 'tool', content: page });
}
const chatReceipt = await receiptBytes(chat);
const partFiles = entriesOf(chatReceipt).filter((e) => e.name.startsWith('parts/'));

describe("a v3 receipt's parts, as diff and replay read them", () => {
  test('every part, asked for one by one, comes from one more pass over the archive, not one pass each', async () => {
    let opened = 0;
    const rs = await receiptSource(() => (opened++, chatReceipt));
    const get = (rs as unknown as { parts: { store: { get(a: string): Promise<Uint8Array | null> } } }).parts.store.get;
    expect(partFiles.length).toBeGreaterThanOrEqual(24);
    for (const file of partFiles) {
      const got = await get('sha256:' + file.name.slice('parts/'.length));
      expect(got).toEqual(file.data);
    }
    expect(opened).toBe(2);
    expect(await get('sha256:' + '0'.repeat(64))).toBeNull();
    expect(opened).toBe(2);
  });
});
