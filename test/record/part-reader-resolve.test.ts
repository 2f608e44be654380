/**
 * The part reader's resolution (spec/PARTS.md §9, §10) against a reading written straight from the spec: every
 * reference replaced by its part's value (a list's: its base chain's elements, then its tail), recursively; a part
 * not in the store is PART_MISSING where it is referenced; the reference nested one deeper than MAX_PART_DEPTH
 * (a record's own references being the first) is PART_CORRUPT where it stands. The reader resolves in two passes (load the parts, then copy) and
 * passes over parts it walked before; whatever it passes over, it must give the same value or the same error,
 * at the same place, as the plain reading — for a fresh reader and for one that read other records first, where a
 * part is met again at another depth. And every value it gives is a copy of its own (outsider I, F6: the one-pass
 * reading awaited at every element, and `log` of a 4 000-turn conversation took 10.8 s).
 */
import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { canonicalJsonTrusted } from '../../src/canonical/jcs.js';
import type { Json } from '../../src/canonical/json.js';
import { PartReader } from '../../src/record/v3/part-reader.js';
import { MAX_RESOLVED_NESTING } from '../../src/record/v3/part-resolve.js';
import { MAX_PART_DEPTH, PartError } from '../../src/record/v3/parts.js';

const SEED = 'ab'.repeat(32);
const MARKER = '$stepchain:part';
const encoder = new TextEncoder();

type PartFile = { seed: string; value: Json } | { base: Json; seed: string; tail: Json[] };

/** A store of part files (by address) and the reference a record holds for each; `missing` makes a dangling one. */
class Parts {
  readonly bytes = new Map<string, Uint8Array>();
  readonly parsed = new Map<string, PartFile>();
  add(file: PartFile): Json {
    const bytes = encoder.encode(canonicalJsonTrusted(file as Json));
    const address = 'sha256:' + randomBytes(32).toString('hex');
    this.bytes.set(address, bytes);
    this.parsed.set(address, file);
    return {
      [MARKER]: {
        digest: address,
        file: 'sha256:' + createHash('sha256').update(bytes).digest('hex'),
        size: bytes.length,
      },
    };
  }
  missing(): Json {
    return {
      [MARKER]: { digest: 'sha256:' + randomBytes(32).toString('hex'), file: 'sha256:' + '0'.repeat(64), size: 10 },
    };
  }
  reader(): PartReader {
    return new PartReader(async (address) => this.bytes.get(address) ?? null);
  }
}

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);
const refOf = (v: Json): string | null => {
  if (!isObject(v) || Object.keys(v).length !== 1 || !isObject(v[MARKER])) return null;
  return (v[MARKER] as { digest: string }).digest;
};

class Defect extends Error {
  constructor(
    readonly code: string,
    readonly path: string,
  ) {
    super(`${code} at ${path}`);
  }
}

/** The plain reading, from PARTS.md alone: one recursive pass. */
function plain(parts: Parts, v: Json, path: string, depth: number): Json {
  if (v === null || typeof v !== 'object') return v;
  const digest = refOf(v);
  if (digest !== null) {
    // The 129th nested reference (a record's own are the first) is one too many.
    if (depth >= MAX_PART_DEPTH) throw new Defect('PART_CORRUPT', path);
    const f = parts.parsed.get(digest);
    if (f === undefined) throw new Defect('PART_MISSING', path);
    return plain(parts, 'tail' in f ? flatten(parts, f, path) : f.value, path, depth + 1);
  }
  if (Array.isArray(v)) return v.map((e, i) => plain(parts, e, `${path}/${i}`, depth));
  const pointer = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');
  return Object.fromEntries(Object.keys(v).map((k) => [k, plain(parts, v[k]!, `${path}/${pointer(k)}`, depth)]));
}

function flatten(parts: Parts, f: PartFile, path: string): Json[] {
  const tails: Json[][] = [];
  let at: PartFile = f;
  while ('tail' in at) {
    tails.unshift(at.tail);
    const below = parts.parsed.get(refOf(at.base)!);
    if (below === undefined) throw new Defect('PART_MISSING', path);
    at = below;
  }
  return [...(at.value as Json[]), ...tails.flat()];
}

/** The reader's value, or its error as code and path. */
async function read(reader: PartReader, v: Json): Promise<{ value: Json } | { code: string; path: string }> {
  try {
    return { value: await reader.resolve(v, { seq: 7, path: '/prompt' }) };
  } catch (e) {
    if (!(e instanceof PartError)) throw e;
    expect(e.location).toMatchObject({ seq: 7 });
    return { code: e.code, path: (e.location as { path: string }).path };
  }
}

/**
 * The first container of an expanded value nested deeper than a record's slot may (PARTS.md §10), depth first. A
 * reader reports it after every defect of the parts themselves: the limit is on what they expand to.
 */
function tooNested(v: Json, path: string, n: number): Defect | null {
  if (v === null || typeof v !== 'object') return null;
  if (n >= MAX_RESOLVED_NESTING) return new Defect('PART_CORRUPT', path);
  const pointer = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');
  const children: [string, Json][] = Array.isArray(v)
    ? v.map((e, i) => [String(i), e])
    : Object.keys(v).map((k) => [pointer(k), v[k]!]);
  for (const [k, c] of children) {
    const d = tooNested(c, `${path}/${k}`, n + 1);
    if (d !== null) return d;
  }
  return null;
}

function expected(parts: Parts, v: Json): { value: Json } | { code: string; path: string } {
  try {
    const value = plain(parts, v, '/prompt', 0);
    const nested = tooNested(value, '/prompt', 0);
    return nested === null ? { value } : { code: nested.code, path: nested.path };
  } catch (e) {
    if (!(e instanceof Defect)) throw e;
    return { code: e.code, path: e.path };
  }
}

/**
 * A random store, built bottom up: value parts and lists over earlier parts, some references dangling, some parts
 * a chain of nestings deep enough to pass MAX_PART_DEPTH when met deep; and records that reach them at any depth.
 */
const scenario = fc
  .record({
    plan: fc.array(
      fc.record({
        kind: fc.constantFrom('value', 'value', 'list', 'nest', 'missing'),
        picks: fc.array(fc.nat(), { minLength: 1, maxLength: 4 }),
        text: fc.constantFrom('a', 'b/c', 'd~e', 'hello'),
        depth: fc.oneof(
          fc.integer({ min: 1, max: 6 }),
          fc.integer({ min: MAX_PART_DEPTH - 3, max: MAX_PART_DEPTH + 3 }),
        ),
      }),
      { minLength: 1, maxLength: 14 },
    ),
    records: fc.array(fc.array(fc.nat(), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
  })
  .map(({ plan, records }) => {
    const parts = new Parts();
    const refs: Json[] = [];
    const lists: Json[] = [];
    const pick = (n: number): Json => (refs.length === 0 ? 'leaf' : refs[n % refs.length]!);
    for (const step of plan) {
      if (step.kind === 'missing') refs.push(parts.missing());
      else if (step.kind === 'value')
        refs.push(
          parts.add({ seed: SEED, value: step.picks.map((n, i) => (i % 2 ? { [step.text]: pick(n) } : pick(n))) }),
        );
      else if (step.kind === 'list') {
        const base =
          lists.length > 0 && step.picks[0]! % 3 !== 0
            ? lists[step.picks[0]! % lists.length]!
            : parts.add({ seed: SEED, value: [pick(step.picks[0]!)] });
        const list = parts.add({ base, seed: SEED, tail: step.picks.map((n) => ({ m: pick(n) })) });
        lists.push(list);
        refs.push(list);
      } else {
        // A part `depth` parts deep, each holding the one below in an object.
        let ref = parts.add({ seed: SEED, value: pick(step.picks[0]!) });
        for (let d = 1; d < step.depth; d++) ref = parts.add({ seed: SEED, value: { [step.text]: ref } });
        refs.push(ref);
      }
    }
    const values = records.map((r) => ({ prompt: r.map((n) => pick(n)), at: [{ deep: pick(r[0]! + 1) }] }) as Json);
    return { parts, values };
  });

describe('the part reader resolves as the plain reading of PARTS.md does', () => {
  test('fresh readers, and one reader over many records: same value or same error at the same place (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ parts, values }) => {
        const shared = parts.reader();
        for (const v of values) {
          const want = expected(parts, v);
          expect(await read(parts.reader(), v)).toEqual(want);
          expect(await read(shared, v)).toEqual(want);
        }
        // Again, in the other order, over the same reader: what it passed over must not change an answer.
        for (const v of [...values].reverse()) expect(await read(shared, v)).toEqual(expected(parts, v));
      }),
      { numRuns: 300 },
    );
  });

  test('a part met first shallow, then deep enough to pass the limit, is refused where it passes it', async () => {
    const parts = new Parts();
    let inner = parts.add({ seed: SEED, value: { leaf: 1 } });
    for (let d = 1; d < 100; d++) inner = parts.add({ seed: SEED, value: { x: inner } });
    let outer: Json = { y: inner };
    for (let d = 0; d < 30; d++) outer = { z: parts.add({ seed: SEED, value: outer }) };
    const reader = parts.reader();
    expect(await read(reader, { a: inner })).toMatchObject({ value: expect.anything() });
    const deep = await read(reader, outer);
    expect(deep).toEqual(expected(parts, outer));
    expect(deep).toMatchObject({ code: 'PART_CORRUPT' });
  });

  test('each value given is a copy of its own: changing one changes no other', async () => {
    const parts = new Parts();
    const base = parts.add({ seed: SEED, value: [{ role: 'user', content: 'hi' }] });
    const list = parts.add({ base, seed: SEED, tail: [{ role: 'assistant', content: 'hello' }] });
    const reader = parts.reader();
    const first = (await reader.resolve({ p: list }, { path: '' })) as { p: { content: string }[] };
    first.p[0]!.content = 'changed';
    first.p.push({ content: 'more' });
    const again = (await reader.resolve({ p: list }, { path: '' })) as { p: { content: string }[] };
    expect(again).toEqual({
      p: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });
  });
});
