/**
 * The published-receipt verifier's rules for a stepchain/v2 publication against its original head
 * (spec/REDACTION.md §12.5, §12.7), and the hook that decides whether a receipt is a published one at all
 * (`finishIfPublished`, which `diff`, the CLI's `verify` and the page pass to verifyReceipt). Each receipt
 * is the publisher's, its manifest or lines edited and re-tarred here (the chain entry's digest and size
 * kept true). Each case was a surviving mutant of src/redact/verify.ts (test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { canonicalJson } from '../../src/canonical/jcs.js';
import { digestBytes } from '../../src/canonical/sha256.js';
import { genesisHash, type Json } from '../../src/record/index.js';
import { MANIFEST_NAME, type ReceiptManifest } from '../../src/receipt/manifest.js';
import { verifyReceipt } from '../../src/receipt/verify.js';
import { writeReceipt } from '../../src/receipt/writer.js';
import { seededSalts } from '../../src/redact/commit.js';
import { planCommittedPublication } from '../../src/redact/commit-publish.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { publishedReceiptHooks, verifyPublishedReceipt, type PublishedReport } from '../../src/redact/verify.js';
import { entriesOf, tarOf, text } from '../receipt/craft.js';
import { craft, marker } from './crafted.js';
import { SAMPLE_POLICY, memoryJournal, sampleSteps } from './helpers.js';

const journal = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
const pub = await planCommittedPublication(journal, {
  policy: compilePolicy(SAMPLE_POLICY),
  salts: seededSalts('publication-verify'),
});
const parts: Uint8Array[] = [];
for await (const chunk of writeReceipt(pub.plan)) parts.push(Uint8Array.from(chunk));
const original = concatBytes(parts);
const head = (await journal.head())!;

/** The publication with its manifest and its (single-entry) chain lines edited. */
function edited(edit: { manifest?: (m: Record<string, Json>) => void; lines?: (l: string[]) => void }): Uint8Array {
  const entries = entriesOf(original);
  const m = JSON.parse(new TextDecoder().decode(entries[0]!.data)) as Record<string, Json> & ReceiptManifest;
  expect(m.chain).toHaveLength(1);
  const chainAt = entries.findIndex((e) => e.name === m.chain[0]!.name);
  if (edit.lines) {
    const lines = new TextDecoder().decode(entries[chainAt]!.data).split('\n').slice(0, -1);
    edit.lines(lines);
    const data = text(lines.map((l) => l + '\n').join(''));
    entries[chainAt] = { ...entries[chainAt]!, data };
    m.chain = [{ ...m.chain[0]!, digest: digestBytes(data), size: data.length }];
  }
  edit.manifest?.(m);
  entries[0] = { name: MANIFEST_NAME, data: text(canonicalJson(m as never)) };
  return tarOf(entries);
}
const codes = (r: { problems: Array<{ code: string }> }) => r.problems.map((p) => p.code);

describe('a v2 publication (§12.5)', () => {
  test("the publisher's receipt verifies, and says what it proves and does not (§12.7)", async () => {
    const r = await verifyPublishedReceipt(original);
    expect(r.problems).toEqual([]);
    expect(r.head).toBe(head.step_hash);
    expect(r.proves.slice(-4)).toEqual([
      `The published chain has the original step hashes: every step hash, the head ${head.step_hash} among them, is the one the journal holds, recomputed here from the disclosed values and the digests of the withheld slots and of the redacted views (a view's digest is bound, its text is not).`,
      // Issue 32: with redacted views, no sentence says that every value shown is the original.
      `Every slot published with its salt holds the original value at its place, bound to its step hash by that salt. This does not cover the ${r.unbound_count} redacted views, whose text is not bound to the head.`,
      `Every redaction marker is declared in the manifest, and every declared redaction (${pub.declarations.length}) has its marker: nothing was withheld or left in silently.`,
      'Nothing about a withheld value can be tested by guessing: its digest is salted with 128 secret bits that never leave the journal.',
    ]);
    expect(r.does_not_prove.slice(-3)).toEqual([
      'What a withheld slot holds, its type or its size, or whether a withheld meta was present at all; an opening from the journal holder reveals one slot.',
      expect.stringMatching(
        /^That the text of the 6 redacted views \(seq \d+ \/\w+, .* and 1 more\) is the original: it is NOT bound to the head/,
      ),
      'That the policy removed every secret: it proves only that what was redacted is declared.',
    ]);
    expect(r.unbound_count).toBe(6);
    expect(r.unbound.every((u) => u.why === 'view' && u.path === `/${u.field}`)).toBe(true);
    expect(r.proves.join('\n')).not.toMatch(/Every disclosed value/);
    expect(r.proves.join('\n')).not.toMatch(/anchor/);
  });

  test('no redactions member: ANCHOR_INVALID at /redactions, every marker undeclared', async () => {
    const r = await verifyPublishedReceipt(edited({ manifest: (m) => void delete m.redactions }));
    const own = r.problems.filter((p) => p.code === 'ANCHOR_INVALID');
    expect(own).toEqual([
      {
        code: 'ANCHOR_INVALID',
        message: 'the manifest has no redactions list: this is not a published (redacted) receipt',
        location: { file: MANIFEST_NAME, path: '/redactions' },
      },
    ]);
    expect(new Set(codes(r))).toEqual(new Set(['REDACTION_UNDECLARED', 'ANCHOR_INVALID']));
  });

  test('a stored record (salt, no salts) is SALT_PUBLISHED at its line and the salt field', async () => {
    const stored: string[] = [];
    for await (const l of journal.lines()) stored.push(l.text);
    const r = await verifyPublishedReceipt(edited({ lines: (l) => void (l[3] = stored[3]!) }));
    const p = r.problems.find((x) => x.code === 'SALT_PUBLISHED');
    expect(p?.location).toEqual({ file: pub.plan.manifest.chain[0]!.name, line: 4, seq: 3, field: 'salt' });
  });

  test('a "salt" member that is not the record\'s (inside a value), and a record with both salt and salts, are not SALT_PUBLISHED', async () => {
    // Step 0's disclosed input gains a nested "salt" string (its hash then differs: only that is reported).
    const nested = await verifyPublishedReceipt(
      edited({ lines: (l) => void (l[0] = l[0]!.replace('{"question":', '{"a":{"salt":"x"},"question":')) }),
    );
    expect(codes(nested)).toEqual(['HASH_MISMATCH']);
    // A public record with a top-level "salt" member as well: not a stored record (§12.5 step 2 names salt and no salts).
    const both = await verifyPublishedReceipt(
      edited({ lines: (l) => void (l[0] = l[0]!.replace('"salts":', `"salt":"${'0'.repeat(32)}","salts":`)) }),
    );
    expect(codes(both)).toContain('UNKNOWN_FIELD'); // the line was read as a record
    expect(codes(both)).not.toContain('SALT_PUBLISHED');
  });

  test('a publication with an anchor block as well: ANCHOR_INVALID at /anchor (§12.5 step 3: one or the other)', async () => {
    const r = await verifyPublishedReceipt(
      edited({
        manifest: (m) => {
          const length = head.seq + 1;
          m.anchor = {
            commitments: [],
            format: 'stepchain-redaction/v2',
            genesis_hash: genesisHash(m.genesis as never),
            length,
            policy_digest: 'sha256:' + '5'.repeat(64),
            redacted_from: length,
          };
        },
      }),
    );
    expect(r.problems).toEqual([
      {
        code: 'ANCHOR_INVALID',
        message: 'a receipt published against its original head (publication) has no anchor block',
        location: { file: MANIFEST_NAME, path: '/anchor' },
      },
    ]);
  });

  test('a v1 chain with a publication block: ANCHOR_INVALID at /publication (v1 hashes raw values)', async () => {
    const bytes = craft({
      contents: [{ input: 'a' }, { input: { k: marker() } }],
      redactions: [{ seq: 1, path: '/input/k', rule: 'r' }],
      anchor: null,
      publication: { format: 'stepchain-redaction/v3', policy_digest: 'sha256:' + '5'.repeat(64) },
    });
    const r = await verifyPublishedReceipt(bytes);
    expect(r.problems).toEqual([
      {
        code: 'ANCHOR_INVALID',
        message:
          'a stepchain/v1 chain hashes raw values, so it cannot be published against its own head; publish it re-anchored (anchor block)',
        location: { file: MANIFEST_NAME, path: '/publication' },
      },
    ]);
  });

  test('a v1 re-anchored receipt whose line has a top-level "salt" is not checked as a public record (no SALT_PUBLISHED)', async () => {
    const salted = (l: string[]) =>
      l.map((x, i) => (i === 1 ? x.replace('"seq":1,', `"salt":"${'0'.repeat(32)}","seq":1,`) : x));
    const r = await verifyPublishedReceipt(
      craft({ contents: [{ input: 'a' }, { input: 'b' }], redactions: [], lines: salted }),
    );
    expect(codes(r)).toEqual(['UNKNOWN_FIELD', 'HASH_MISMATCH']);
  });
});

describe('finishIfPublished: a receipt with any of anchor, redactions, publication is a published one (the hooks diff and the CLI pass)', () => {
  const viaHooks = async (bytes: Uint8Array): Promise<PublishedReport> => {
    const hooks = publishedReceiptHooks();
    return (await verifyReceipt(bytes, hooks.options)) as PublishedReport;
  };
  const v1 = { contents: [{ input: 'a' }, { input: { k: marker() } }] };
  const decl = [{ seq: 1, path: '/input/k', rule: 'r' }];

  test.each([
    ['an anchor alone', craft({ ...v1, redactions: null }), ['REDACTION_UNDECLARED', 'ANCHOR_INVALID']],
    ['redactions alone', craft({ ...v1, redactions: decl, anchor: null }), ['ANCHOR_INVALID']],
    ['a publication block alone (v2)', edited({ manifest: (m) => void delete m.redactions }), null],
  ])('%s: finished, so its publication problems are reported', async (_what, bytes, expected) => {
    const r = await viaHooks(bytes);
    expect(codes(r)).toContain('ANCHOR_INVALID');
    if (expected) expect(codes(r)).toEqual(expected);
    expect(r).toHaveProperty('redactions');
  });

  test('an ordinary receipt is returned as the receipt verifier made it', async () => {
    const bytes = craft({ contents: [{ input: 'a' }], redactions: null, anchor: null });
    const r = await viaHooks(bytes);
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r).not.toHaveProperty('redactions');
    // verifyPublishedReceipt, by contrast, finishes it: an ordinary receipt is not a published one.
    expect(codes(await verifyPublishedReceipt(bytes))).toEqual(['ANCHOR_INVALID', 'ANCHOR_INVALID']);
  });
});
