/**
 * The DSSE envelope (github.com/secure-systems-lab/dsse, protocol v1) over the receipt manifest,
 * spec/RECEIPT.md §5: Ed25519 signs PAE(payloadType, manifest bytes), verified by the exact rules of §5.1.
 * Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base64Encode } from './base64.js';
import { keyIdOf } from './keys.js';
import { pae, signatureDefect } from '../crypto/ed25519.js';

// The exact verification rules live beneath the chain (crypto/ed25519.ts), where approval records use them too.
export { pae, signatureDefect };

export const PAYLOAD_TYPE = 'application/vnd.stepchain.receipt-manifest+json';

export interface DsseEnvelope {
  payload: string;
  payloadType: string;
  signatures: { keyid: string; sig: string }[];
}

/** The signature entry: the envelope and the public key it verifies with. */
export interface SignatureDocument {
  envelope: DsseEnvelope;
  format: typeof SIGNATURE_FORMAT;
  public_key: string;
}

export const SIGNATURE_FORMAT = 'stepchain-receipt-signature/v1';

export function signManifest(manifest: Uint8Array, privateKey: Uint8Array): SignatureDocument {
  const publicKey = ed25519.getPublicKey(privateKey);
  const sig = ed25519.sign(pae(PAYLOAD_TYPE, manifest), privateKey);
  return {
    envelope: {
      payload: base64Encode(manifest),
      payloadType: PAYLOAD_TYPE,
      signatures: [{ keyid: keyIdOf(publicKey), sig: base64Encode(sig) }],
    },
    format: SIGNATURE_FORMAT,
    public_key: base64Encode(publicKey),
  };
}

export function verifySignatureBytes(message: Uint8Array, sig: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return signatureDefect(message, sig, publicKey) === null;
  } catch {
    return false;
  }
}
