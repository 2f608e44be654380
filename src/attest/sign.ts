/**
 * Signing and checking co-signatures (spec/TIME.md §5.2, §7.2): Ed25519 over PAE(payloadType, statement),
 * with RECEIPT.md §5.1's exact verification rules. Apart from statements.ts so that reading a receipt's
 * members does not load the curve. Pure.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base64Decode, base64Encode } from '../receipt/base64.js';
import { pae, signatureDefect } from '../receipt/dsse.js';
import { keyIdOf } from '../receipt/keys.js';
import { COSIGN_PAYLOAD_TYPE } from './names.js';
import type { CosignEnvelope } from './statements.js';

/** A new envelope over the statement with one signature, or the envelope with one more (DSSE allows several). */
export function cosign(statement: Uint8Array | CosignEnvelope, privateKey: Uint8Array): CosignEnvelope {
  const envelope: CosignEnvelope =
    statement instanceof Uint8Array
      ? { payload: base64Encode(statement), payloadType: COSIGN_PAYLOAD_TYPE, signatures: [] }
      : { ...statement, signatures: [...statement.signatures] };
  const payload = base64Decode(envelope.payload)!;
  const publicKey = ed25519.getPublicKey(privateKey);
  const keyid = keyIdOf(publicKey);
  const sig = base64Encode(ed25519.sign(pae(COSIGN_PAYLOAD_TYPE, payload), privateKey));
  envelope.signatures = [...envelope.signatures.filter((s) => s.keyid !== keyid), { keyid, sig }].sort((a, b) =>
    a.keyid < b.keyid ? -1 : a.keyid > b.keyid ? 1 : 0,
  );
  return envelope;
}

/** Whether `sig` is key `publicKey`'s signature over the envelope's payload (RECEIPT.md §5.1's exact rules). */
export function cosignatureHolds(envelope: CosignEnvelope, sig: string, publicKey: Uint8Array): boolean {
  const payload = base64Decode(envelope.payload);
  const s = base64Decode(sig);
  if (payload === null || s === null) return false;
  try {
    return signatureDefect(pae(COSIGN_PAYLOAD_TYPE, payload), s, publicKey) === null;
  } catch {
    return false;
  }
}
