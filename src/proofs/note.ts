/**
 * C2SP signed notes (c2sp.org/signed-note, spec/PROOFS.md §8.1): parsing under the spec's line rules
 * and limits, Ed25519 signing (signature type 0x01), verifier keys (vkeys), and verification that
 * ignores unknown keys and fails on a known key's bad signature. Cosignature keys (type 0x04,
 * c2sp.org/tlog-cosignature) verify through the same NoteVerifier shape, so one loop checks both.
 * Parsing never throws on the note; it returns a coded problem. Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { verifySignatureBytes } from '../receipt/dsse.js';
import { sha256Backend } from '../canonical/sha256.js';
import { base64Decode, base64Encode } from '../receipt/base64.js';
import { problem, ProofError, type ProofProblem } from './problems.js';

/** Signature type bytes (c2sp.org/signed-note, "Signature types"). */
export const SIG_ED25519 = 0x01;
export const SIG_COSIGNATURE_V1 = 0x04;

/** Limits (PROOFS.md §11): the spec asks verifiers to accept at least 16 signatures. */
export const MAX_NOTE_BYTES = 1024 * 1024;
export const MAX_NOTE_SIGNATURES = 100;

const EM_DASH = '\u2014';
const encoder = new TextEncoder();
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export interface NoteSignature {
  /** The key name on the signature line. */
  name: string;
  /** The first four bytes of the decoded signature, big-endian. */
  keyId: number;
  /** The signature bytes after the key id. */
  signature: Uint8Array;
}

export interface Note {
  /** The note text: everything before the last blank line, ending with a newline. */
  text: string;
  signatures: NoteSignature[];
}

export type NoteParse = { ok: true; note: Note } | { ok: false; problem: ProofProblem };

/** A key name: non-empty, no Unicode white space, no `+` (signed-note "Format"). */
export function isKeyName(name: unknown): name is string {
  return (
    typeof name === 'string' &&
    name.length > 0 &&
    !name.includes('+') &&
    !/\p{White_Space}/u.test(name) &&
    name.isWellFormed()
  );
}

/** A note text: valid UTF-8 (well-formed UTF-16 here), no control character but newline, ends with one. */
export function noteTextDefect(text: string): string | null {
  if (!text.isWellFormed()) return 'holds a lone surrogate (it is not valid UTF-8)';
  if (!text.endsWith('\n')) return 'does not end with a newline';

  const control = /[\u0000-\u0009\u000b-\u001f]/.exec(text);
  if (control)
    return `holds the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0')} at offset ${control.index}`;
  return null;
}

/**
 * Parses a signed note (text or UTF-8 bytes) without verifying anything: the text is everything up to
 * and including the newline before the last blank line; after it come one or more lines
 * `— <name> <base64(key id || signature)>`.
 */
export function parseNote(input: string | Uint8Array): NoteParse {
  const bad = (why: string, code: ProofProblem['code'] = 'NOTE_MALFORMED'): NoteParse => ({
    ok: false,
    problem: problem(code, `the signed note ${why}`),
  });
  let message: string;
  if (input instanceof Uint8Array) {
    if (input.length > MAX_NOTE_BYTES) return bad(`is larger than ${MAX_NOTE_BYTES} bytes`, 'LIMIT_EXCEEDED');
    try {
      message = utf8.decode(input);
    } catch {
      return bad('is not valid UTF-8');
    }
  } else if (typeof input === 'string') {
    if (input.length > MAX_NOTE_BYTES || encoder.encode(input).length > MAX_NOTE_BYTES)
      return bad(`is larger than ${MAX_NOTE_BYTES} bytes`, 'LIMIT_EXCEEDED');
    message = input;
  } else {
    return bad('is neither text nor bytes');
  }
  const defect = noteTextDefect(message);
  if (defect) return bad(defect);
  const split = message.lastIndexOf('\n\n');
  if (split < 0) return bad('has no blank line before its signatures');
  const text = message.slice(0, split + 1);
  const lines = message.slice(split + 2, -1).split('\n');
  if (lines.length === 1 && lines[0] === '') return bad('has no signature line');
  if (lines.length > MAX_NOTE_SIGNATURES)
    return bad(`has more than ${MAX_NOTE_SIGNATURES} signature lines`, 'LIMIT_EXCEEDED');
  const signatures: NoteSignature[] = [];
  for (const [i, line] of lines.entries()) {
    const where = `signature line ${i + 1}`;
    if (!line.startsWith(EM_DASH + ' ')) return bad(`${where} does not start with an em dash and a space`);
    const rest = line.slice(2);
    const space = rest.indexOf(' ');
    if (space < 0) return bad(`${where} has no space between the key name and the signature`);
    const name = rest.slice(0, space);
    if (!isKeyName(name)) return bad(`${where} has an invalid key name (empty, or holding white space or '+')`);
    const bytes = base64Decode(rest.slice(space + 1));
    if (bytes === null) return bad(`${where} does not hold canonical base64 after the key name`);
    if (bytes.length < 5) return bad(`${where} is shorter than a key id and a signature`);
    const keyId = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
    signatures.push({ name, keyId, signature: bytes.subarray(4) });
  }
  return { ok: true, note: { text, signatures } };
}

/** The text of a signed note: its text, a blank line, and its signature lines. */
export function formatNote(note: Note): string {
  return note.text + '\n' + note.signatures.map(signatureLine).join('');
}

/** `— <name> <base64(key id || signature)>` and a newline. */
export function signatureLine(sig: NoteSignature): string {
  const bytes = new Uint8Array(4 + sig.signature.length);
  new DataView(bytes.buffer).setUint32(0, sig.keyId);
  bytes.set(sig.signature, 4);
  return `${EM_DASH} ${sig.name} ${base64Encode(bytes)}\n`;
}

/** SHA-256(name || 0x0A || type || public key)[:4] as a big-endian uint32 (signed-note, recommended key id). */
export function noteKeyId(name: string, type: number, publicKey: Uint8Array): number {
  const n = encoder.encode(name);
  const input = new Uint8Array(n.length + 2 + publicKey.length);
  input.set(n, 0);
  input[n.length] = 0x0a;
  input[n.length + 1] = type;
  input.set(publicKey, n.length + 2);
  const h = sha256Backend().bytes(input);
  return ((h[0]! << 24) | (h[1]! << 16) | (h[2]! << 8) | h[3]!) >>> 0;
}

/** A key that checks signature lines with its name and key id. */
export interface NoteVerifier {
  readonly name: string;
  readonly keyId: number;
  /** SIG_ED25519 (a log key) or SIG_COSIGNATURE_V1 (a witness key). */
  readonly type: number;
  readonly publicKey: Uint8Array;
  /** Whether `signature` (the bytes after the key id) is valid over the note text `text`. Never throws. */
  verify(text: Uint8Array, signature: Uint8Array): boolean;
}

export interface NoteSigner {
  readonly name: string;
  readonly keyId: number;
  readonly type: number;
  readonly publicKey: Uint8Array;
  /** The signature bytes (without the key id) over the note text. */
  sign(text: Uint8Array): Uint8Array;
}

/**
 * Ed25519 under the one rule set receipts use (RECEIPT.md §5.1, PROOFS.md §8.1): S < L, canonical A and R,
 * A not of small order, and the cofactorless equation. @noble/curves' verify checks the cofactored one,
 * which accepts signatures under a mixed-order key that the receipt verifier (and Go, OpenSSL, libsodium)
 * refuse; a log or witness key must not verify under one rule here and another there.
 */
function ed25519Verify(sig: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  return verifySignatureBytes(message, sig, publicKey);
}

/** The largest cosignature timestamp accepted: 2^53 − 1 seconds (PROOFS.md §8.3; the format allows up to 2^63 − 1). */
export const MAX_COSIGNATURE_TIME = Number.MAX_SAFE_INTEGER;

/** The message a cosignature signs: `cosignature/v1\ntime <t>\n` then the checkpoint's note text. */
export function cosignedMessage(text: Uint8Array, timestamp: number): Uint8Array {
  const head = encoder.encode(`cosignature/v1\ntime ${timestamp}\n`);
  const out = new Uint8Array(head.length + text.length);
  out.set(head, 0);
  out.set(text, head.length);
  return out;
}

/** The timestamp of a type 0x04 cosignature (its first 8 bytes, big-endian), or null if it is malformed. */
export function cosignatureTime(signature: Uint8Array): number | null {
  if (signature.length !== 72) return null;
  const view = new DataView(signature.buffer, signature.byteOffset, 8);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const t = hi * 2 ** 32 + lo;
  return t <= MAX_COSIGNATURE_TIME ? t : null;
}

function checkKey(name: string, publicKey: Uint8Array, type: number): void {
  if (!isKeyName(name))
    throw new ProofError(
      'KEY_INVALID',
      `"${String(name)}" is not a key name: it must be non-empty, without white space or '+'`,
    );
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32)
    throw new ProofError('KEY_INVALID', 'an Ed25519 public key is 32 bytes');
  if (type !== SIG_ED25519 && type !== SIG_COSIGNATURE_V1)
    throw new ProofError(
      'KEY_INVALID',
      `signature type 0x${type.toString(16).padStart(2, '0')} is not supported (0x01 Ed25519, 0x04 cosignature/v1)`,
    );
}

/** The verifier of an Ed25519 log key (type 0x01) or an Ed25519 witness key (type 0x04). */
export function noteVerifier(name: string, publicKey: Uint8Array, type: number = SIG_ED25519): NoteVerifier {
  checkKey(name, publicKey, type);
  const key = publicKey.slice();
  return {
    name,
    type,
    publicKey: key,
    keyId: noteKeyId(name, type, key),
    verify:
      type === SIG_ED25519
        ? (text, sig) => sig.length === 64 && ed25519Verify(sig, text, key)
        : (text, sig) => {
            const t = cosignatureTime(sig);
            return t !== null && ed25519Verify(sig.subarray(8), cosignedMessage(text, t), key);
          },
  };
}

/**
 * A signer for a 32-byte Ed25519 private key (seed). Type 0x01 signs note texts (a log's checkpoints);
 * type 0x04 makes cosignatures with the time `clock()` returns, in seconds (default: now).
 */
export function noteSigner(
  name: string,
  privateKey: Uint8Array,
  type: number = SIG_ED25519,
  clock: () => number = () => Math.floor(Date.now() / 1000),
): NoteSigner {
  if (!(privateKey instanceof Uint8Array) || privateKey.length !== 32)
    throw new ProofError('KEY_INVALID', 'an Ed25519 private key is 32 bytes');
  const seed = privateKey.slice();
  const publicKey = ed25519.getPublicKey(seed);
  checkKey(name, publicKey, type);
  const keyId = noteKeyId(name, type, publicKey);
  if (type === SIG_ED25519) return { name, type, keyId, publicKey, sign: (text) => ed25519.sign(text, seed) };
  return {
    name,
    type,
    keyId,
    publicKey,
    sign(text) {
      const t = clock();
      if (!Number.isSafeInteger(t) || t < 0)
        throw new ProofError('ARGUMENT_INVALID', 'a cosignature time is a whole number of seconds from 0 to 2^53 − 1');
      const out = new Uint8Array(72);
      new DataView(out.buffer).setUint32(0, Math.floor(t / 2 ** 32));
      new DataView(out.buffer).setUint32(4, t % 2 ** 32);
      out.set(ed25519.sign(cosignedMessage(text, t), seed), 8);
      return out;
    },
  };
}

/** Signs a note text with each signer: the text, a blank line, one signature line per signer. */
export function signNote(text: string, signers: readonly NoteSigner[]): string {
  const defect = typeof text === 'string' ? noteTextDefect(text) : 'is not a string';
  if (defect) throw new ProofError('NOTE_INVALID', `the note text ${defect}`);
  const bytes = encoder.encode(text);
  return formatNote({
    text,
    signatures: signers.map((s) => ({ name: s.name, keyId: s.keyId, signature: s.sign(bytes) })),
  });
}

/** The vkey of a verifier: `<name>+<hex key id>+<base64(type || public key)>`. */
export function verifierKey(v: Pick<NoteVerifier, 'name' | 'keyId' | 'type' | 'publicKey'>): string {
  const material = new Uint8Array(1 + v.publicKey.length);
  material[0] = v.type;
  material.set(v.publicKey, 1);
  return `${v.name}+${v.keyId.toString(16).padStart(8, '0')}+${base64Encode(material)}`;
}

/**
 * The verifier a vkey names. Throws ProofError KEY_INVALID unless it has three `+`-separated parts (a key
 * name, 8 lowercase hex digits, and base64 of a supported type byte and a 32-byte key), and the key id is
 * the one the name, type and key give (a vkey is configuration: a bad one is the caller's error).
 */
export function parseVerifierKey(vkey: string): NoteVerifier {
  // The name and the id hold no '+'; the base64 after the second '+' may.
  const first = typeof vkey === 'string' ? vkey.indexOf('+') : -1;
  const second = first < 0 ? -1 : vkey.indexOf('+', first + 1);
  if (second < 0) throw new ProofError('KEY_INVALID', 'a verifier key is <name>+<hex key id>+<base64 key>');
  const [name, id, b64] = [vkey.slice(0, first), vkey.slice(first + 1, second), vkey.slice(second + 1)];
  if (!/^[0-9a-f]{8}$/.test(id))
    throw new ProofError('KEY_INVALID', `the key id "${id}" is not 8 lowercase hex digits`);
  const material = base64Decode(b64);
  if (material?.length !== 33)
    throw new ProofError('KEY_INVALID', 'the key material is not the base64 of a type byte and a 32-byte Ed25519 key');
  const v = noteVerifier(name, material.subarray(1), material[0]);
  if (v.keyId !== parseInt(id, 16))
    throw new ProofError(
      'KEY_INVALID',
      `the key id ${id} is not the id of this name and key (${v.keyId.toString(16).padStart(8, '0')})`,
    );
  return v;
}

export interface OpenedNote {
  ok: boolean;
  note: Note | null;
  /** The verifiers whose signatures verified, each once. */
  verifiedBy: NoteVerifier[];
  problems: ProofProblem[];
}

/**
 * Verifies a signed note against known keys (signed-note "Signatures"): lines whose name and key id
 * match no known key are ignored; a known key's line that fails makes the note invalid
 * (SIGNATURE_INVALID, or COSIGNATURE_INVALID for a witness key); a note with no verified signature is
 * SIGNATURE_MISSING. Never throws.
 */
export function openNote(input: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenedNote {
  const parsed = parseNote(input);
  if (!parsed.ok) return { ok: false, note: null, verifiedBy: [], problems: [parsed.problem] };
  const { note } = parsed;
  const text = encoder.encode(note.text);
  const verifiedBy: NoteVerifier[] = [];
  const problems: ProofProblem[] = [];
  for (const sig of note.signatures) {
    const v = verifiers.find((k) => k.name === sig.name && k.keyId === sig.keyId);
    if (!v) continue;
    if (v.verify(text, sig.signature)) {
      if (!verifiedBy.includes(v)) verifiedBy.push(v);
    } else {
      const code = v.type === SIG_COSIGNATURE_V1 ? 'COSIGNATURE_INVALID' : 'SIGNATURE_INVALID';
      problems.push(
        problem(
          code,
          `the signature of ${sig.name} (key id ${sig.keyId.toString(16).padStart(8, '0')}) does not verify`,
        ),
      );
    }
  }
  if (verifiedBy.length === 0 && problems.length === 0)
    problems.push(problem('SIGNATURE_MISSING', 'no signature line is from a known key'));
  return { ok: problems.length === 0, note, verifiedBy, problems };
}
