/**
 * The auditor's pins, checked before anything is verified, with the CLI's rules (src/cli/verbs/receipt.ts,
 * spec/RECEIPT.md §5.2): a public key file must decode to a usable Ed25519 key and a pinned head must be a
 * digest; a pin that is given but cannot be used stops the verification with an error on its field — it
 * never falls back to "no pin". Pure.
 */
import { decodePublicKey } from '../verify.js';

/** The most bytes a public key file may hold (as the CLI's readPublicKeyFile). */
export const MAX_KEY_FILE_BYTES = 64 * 1024;
const HEAD_RE = /^sha256:[0-9a-f]{64}$/;

export interface PinInput {
  /** The key file: its name, size, and its first bytes (at most MAX_KEY_FILE_BYTES + 1 are read). */
  key: { name: string; size: number; bytes: Uint8Array } | null;
  /** The pinned head field as typed: empty means no pin; anything else, surrounding whitespace aside, must be a digest. */
  head: string;
}

export interface PinError {
  field: 'key' | 'head';
  message: string;
}

export type Pins = { ok: true; publicKey?: Uint8Array; expectHead?: string } | { ok: false; errors: PinError[] };

export function readPins(input: PinInput): Pins {
  const errors: PinError[] = [];
  let publicKey: Uint8Array | undefined;
  let expectHead: string | undefined;
  if (input.key) {
    const { name, size, bytes } = input.key;
    if (size > MAX_KEY_FILE_BYTES || bytes.length > MAX_KEY_FILE_BYTES) errors.push({ field: 'key', message: `public key file ${name}: is ${Math.max(size, bytes.length)} bytes; a public key file is at most ${MAX_KEY_FILE_BYTES}` });
    else {
      const key = decodePublicKey(bytes);
      if (key.ok) publicKey = key.key;
      else errors.push({ field: 'key', message: `public key file ${name}: ${key.reason.replace(/^the pinned key /, '')}` });
    }
  }
  if (input.head !== '') {
    // A field holding only spaces is a pin that cannot be used, not "no pin".
    const head = input.head.replace(/^[ \t\r\n]+|[ \t\r\n]+$/g, '');
    if (HEAD_RE.test(head)) expectHead = head;
    else errors.push({ field: 'head', message: 'the pinned head must be "sha256:" followed by 64 lowercase hex digits' });
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, ...(publicKey ? { publicKey } : {}), ...(expectHead ? { expectHead } : {}) };
}
