/**
 * Proof files (spec/PROOFS.md §7.4, §9.6): steps 500–520 of a 100 000-step journal verify against a
 * signed checkpoint with their proof alone, in a file a few kilobytes larger than the bare step hashes;
 * a consistency file proves an old checkpoint is extended, and a truncated-then-extended journal is
 * refused. Every mutation of a file is refused with a code, never an exception.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  MemoryTree,
  SIG_COSIGNATURE_V1,
  addSignatures,
  consistencyProofDocument,
  cosignCheckpoint,
  inclusionProofDocument,
  journalOrigin,
  noteSigner,
  noteVerifier,
  parseProofDocument,
  proveConsistency,
  proveInclusion,
  serializeProofDocument,
  signCheckpoint,
  stepLeafHash,
  treeRoot,
  verifyProofDocument,
  type CheckpointPolicy,
} from '../../src/proofs/index.js';
import { sha } from './reference.js';

const seed = (n: number): Uint8Array => Uint8Array.from({ length: 32 }, (_, i) => (i * 31 + n) & 255);
const ORIGIN = journalOrigin({
  authority: 'agents.example.com',
  journalId: 'big',
  genesisHash: 'sha256:' + '11'.repeat(32),
});
const log = noteSigner(ORIGIN, seed(1));
const witness = noteSigner('witness.example/w1', seed(2), SIG_COSIGNATURE_V1, () => 1_800_000_000);
const policy: CheckpointPolicy = {
  log: noteVerifier(log.name, log.publicKey),
  witnesses: [noteVerifier(witness.name, witness.publicKey, SIG_COSIGNATURE_V1)],
  quorum: 1,
};
const stepHash = (tag: string, i: number): string =>
  'sha256:' + Buffer.from(sha(new TextEncoder().encode(`${tag} ${i}`))).toString('hex');
const codes = (r: { problems: Array<{ code: string }> }): string[] => r.problems.map((p) => p.code);

async function checkpointOf(tree: MemoryTree, size: number): Promise<string> {
  const note = signCheckpoint({ origin: ORIGIN, size, root: await treeRoot(tree, size) }, log);
  return addSignatures(note, cosignCheckpoint(note, witness));
}

const N = 100_000;
const STEPS = Array.from({ length: N }, (_, i) => stepHash('step', i));
const tree = new MemoryTree();
for (const s of STEPS) tree.append(stepLeafHash(s)!);

describe('an inclusion proof file', () => {
  test('steps 500–520 of 100 000 verify with the checkpoint and proof alone, a few kilobytes over the bare range', async () => {
    const checkpoint = await checkpointOf(tree, N);
    const steps = STEPS.slice(500, 521);
    const doc = inclusionProofDocument({
      checkpoint,
      from: 500,
      to: 520,
      steps,
      proof: await proveInclusion(tree, 500, 520, N),
    });
    const file = serializeProofDocument(doc);
    const report = verifyProofDocument(file, policy);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({
      ok: true,
      type: 'inclusion',
      from: 500,
      to: 520,
      steps,
      checkpoint: { origin: ORIGIN, size: N },
    });
    expect(report.cosignatures.map((c) => c.name)).toEqual(['witness.example/w1']);
    const bare = JSON.stringify(steps).length;
    const overhead = new TextEncoder().encode(file).length - bare;
    expect(doc.hashes.length).toBeLessThanOrEqual(2 * 17);
    expect(overhead).toBeLessThan(4096);
  });

  test('a single step, the first and the last', async () => {
    const checkpoint = await checkpointOf(tree, N);
    for (const i of [0, 77_777, N - 1]) {
      const file = serializeProofDocument(
        inclusionProofDocument({
          checkpoint,
          from: i,
          to: i,
          steps: [STEPS[i]!],
          proof: await proveInclusion(tree, i, i, N),
        }),
      );
      expect(verifyProofDocument(file, policy).ok, `step ${i}`).toBe(true);
    }
  });

  test('the wrong steps, a shifted range, a proof for another checkpoint are refused', async () => {
    const checkpoint = await checkpointOf(tree, N);
    const proof = await proveInclusion(tree, 500, 520, N);
    const make = (from: number, to: number, steps: string[], p = proof, cp = checkpoint) =>
      serializeProofDocument(inclusionProofDocument({ checkpoint: cp, from, to, steps, proof: p }));
    expect(codes(verifyProofDocument(make(500, 520, STEPS.slice(501, 522)), policy))).toEqual(['ROOT_MISMATCH']);
    expect(codes(verifyProofDocument(make(501, 521, STEPS.slice(500, 521)), policy))).not.toEqual([]);
    expect(
      codes(verifyProofDocument(make(500, 520, [...STEPS.slice(500, 520), stepHash('forged', 0)]), policy)),
    ).toEqual(['ROOT_MISMATCH']);
    expect(
      codes(verifyProofDocument(make(500, 520, STEPS.slice(500, 521), proof, await checkpointOf(tree, N - 1)), policy)),
    ).not.toEqual([]);
    expect(
      codes(
        verifyProofDocument(make(500, 520, STEPS.slice(500, 521)), {
          ...policy,
          quorum: 1,
          witnesses: [noteVerifier('witness.example/other', seed(9).slice(), SIG_COSIGNATURE_V1)],
        }),
      ),
    ).toEqual(['QUORUM_NOT_MET']);
  });

  test('every single-byte mutation of a small file is refused, and none throws', async () => {
    const small = new MemoryTree();
    for (const s of STEPS.slice(0, 13)) small.append(stepLeafHash(s)!);
    const checkpoint = await checkpointOf(small, 13);
    const file = new TextEncoder().encode(
      serializeProofDocument(
        inclusionProofDocument({
          checkpoint,
          from: 4,
          to: 6,
          steps: STEPS.slice(4, 7),
          proof: await proveInclusion(small, 4, 6, 13),
        }),
      ),
    );
    expect(verifyProofDocument(file, policy).ok).toBe(true);
    fc.assert(
      fc.property(fc.nat(file.length - 1), fc.integer({ min: 1, max: 255 }), (at, x) => {
        const bad = file.slice();
        bad[at]! ^= x;
        const r = verifyProofDocument(bad, policy);
        // Flipping bits of the final newline's position can only make it not a newline: still refused
        // (trailing garbage is not JSON), so no mutation is harmless.
        expect(r.ok, `byte ${at} ^ ${x}`).toBe(false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('a consistency proof file', () => {
  test('an old checkpoint is extended by a newer one', async () => {
    const old = await checkpointOf(tree, 60_000);
    const checkpoint = await checkpointOf(tree, N);
    const file = serializeProofDocument(
      consistencyProofDocument({ oldCheckpoint: old, checkpoint, proof: await proveConsistency(tree, 60_000, N) }),
    );
    const report = verifyProofDocument(file, policy);
    expect(report).toMatchObject({
      ok: true,
      type: 'consistency',
      old_checkpoint: { size: 60_000 },
      checkpoint: { size: N },
    });
    const trusted = { origin: ORIGIN, size: 60_000, root: await treeRoot(tree, 60_000) };
    expect(verifyProofDocument(file, policy, { trusted }).ok).toBe(true);
    expect(codes(verifyProofDocument(file, policy, { trusted: { ...trusted, size: 59_999 } }))).toEqual([
      'OLD_SIZE_MISMATCH',
    ]);
    expect(
      codes(verifyProofDocument(file, policy, { trusted: { ...trusted, root: await treeRoot(tree, 1) } })),
    ).toEqual(['INCONSISTENT']);
    expect(codes(verifyProofDocument(file, policy, { trusted: { ...trusted, origin: 'x' } }))).toEqual([
      'ORIGIN_MISMATCH',
    ]);
  });

  test('a journal truncated to 90 000 steps and extended to 100 000 is refused against the checkpoint of 95 000', async () => {
    const old = await checkpointOf(tree, 95_000);
    const rewritten = new MemoryTree();
    for (let i = 0; i < N; i++) rewritten.append(stepLeafHash(i < 90_000 ? STEPS[i]! : stepHash('rewritten', i))!);
    const checkpoint = await checkpointOf(rewritten, N);
    const file = serializeProofDocument(
      consistencyProofDocument({ oldCheckpoint: old, checkpoint, proof: await proveConsistency(rewritten, 95_000, N) }),
    );
    expect(codes(verifyProofDocument(file, policy))).toEqual(['INCONSISTENT']);
  });

  test('an old checkpoint the log did not sign is refused', async () => {
    const stranger = noteSigner(ORIGIN, seed(77));
    const old = signCheckpoint({ origin: ORIGIN, size: 60_000, root: await treeRoot(tree, 60_000) }, stranger);
    const file = serializeProofDocument(
      consistencyProofDocument({
        oldCheckpoint: old,
        checkpoint: await checkpointOf(tree, N),
        proof: await proveConsistency(tree, 60_000, N),
      }),
    );
    const report = verifyProofDocument(file, policy);
    expect(codes(report)).toEqual(['SIGNATURE_MISSING']);
    expect(report.problems[0]!.message).toContain('old checkpoint');
  });
});

describe('malformed files', () => {
  const doc = {
    checkpoint: 'x\n\n\u2014 a AAAAAAA=\n',
    format: 'stepchain-proof/v1',
    hashes: [],
    old_checkpoint: 'x\n\n\u2014 a AAAAAAA=\n',
    type: 'consistency',
  };
  test.each([
    ['not JSON', '{', 'PROOF_MALFORMED'],
    ['an array', '[]\n', 'PROOF_MALFORMED'],
    ['another format', JSON.stringify({ ...doc, format: 'stepchain-proof/v2' }), 'PROOF_MALFORMED'],
    ['another type', JSON.stringify({ ...doc, type: 'range' }), 'PROOF_MALFORMED'],
    ['an extra member', JSON.stringify({ ...doc, z: 1 }), 'PROOF_MALFORMED'],
    ['members out of order', JSON.stringify(Object.fromEntries(Object.entries(doc).reverse())), 'PROOF_MALFORMED'],
    ['whitespace', JSON.stringify(doc, null, 1), 'PROOF_MALFORMED'],
    ['two newlines', JSON.stringify(doc) + '\n\n', 'PROOF_MALFORMED'],
    ['a duplicate member', JSON.stringify(doc).replace('"type"', '"hashes":[],"type"'), 'PROOF_MALFORMED'],
    ['a hash that is not a string', JSON.stringify({ ...doc, hashes: [1] }), 'PROOF_MALFORMED'],
    ['more than 4 MiB', ' '.repeat(4 * 1024 * 1024 + 1), 'LIMIT_EXCEEDED'],
  ])('a file with %s is refused', (_, text, code) => {
    expect(codes(verifyProofDocument(text, policy))[0]).toBe(code);
    expect(parseProofDocument(text).ok).toBe(false);
  });

  test('the canonical form of the same document parses', () => {
    expect(parseProofDocument(JSON.stringify(doc) + '\n').ok).toBe(true);
    expect(codes(verifyProofDocument(JSON.stringify(doc), policy))).toEqual(['CHECKPOINT_MALFORMED']);
  });

  test('anything at all is refused without throwing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.json(), fc.uint8Array(), fc.anything()), (x) => {
        expect(verifyProofDocument(x as string, policy).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  test('building a file checks its inputs', () => {
    expect(() => inclusionProofDocument({ checkpoint: 'nope', from: 0, to: 0, steps: [STEPS[0]!], proof: [] })).toThrow(
      expect.objectContaining({ code: 'ARGUMENT_INVALID' }),
    );
    expect(() =>
      consistencyProofDocument({
        oldCheckpoint: doc.checkpoint,
        checkpoint: doc.checkpoint,
        proof: [new Uint8Array(3)],
      }),
    ).toThrow(expect.objectContaining({ code: 'ARGUMENT_INVALID' }));
  });
});
