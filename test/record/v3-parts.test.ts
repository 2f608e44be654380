/**
 * Parts (spec/PARTS.md): content stored once per journal. Conversations with repeated and edited messages
 * go through the writer and back through the reader: the round trip is exact, a value that recurs is one
 * part shared by the steps that hold it, a prompt that extends the previous one is stored as base + tail,
 * and any changed byte of any stored part is refused with the part's address and where it was met.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { Json } from '../../src/canonical/json.js';
import { commitPart, seedFromHex } from '../../src/record/v3/commit.js';
import { parsePartFile, partRefOf, partRefsIn, type PartPayload } from '../../src/record/v3/parts.js';
import { PartReader } from '../../src/record/v3/part-reader.js';
import { PartWriter } from '../../src/record/v3/part-writer.js';
import { MemoryPartStore } from '../../src/store/parts.js';

const KEY = new Uint8Array(32).fill(7);

function counterSeeds(): () => Uint8Array {
  let n = 0;
  return () => {
    const s = new Uint8Array(32);
    new DataView(s.buffer).setUint32(28, ++n);
    return s;
  };
}

/** A chat's steps: each model call sends the conversation so far; a tool returns a long text. */
const message = fc.record({
  role: fc.constantFrom('user', 'assistant', 'tool'),
  content: fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ minLength: 300, maxLength: 700 }).map((s) => s + 'x'.repeat(300)),
  ),
});
const conversation = fc.record({
  messages: fc.array(message, { minLength: 2, maxLength: 8 }),
  // Which message is edited (its content changed by one character) in the last prompt, if any.
  edit: fc.option(fc.nat(), { nil: null }),
  repeat: fc.nat(),
});

interface Written {
  store: MemoryPartStore;
  steps: Array<{ stored: Record<string, Json>; original: Record<string, Json> }>;
  parts: PartPayload[];
}

async function write(steps: Array<Record<string, Json>>): Promise<Written> {
  const store = new MemoryPartStore();
  const writer = new PartWriter(KEY, store, { threshold: 256, seed: counterSeeds() });
  const out: Written = { store, steps: [], parts: [] };
  for (const original of steps) {
    const { slots, parts } = await writer.extract(original);
    await store.put(parts);
    out.parts.push(...parts);
    out.steps.push({ stored: slots, original });
  }
  return out;
}

function chatSteps(c: {
  messages: Array<{ role: string; content: string }>;
  edit: number | null;
  repeat: number;
}): Array<Record<string, Json>> {
  const steps: Array<Record<string, Json>> = [];
  for (let n = 1; n <= c.messages.length; n++)
    steps.push({ prompt: c.messages.slice(0, n), result: { text: c.messages[n - 1]!.content } });
  // The same message again, later, in a tool result of its own.
  steps.push({ input: { again: c.messages[c.repeat % c.messages.length]!.content }, prompt: null });
  if (c.edit !== null) {
    const edited = c.messages.map((m, i) =>
      i === c.edit! % c.messages.length ? { ...m, content: m.content + '!' } : m,
    );
    steps.push({ prompt: edited });
  }
  return steps;
}

async function readBack(w: Written, deep = false): Promise<Array<Record<string, Json>>> {
  const reader = new PartReader((a, size) => w.store.get(a, size), { deep });
  const out: Array<Record<string, Json>> = [];
  for (const [seq, s] of w.steps.entries())
    out.push((await reader.resolve(s.stored, { seq, path: '' })) as Record<string, Json>);
  return out;
}

describe('parts: round trip, sharing, bases', () => {
  test('any conversation with repeated and edited messages reads back exactly, shallow and deep', async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async (c) => {
        const steps = chatSteps(c);
        const w = await write(steps);
        expect(await readBack(w)).toEqual(steps);
        expect(await readBack(w, true)).toEqual(steps);
        // Stored once: no two part payloads share an address, and no content is stored twice.
        const addresses = w.parts.map((p) => p.address);
        expect(new Set(addresses).size).toBe(addresses.length);
      }),
      { numRuns: 40 },
    );
  });

  test('a long message is one part shared by every step that holds it; a longer prompt is base + tail', async () => {
    const long = 'a tool result '.repeat(100);
    const m = [
      { role: 'user', content: 'hi' },
      { role: 'tool', content: long },
      { role: 'assistant', content: 'ok' },
    ];
    const w = await write([{ result: { text: long } }, { prompt: m.slice(0, 2) }, { prompt: m }]);
    const refOfText = partRefOf((w.steps[0]!.stored.result as Record<string, Json>).text);
    expect(refOfText).not.toBeNull();
    // The prompts' list parts hold the tool message by the same reference.
    const files = new Map(w.parts.map((p) => [p.address, parsePartFile(p.bytes)]));
    const second = partRefOf(w.steps[2]!.stored.prompt)!;
    const f = files.get(second.digest)!;
    expect(typeof f === 'object' && f.kind).toBe('list');
    if (typeof f !== 'object' || f.kind !== 'list') return;
    expect(f.base.digest).toBe(partRefOf(w.steps[1]!.stored.prompt)!.digest);
    expect(f.tail).toEqual([{ role: 'assistant', content: 'ok' }]);
    const nested = [...files.values()].flatMap((x) =>
      typeof x === 'object' && x.kind !== 'media' ? partRefsIn(x.kind === 'value' ? x.value : x.tail) : [],
    );
    expect(nested.map((r) => r.ref.digest)).toContain(refOfText!.digest);
    expect(w.parts.filter((p) => p.address === refOfText!.digest)).toHaveLength(1);
  });

  test('a base64 image is one media part of raw bytes with its media type, however often it is sent', async () => {
    const png = new Uint8Array(3000);
    png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    for (let i = 8; i < png.length; i++) png[i] = (i * 31) & 255;
    const b64 = Buffer.from(png).toString('base64');
    const steps: Array<Record<string, Json>> = [1, 2, 3].map((n) => ({
      prompt: [{ role: 'user', content: [{ type: 'image', image: b64 } as Json, { type: 'text', text: `turn ${n}` }] }],
    }));
    const w = await write(steps);
    const media = w.parts.filter(
      (p) => parsePartFile(p.bytes) instanceof Object && (parsePartFile(p.bytes) as { kind: string }).kind === 'media',
    );
    expect(media).toHaveLength(1);
    const f = parsePartFile(media[0]!.bytes);
    expect(typeof f === 'object' && f.kind === 'media' && f.mediaType).toBe('image/png');
    expect(media[0]!.bytes.length).toBeLessThan(b64.length);
    expect(await readBack(w, true)).toEqual(steps);
  });

  test("equal content in two journals has unrelated addresses (keyed by each part's seed)", async () => {
    const v = { text: 'same '.repeat(100) };
    const a = await new PartWriter(KEY, null, { threshold: 256 }).extract({ input: v });
    const b = await new PartWriter(KEY, null, { threshold: 256 }).extract({ input: v });
    expect(a.parts[0]!.address).not.toBe(b.parts[0]!.address);
    // …and the address is the part's unit digest (one mechanism with the record's commitments).
    const f = parsePartFile(a.parts[0]!.bytes);
    if (typeof f !== 'object' || f.kind !== 'value') throw new Error('expected a value part');
    expect(commitPart(f.value, seedFromHex(f.seed)!).address).toBe(a.parts[0]!.address);
  });
});

describe('parts: verify on read', () => {
  const steps = chatSteps({
    messages: [
      { role: 'user', content: 'question '.repeat(40) },
      { role: 'tool', content: 'result '.repeat(80) },
      { role: 'assistant', content: 'short' },
    ],
    edit: 1,
    repeat: 1,
  });

  test('any byte of any stored part changed is refused with the part and where it was met', async () => {
    const clean = await write(steps);
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), async (which, at, xor) => {
        const w = await write(steps);
        const p = w.parts[which % w.parts.length]!;
        const bytes = p.bytes.slice();
        bytes[at % bytes.length]! ^= xor;
        w.store.tamper(p.address, bytes);
        const err = await readBack(w).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ code: 'PART_CORRUPT', address: p.address });
        expect((err as { location: { seq: number; path: string } }).location.seq).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 60 },
    );
    expect(clean.parts.length).toBeGreaterThan(3);
  });

  test('a missing part is PART_MISSING at the first record that needs it', async () => {
    const w = await write(steps);
    const ref = partRefOf((w.steps[1]!.stored.result as Record<string, Json>).text)!;
    w.store.tamper(ref.digest, null);
    // Step 1 meets the tool message first inside its prompt's list part, then in its own result.
    await expect(readBack(w)).rejects.toMatchObject({
      code: 'PART_MISSING',
      address: ref.digest,
      location: { seq: 1, path: '/prompt/1/content' },
    });
  });

  test("a part rewritten with its reference's F and size made to match is PART_ADDRESS_MISMATCH in the deep tier", async () => {
    const w = await write([{ input: { note: 'once '.repeat(100) } }]);
    const ref = partRefOf((w.steps[0]!.stored.input as Record<string, Json>).note)!;
    const f = parsePartFile((await w.store.get(ref.digest)) as Uint8Array);
    if (typeof f !== 'object' || f.kind !== 'value') throw new Error('expected a value part');
    const forged = new TextEncoder().encode(JSON.stringify({ seed: f.seed, value: 'forged' }));
    w.store.tamper(ref.digest, forged);
    const { digestBytes } = await import('../../src/canonical/sha256.js');
    (w.steps[0]!.stored.input as Record<string, Json>).note = {
      '$stepchain:part': { digest: ref.digest, file: digestBytes(forged), size: forged.length },
    };
    // The fast tier sees a part file that matches its reference (the record's bind catches the line's edit);
    // the deep tier recomputes the address from the value.
    await expect(readBack(w, true)).rejects.toMatchObject({ code: 'PART_ADDRESS_MISMATCH', address: ref.digest });
  });
});
