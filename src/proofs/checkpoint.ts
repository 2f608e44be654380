/**
 * C2SP checkpoints (c2sp.org/tlog-checkpoint) and witness cosignatures (c2sp.org/tlog-cosignature,
 * cosignature/v1), and the verification policy "signed by the log key and cosigned by at least k of
 * these witnesses" (spec/PROOFS.md §8.2–§8.4, §9.4). Verification never throws on the note. Pure.
 */
import { base64Decode, base64Encode } from '../receipt/base64.js';
import { EMPTY_ROOT, HASH_SIZE, equalBytes } from './hash.js';
import { MAX_TREE_SIZE, isSize } from './math.js';
import {
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  cosignatureTime,
  noteTextDefect,
  parseNote,
  signNote,
  signatureLine,
  type NoteSigner,
  type NoteVerifier,
} from './note.js';
import { ProofError, problem, type ProofProblem } from './problems.js';

export interface Checkpoint {
  /** The log's identity; for a stepchain journal, the form of PROOFS.md §8.5. */
  origin: string;
  /** The number of leaves. */
  size: number;
  /** The RFC 6962 root hash of the first `size` leaves. */
  root: Uint8Array;
  /** Extension lines (opaque, non-empty; C2SP does not recommend them and stepchain writes none). */
  extensions: string[];
}

export type CheckpointParse = { ok: true; checkpoint: Checkpoint } | { ok: false; problem: ProofProblem };

const SIZE_RE = /^(0|[1-9][0-9]*)$/;
const encoder = new TextEncoder();

/** The checkpoint a note text holds: origin, size, base64 root, then optional extension lines. */
export function parseCheckpoint(text: string): CheckpointParse {
  const bad = (why: string, code: ProofProblem['code'] = 'CHECKPOINT_MALFORMED'): CheckpointParse => ({
    ok: false,
    problem: problem(code, `the checkpoint ${why}`),
  });
  if (typeof text !== 'string') return bad('is not text');
  const defect = noteTextDefect(text);
  if (defect) return bad(defect);
  const lines = text.slice(0, -1).split('\n');
  if (lines.length < 3) return bad('has fewer than three lines (origin, tree size, root hash)');
  const empty = lines.findIndex((l) => l === '');
  if (empty >= 0) return bad(`line ${empty + 1} is empty`);
  const [origin, sizeText, rootText] = lines as [string, string, string];
  if (!SIZE_RE.test(sizeText))
    return bad(`tree size "${sizeText.slice(0, 40)}" is not a decimal number without leading zeros`);
  const size = Number(sizeText);
  if (!isSize(size) || sizeText.length > 16)
    return bad(`tree size ${sizeText.slice(0, 40)} is larger than ${MAX_TREE_SIZE}`, 'LIMIT_EXCEEDED');
  const root = base64Decode(rootText);
  if (root?.length !== HASH_SIZE) return bad('root hash is not the base64 of 32 bytes');
  if (size === 0 && !equalBytes(root, EMPTY_ROOT))
    return bad('has size 0 but its root is not the hash of the empty string');
  return { ok: true, checkpoint: { origin, size, root, extensions: lines.slice(3) } };
}

/** The note text of a checkpoint. Throws ProofError NOTE_INVALID for a checkpoint that would not parse back. */
export function formatCheckpoint(cp: {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions?: readonly string[];
}): string {
  const root = cp.root instanceof Uint8Array ? cp.root : new Uint8Array(0);
  const text = `${cp.origin}\n${cp.size}\n${base64Encode(root)}\n${(cp.extensions ?? []).map((e) => e + '\n').join('')}`;
  const parsed = parseCheckpoint(text);
  if (
    !parsed.ok ||
    parsed.checkpoint.origin !== cp.origin ||
    parsed.checkpoint.extensions.length !== (cp.extensions ?? []).length
  ) {
    throw new ProofError(
      'NOTE_INVALID',
      parsed.ok ? 'an origin or extension line holds a newline' : parsed.problem.message,
    );
  }
  return text;
}

/** A checkpoint signed by the log: the key's name must be the origin (C2SP tlog-policy). */
export function signCheckpoint(cp: { origin: string; size: number; root: Uint8Array }, log: NoteSigner): string {
  if (log.type !== SIG_ED25519)
    throw new ProofError('KEY_INVALID', 'a log signs checkpoints with an Ed25519 (type 0x01) key');
  if (log.name !== cp.origin)
    throw new ProofError('KEY_INVALID', `the log key is named "${log.name}", not the origin "${cp.origin}"`);
  return signNote(formatCheckpoint(cp), [log]);
}

/**
 * A witness's cosignature line over a signed checkpoint (what tlog-witness's add-checkpoint returns).
 * The caller checks the checkpoint (verifyCheckpoint, checkWitnessUpdate) first; this only signs.
 */
export function cosignCheckpoint(note: string, witness: NoteSigner): string {
  if (witness.type !== SIG_COSIGNATURE_V1)
    throw new ProofError('KEY_INVALID', 'a witness cosigns with a cosignature/v1 (type 0x04) key');
  const parsed = parseNote(note);
  if (!parsed.ok) throw new ProofError('NOTE_INVALID', parsed.problem.message);
  const cp = parseCheckpoint(parsed.note.text);
  if (!cp.ok) throw new ProofError('NOTE_INVALID', cp.problem.message);
  return signatureLine({
    name: witness.name,
    keyId: witness.keyId,
    signature: witness.sign(encoder.encode(parsed.note.text)),
  });
}

/** The note with more signature lines (cosignatures) appended. Throws ProofError NOTE_INVALID if the result does not parse. */
export function addSignatures(note: string, lines: string): string {
  const out = note + lines;
  const parsed = parseNote(out);
  if (!parsed.ok) throw new ProofError('NOTE_INVALID', parsed.problem.message);
  return out;
}

/** Who must have signed a checkpoint (PROOFS.md §8.4). */
export interface CheckpointPolicy {
  /** The log's Ed25519 key (type 0x01). Its name is the origin the checkpoint must carry. */
  log: NoteVerifier;
  /** Witness keys (type 0x04, cosignature/v1). */
  witnesses?: readonly NoteVerifier[];
  /** How many distinct witnesses must have cosigned: an integer from 0 to the witnesses (absent: 0); anything else is POLICY_INVALID. */
  quorum?: number;
}

export interface Cosignature {
  name: string;
  keyId: number;
  /** POSIX seconds at which the witness cosigned. */
  timestamp: number;
}

export interface CheckpointReport {
  ok: boolean;
  checkpoint: Checkpoint | null;
  /** The policy witnesses whose cosignature verified, each once, in the note's order. */
  cosignatures: Cosignature[];
  problems: ProofProblem[];
}

/** Why a policy cannot be used, or null. */
export function policyDefect(policy: CheckpointPolicy): string | null {
  if (typeof policy !== 'object' || policy === null) return 'the policy is not an object';
  const isKey = (k: NoteVerifier | undefined): k is NoteVerifier =>
    typeof k === 'object' &&
    k !== null &&
    typeof k.name === 'string' &&
    typeof k.verify === 'function' &&
    k.publicKey instanceof Uint8Array;
  const log = policy.log;
  if (!isKey(log) || log.type !== SIG_ED25519) return 'the policy has no Ed25519 (type 0x01) log key';
  const witnesses = policy.witnesses ?? [];
  if (!Array.isArray(witnesses)) return 'witnesses is not a list';
  for (const w of witnesses as (NoteVerifier | undefined)[])
    if (!isKey(w) || w.type !== SIG_COSIGNATURE_V1)
      return `witness ${String(w?.name)} is not a cosignature/v1 (type 0x04) key`;
  const keys = [log, ...(witnesses as NoteVerifier[])].map((k) => Array.from(k.publicKey).join(','));
  if (new Set(keys).size !== keys.length)
    return 'the same public key appears twice (a witness must be independent of the log and of the other witnesses)';
  // Only an absent quorum defaults (to 0); null, a string ("", "1") or a fraction is a defect, never 0.
  const quorum: unknown = policy.quorum === undefined ? 0 : policy.quorum;
  if (typeof quorum !== 'number' || !Number.isSafeInteger(quorum) || quorum < 0 || quorum > witnesses.length)
    return `the quorum ${String(quorum)} is not a number from 0 to the ${witnesses.length} witnesses`;
  return null;
}

/**
 * Verifies a signed checkpoint against a policy (PROOFS.md §9.4): the note and checkpoint parse, the
 * origin is the log key's name, the log's signature verifies, every cosignature line of a policy
 * witness verifies, and at least `quorum` distinct witnesses cosigned. Never throws.
 */
export function verifyCheckpoint(note: string | Uint8Array, policy: CheckpointPolicy): CheckpointReport {
  const report: CheckpointReport = { ok: false, checkpoint: null, cosignatures: [], problems: [] };
  const stop = (p: ProofProblem): CheckpointReport => {
    report.problems.push(p);
    return report;
  };
  const defect = policyDefect(policy);
  if (defect) return stop(problem('POLICY_INVALID', defect));
  const parsed = parseNote(note);
  if (!parsed.ok) return stop(parsed.problem);
  const cp = parseCheckpoint(parsed.note.text);
  if (!cp.ok) return stop(cp.problem);
  report.checkpoint = cp.checkpoint;
  if (cp.checkpoint.origin !== policy.log.name)
    return stop(
      problem(
        'ORIGIN_MISMATCH',
        `the checkpoint is for origin "${cp.checkpoint.origin.slice(0, 300)}", not "${policy.log.name}"`,
      ),
    );
  const text = encoder.encode(parsed.note.text);
  const witnesses = policy.witnesses ?? [];
  let logSigned = false;
  for (const sig of parsed.note.signatures) {
    const id = sig.keyId.toString(16).padStart(8, '0');
    if (sig.name === policy.log.name && sig.keyId === policy.log.keyId) {
      if (policy.log.verify(text, sig.signature)) logSigned = true;
      else
        report.problems.push(
          problem('SIGNATURE_INVALID', `the log signature of ${sig.name} (key id ${id}) does not verify`),
        );
      continue;
    }
    const w = witnesses.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (!w) continue; // unknown keys are ignored (signed-note)
    if (!w.verify(text, sig.signature)) {
      report.problems.push(
        problem('COSIGNATURE_INVALID', `the cosignature of witness ${sig.name} (key id ${id}) does not verify`),
      );
    } else if (!report.cosignatures.some((c) => c.name === w.name && c.keyId === w.keyId)) {
      report.cosignatures.push({ name: w.name, keyId: w.keyId, timestamp: cosignatureTime(sig.signature)! });
    }
  }
  if (!logSigned && !report.problems.some((p) => p.code === 'SIGNATURE_INVALID'))
    report.problems.push(problem('SIGNATURE_MISSING', `no signature line of the log key ${policy.log.name}`));
  const quorum = policy.quorum ?? 0;
  if (report.cosignatures.length < quorum)
    report.problems.push(
      problem('QUORUM_NOT_MET', `${report.cosignatures.length} of the required ${quorum} witnesses cosigned`),
    );
  report.ok = report.problems.length === 0;
  return report;
}
