/**
 * Receipts that carry a checkpoint and the inclusion proof of their range (spec/RECEIPT.md §4.5,
 * spec/PROOFS.md §9.8): a partial receipt of steps 500–520 of a 100 000-step journal verifies with its
 * proofs alone and is a few kilobytes larger than the bare range; every way of breaking the proof, the
 * checkpoint or the policy fails with its code; an earlier checkpoint pins what a receipt must extend.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { receiptBytes } from '../../src/receipt/node.js';
import { genesisHash } from '../../src/record/formats.js';
import {
  SIG_COSIGNATURE_V1,
  addSignatures,
  cosignCheckpoint,
  journalOrigin,
  noteSigner,
  noteVerifier,
  proveConsistency,
  proveReceiptRange,
  consistencyProofDocument,
  serializeProofDocument,
  verifyProvenReceipt,
  type CheckpointPolicy,
  type TreeHead,
} from '../../src/proofs/index.js';
import { FileStore, type FileJournal } from '../../src/store/index.js';
import { tempDir } from '../helpers/tmp.js';

const root = tempDir('stepchain-proof-receipt-');
const seed = (n: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i * 7 + n) & 255);
const STEPS = 100_000;

let journal: FileJournal;
let origin: string;
let log: ReturnType<typeof noteSigner>;
let policy: CheckpointPolicy;
const witness = noteSigner('witness.example/w1', seed(9), SIG_COSIGNATURE_V1, () => 1_800_000_000);
let early: { note: string; head: TreeHead };
let note: string;

/** The witness's line with the last byte of its Ed25519 signature flipped (key id and timestamp intact). */
function forge(noteText: string): string {
  return noteText.replace(/(— witness\.example\/w1 )(\S+)/, (_s, head: string, b64: string) => {
    const sig = Buffer.from(b64, 'base64');
    sig[sig.length - 1]! ^= 1;
    return head + sig.toString('base64');
  });
}

const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);

beforeAll(async () => {
  const store = new FileStore(join(root, 'store'), { fsync: 'none' });
  journal = (await store.create('big')) as FileJournal;
  for (let i = 0; i < STEPS; i += 5000)
    await journal.appendMany(
      Array.from({ length: 5000 }, (_, k) => ({ input: { step: i + k }, result: { ok: true } })),
    );
  origin = journalOrigin({
    authority: 'agents.example.com',
    journalId: 'big',
    genesisHash: genesisHash(journal.genesis),
  });
  log = noteSigner(origin, seed(1));
  policy = {
    log: noteVerifier(origin, log.publicKey),
    witnesses: [noteVerifier(witness.name, witness.publicKey, SIG_COSIGNATURE_V1)],
    quorum: 1,
  };
  const signed = await journal.checkpoint(log);
  note = addSignatures(signed.note, cosignCheckpoint(signed.note, witness));
  early = { note: signed.note, head: signed.checkpoint };
}, 240_000);

async function partial(from: number, to: number, member?: unknown): Promise<Uint8Array> {
  return receiptBytes(journal, { from, to, ...(member ? { extra: { proof: member as never } } : {}) });
}

describe('a partial receipt of steps 500–520 of 100 000', () => {
  test('verifies with its proofs alone against the log key and a witness, and is a few KB larger than the bare range', async () => {
    const view = await journal.treeView();
    const member = await proveReceiptRange(view.reader, note, 500, 520);
    const bare = await partial(500, 520);
    const proven = await partial(500, 520, member);
    const report = await verifyProvenReceipt(proven, { policy });
    expect(codes(report)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.scope).toBe('partial');
    expect(report.tlog).toMatchObject({ pinned: true, checkpoint: { origin, size: STEPS } });
    expect(report.tlog!.cosignatures.map((c) => c.name)).toEqual(['witness.example/w1']);
    expect(report.proves.some((p) => p.includes(`steps 500..520 are in the tree of ${origin} at size ${STEPS}`))).toBe(
      true,
    );
    // 17 + a few hashes of 32 bytes in base64, and the checkpoint note: well under 4 KiB more (tar pads to 512).
    const extra = proven.length - bare.length;
    expect(extra).toBeGreaterThan(0);
    expect(extra).toBeLessThanOrEqual(4096);
    expect(member.hashes.length).toBeLessThanOrEqual(2 * 17);
  });

  // A pinned checkpoint ties the range to the log's tree, so the partial-range statements of RECEIPT.md §8
  // (the prefix may not exist, the steps may not belong to the journal) are withdrawn, in each of their
  // wordings: several steps, one step (F = T), one step before the range (F = 1).
  test.each([
    [500, 520],
    [500, 500],
    [1, 3],
  ])('steps %i–%i with a pinned checkpoint: the partial-range statements are withdrawn', async (from, to) => {
    const view = await journal.treeView();
    const report = await verifyProvenReceipt(
      await partial(from, to, await proveReceiptRange(view.reader, note, from, to)),
      { policy },
    );
    expect(report.ok).toBe(true);
    expect(report.does_not_prove.filter((s) => /^That (steps? 0|th(ese|is) steps? belongs? )/.test(s))).toEqual([]);
    expect(report.does_not_prove.some((s) => s.startsWith('That the log showed the same tree to everyone'))).toBe(true);
    const bare = await verifyProvenReceipt(await partial(from, to));
    expect(bare.does_not_prove.filter((s) => /^That (steps? 0|th(ese|is) steps? belongs? )/.test(s))).toHaveLength(2);
  });

  test.each([
    [
      'a proof hash changed',
      (m: { checkpoint: string; hashes: string[] }) => ({
        ...m,
        hashes: [Buffer.alloc(32, 1).toString('base64'), ...m.hashes.slice(1)],
      }),
      'ROOT_MISMATCH',
    ],
    [
      'a proof hash missing',
      (m: { checkpoint: string; hashes: string[] }) => ({ ...m, hashes: m.hashes.slice(1) }),
      'PROOF_LENGTH_INVALID',
    ],
    [
      'the cosignature forged',
      (m: { checkpoint: string; hashes: string[] }) => ({ ...m, checkpoint: forge(m.checkpoint) }),
      'COSIGNATURE_INVALID',
    ],
    [
      'the checkpoint without the witness',
      (m: { checkpoint: string; hashes: string[] }) => ({ ...m, checkpoint: early.note }),
      'QUORUM_NOT_MET',
    ],
  ])('%s: %s', async (_name, mutate, code) => {
    const view = await journal.treeView();
    const member = mutate(await proveReceiptRange(view.reader, note, 500, 520));
    const report = await verifyProvenReceipt(await partial(500, 520, member), { policy });
    expect(report.ok).toBe(false);
    expect(codes(report)).toContain(code);
  });

  test('a checkpoint signed by a key not in the policy fails', async () => {
    const view = await journal.treeView();
    const stranger = noteSigner(origin, seed(2));
    const signedByStranger = (await import('../../src/proofs/index.js')).signCheckpoint(
      { origin, size: view.size, root: view.root },
      stranger,
    );
    const member = await proveReceiptRange(view.reader, signedByStranger, 500, 520);
    const report = await verifyProvenReceipt(await partial(500, 520, member), { policy: { log: policy.log } });
    expect(codes(report)).toEqual(['SIGNATURE_MISSING']);
  });

  test('a writer never ships a proof against a checkpoint of another tree', async () => {
    const view = await journal.treeView();
    const other = (await import('../../src/proofs/index.js')).signCheckpoint(
      { origin, size: 1000, root: new Uint8Array(32) },
      log,
    );
    await expect(proveReceiptRange(view.reader, other, 500, 520)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
    await expect(proveReceiptRange(view.reader, note, 500, STEPS)).rejects.toMatchObject({ code: 'ARGUMENT_INVALID' });
  });

  test('without a pinned log key the proof is still checked, and the report says who signed is unknown', async () => {
    const view = await journal.treeView();
    const member = await proveReceiptRange(view.reader, note, 500, 520);
    const report = await verifyProvenReceipt(await partial(500, 520, member));
    expect(report.ok).toBe(true);
    expect(report.tlog!.pinned).toBe(false);
    expect(report.does_not_prove.some((s) => s.startsWith('who signed the checkpoint'))).toBe(true);
    const bad = await verifyProvenReceipt(await partial(500, 520, { ...member, hashes: member.hashes.slice(1) }));
    expect(codes(bad)).toEqual(['PROOF_LENGTH_INVALID']);
  });

  test('a receipt without the proofs extension refuses the member (RECEIPT.md §4.3)', async () => {
    const view = await journal.treeView();
    const { verifyReceipt } = await import('../../src/receipt/verify.js');
    const report = await verifyReceipt(await partial(500, 520, await proveReceiptRange(view.reader, note, 500, 520)));
    expect(codes(report)).toContain('MANIFEST_INVALID');
  });
});

describe('an earlier checkpoint pins what a receipt must extend', () => {
  const small = async (): Promise<{ journal: FileJournal; log: ReturnType<typeof noteSigner>; origin: string }> => {
    const store = new FileStore(join(root, `s${Math.random().toString(16).slice(2)}`), { fsync: 'none' });
    const j = (await store.create('small')) as FileJournal;
    await j.appendMany(Array.from({ length: 40 }, (_, i) => ({ input: { i } })));
    const o = journalOrigin({
      authority: 'agents.example.com',
      journalId: 'small',
      genesisHash: genesisHash(j.genesis),
    });
    return { journal: j, log: noteSigner(o, seed(3)), origin: o };
  };

  test('a complete receipt extends a checkpoint of its prefix, and a truncated one is SIZE_DECREASED', async () => {
    const s = await small();
    const cp = await s.journal.checkpoint(s.log);
    await s.journal.appendMany(Array.from({ length: 10 }, (_, i) => ({ input: { more: i } })));
    const pol = { log: noteVerifier(s.origin, s.log.publicKey) };
    const whole = await verifyProvenReceipt(await receiptBytes(s.journal), { policy: pol, trusted: cp.checkpoint });
    expect(codes(whole)).toEqual([]);
    expect(whole.tlog!.extends?.size).toBe(40);
    const truncated = await verifyProvenReceipt(await receiptBytes(s.journal, { to: 20 }), {
      policy: pol,
      trusted: cp.checkpoint,
    });
    expect(codes(truncated)).toEqual(['SIZE_DECREASED']);
  });

  // Both have the checkpoint's size: two histories of one size are FORKED (PROOFS.md §9.8 step 2.1).
  test("a rewritten journal's complete receipt of the same size is FORKED from the checkpoint taken before", async () => {
    const s = await small();
    const cp = await s.journal.checkpoint(s.log);
    const other = await small(); // same id, another run: same origin shape, another genesis
    const report = await verifyProvenReceipt(await receiptBytes(other.journal), {
      trusted: { ...cp.checkpoint, origin: other.origin },
    });
    expect(codes(report)).toEqual(['FORKED']);
    const foreign = await verifyProvenReceipt(await receiptBytes(other.journal), { trusted: cp.checkpoint });
    expect(codes(foreign)).toEqual(['ORIGIN_MISMATCH']);
  });

  test('a partial receipt needs a consistency proof to the earlier checkpoint, and passes with one', async () => {
    const s = await small();
    const first = await s.journal.checkpoint(s.log);
    await s.journal.appendMany(Array.from({ length: 25 }, (_, i) => ({ input: { more: i } })));
    const second = await s.journal.checkpoint(s.log);
    const view = await s.journal.treeView();
    const member = await proveReceiptRange(view.reader, second.note, 50, 60);
    const bytes = await receiptBytes(s.journal, { from: 50, to: 60, extra: { proof: member as never } });
    const pol = { log: noteVerifier(s.origin, s.log.publicKey) };
    const without = await verifyProvenReceipt(bytes, { policy: pol, trusted: first.checkpoint });
    expect(codes(without)).toEqual(['CONSISTENCY_UNPROVEN']);
    const consistency = serializeProofDocument(
      consistencyProofDocument({
        oldCheckpoint: first.note,
        checkpoint: second.note,
        proof: await proveConsistency(view.reader, 40, 65),
      }),
    );
    const withProof = await verifyProvenReceipt(bytes, { policy: pol, trusted: first.checkpoint, consistency });
    expect(codes(withProof)).toEqual([]);
    expect(withProof.tlog!.extends?.size).toBe(40);
    const forged = await verifyProvenReceipt(bytes, {
      policy: pol,
      trusted: { ...first.checkpoint, root: new Uint8Array(32) },
      consistency,
    });
    expect(codes(forged)).toEqual(['INCONSISTENT']);
  });
});
