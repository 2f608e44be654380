/**
 * The auditor's pins, checked before anything is verified, with the CLI's rules (src/cli/verbs/receipt.ts,
 * spec/RECEIPT.md §5.2): a public key file must decode to a usable Ed25519 key and a pinned head must be a
 * digest; a pin that is given but cannot be used stops the verification with an error on its field — it
 * never falls back to "no pin". Pure.
 */
import { parseTsaCertificate } from '../attest/index.js';
import {
  parseCheckpoint,
  parseNote,
  parseVerifierKey,
  policyDefect,
  verifyCheckpoint,
  type NoteVerifier,
} from '../proofs/index.js';
import { decodePublicKey } from '../receipt/keys.js';

/** The most bytes a public key file may hold (as the CLI's readPublicKeyFile). */
export const MAX_KEY_FILE_BYTES = 64 * 1024;
const HEAD_RE = /^sha256:[0-9a-f]{64}$/;

export interface PinInput {
  /** The key file: its name, size, and its first bytes (at most MAX_KEY_FILE_BYTES + 1 are read). */
  key: { name: string; size: number; bytes: Uint8Array } | null;
  /** The pinned head field as typed: empty means no pin; anything else, surrounding whitespace aside, must be a digest. */
  head: string;
  /** An earlier checkpoint (a signed note file, spec/PROOFS.md §8.2) the receipt must extend, or null. */
  checkpoint?: { name: string; text: string } | null;
  /** The log's verifier key (vkey) as typed: empty means none; the receipt's checkpoint and the earlier one must be signed by it. */
  logKey?: string;
  /** Witness verifier keys as typed, one a line (as `--witness`, repeated): empty means none. */
  witnesses?: string;
  /** How many of the witnesses must have cosigned, as typed (`--quorum`): empty means all of them. */
  quorum?: string;
  /** A consistency proof file (`--proof` with a partial receipt and an earlier checkpoint), its first bytes. */
  consistency?: { name: string; bytes: Uint8Array } | null;
  /** TSA certificate files (PEM or DER), as `--tsa-cert` (spec/TIME.md): each must be a time-stamping authority's. */
  tsaCerts?: { name: string; bytes: Uint8Array }[];
  /** Co-signers' public key files, as `--cosigner`, and the threshold as typed (`--threshold`; empty: all of them). */
  cosigners?: { name: string; bytes: Uint8Array }[];
  threshold?: string;
  /** Approvers' public key files, as `--approver` (spec/APPROVALS.md §5): each named by its file name, as the CLI names it. */
  approvers?: { name: string; bytes: Uint8Array }[];
}

export interface PinError {
  field:
    | 'key'
    | 'head'
    | 'checkpoint'
    | 'logkey'
    | 'witnesses'
    | 'quorum'
    | 'tsacert'
    | 'cosigners'
    | 'threshold'
    | 'approvers';
  message: string;
}

/** The checkpoint pins travel to the worker as text (a verifier key holds functions, which do not cross). */
export type Pins =
  | {
      ok: true;
      publicKey?: Uint8Array;
      expectHead?: string;
      logKey?: string;
      witnesses?: string[];
      quorum?: number;
      checkpoint?: string;
      consistency?: Uint8Array;
      tsaCerts?: Uint8Array[];
      cosigners?: { name: string; key: Uint8Array }[];
      threshold?: number;
      approvers?: { name: string; key: Uint8Array }[];
    }
  | { ok: false; errors: PinError[] };

export function readPins(input: PinInput): Pins {
  const errors: PinError[] = [];
  let publicKey: Uint8Array | undefined;
  let expectHead: string | undefined;
  if (input.key) {
    const { name, size, bytes } = input.key;
    if (size > MAX_KEY_FILE_BYTES || bytes.length > MAX_KEY_FILE_BYTES)
      errors.push({
        field: 'key',
        message: `public key file ${name}: is ${Math.max(size, bytes.length)} bytes; a public key file is at most ${MAX_KEY_FILE_BYTES}`,
      });
    else {
      const key = decodePublicKey(bytes);
      if (key.ok) publicKey = key.key;
      else
        errors.push({
          field: 'key',
          message: `public key file ${name}: ${key.reason.replace(/^the pinned key /, '')}`,
        });
    }
  }
  if (input.head !== '') {
    // A field holding only spaces is a pin that cannot be used, not "no pin".
    const head = input.head.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
    if (HEAD_RE.test(head)) expectHead = head;
    else
      errors.push({ field: 'head', message: 'the pinned head must be "sha256:" followed by 64 lowercase hex digits' });
  }
  const { logKey, witnesses, quorum, checkpoint } = readCheckpointPins(input, errors);
  const attest = readAttestPins(input, errors);
  const approvers = readApproverPins(input, errors);
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    ...(publicKey ? { publicKey } : {}),
    ...(expectHead ? { expectHead } : {}),
    ...(logKey ? { logKey } : {}),
    ...(witnesses && witnesses.length > 0 ? { witnesses, quorum: quorum! } : {}),
    ...(checkpoint ? { checkpoint } : {}),
    ...(input.consistency ? { consistency: input.consistency.bytes } : {}),
    ...attest,
    ...(approvers.length ? { approvers } : {}),
  };
}

/**
 * The approvers' keys with the CLI's rules (src/cli/verbs/approve-lines.ts, `--approver`): each must decode to a
 * usable Ed25519 key, the same key twice is refused, and each is named by its file name less `.pub` and `.key`.
 */
function readApproverPins(input: PinInput, errors: PinError[]): { name: string; key: Uint8Array }[] {
  const out: { name: string; key: Uint8Array }[] = [];
  const seen = new Set<string>();
  for (const f of input.approvers ?? []) {
    const key =
      f.bytes.length > MAX_KEY_FILE_BYTES
        ? { ok: false as const, reason: `is over ${MAX_KEY_FILE_BYTES} bytes` }
        : decodePublicKey(f.bytes);
    if (!key.ok)
      errors.push({
        field: 'approvers',
        message: `approver key ${f.name}: ${key.reason.replace(/^the pinned key /, '')}`,
      });
    else if (seen.has(key.key.join(',')))
      errors.push({ field: 'approvers', message: `approver key ${f.name}: the same key is given twice` });
    else {
      seen.add(key.key.join(','));
      out.push({ name: f.name.replace(/\.pub$/, '').replace(/\.key$/, ''), key: key.key });
    }
  }
  return out;
}

/** TSA certificates, co-signer keys and the threshold, with the CLI's rules (src/cli/verbs/verify.ts, spec/TIME.md). */
function readAttestPins(
  input: PinInput,
  errors: PinError[],
): { tsaCerts?: Uint8Array[]; cosigners?: { name: string; key: Uint8Array }[]; threshold?: number } {
  const tsaCerts: Uint8Array[] = [];
  for (const c of input.tsaCerts ?? []) {
    const parsed =
      c.bytes.length > MAX_KEY_FILE_BYTES * 16
        ? { ok: false as const, reason: 'is too large for a certificate' }
        : parseTsaCertificate(c.bytes);
    if (parsed.ok) tsaCerts.push(c.bytes);
    else errors.push({ field: 'tsacert', message: `TSA certificate ${c.name}: ${parsed.reason}` });
  }
  const cosigners: { name: string; key: Uint8Array }[] = [];
  const seen = new Set<string>();
  for (const c of input.cosigners ?? []) {
    const key =
      c.bytes.length > MAX_KEY_FILE_BYTES
        ? { ok: false as const, reason: `is over ${MAX_KEY_FILE_BYTES} bytes` }
        : decodePublicKey(c.bytes);
    if (!key.ok)
      errors.push({
        field: 'cosigners',
        message: `co-signer key ${c.name}: ${key.reason.replace(/^the pinned key /, '')}`,
      });
    else if (seen.has(key.key.join(',')))
      errors.push({
        field: 'cosigners',
        message: `co-signer key ${c.name}: the same key is given twice; each co-signer counts once`,
      });
    else {
      seen.add(key.key.join(','));
      cosigners.push({ name: c.name, key: key.key });
    }
  }
  const text = input.threshold ?? '';
  let threshold: number | undefined;
  if (text !== '') {
    threshold = /^[1-9][0-9]{0,8}$/.test(text) ? Number(text) : NaN;
    if (!(threshold >= 1 && threshold <= cosigners.length))
      errors.push({
        field: 'threshold',
        message: `the threshold must be a whole number from 1 to the ${cosigners.length} co-signer keys (or left empty for all of them)`,
      });
  }
  return {
    ...(tsaCerts.length ? { tsaCerts } : {}),
    ...(cosigners.length ? { cosigners } : {}),
    ...(threshold !== undefined ? { threshold } : {}),
  };
}

const trim = (s: string): string => s.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');

/**
 * The log key, the witnesses and quorum, and the earlier checkpoint, with the CLI's rules (src/cli/policy.ts:
 * --log-key, --witness, --quorum, --checkpoint): a pin that cannot be used is an error, witnesses need a log
 * key, and the earlier checkpoint must satisfy the whole policy, witnesses too.
 */
function readCheckpointPins(
  input: PinInput,
  errors: PinError[],
): { logKey?: string; witnesses?: string[]; quorum?: number; checkpoint?: string } {
  const logKey = trim(input.logKey ?? '');
  let log: NoteVerifier | null = null;
  if ((input.logKey ?? '') !== '') {
    try {
      log = parseVerifierKey(logKey);
    } catch (e) {
      errors.push({
        field: 'logkey',
        message: `the log key: ${e instanceof Error ? e.message.replace(/^KEY_INVALID: /, '') : String(e)}`,
      });
    }
  }
  const witnessLines = (input.witnesses ?? '')
    .split('\n')
    .map(trim)
    .filter((l) => l !== '');
  // The quorum as typed, not trimmed: an empty field is the CLI without --quorum (every witness); anything
  // else is read as the CLI reads --quorum (spec/PROOFS.md §8.4), so " " or "01" is an error, never 0.
  const quorumText = input.quorum ?? '';
  if ((input.logKey ?? '') === '' && (witnessLines.length > 0 || quorumText !== '')) {
    errors.push({
      field: witnessLines.length > 0 ? 'witnesses' : 'quorum',
      message: 'witness keys and a quorum need the log key',
    });
    return {};
  }
  const witnesses: NoteVerifier[] = [];
  for (const [i, w] of witnessLines.entries()) {
    try {
      witnesses.push(parseVerifierKey(w));
    } catch (e) {
      errors.push({
        field: 'witnesses',
        message: `witness key ${i + 1}: ${e instanceof Error ? e.message.replace(/^KEY_INVALID: /, '') : String(e)}`,
      });
    }
  }
  const quorum =
    quorumText === '' ? witnessLines.length : /^(0|[1-9][0-9]{0,8})$/.test(quorumText) ? Number(quorumText) : NaN;
  if (!Number.isSafeInteger(quorum) || quorum > witnessLines.length) {
    errors.push({
      field: 'quorum',
      message: `the quorum must be a whole number from 0 to the ${witnessLines.length} witness keys, written without sign, spaces or leading zeros (or left empty for all of them)`,
    });
  }
  const policy = log && errors.length === 0 ? { log, witnesses, quorum } : null;
  const defect = policy ? policyDefect(policy) : null;
  if (defect) errors.push({ field: 'witnesses', message: `the policy cannot be used: ${defect}` });
  const cp = input.checkpoint;
  const pins = {
    ...(log ? { logKey } : {}),
    ...(log && witnessLines.length > 0 ? { witnesses: witnessLines, quorum } : {}),
  };
  if (!cp) return pins;
  if (policy && !defect) {
    const v = verifyCheckpoint(cp.text, policy);
    if (!v.ok)
      errors.push({
        field: 'checkpoint',
        message: `earlier checkpoint ${cp.name}: ${v.problems.map((p) => p.message).join('; ')}`,
      });
  } else if (!log) {
    const note = parseNote(cp.text);
    const parsed = note.ok ? parseCheckpoint(note.note.text) : null;
    if (!parsed?.ok)
      errors.push({
        field: 'checkpoint',
        message: `earlier checkpoint ${cp.name}: ${note.ok ? (parsed as { problem: { message: string } }).problem.message : note.problem.message}`,
      });
  }
  return { ...pins, checkpoint: cp.text };
}
