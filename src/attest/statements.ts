/**
 * The exact bytes that a time-stamping authority stamps and that co-signers sign (spec/TIME.md §3, §5):
 * the timestamp subject (a head of a journal) and the co-signature statement (a range of steps), both the
 * JCS of a small object whose `type` names what it is, so a signature over one can never be read as the
 * other. The co-signature envelope is DSSE v1 with one or more signatures over one payload (signing and
 * checking them: sign.ts, which alone loads Ed25519). Pure.
 */
import { canonicalBytes, canonicalJson } from '../canonical/jcs.js';
import { isDigest } from '../canonical/sha256.js';
import { base64Decode } from '../receipt/base64.js';

import { COSIGN_PAYLOAD_TYPE, COSIGN_STATEMENT_TYPE, TIMESTAMP_SUBJECT_TYPE } from './names.js';

export { COSIGN_PAYLOAD_TYPE, COSIGN_STATEMENT_TYPE, TIMESTAMP_SUBJECT_TYPE };

/** The largest seq (FORMAT.md: integers up to 2^53 − 1). */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** What a TSA stamps: SHA-256 of these bytes is the token's message imprint (spec/TIME.md §3). */
export function timestampSubject(genesisHash: string, seq: number, stepHash: string): Uint8Array {
  return canonicalBytes({ genesis_hash: genesisHash, seq, step_hash: stepHash, type: TIMESTAMP_SUBJECT_TYPE });
}

/** A co-signed range: steps from..to of the journal whose genesis hash is given (spec/TIME.md §5.1). */
export interface CosignStatement {
  from: number;
  genesis_hash: string;
  /** The prev_hash of step `from`: the genesis hash when from is 0. */
  prev_hash: string;
  /** The step_hash of step `to`. */
  step_hash: string;
  to: number;
  type: typeof COSIGN_STATEMENT_TYPE;
}

export interface CosignEnvelope {
  payload: string;
  payloadType: typeof COSIGN_PAYLOAD_TYPE;
  signatures: { keyid: string; sig: string }[];
}

export function statementBytes(s: Omit<CosignStatement, 'type'>): Uint8Array {
  return canonicalBytes({ ...s, type: COSIGN_STATEMENT_TYPE });
}

const isSeq = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_SEQ;

/** The statement an envelope's payload holds, or why it holds none (spec/TIME.md §5.1, §7.2 steps 1–2). */
export function parseStatement(
  envelope: CosignEnvelope,
): { ok: true; statement: CosignStatement } | { ok: false; reason: string } {
  const payload = base64Decode(envelope.payload);
  if (payload === null) return { ok: false, reason: 'payload is not canonical base64' };
  let value: unknown;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(payload);
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'payload is not UTF-8 JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, reason: 'payload is not a JSON object' };
  const s = value as Record<string, unknown>;
  const keys = Object.keys(s).sort().join(',');
  if (keys !== 'from,genesis_hash,prev_hash,step_hash,to,type')
    return {
      ok: false,
      reason: 'the statement must have exactly the members from, genesis_hash, prev_hash, step_hash, to and type',
    };
  if (s.type !== COSIGN_STATEMENT_TYPE)
    return { ok: false, reason: `the statement's type is not ${COSIGN_STATEMENT_TYPE}` };
  if (!isSeq(s.from) || !isSeq(s.to) || s.from > s.to)
    return { ok: false, reason: 'from and to must be seqs with from ≤ to' };
  if (!isDigest(s.genesis_hash) || !isDigest(s.prev_hash) || !isDigest(s.step_hash))
    return { ok: false, reason: 'genesis_hash, prev_hash and step_hash must be "sha256:" and 64 lowercase hex digits' };
  if (canonicalJson(s) !== text)
    return { ok: false, reason: 'the payload is not the canonical JSON (RFC 8785) of the statement' };
  return { ok: true, statement: s as unknown as CosignStatement };
}

/** Why a value is not a co-signature envelope, or null (spec/TIME.md §5.2). */
export function envelopeDefect(v: unknown): string | null {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not an object';
  const e = v as Record<string, unknown>;
  if (Object.keys(e).sort().join(',') !== 'payload,payloadType,signatures')
    return 'must have exactly the members payload, payloadType and signatures';
  if (e.payloadType !== COSIGN_PAYLOAD_TYPE) return `payloadType must be ${COSIGN_PAYLOAD_TYPE}`;
  if (typeof e.payload !== 'string' || e.payload.length > 4096)
    return 'payload must be a string of at most 4096 characters';
  if (!Array.isArray(e.signatures) || e.signatures.length < 1 || e.signatures.length > 64)
    return 'signatures must be a list of 1 to 64 signatures';
  const seen = new Set<string>();
  for (const [i, s] of (e.signatures as unknown[]).entries()) {
    if (typeof s !== 'object' || s === null || Object.keys(s).sort().join(',') !== 'keyid,sig')
      return `signatures[${i}] must have exactly the members keyid and sig`;
    const { keyid, sig } = s as Record<string, unknown>;
    if (!isDigest(keyid)) return `signatures[${i}].keyid is not "sha256:" and 64 lowercase hex digits`;
    if (typeof sig !== 'string' || base64Decode(sig)?.length !== 64)
      return `signatures[${i}].sig is not the base64 of 64 bytes`;
    if (seen.has(keyid)) return `signatures[${i}] repeats key ${keyid}`;
    seen.add(keyid);
  }
  return null;
}
