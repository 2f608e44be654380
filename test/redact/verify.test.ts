/**
 * The published-receipt verifier's own rules one at a time (spec/REDACTION.md §6–§7): each receipt here is
 * built by hand (test/redact/crafted.ts) — a chain of chosen contents sealed afresh, its manifest written
 * with the `anchor` and `redactions` a case needs — because the publisher refuses to write what these cases
 * plant. Each test names the rule and the codes in §7's order with their locations. Each case was a surviving mutant of
 * src/redact/verify.ts (npm run mutate; test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import type { Json } from '../../src/record/index.js';
import { blobEntryName, MANIFEST_NAME } from '../../src/receipt/manifest.js';
import { publishedReceiptHooks, verifyPublishedReceipt, type PublishedReport } from '../../src/redact/index.js';
import { verifyReceipt } from '../../src/receipt/index.js';
import { verifyProvenReceipt } from '../../src/proofs/receipt.js';
import { text, type RawEntry } from '../receipt/craft.js';
import { D, R, blobRef, craft, marker } from './crafted.js';

const where = (r: PublishedReport) => r.problems.map((p) => [p.code, p.location]);
const at = (seq: number, path: string, entry = 0) => ({
  file: `chain/${String(entry).padStart(16, '0')}.jsonl`,
  line: seq - entry + 1,
  seq,
  path,
});
const inManifest = (path: string) => ({ file: MANIFEST_NAME, path });
const missing = (seq: number, path: string) => ['REDACTION_MISSING', { file: MANIFEST_NAME, seq, path }];

describe('REDACTION §7: the crafted receipts', () => {
  test('a marker in step 1, declared, with a consistent anchor, verifies', async () => {
    const r = await verifyPublishedReceipt(
      craft({
        contents: [{ input: 'a' }, { input: { k: marker() } }],
        redactions: [{ seq: 1, path: '/input/k', rule: 'r' }],
      }),
    );
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.redactions).toBe(1);
    expect(r.anchor).toMatchObject({ redacted_from: 1, length: 2 });
  });
});

describe('REDACTION §7 step 2, FORMAT §3.5: only a valid redaction marker is declared or undeclared', () => {
  // Each object below holds the reserved name but is no valid redaction marker: MARKER_INVALID from the
  // chain, nothing more when undeclared; and a declaration at its place has no marker (REDACTION_MISSING).
  test.each([
    ["a second member beside the marker's", { [R]: { commitment: D(7), rule: 'r' }, zz: 1 }],
    ['a body without a commitment', { [R]: { rule: 'r' } }],
    ['a body without a rule', { [R]: { commitment: D(7) } }],
    ['a body that is a string', { [R]: 'r' }],
    ['a commitment that is not a digest', { [R]: { commitment: 'x', rule: 'r' } }],
    ['a rule that is not an id', { [R]: { commitment: D(7), rule: 'no spaces' } }],
    ['a body with another member', { [R]: { commitment: D(7), rule: 'r', salt: 'x' } }],
  ])('%s: MARKER_INVALID alone; declared, REDACTION_MISSING', async (_what, object) => {
    const contents = [{ input: 'a' }, { result: { k: object as Json } }];
    const undeclared = await verifyPublishedReceipt(craft({ contents, redactions: [] }));
    expect(undeclared.problems.map((p) => p.code)).toEqual(['MARKER_INVALID']);
    const declared = await verifyPublishedReceipt(
      craft({ contents, redactions: [{ seq: 1, path: '/result/k', rule: 'r' }] }),
    );
    expect(where(declared)).toEqual([
      ['MARKER_INVALID', expect.objectContaining({ seq: 1, path: '/result/k' })],
      missing(1, '/result/k'),
    ]);
  });

  test('a redaction marker of the right shape outside a content field or meta (in an unknown member) is invalid there: never undeclared', async () => {
    const unknown = (lines: string[]) =>
      lines.map((l, i) => (i === 1 ? l.replace(/}\n$/, `,"x":${JSON.stringify(marker())}}\n`) : l));
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }, { input: 'b' }], redactions: [], lines: unknown }),
    );
    // (The step hash covers every member, so the line no longer hashes to its step_hash either.)
    expect(r.problems.map((p) => p.code)).toEqual(['UNKNOWN_FIELD', 'MARKER_INVALID', 'HASH_MISMATCH']);
  });

  test('a valid marker in a text field, an array element and as the whole of meta: each named by its path', async () => {
    const contents = [{ input: 'a' }, { prompt: marker('p'), result: [1, marker('q')], meta: marker('m') as never }];
    const r = await verifyPublishedReceipt(craft({ contents, redactions: [] }));
    expect(where(r)).toEqual([
      ['REDACTION_UNDECLARED', at(1, '/meta')],
      ['REDACTION_UNDECLARED', at(1, '/prompt')],
      ['REDACTION_UNDECLARED', at(1, '/result/1')],
    ]);
  });

  test('a declaration naming another rule than its marker is REDACTION_UNDECLARED at the marker, and not missing', async () => {
    const r = await verifyPublishedReceipt(
      craft({
        contents: [{ input: 'a' }, { input: { k: marker('r') } }],
        redactions: [{ seq: 1, path: '/input/k', rule: 's' }],
      }),
    );
    expect(where(r)).toEqual([['REDACTION_UNDECLARED', at(1, '/input/k')]]);
  });

  test('a marker in the second chain entry is located in that entry', async () => {
    const contents = [{ input: 'a' }, { input: 'b' }, { input: { k: marker() } }];
    const r = await verifyPublishedReceipt(craft({ contents, redactions: [], perEntry: 2 }));
    expect(where(r)).toEqual([['REDACTION_UNDECLARED', at(2, '/input/k', 2)]]);
  });
});

describe('REDACTION §7 step 2: what a line must be for its markers to count (a record with a known seq)', () => {
  test("a line without a seq holding a valid marker: the chain's problems only, no REDACTION_UNDECLARED", async () => {
    const noSeq = (l: string[]) => l.map((x, i) => (i === 1 ? x.replace('"seq":1,', '') : x));
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }, { input: { k: marker() } }], redactions: [], lines: noSeq }),
    );
    expect(r.problems.length).toBeGreaterThan(0);
    expect(r.problems.map((p) => p.code)).not.toContain('REDACTION_UNDECLARED');
  });

  test.each([
    ['a string', 'x'],
    ['an object', {}],
    ['null', null],
  ])(
    'a redactions member that is %s is MANIFEST_INVALID at /redactions, and nothing else is checked',
    async (_what, value) => {
      const r = await verifyPublishedReceipt(
        craft({ contents: [{ input: 'a' }], redactions: null, rawRedactions: value as Json }),
      );
      expect(where(r)).toEqual([['MANIFEST_INVALID', inManifest('/redactions')]]);
    },
  );
});

describe('REDACTION §7 step 2, §5.4: no marker in a published blob', () => {
  const one = (value: Json): Uint8Array => text(canonicalJson(value));
  test.each([
    ['a valid redaction marker inside', { a: 1, k: { [R]: { commitment: D(7), rule: 'r' } } } as Json, '/k'],
    ['a blob reference inside', { list: [{ '$stepchain:blob': { digest: D(8), size: 3 } }] } as Json, '/list/0'],
    ['an object with a reserved member beside another', { k: { [R]: 1, z: 2 } } as Json, '/k'],
    ['a marker as the whole blob', { [R]: { commitment: D(7), rule: 'r' } } as Json, ''],
  ])(
    "%s: REDACTION_UNDECLARED at the blob entry and the first marker's path, after the chain's problems",
    async (_what, value, path) => {
      // canonicalJson refuses reserved names: the blob's canonical text written with JSON.stringify of sorted members.
      const bytes = text(JSON.stringify(value));
      const r = await verifyPublishedReceipt(
        craft({
          contents: [{ input: 'a' }, { input: { k: marker() }, result: blobRef(bytes) }],
          redactions: [],
          blobs: [bytes],
        }),
      );
      expect(where(r)).toEqual([
        ['REDACTION_UNDECLARED', at(1, '/input/k')],
        ['REDACTION_UNDECLARED', { file: blobEntryName(digestBytes(bytes)), path }],
      ]);
      expect(r.ok).toBe(false);
    },
  );

  test('a blob without one is no problem', async () => {
    const bytes = one({ a: [1, { b: 'x' }] });
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a', result: blobRef(bytes) }], redactions: [], blobs: [bytes] }),
    );
    expect(r.problems).toEqual([]);
  });
});

describe('REDACTION §7 step 3: the anchor against the rest of the manifest, in its order', () => {
  const contents = [{ input: 'a' }, { input: { k: marker() } }, { input: 'c' }];
  const decl = [{ seq: 1, path: '/input/k', rule: 'r' }];

  test('a partial range (range.from 1) is ANCHOR_INVALID at /range/from; the declarations are still checked against the steps it holds', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents, from: 1, redactions: [...decl, { seq: 2, path: '/input', rule: 'r' }] }),
    );
    expect(r.steps).toBe(2);
    expect(where(r)).toEqual([['ANCHOR_INVALID', inManifest('/range/from')], missing(2, '/input')]);
  });

  test('no redactions member: ANCHOR_INVALID at /redactions, every marker undeclared, and redacted_from is not compared', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents, redactions: null, anchor: { redacted_from: 0, commitments: [D(1), D(2), D(3)] } }),
    );
    expect(where(r)).toEqual([
      ['REDACTION_UNDECLARED', at(1, '/input/k')],
      ['ANCHOR_INVALID', inManifest('/redactions')],
    ]);
    expect(r.redactions).toBe(0);
  });

  test('no redactions member and a wrong length: both, /redactions first', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }], redactions: null, anchor: { length: 2, commitments: [D(1)] } }),
    );
    expect(where(r)).toEqual([
      ['ANCHOR_INVALID', inManifest('/redactions')],
      ['ANCHOR_INVALID', inManifest('/anchor/length')],
    ]);
  });

  test('no anchor member: ANCHOR_INVALID at /anchor alone (checks 3–6 need an anchor), the declarations still checked', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents, from: 1, redactions: [...decl, { seq: 2, path: '/input', rule: 'r' }], anchor: null }),
    );
    expect(where(r)).toEqual([['ANCHOR_INVALID', inManifest('/anchor')], missing(2, '/input')]);
    expect(r.anchor).toBeNull();
    expect(r.redactions).toBe(2);
  });

  test("every check at once, in §7 step 3's order", async () => {
    const r = await verifyPublishedReceipt(
      craft({
        contents,
        from: 1,
        redactions: decl,
        anchor: { genesis_hash: D(9), length: 4, redacted_from: 0, commitments: [D(1), D(2), D(3), D(4)] },
      }),
    );
    expect(where(r).map(([, l]) => (l as { path: string }).path)).toEqual([
      '/range/from',
      '/anchor/genesis_hash',
      '/anchor/length',
      '/anchor/redacted_from',
    ]);
  });

  test('nothing declared: redacted_from must be the length', async () => {
    const good = await verifyPublishedReceipt(craft({ contents: [{ input: 'a' }], redactions: [] }));
    expect(good.problems).toEqual([]);
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }], redactions: [], anchor: { redacted_from: 0, commitments: [D(1)] } }),
    );
    expect(where(r)).toEqual([['ANCHOR_INVALID', inManifest('/anchor/redacted_from')]]);
  });
});

describe('REDACTION §7 step 4: REDACTION_MISSING only when every chain line was read', () => {
  // Steps 0–1 in the first chain entry, 2–3 in the second; the declaration at step 3 has no marker.
  const contents = [{ input: 'a' }, { input: { k: marker() } }, { input: 'c' }, { input: 'd' }];
  const decl = [
    { seq: 1, path: '/input/k', rule: 'r' },
    { seq: 3, path: '/input', rule: 'r' },
  ];
  const base = { contents, redactions: decl, perEntry: 2 };
  const codes = (r: { problems: ReadonlyArray<{ code: string }> }) => r.problems.map((p) => p.code);

  test('read to the end: the declaration without its marker is REDACTION_MISSING', async () => {
    expect(where(await verifyPublishedReceipt(craft(base)))).toEqual([missing(3, '/input')]);
  });

  test('the second chain entry absent (ENTRY_MISSING, not fatal, but two steps unread): not missing', async () => {
    const r = await verifyPublishedReceipt(craft({ ...base, entries: (e) => e.slice(0, 2) }));
    expect(r.steps).toBe(2);
    expect(codes(r)).not.toContain('REDACTION_MISSING');
    expect(codes(r)).toContain('ENTRY_MISSING');
  });

  test('a listed blob no step references (ENTRY_UNEXPECTED, RECEIPT §7 step 7: not fatal, every entry read): still missing', async () => {
    const unreferenced = text('{"x":1}');
    const r = await verifyPublishedReceipt(craft({ ...base, blobs: [unreferenced] }));
    expect(r.steps).toBe(4);
    expect(where(r)).toEqual([
      ['ENTRY_UNEXPECTED', { file: blobEntryName(digestBytes(unreferenced)) }],
      missing(3, '/input'),
    ]);
  });

  test("the reading reaches a finish composed with the proofs' hooks; a finish called without it counts every ENTRY_UNEXPECTED as a stop", async () => {
    const bytes = craft({ ...base, blobs: [text('{"x":1}')] });
    const composed = publishedReceiptHooks();
    const proven = await verifyProvenReceipt(bytes, {}, composed.options);
    expect(codes(proven)).toEqual(['ENTRY_UNEXPECTED', 'REDACTION_MISSING']);
    const manual = publishedReceiptHooks();
    const receipt = await verifyReceipt(bytes, {
      extensions: manual.options.extensions,
      onLine: manual.options.onLine,
      onBlob: manual.options.onBlob,
    });
    expect(codes(manual.finish(receipt))).toEqual(['ENTRY_UNEXPECTED']);
    // Without the reading, one problem of a code that can stop reading is enough, whatever else is there.
    const hashBroken = craft({
      ...base,
      blobs: [text('{"x":1}')],
      lines: (l) => l.map((x, i) => (i === 0 ? x.replace('"input":"a"', '"input":"b"') : x)),
    });
    const mixed = publishedReceiptHooks();
    const mixedReport = await verifyReceipt(hashBroken, {
      extensions: mixed.options.extensions,
      onLine: mixed.options.onLine,
      onBlob: mixed.options.onBlob,
    });
    expect(codes(mixed.finish(mixedReport))).toEqual(['ENTRY_UNEXPECTED', 'HASH_MISMATCH']);
    const told = publishedReceiptHooks();
    const again = await verifyReceipt(bytes, {
      extensions: told.options.extensions,
      onLine: told.options.onLine,
      onBlob: told.options.onBlob,
    });
    expect(codes(told.finish(again, { stopped: false }))).toEqual(['ENTRY_UNEXPECTED', 'REDACTION_MISSING']);
  });

  // A problem that stops reading after the last chain line: every line was read, yet verification stopped
  // early, which is what step 4 names ("no problem stopped verification early").
  const junk = text('{}');
  test.each([
    [
      'an entry the manifest does not list (ENTRY_UNEXPECTED)',
      (e: RawEntry[]) => [...e, { name: 'chain/0000000000000009.jsonl', data: junk }],
      'ENTRY_UNEXPECTED',
    ],
    [
      'an entry whose name leaves the archive (ARCHIVE_UNSAFE)',
      (e: RawEntry[]) => [...e, { name: '../x', data: junk }],
      'ARCHIVE_UNSAFE',
    ],
    [
      'a header with a broken checksum (ARCHIVE_INVALID)',
      (e: RawEntry[]) => [...e, { name: 'x', data: junk, patch: [[148, '0000000']], keepChecksum: true } as RawEntry],
      'ARCHIVE_INVALID',
    ],
    ['zeros past the end marker beyond the bytes the manifest declares (ARCHIVE_LIMIT)', 'trailing', 'ARCHIVE_LIMIT'],
  ] as const)('%s after every chain line: not missing', async (_what, edit, code) => {
    const r = await verifyPublishedReceipt(
      craft({ ...base, ...(edit === 'trailing' ? { trailing: (1 << 20) + 1024 } : { entries: edit }) }),
    );
    expect(r.steps).toBe(4);
    expect(codes(r)).toEqual([code]);
  });
});

describe("REDACTION §7: verifyPublishedReceipt's options come from anywhere (a page's query string), anything not an object is none", () => {
  const bytes = craft({
    contents: [{ input: 'a' }, { input: { k: marker() } }],
    redactions: [{ seq: 1, path: '/input/k', rule: 'r' }],
  });
  const locate = { seq: 1, path: '/input/k', step: true };
  test.each([
    ['null', null],
    ['a string', 'x'],
    ['an array carrying a locate', Object.assign([], { locate })],
    ['a function carrying a locate', Object.assign(() => {}, { locate })],
  ])('%s: verified as with no options, nothing located', async (_what, options) => {
    const r = await verifyPublishedReceipt(bytes, options as never);
    expect(r.ok).toBe(true);
    expect(r.located).toBeNull();
    expect(r.located_line).toBeNull();
  });

  test("an object's locate is honoured: the marker, and with step: true its line", async () => {
    const r = await verifyPublishedReceipt(bytes, { locate });
    expect(r.located).toEqual({ commitment: D(77), rule: 'r' });
    expect(r.located_line).toMatch(/^\{"input":\{"k":\{"\$stepchain:redacted"/);
    const other = await verifyPublishedReceipt(bytes, { locate: { seq: 1, path: '/input/j' } });
    expect(other.located).toBeNull();
    expect(other.located_line).toBeNull();
  });
});

describe("REDACTION §6.4, §7: at most 1000 problems of the publication's own (MAX_EXTRA_PROBLEMS)", () => {
  test('1001 undeclared markers: 1000 listed, problems_truncated, not ok', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }, { input: Array.from({ length: 1001 }, () => marker()) }], redactions: [] }),
    );
    expect(r.problems).toHaveLength(1000);
    expect(r.problems[999]).toMatchObject({ code: 'REDACTION_UNDECLARED', location: at(1, '/input/999') });
    expect(r.problems_truncated).toBe(true);
    expect(r.ok).toBe(false);
  });

  test('1000 of them: all listed, not truncated', async () => {
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }, { input: Array.from({ length: 1000 }, () => marker()) }], redactions: [] }),
    );
    expect(r.problems).toHaveLength(1000);
    expect(r.problems_truncated).toBe(false);
  });
});
