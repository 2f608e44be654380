/**
 * A `proof` member beside a publication's members (spec/RECEIPT.md §4.5, PROOFS.md §9.7–§9.8): a verifier
 * that knows both extensions checks both. The leaves are the published lines' step hashes, so the proof
 * holds for a publication of a stepchain/v2 journal (its records keep their step hashes) and fails with
 * ROOT_MISMATCH over a step a version-2 anchor publication redacted (its hash changed).
 */
import { describe, expect, test } from 'vitest';
import { concatBytes } from '../../src/bytes.js';
import { genesisHash } from '../../src/record/formats.js';
import type { Json } from '../../src/record/index.js';
import { planReceipt, writeReceipt, type ReceiptPlan } from '../../src/receipt/writer.js';
import {
  journalOrigin,
  noteSigner,
  noteVerifier,
  proveInclusion,
  receiptProofMember,
  rootOfLeaves,
  signCheckpoint,
  stepLeafHash,
  verifyProvenReceipt,
  MemoryTree,
} from '../../src/proofs/index.js';
import { planCommittedPublication } from '../../src/redact/commit-publish.js';
import { seededSalts } from '../../src/redact/commit.js';
import { compilePolicy } from '../../src/redact/policy.js';
import { planPublication } from '../../src/redact/publish.js';
import { publishedReceiptHooks } from '../../src/redact/verify.js';
import type { Journal } from '../../src/store/index.js';
import { SAMPLE_POLICY, memoryJournal, sampleSteps } from '../redact/helpers.js';

const POLICY = compilePolicy(SAMPLE_POLICY);

async function bytesOf(plan: ReceiptPlan): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const chunk of writeReceipt(plan)) parts.push(Uint8Array.from(chunk));
  return concatBytes(parts);
}

/** The log's checkpoint of the original journal's tree and the inclusion proof of every step. */
async function logProof(j: Journal): Promise<{ member: Json; verifier: ReturnType<typeof noteVerifier> }> {
  const tree = new MemoryTree();
  const leaves: Uint8Array[] = [];
  for await (const l of j.lines()) leaves.push(stepLeafHash((JSON.parse(l.text) as { step_hash: string }).step_hash)!);
  for (const leaf of leaves) tree.append(leaf);
  const origin = journalOrigin({
    authority: 'agents.example.com',
    journalId: 'j',
    genesisHash: genesisHash(j.genesis),
  });
  const log = noteSigner(
    origin,
    Uint8Array.from({ length: 32 }, (_, i) => i + 1),
  );
  const note = signCheckpoint({ origin, size: tree.size, root: rootOfLeaves(leaves) }, log);
  const member = receiptProofMember(note, await proveInclusion(tree, 0, tree.size - 1, tree.size));
  return { member: member as unknown as Json, verifier: noteVerifier(log.name, log.publicKey) };
}

/** The published lines again, with the publication's members and a `proof` member beside them. */
async function withProof(
  j: Journal,
  lines: readonly string[],
  members: Record<string, Json>,
  proof: Json,
): Promise<Uint8Array> {
  const plan = await planReceipt({
    genesis: j.genesis,
    from: 0,
    to: lines.length - 1,
    blob: async (d) => j.blob(d),
    extra: { ...members, proof },
    lines: async function* () {
      for (let i = 0; i < lines.length; i++) yield { segment: '0000000000000000', seq: i, text: lines[i]! };
    },
  });
  return bytesOf(plan);
}

async function verify(bytes: Uint8Array, log: ReturnType<typeof noteVerifier>) {
  return verifyProvenReceipt(bytes, { policy: { log } }, publishedReceiptHooks().options);
}

describe('a proof member beside a publication (RECEIPT.md §4.5)', () => {
  test("a stepchain/v2 publication keeps its step hashes: the log's inclusion proof verifies beside it", async () => {
    const j = await memoryJournal(sampleSteps(), 1024, 'stepchain/v2');
    const pub = await planCommittedPublication(j, { policy: POLICY, salts: seededSalts('proof') });
    expect(pub.declarations.length).toBeGreaterThan(0);
    const { member, verifier } = await logProof(j);
    const bytes = await withProof(
      j,
      pub.lines,
      JSON.parse(JSON.stringify({ publication: pub.publication, redactions: pub.declarations })) as Record<
        string,
        Json
      >,
      member,
    );
    const report = await verify(bytes, verifier);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.tlog?.checkpoint?.size).toBe(pub.lines.length);
    expect(report.tlog?.pinned).toBe(true);
  });

  test("a version-2 anchor publication changed the redacted steps' hashes: the same proof is ROOT_MISMATCH, after the publication's own checks", async () => {
    const j = await memoryJournal(sampleSteps(), 1024);
    const pub = await planPublication(j, { policy: POLICY, salts: seededSalts('proof') });
    expect(pub.anchor.redacted_from).toBeLessThan(pub.lines.length);
    const { member, verifier } = await logProof(j);
    const bytes = await withProof(
      j,
      pub.lines,
      JSON.parse(
        JSON.stringify({
          anchor: pub.anchor,
          redactions: pub.redactions.map((r) => ({ path: r.path, rule: r.rule, seq: r.seq })),
        }),
      ) as Record<string, Json>,
      member,
    );
    const report = await verify(bytes, verifier);
    expect(report.problems.map((p) => p.code)).toEqual(['ROOT_MISMATCH']);
  });
});
