/**
 * Signing and checking approval decisions (spec/APPROVALS.md §3): Ed25519 over the DSSE pre-authentication
 * encoding PAE(APPROVAL_PAYLOAD_TYPE, JCS(statement)), checked by RECEIPT.md §5.1's exact rules. The
 * statement names the journal (genesis hash), the request (step_id, seq, step hash), the
 * decision and its time, so a signature holds for that one decision only. Pure; runs in a browser.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { base64Decode, base64Encode } from '../crypto/base64.js';
import { isPemInput, keyIdOf, pae, seedFromPkcs8Pem, signatureDefect, type KeyInput } from '../crypto/ed25519.js';

export type { KeyInput };
import { APPROVAL_PAYLOAD_TYPE, statementBytes, type AnyApprovalStatement, type DecisionMeta } from './records.js';

/**
 * The `meta` members of a decision: the approver (the key's id and public key, and a name it gives itself)
 * and its signature over the statement. `key`: an Ed25519 seed (32 bytes) or a PKCS#8 PEM text.
 */
export function signApproval(statement: AnyApprovalStatement, key: KeyInput, name?: string): DecisionMeta {
  const privateKey = key instanceof Uint8Array ? key : isPemInput(key) ? seedFromPkcs8Pem(key.pem) : null;
  if (privateKey?.length !== 32)
    throw new TypeError(
      'an approver\'s key is an Ed25519 seed (32 bytes) or { pem } holding a PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----")',
    );
  const publicKey = ed25519.getPublicKey(privateKey);
  const signature = ed25519.sign(pae(APPROVAL_PAYLOAD_TYPE, statementBytes(statement)), privateKey);
  return {
    approver: {
      keyid: keyIdOf(publicKey),
      name: name === undefined || name === '' ? null : name,
      public_key: base64Encode(publicKey),
    },
    signature: base64Encode(signature),
  };
}

/** Why `meta`'s signature is not its approver's over `statement`, or null when it holds. Never throws. */
export function approvalSignatureDefect(statement: AnyApprovalStatement, meta: DecisionMeta): string | null {
  const publicKey = base64Decode(meta.approver.public_key);
  const sig = base64Decode(meta.signature);
  if (publicKey?.length !== 32) return 'meta.approver.public_key is not the base64 of 32 bytes';
  if (keyIdOf(publicKey) !== meta.approver.keyid) return 'meta.approver.keyid is not the digest of its public_key';
  if (sig === null) return 'meta.signature is not canonical base64';
  try {
    return signatureDefect(pae(APPROVAL_PAYLOAD_TYPE, statementBytes(statement)), sig, publicKey);
  } catch (e) {
    return `the signature cannot be checked: ${e instanceof Error ? e.message : String(e)}`;
  }
}
