/**
 * Proof files (spec/PROOFS.md §7.4): one canonical JSON object (JCS, then a newline) holding the signed
 * checkpoint(s) and the proof's hashes, so an auditor can check it offline against a policy of trusted
 * keys — an inclusion proof of steps from..to, or a consistency proof between two checkpoints. Every
 * byte is hostile: verification never throws; each failure is a coded problem. Pure.
 */
import { canonicalJson } from '../canonical/jcs.js';
import { isDigest } from '../canonical/sha256.js';
import { base64Decode, base64Encode } from '../receipt/base64.js';
import { verifyCheckpoint, type Checkpoint, type CheckpointPolicy, type Cosignature } from './checkpoint.js';
import { HASH_SIZE, equalBytes, stepLeafHash } from './hash.js';
import { isSize } from './math.js';
import { parseNote } from './note.js';
import { ProofError, problem, type ProofProblem } from './problems.js';
import { verifyConsistency, verifyRange } from './verify.js';
import type { TreeHead } from './witness.js';

export const PROOF_FORMAT = 'stepchain-proof/v1';
/** A proof file larger than this is refused unread (PROOFS.md §11). */
export const MAX_PROOF_BYTES = 4 * 1024 * 1024;

export interface InclusionProofDocument {
  checkpoint: string;
  format: typeof PROOF_FORMAT;
  from: number;
  hashes: string[];
  steps: string[];
  to: number;
  type: 'inclusion';
}

export interface ConsistencyProofDocument {
  checkpoint: string;
  format: typeof PROOF_FORMAT;
  hashes: string[];
  old_checkpoint: string;
  type: 'consistency';
}

export type ProofDocument = InclusionProofDocument | ConsistencyProofDocument;

const MEMBERS = {
  inclusion: ['checkpoint', 'format', 'from', 'hashes', 'steps', 'to', 'type'],
  consistency: ['checkpoint', 'format', 'hashes', 'old_checkpoint', 'type'],
} as const;

function checkNote(note: unknown, what: string): void {
  if (typeof note !== 'string' || !parseNote(note).ok)
    throw new ProofError('ARGUMENT_INVALID', `${what} is not a signed note`);
}

function encodeHashes(proof: readonly Uint8Array[]): string[] {
  return proof.map((h, i) => {
    if (!(h instanceof Uint8Array) || h.length !== HASH_SIZE)
      throw new ProofError('ARGUMENT_INVALID', `proof hash ${i} is not 32 bytes`);
    return base64Encode(h);
  });
}

/** The inclusion proof file of steps from..to (their step hashes, in order) against a signed checkpoint. */
export function inclusionProofDocument(a: {
  checkpoint: string;
  from: number;
  to: number;
  steps: readonly string[];
  proof: readonly Uint8Array[];
}): InclusionProofDocument {
  checkNote(a.checkpoint, 'the checkpoint');
  if (!isSize(a.from) || !isSize(a.to) || a.from > a.to)
    throw new ProofError('ARGUMENT_INVALID', 'from and to are leaf indices with from ≤ to');
  if (!Array.isArray(a.steps) || a.steps.length !== a.to - a.from + 1 || !a.steps.every(isDigest))
    throw new ProofError(
      'ARGUMENT_INVALID',
      `steps are the ${a.to - a.from + 1} step hashes of steps ${a.from}..${a.to}`,
    );
  return {
    checkpoint: a.checkpoint,
    format: PROOF_FORMAT,
    from: a.from,
    hashes: encodeHashes(a.proof),
    steps: [...a.steps],
    to: a.to,
    type: 'inclusion',
  };
}

/** The consistency proof file from `oldCheckpoint` to `checkpoint` (both signed notes). */
export function consistencyProofDocument(a: {
  oldCheckpoint: string;
  checkpoint: string;
  proof: readonly Uint8Array[];
}): ConsistencyProofDocument {
  checkNote(a.oldCheckpoint, 'the old checkpoint');
  checkNote(a.checkpoint, 'the checkpoint');
  return {
    checkpoint: a.checkpoint,
    format: PROOF_FORMAT,
    hashes: encodeHashes(a.proof),
    old_checkpoint: a.oldCheckpoint,
    type: 'consistency',
  };
}

/** The file's bytes as text: JCS of the document and a newline. */
export function serializeProofDocument(doc: ProofDocument): string {
  return canonicalJson(doc) + '\n';
}

export interface ProofReport {
  ok: boolean;
  type: 'inclusion' | 'consistency' | null;
  /** The checkpoint the proof is against (parsed, even when a signature failed). */
  checkpoint: Checkpoint | null;
  /** For a consistency proof: the older checkpoint. */
  old_checkpoint: Checkpoint | null;
  /** For an inclusion proof: the steps it proves, from..to. */
  from: number | null;
  to: number | null;
  steps: string[] | null;
  /** The policy witnesses that cosigned the checkpoint. */
  cosignatures: Cosignature[];
  problems: ProofProblem[];
}

export interface VerifyProofOptions {
  /**
   * For a consistency proof: the old checkpoint the auditor already trusts (for example from an earlier
   * verification). The file's old checkpoint must be this one.
   */
  trusted?: TreeHead;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type Parsed = { ok: true; doc: ProofDocument } | { ok: false; problem: ProofProblem };

/** Parses a proof file: canonical JSON of exactly the members of its type, then at most one newline. */
export function parseProofDocument(input: string | Uint8Array): Parsed {
  const bad = (why: string, code: ProofProblem['code'] = 'PROOF_MALFORMED'): Parsed => ({
    ok: false,
    problem: problem(code, `the proof file ${why}`),
  });
  let text: string;
  if (input instanceof Uint8Array) {
    if (input.length > MAX_PROOF_BYTES) return bad(`is larger than ${MAX_PROOF_BYTES} bytes`, 'LIMIT_EXCEEDED');
    try {
      text = utf8.decode(input);
    } catch {
      return bad('is not UTF-8');
    }
  } else if (typeof input === 'string') {
    if (input.length > MAX_PROOF_BYTES) return bad(`is larger than ${MAX_PROOF_BYTES} bytes`, 'LIMIT_EXCEEDED');
    text = input;
  } else {
    return bad('is neither text nor bytes');
  }
  if (text.endsWith('\n')) text = text.slice(0, -1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad('is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('is not a JSON object');
  const v = value as Record<string, unknown>;
  if (v.format !== PROOF_FORMAT) return bad(`format is not "${PROOF_FORMAT}"`);
  if (v.type !== 'inclusion' && v.type !== 'consistency') return bad('type is neither "inclusion" nor "consistency"');
  const want = MEMBERS[v.type];
  const keys = Object.keys(v).sort();
  if (keys.length !== want.length || keys.some((k, i) => k !== want[i]))
    return bad(`must have exactly the members ${want.join(', ')}`);
  let canonical: string | null = null;
  try {
    canonical = canonicalJson(v);
  } catch {
    canonical = null;
  }
  if (canonical !== text) return bad('is not in canonical form (RFC 8785), or is not I-JSON');
  if (typeof v.checkpoint !== 'string') return bad('checkpoint is not a string');
  if (!Array.isArray(v.hashes) || !v.hashes.every((h) => typeof h === 'string'))
    return bad('hashes is not a list of strings');
  if (v.type === 'consistency') {
    if (typeof v.old_checkpoint !== 'string') return bad('old_checkpoint is not a string');
  } else {
    if (!isSize(v.from) || !isSize(v.to)) return bad('from and to are not integers from 0 to 2^53 − 1');
    if (!Array.isArray(v.steps) || !v.steps.every((s) => typeof s === 'string'))
      return bad('steps is not a list of strings');
  }
  return { ok: true, doc: v as unknown as ProofDocument };
}

function decodeHashes(hashes: readonly string[]): Uint8Array[] | string {
  const out: Uint8Array[] = [];
  for (const [i, h] of hashes.entries()) {
    const bytes = base64Decode(h);
    if (bytes?.length !== HASH_SIZE) return `hash ${i} is not the base64 of 32 bytes`;
    out.push(bytes);
  }
  return out;
}

/**
 * Verifies a proof file against a policy (PROOFS.md §9.6): the checkpoint passes the policy (the old
 * checkpoint of a consistency proof needs the log's signature only), then the proof's hashes take the
 * steps (or the old root) to the checkpoint's root. Never throws.
 */
export function verifyProofDocument(
  input: string | Uint8Array,
  policy: CheckpointPolicy,
  options: VerifyProofOptions = {},
): ProofReport {
  const report: ProofReport = {
    ok: false,
    type: null,
    checkpoint: null,
    old_checkpoint: null,
    from: null,
    to: null,
    steps: null,
    cosignatures: [],
    problems: [],
  };
  const finish = (p?: ProofProblem): ProofReport => {
    if (p) report.problems.push(p);
    report.ok = report.problems.length === 0;
    return report;
  };
  try {
    const parsed = parseProofDocument(input);
    if (!parsed.ok) return finish(parsed.problem);
    const doc = parsed.doc;
    report.type = doc.type;
    const cp = verifyCheckpoint(doc.checkpoint, policy);
    report.checkpoint = cp.checkpoint;
    report.cosignatures = cp.cosignatures;
    report.problems.push(...cp.problems);
    if (!cp.checkpoint) return finish();
    const proof = decodeHashes(doc.hashes);
    if (typeof proof === 'string') return finish(problem('PROOF_MALFORMED', `the proof file's ${proof}`));
    if (doc.type === 'inclusion') {
      report.from = doc.from;
      report.to = doc.to;
      report.steps = doc.steps;
      if (doc.steps.length !== doc.to - doc.from + 1 && doc.from <= doc.to)
        return finish(
          problem(
            'PROOF_MALFORMED',
            `steps must hold the ${doc.to - doc.from + 1} step hashes of steps ${doc.from}..${doc.to}`,
          ),
        );
      const leaves: Uint8Array[] = [];
      for (const [i, s] of doc.steps.entries()) {
        const leaf = stepLeafHash(s);
        if (!leaf) return finish(problem('PROOF_MALFORMED', `step hash ${i} is not a digest`));
        leaves.push(leaf);
      }
      const v = verifyRange({
        from: doc.from,
        to: doc.to,
        size: cp.checkpoint.size,
        leaves,
        proof,
        root: cp.checkpoint.root,
      });
      return finish(v.ok ? undefined : v.problem);
    }
    const old = verifyCheckpoint(doc.old_checkpoint, { log: policy.log });
    report.old_checkpoint = old.checkpoint;
    for (const p of old.problems)
      report.problems.push({ code: p.code, message: p.message.replace(': ', ': (old checkpoint) ') });
    if (!old.checkpoint) return finish();
    const trusted = options.trusted;
    if (trusted) {
      if (trusted.origin !== old.checkpoint.origin)
        report.problems.push(
          problem(
            'ORIGIN_MISMATCH',
            `the trusted checkpoint is for "${trusted.origin.slice(0, 300)}", the proof's old checkpoint for "${old.checkpoint.origin.slice(0, 300)}"`,
          ),
        );
      else if (trusted.size !== old.checkpoint.size)
        report.problems.push(
          problem(
            'OLD_SIZE_MISMATCH',
            `the proof starts at size ${old.checkpoint.size}, the trusted checkpoint has size ${trusted.size}`,
          ),
        );
      else if (!(trusted.root instanceof Uint8Array) || !equalBytes(trusted.root, old.checkpoint.root))
        report.problems.push(
          problem(
            'INCONSISTENT',
            `the trusted checkpoint and the proof's old checkpoint have different roots for size ${trusted.size}: the log forked`,
          ),
        );
    }
    const v = verifyConsistency({
      oldSize: old.checkpoint.size,
      oldRoot: old.checkpoint.root,
      size: cp.checkpoint.size,
      root: cp.checkpoint.root,
      proof,
    });
    return finish(v.ok ? undefined : v.problem);
  } catch (cause) {
    // Unreachable by design; kept so a bug surfaces as a report rather than an exception in a verifier.
    return finish(
      problem(
        'PROOF_MALFORMED',
        `the proof file could not be checked (${cause instanceof Error ? cause.message : String(cause)})`,
      ),
    );
  }
}
