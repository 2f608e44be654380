/**
 * The receipt's signature entry (spec/RECEIPT.md §5): a canonical JSON document holding a DSSE envelope
 * whose payload is the exact manifest bytes, signed with Ed25519 under the exact rules of §5.1, and the
 * public key that verifies it. Every defect is SIGNATURE_INVALID, which stops reading (§7 step 3). Pure.
 */
import { hasExactMembers, isObject } from '../canonical/json.js';
import { scanCanonical } from '../canonical/scan.js';
import { base64Decode } from './base64.js';
import { PAYLOAD_TYPE, SIGNATURE_FORMAT, pae, signatureDefect } from './dsse.js';
import { keyIdOf } from './keys.js';
import { MANIFEST_NAME, SIGNATURE_NAME } from './manifest.js';
import { FatalProblem } from './problems.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The signature entry checked over the exact manifest bytes (§5.1): returns the signer's key id, or throws SIGNATURE_INVALID. */
export function checkSignature(bytes: Uint8Array, manifestBytes: Uint8Array): string {
  const fail = (why: string): never => {
    throw new FatalProblem('SIGNATURE_INVALID', why, { file: SIGNATURE_NAME });
  };
  let doc: unknown;
  try {
    const text = utf8.decode(bytes);
    const scan = scanCanonical(text, { maxDepth: 8, members: false });
    if (scan.defect) fail(`the signature entry is not canonical JSON: ${scan.defect.reason}`);
    doc = JSON.parse(text);
  } catch (e) {
    if (e instanceof FatalProblem) throw e;
    fail('the signature entry is not UTF-8 JSON');
  }
  const obj = (v: unknown, keys: string[]): Record<string, unknown> | null =>
    isObject(v) && hasExactMembers(v, keys) ? v : null;
  const d =
    obj(doc, ['envelope', 'format', 'public_key']) ??
    fail('the signature entry must be {"envelope":{…},"format":…,"public_key":…}');
  if (d.format !== SIGNATURE_FORMAT)
    fail(`signature format is ${JSON.stringify(d.format)}, not ${JSON.stringify(SIGNATURE_FORMAT)}`);
  const pub = typeof d.public_key === 'string' ? base64Decode(d.public_key) : null;
  if (pub?.length !== 32) fail('public_key must be the base64 of a 32-byte Ed25519 public key');
  const env =
    obj(d.envelope, ['payload', 'payloadType', 'signatures']) ??
    fail('the DSSE envelope must have exactly payload, payloadType and signatures');
  if (env.payloadType !== PAYLOAD_TYPE)
    fail(`payloadType is ${JSON.stringify(env.payloadType)}, not ${JSON.stringify(PAYLOAD_TYPE)}`);
  const payload = typeof env.payload === 'string' ? base64Decode(env.payload) : null;
  if (!payload) fail('payload is not canonical base64');
  if (!equalBytes(payload!, manifestBytes)) fail(`the envelope's payload is not the exact bytes of ${MANIFEST_NAME}`);
  if (!Array.isArray(env.signatures) || env.signatures.length !== 1)
    fail('the envelope must carry exactly one signature');
  const s = obj((env.signatures as unknown[])[0], ['keyid', 'sig']) ?? fail('a signature is {"keyid":…,"sig":…}');
  const keyId = keyIdOf(pub!);
  if (s.keyid !== keyId) fail(`keyid ${JSON.stringify(s.keyid)} is not the id of public_key (${keyId})`);
  const sig = typeof s.sig === 'string' ? base64Decode(s.sig) : null;
  if (sig?.length !== 64) fail('sig must be the base64 of a 64-byte Ed25519 signature');
  let why: string | null;
  try {
    why = signatureDefect(pae(PAYLOAD_TYPE, manifestBytes), sig!, pub!);
  } catch (e) {
    why = `the signature could not be checked: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (why) fail(`the Ed25519 signature by ${keyId} does not verify over the manifest: ${why} (spec/RECEIPT.md §5.1)`);
  return keyId;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
