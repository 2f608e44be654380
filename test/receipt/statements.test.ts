/**
 * What a receipt proves and does not prove (spec/RECEIPT.md §8), statement by statement: which sentences a
 * complete or partial, signed or unsigned, pinned or unpinned receipt yields, in their order and with the
 * values they name. The sentences are the report's account to a reader (the CLI and the page print them),
 * so each is pinned whole. Each case was a surviving mutant of src/receipt/describe.ts (npm run mutate;
 * test/mutation/SURVIVORS.md).
 */
import { describe, expect, test } from 'vitest';
import { keyPairFromSeed, receiptBytes, verifyReceipt, type ReceiptReport } from '../../src/receipt/index.js';
import { makeFixture, testSeed } from './fixture.js';

const key = keyPairFromSeed(testSeed(7));
const src = makeFixture({ steps: 6, bucketSize: 3 });
const hashOf = (seq: number): string => JSON.parse(src.stored[seq]!.text).step_hash;
const J = 'fixture-journal';

async function report(
  range: { from?: number; to?: number },
  options: { sign?: boolean; pinKey?: boolean; pinHead?: boolean } = {},
): Promise<ReceiptReport> {
  const bytes = await receiptBytes(src, { ...range, ...(options.sign ? { sign: key.privateKey } : {}) });
  const to = range.to ?? 5;
  return verifyReceipt(bytes, {
    ...(options.pinKey ? { publicKey: key.publicKey } : {}),
    ...(options.pinHead ? { expectHead: hashOf(to) } : {}),
  });
}

const CHAIN_MATCHES =
  'Every chain file and blob in the archive matches the digest, size and step count the manifest records, and the archive holds nothing else.';
const TRUTH =
  'That the recorded content and timestamps are true: the chain shows the steps were not altered after they were hashed, not that the agent or its clock told the truth.';
const UNSIGNED =
  'Who produced the receipt: it is unsigned, so anyone holding the journal, or inventing one, could have made it.';
const later = (to: number): string =>
  `That the journal has no steps after seq ${to}: a receipt cannot rule out later steps; pin a head obtained independently to fix the end.`;

describe('proves / does_not_prove (§8)', () => {
  test('complete, unsigned, nothing pinned: the chain from the genesis; not who made it, not the end, not the truth', async () => {
    const r = await report({});
    expect(r.ok).toBe(true);
    expect(r.proves).toEqual([
      `Steps 0–5 of journal ${J} (created 2026-01-01T00:00:00.000Z) form an unbroken hash chain from its genesis to head ${hashOf(5)}.`,
      CHAIN_MATCHES,
    ]);
    expect(r.does_not_prove).toEqual([later(5), UNSIGNED, TRUTH]);
  });

  test('partial, signed, key and head pinned: the range from its prev_hash, the signer as pinned, the pinned end', async () => {
    const r = await report({ from: 2, to: 4 }, { sign: true, pinKey: true, pinHead: true });
    expect(r.ok).toBe(true);
    expect(r.proves).toEqual([
      `Steps 2–4 form an unbroken hash chain that starts from prev_hash ${hashOf(1)} and ends at head ${hashOf(4)}.`,
      CHAIN_MATCHES,
      `The manifest, and through its digests everything else, was signed with the Ed25519 key ${key.keyId} (the key you pinned).`,
      `The receipt ends at the head you pinned (${hashOf(4)}).`,
    ]);
    expect(r.does_not_prove).toEqual([
      `That steps 0–1 exist, are intact, or lead from the genesis to ${hashOf(1)}: they are not in this partial receipt, so that hash is the exporter's claim. A trusted step_hash for step 1 equal to it, or a complete receipt, connects the range to the journal.`,
      `That these steps belong to journal ${J}: the genesis is named in the manifest but nothing in the range links to it.`,
      'Anything about steps after seq 4, if the journal continued past the head you pinned.',
      TRUTH,
    ]);
  });

  test('one step, signed, no key pinned: "Step N", and that the key may not be whose the reader thinks', async () => {
    const r = await report({ from: 3, to: 3 }, { sign: true });
    expect(r.ok).toBe(true);
    // One step takes the singular: "Step 3 forms", and "this step belongs" (§8's statement for F = T).
    expect(r.proves[0]).toBe(
      `Step 3 forms an unbroken hash chain that starts from prev_hash ${hashOf(2)} and ends at head ${hashOf(3)}.`,
    );
    expect(r.does_not_prove[1]).toBe(
      `That this step belongs to journal ${J}: the genesis is named in the manifest but nothing in the range links to it.`,
    );
    expect(r.proves[2]).toBe(
      `The manifest, and through its digests everything else, was signed with the Ed25519 key ${key.keyId}.`,
    );
    expect(r.does_not_prove.slice(2)).toEqual([
      later(3),
      `That key ${key.keyId} belongs to whom you think: no key was pinned; compare the key id with one you trust.`,
      TRUTH,
    ]);
  });

  test('one step, complete: "Step 0 of journal … forms", and no partial-range statement', async () => {
    const r = await report({ from: 0, to: 0 });
    expect(r.ok).toBe(true);
    expect(r.proves[0]).toBe(
      `Step 0 of journal ${J} (created 2026-01-01T00:00:00.000Z) forms an unbroken hash chain from its genesis to head ${hashOf(0)}.`,
    );
    expect(r.does_not_prove).toEqual([later(0), UNSIGNED, TRUTH]);
  });

  test('a range from step 1: the one step before it is named in the singular', async () => {
    const r = await report({ from: 1, to: 2 });
    expect(r.ok).toBe(true);
    expect(r.proves[0]).toBe(
      `Steps 1–2 form an unbroken hash chain that starts from prev_hash ${hashOf(0)} and ends at head ${hashOf(2)}.`,
    );
    expect(r.does_not_prove[0]).toBe(
      `That step 0 exists, is intact, or leads from the genesis to ${hashOf(0)}: it is not in this partial receipt, so that hash is the exporter's claim. A trusted step_hash for step 0 equal to it, or a complete receipt, connects the range to the journal.`,
    );
    expect(r.does_not_prove[1]).toBe(
      `That these steps belong to journal ${J}: the genesis is named in the manifest but nothing in the range links to it.`,
    );
  });

  test('an invalid receipt proves nothing, and says so', async () => {
    const bytes = await receiptBytes(src, {});
    const r = await verifyReceipt(bytes, { expectHead: hashOf(4) });
    expect(r.ok).toBe(false);
    expect(r.proves).toEqual([]);
    expect(r.does_not_prove).toEqual([
      'Anything: the receipt failed verification, so none of its contents can be relied on.',
    ]);
  });
});
