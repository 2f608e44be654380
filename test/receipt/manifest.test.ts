/**
 * The manifest's rules one at a time (spec/RECEIPT.md §4.1–§4.3, §6, §6.1), through `parseManifest`: a good
 * manifest with one defect planted, and the path each reason names. Each case was a mutant of
 * src/receipt/manifest.ts that the suite let through (npm run mutate; test/mutation/SURVIVORS.md): the
 * vectors and the hostile-archive tests reach these rules through the verifier, which quotes one reason.
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { receiptBytes } from '../../src/receipt/index.js';
import { MAX_BLOB_BYTES, MAX_CHAIN_ENTRY_BYTES, MAX_ENTRIES } from '../../src/receipt/limits.js';
import { declaredArchiveBytes, entryNames, parseManifest, type ReceiptManifest } from '../../src/receipt/manifest.js';
import { entriesOf } from './craft.js';
import { makeFixture } from './fixture.js';

// Steps 1–5 of a 6-step journal in buckets of 3: chain entries named for 1 (steps 1–2) and 3 (steps 3–5).
const fixture = makeFixture({ steps: 6, bucketSize: 3 });
const tar = await receiptBytes(fixture, { from: 1, to: 5 });
const entries = entriesOf(tar);
const good = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as ReceiptManifest;
const enc = new TextEncoder();
const bytesOf = (m: unknown): Uint8Array => enc.encode(canonicalJson(m as never));
const paths = (m: unknown, extensions?: Parameters<typeof parseManifest>[1]) => {
  const r = parseManifest(bytesOf(m), extensions);
  return r.ok ? 'ok' : r.reasons.map((x) => (x.limit ? `${x.path} (limit)` : x.path));
};
const edit = (patch: (m: Record<string, unknown>) => void): Record<string, unknown> => {
  const m = structuredClone(good) as unknown as Record<string, unknown>;
  patch(m);
  return m;
};
const digest = (c: string) => 'sha256:' + c.repeat(64);

test("the good manifest parses, and its declared size is the archive's length (§6.1)", () => {
  expect(good.range.from).toBe(1);
  expect(good.chain.map((c) => c.name)).toEqual(['chain/0000000000000001.jsonl', 'chain/0000000000000003.jsonl']);
  expect(paths(good)).toBe('ok');
  expect(declaredArchiveBytes(entries[0]!.data.length, null, good)).toBe(tar.length);
  expect(entryNames(good, false)).toEqual(entries.map((e) => e.name));
});

describe('RECEIPT §4.1: the bytes', () => {
  test.each<[string, Uint8Array]>([
    ['not UTF-8', Uint8Array.of(0x7b, 0xff, 0x7d)],
    ['not canonical', enc.encode(canonicalJson(good as never).replace('{"blobs"', '{ "blobs"'))],
    [
      'a member name with the reserved prefix',
      enc.encode(canonicalJson(good as never).replace('{"blobs"', '{"$stepchain:x":1,"blobs"')),
    ],
    ['not an object', enc.encode('[]')],
  ])('%s: one reason, at the document', (_name, bytes) => {
    const r = parseManifest(bytes);
    expect(r.ok ? null : r.reasons.map((x) => x.path)).toEqual(['']);
  });
  test('the reserved prefix is reported at its member', () => {
    const r = parseManifest(enc.encode(canonicalJson(good as never).replace(/}$/, ',"x":{"$stepchain:blob":1}}')));
    expect(!r.ok && r.reasons.map((x) => x.path)).toEqual(['/x']);
  });
});

describe('RECEIPT §4.2, §4.3: members', () => {
  test.each<[string, (m: Record<string, unknown>) => void, string[]]>([
    ['another format', (m) => (m.format = 'stepchain-receipt/v2'), ['/format']],
    ['an unknown member', (m) => (m.zzz = 1), ['/zzz']],
    ['no exporter', (m) => delete m.exporter, ['/exporter']],
    ['no blobs and no head', (m) => (delete m.blobs, delete m.head), ['/blobs', '/head']],
    ['an empty exporter', (m) => (m.exporter = ''), ['/exporter']],
    ['an exporter of 257 characters', (m) => (m.exporter = 'x'.repeat(257)), ['/exporter']],
    ['an exporter that is not a string', (m) => (m.exporter = 7), ['/exporter']],
    ['a genesis that is not one', (m) => (m.genesis = { v: 1 }), ['/genesis']],
    ['a range with an extra member', (m) => ((m.range as Record<string, unknown>).x = 1), ['/range']],
    [
      'a range from after its to',
      (m) => (m.range = { ...good.range, from: 6 }),
      ['/range', '/chain/0/name', '/chain/1/name'],
    ],
    [
      'a range whose from is not a seq',
      (m) => (m.range = { ...good.range, from: -1 }),
      ['/range', '/chain/0/name', '/chain/1/name'],
    ],
    ['a range whose to is not a seq', (m) => (m.range = { ...good.range, to: 1.5 }), ['/range', '/head/seq']],
    [
      'a range whose prev_hash is not a digest',
      (m) => (m.range = { ...good.range, prev_hash: 'sha256:x' }),
      ['/range'],
    ],
    ['a head with an extra member', (m) => ((m.head as Record<string, unknown>).x = 1), ['/head']],
    ['a head whose seq is not a seq', (m) => (m.head = { ...good.head, seq: '5' }), ['/head']],
    ['a head whose step_hash is not a digest', (m) => (m.head = { ...good.head, step_hash: 5 }), ['/head']],
    ['a head before range.to', (m) => (m.head = { ...good.head, seq: 4 }), ['/head/seq']],
  ])('%s', (_name, patch, expected) => {
    expect(paths(edit(patch))).toEqual(expected);
  });

  test('exporters of 1 and 256 characters, and a range of one step, are accepted', () => {
    expect(paths(edit((m) => (m.exporter = 'x')))).toBe('ok');
    expect(paths(edit((m) => (m.exporter = 'x'.repeat(256))))).toBe('ok');
  });

  test('an extension member is accepted when its check passes and refused with its reason at its path otherwise', () => {
    const m = edit((x) => (x.anchor = { a: 1 }));
    expect(paths(m, { anchor: () => null })).toBe('ok');
    const r = parseManifest(bytesOf(m), { anchor: () => 'anchor is wrong' });
    expect(r.ok ? null : r.reasons).toEqual([{ message: 'anchor is wrong', path: '/anchor' }]);
    expect(paths(m, { other: () => null })).toEqual(['/anchor']);
  });
});

describe('RECEIPT §4.2, §6: the chain listing', () => {
  const chain = (patch: (c: Array<Record<string, unknown>>) => void) =>
    edit((m) => patch(m.chain as Array<Record<string, unknown>>));
  test.each<[string, Record<string, unknown>, string[]]>([
    ['an empty chain', edit((m) => (m.chain = [])), ['/chain']],
    ['a chain that is not an array', edit((m) => (m.chain = {})), ['/chain']],
    // A malformed entry adds no steps, so the next one is also misplaced; the step total is not checked then.
    ['an entry with an extra member', chain((c) => (c[0]!.x = 1)), ['/chain/0', '/chain/1/name']],
    ['an entry that is not an object', chain((c) => (c[1] = 'chain/0000000000000003.jsonl' as never)), ['/chain/1']],
    ['an entry of 0 steps', chain((c) => (c[1]!.steps = 0)), ['/chain/1']],
    ['an entry whose size is not a seq', chain((c) => (c[0]!.size = -1)), ['/chain/0', '/chain/1/name']],
    ['an entry whose digest is not one', chain((c) => (c[0]!.digest = 'sha256:')), ['/chain/0', '/chain/1/name']],
    ['an entry whose name is not a string', chain((c) => (c[0]!.name = 1)), ['/chain/0', '/chain/1/name']],
    ['a name not of the form chain/<16 digits>.jsonl', chain((c) => (c[1]!.name = 'chain/3.jsonl')), ['/chain/1/name']],
    [
      'a first entry not named for range.from',
      chain((c) => (c[0]!.name = 'chain/0000000000000000.jsonl')),
      ['/chain/0/name'],
    ],
    ['entries out of order', chain((c) => c.reverse()), ['/chain/0/name', '/chain/1/name', '/chain/1/name']],
    [
      'an entry named like the one before it',
      chain((c) => (c[1]!.name = c[0]!.name)),
      ['/chain/1/name', '/chain/1/name'],
    ],
    [
      'an entry not named for the seq after the one before',
      chain((c) => (c[1]!.name = 'chain/0000000000000004.jsonl')),
      ['/chain/1/name'],
    ],
    ['step counts that do not add up to the range', chain((c) => (c[1]!.steps = 4)), ['/chain']],
    [
      'an entry over the chain-entry limit',
      chain((c) => (c[1]!.size = MAX_CHAIN_ENTRY_BYTES + 1)),
      ['/chain/1/size (limit)'],
    ],
  ])('%s', (_name, m, expected) => {
    expect(paths(m)).toEqual(expected);
  });

  test('an entry of exactly the chain-entry limit is within it', () => {
    expect(paths(chain((c) => (c[1]!.size = MAX_CHAIN_ENTRY_BYTES)))).toBe('ok');
  });

  test('a step-count mismatch is not reported beside another defect, but is beside a limit', () => {
    expect(paths(chain((c) => ((c[1]!.steps = 4), (c[0]!.name = 'chain/0000000000000000.jsonl'))))).toEqual([
      '/chain/0/name',
    ]);
    expect(paths(chain((c) => ((c[1]!.steps = 4), (c[1]!.size = MAX_CHAIN_ENTRY_BYTES + 1))))).toEqual([
      '/chain/1/size (limit)',
      '/chain',
    ]);
  });

  test('with a range that is not an object, entries are still checked for order and contiguity from 0', () => {
    const m = edit(
      (x) => ((x.range = 1), ((x.chain as Array<Record<string, unknown>>)[1]!.name = 'chain/0000000000000004.jsonl')),
    );
    expect(paths(m)).toEqual(['/range', '/chain/1/name']);
  });
});

describe('RECEIPT §4.2, §6: the blob listing', () => {
  const blobs = (list: unknown) => edit((m) => (m.blobs = list));
  test.each<[string, unknown, string[]]>([
    ['blobs that are not an array', {}, ['/blobs']],
    ['an entry with an extra member', [{ digest: digest('a'), size: 1, x: 1 }], ['/blobs/0']],
    ['an entry whose digest is not one', [{ digest: 'a', size: 1 }], ['/blobs/0']],
    ['an entry whose size is not a seq', [{ digest: digest('a'), size: -1 }], ['/blobs/0']],
    [
      'a repeated digest',
      [
        { digest: digest('a'), size: 1 },
        { digest: digest('a'), size: 1 },
      ],
      ['/blobs/1/digest'],
    ],
    [
      'digests out of order',
      [
        { digest: digest('b'), size: 1 },
        { digest: digest('a'), size: 1 },
      ],
      ['/blobs/1/digest'],
    ],
    ['a blob over the blob limit', [{ digest: digest('a'), size: MAX_BLOB_BYTES + 1 }], ['/blobs/0/size (limit)']],
  ])('%s', (_name, list, expected) => {
    expect(paths(blobs(list))).toEqual(expected);
  });

  test('sorted digests, a blob of exactly the limit and an empty list are accepted', () => {
    expect(
      paths(
        blobs([
          { digest: digest('a'), size: MAX_BLOB_BYTES },
          { digest: digest('b'), size: 0 },
        ]),
      ),
    ).toBe('ok');
    expect(paths(blobs([]))).toBe('ok');
  });

  test(`an archive holds at most ${MAX_ENTRIES} entries, the manifest and the signature included`, () => {
    const list = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ digest: 'sha256:' + i.toString(16).padStart(64, '0'), size: 1 }));
    const room = MAX_ENTRIES - 2 - good.chain.length;
    expect(paths(blobs(list(room)))).toBe('ok');
    expect(paths(blobs(list(room + 1)))).toEqual([' (limit)']);
  });
});
