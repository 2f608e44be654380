/**
 * Hash disclosure (spec/REDACTION.md §8.5): opening the anchor's commitment to one original step hash —
 * the original head, for someone who holds it — revealing no value. Pure; the check never throws on
 * hostile input.
 */
import { hasExactMembers, isObject, isSeq } from '../canonical/json.js';
import { isDigest } from '../canonical/sha256.js';
import type { ByteInput } from '../receipt/verify.js';
import { saltFromHex, stepCommitment } from './commit.js';
import { assertSecrets, openingFromSecrets, type DisclosureProblemCode } from './disclose.js';
import { RedactError } from './errors.js';
import { verifyPublishedReceipt, type PublishedReport, type VerifyPublishedOptions } from './verify.js';

export const HASH_DISCLOSURE_FORMAT = 'stepchain-hash-disclosure/v1';

/** Opens the anchor's commitment to one original step hash (the original head for the last step), revealing no value. */
export interface HashDisclosureProof {
  format: typeof HASH_DISCLOSURE_FORMAT;
  manifest_digest: string;
  salt: string;
  seq: number;
  step_hash: string;
}

export interface HashDisclosureReport {
  ok: boolean;
  problems: { code: DisclosureProblemCode; message: string }[];
  seq: number | null;
  /** The original step hash the anchor commits to, only when ok. */
  step_hash: string | null;
  /** Whether the step is the original head. */
  head: boolean;
  manifest_digest: string | null;
  receipt: PublishedReport | null;
  proves: string[];
}

/** Builds the hash disclosure of step `seq` (default: the last committed step, the original head) from a secrets file. */
export function discloseHashFromSecrets(secrets: unknown, seq?: number): HashDisclosureProof {
  assertSecrets(secrets);
  if (seq !== undefined && !isSeq(seq))
    throw new RedactError('ARGUMENT_INVALID', 'a hash disclosure needs a seq (non-negative integer)');
  let at = seq ?? -1;
  if (seq === undefined) for (const o of secrets.steps) if (isObject(o) && isSeq(o.seq) && o.seq > at) at = o.seq;
  const o = at >= 0 ? openingFromSecrets(secrets, at) : null;
  if (!o) {
    throw new RedactError(
      'NOT_REDACTED',
      seq === undefined
        ? 'nothing was redacted, so the anchor commits to no step hash: the original head is the published head'
        : `the anchor commits to no hash of step ${seq}: steps before the first redaction are published with their original hashes`,
      { location: { seq: at } },
    );
  }
  return {
    format: HASH_DISCLOSURE_FORMAT,
    manifest_digest: secrets.manifest_digest,
    salt: o.salt,
    seq: at,
    step_hash: o.step_hash,
  };
}

function hashProofDefect(proof: unknown): string | null {
  if (!isObject(proof) || !hasExactMembers(proof, ['format', 'manifest_digest', 'salt', 'seq', 'step_hash'])) {
    return 'a hash disclosure has exactly the members format, manifest_digest, salt, seq and step_hash';
  }
  if (proof.format !== HASH_DISCLOSURE_FORMAT)
    return `format is ${JSON.stringify(proof.format)}, not ${JSON.stringify(HASH_DISCLOSURE_FORMAT)}`;
  if (!isDigest(proof.manifest_digest)) return 'manifest_digest must be a digest';
  if (!isSeq(proof.seq)) return 'seq must be a non-negative integer';
  if (saltFromHex(proof.salt) === null) return 'salt must be 64 lowercase hex digits (32 bytes)';
  if (!isDigest(proof.step_hash)) return 'step_hash must be a digest';
  return null;
}

/**
 * Checks a hash disclosure (spec/REDACTION.md §8.5): the receipt verifies as a published receipt, the
 * proof names its manifest, and SHA-256 over the tag, salt and step hash gives the anchor's commitment for
 * that seq. Never throws.
 */
export async function verifyHashDisclosure(
  receipt: ByteInput,
  proof: unknown,
  options: Omit<VerifyPublishedOptions, 'locate'> = {},
): Promise<HashDisclosureReport> {
  const report: HashDisclosureReport = {
    ok: false,
    problems: [],
    seq: null,
    step_hash: null,
    head: false,
    manifest_digest: null,
    receipt: null,
    proves: [],
  };
  const fail = (code: DisclosureProblemCode, message: string): HashDisclosureReport => {
    report.problems.push({ code, message });
    return report;
  };
  const defect = hashProofDefect(proof);
  if (defect) return fail('PROOF_INVALID', defect);
  const p = proof as HashDisclosureProof;
  report.seq = p.seq;
  const published = await verifyPublishedReceipt(receipt, options);
  report.receipt = published;
  report.manifest_digest = published.manifest_digest;
  if (!published.ok || !published.anchor) {
    const first = published.problems[0];
    return fail(
      'RECEIPT_INVALID',
      `the receipt does not verify as a published receipt${first ? `: ${first.code}: ${first.message}` : ''}`,
    );
  }
  if (published.manifest_digest !== p.manifest_digest)
    return fail(
      'MANIFEST_MISMATCH',
      `the proof is for the receipt with manifest ${p.manifest_digest}; this receipt's manifest is ${published.manifest_digest}`,
    );
  const a = published.anchor;
  if (p.seq >= a.length) return fail('NOT_REDACTED', `the receipt has no step ${p.seq}`);
  if (p.seq < a.redacted_from)
    return fail(
      'NOT_REDACTED',
      `the anchor commits to no hash of step ${p.seq}: steps before the first redaction (seq ${a.redacted_from}) are published with their original hashes`,
    );
  if (stepCommitment(saltFromHex(p.salt)!, p.step_hash) !== a.commitments[p.seq - a.redacted_from]) {
    return fail(
      'ANCHOR_MISMATCH',
      `SHA-256 over the salt and ${p.step_hash} is not the anchor's commitment for step ${p.seq}`,
    );
  }
  report.ok = true;
  report.step_hash = p.step_hash;
  report.head = p.seq === a.length - 1;
  report.proves = [
    `The anchor of the published receipt ${published.manifest_digest} commits to ${p.step_hash} as the original hash of step ${p.seq}${report.head ? ', the original head' : ''} (the publisher's ${published.signed_by ? `claim, signed by ${published.signed_by}` : 'unsigned claim'}): compare it with a ${report.head ? 'head' : 'step hash'} obtained independently.`,
  ];
  return report;
}
