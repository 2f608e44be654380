/**
 * The signer of an RFC 3161 time-stamp token (spec/TIME.md §7.1): what CMS fixes for the SignedData
 * (RFC 5652 §5.1), which certificate the SignerInfo names, what its signed attributes say (RFC 5652 §11,
 * RFC 2634 / RFC 5816), and its signature, each checked against the one pinned TSA certificate with
 * WebCrypto. Every byte is hostile: a defect is a coded reason, never a throw.
 */
import { AsnConvert } from '@peculiar/asn1-schema';
import type { SignedData, SignerInfo } from '@peculiar/asn1-cms';
import { SubjectKeyIdentifier, id_ce_subjectKeyIdentifier } from '@peculiar/asn1-x509';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import * as asn1js from 'asn1js';
import { sha1 } from '@noble/hashes/legacy.js';
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';
import { buf, bytes, equal, hex } from './der-bytes.js';
import type { TokenCheck, TsaCertificate } from './tsp.js';

export const ID_CT_TSTINFO = '1.2.840.113549.1.9.16.1.4';
const ID_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const ID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const ID_SIGNING_CERTIFICATE = '1.2.840.113549.1.9.16.2.12';
const ID_SIGNING_CERTIFICATE_V2 = '1.2.840.113549.1.9.16.2.47';
const ID_SHA1 = '1.3.14.3.2.26';
export const ID_SHA256 = '2.16.840.1.101.3.4.2.1';

/** The digests a token may use, by OID (SHA-1 only inside a version-1 signing-certificate attribute). */
const DIGESTS: Record<string, { name: 'SHA-256' | 'SHA-384' | 'SHA-512'; hash: (b: Uint8Array) => Uint8Array }> = {
  [ID_SHA256]: { name: 'SHA-256', hash: sha256 },
  '2.16.840.1.101.3.4.2.2': { name: 'SHA-384', hash: sha384 },
  '2.16.840.1.101.3.4.2.3': { name: 'SHA-512', hash: sha512 },
};
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
/** Signature algorithms: PKCS #1 v1.5 RSA and ECDSA, each naming its digest or taking the signer's. */
const SIGNATURES: Record<string, { kind: 'RSA' | 'EC'; digest: string | null }> = {
  [RSA_ENCRYPTION]: { kind: 'RSA', digest: null },
  '1.2.840.113549.1.1.11': { kind: 'RSA', digest: ID_SHA256 },
  '1.2.840.113549.1.1.12': { kind: 'RSA', digest: '2.16.840.1.101.3.4.2.2' },
  '1.2.840.113549.1.1.13': { kind: 'RSA', digest: '2.16.840.1.101.3.4.2.3' },
  '1.2.840.10045.4.3.2': { kind: 'EC', digest: ID_SHA256 },
  '1.2.840.10045.4.3.3': { kind: 'EC', digest: '2.16.840.1.101.3.4.2.2' },
  '1.2.840.10045.4.3.4': { kind: 'EC', digest: '2.16.840.1.101.3.4.2.3' },
};
const EC_PUBLIC_KEY = '1.2.840.10045.2.1';
const CURVES: Record<string, { name: 'P-256' | 'P-384' | 'P-521'; size: number }> = {
  '1.2.840.10045.3.1.7': { name: 'P-256', size: 32 },
  '1.3.132.0.34': { name: 'P-384', size: 48 },
  '1.3.132.0.35': { name: 'P-521', size: 66 },
};

/**
 * Why the token's one signer does not vouch for `content` under the pinned certificate, or null: the
 * SignedData's shape, the signer's identity, its signed attributes, then its signature.
 */
export async function signerDefectOf(
  sd: SignedData,
  content: Uint8Array,
  tsa: TsaCertificate,
): Promise<Extract<TokenCheck, { ok: false }> | null> {
  // What CMS fixes for this content (RFC 5652 §5.1): version 3, and the signer's digest among those listed.
  if ((sd.version as number) !== 3)
    return {
      ok: false,
      code: 'TIMESTAMP_INVALID',
      reason: `SignedData version ${sd.version}; a TSTInfo is signed with version 3`,
    };
  if (sd.signerInfos.length !== 1)
    return {
      ok: false,
      code: 'TIMESTAMP_INVALID',
      reason: `the token has ${sd.signerInfos.length} signers; a time-stamp token has one`,
    };
  const si = sd.signerInfos[0]!;
  if (!sd.digestAlgorithms.some((a) => a.algorithm === si.digestAlgorithm.algorithm))
    return {
      ok: false,
      code: 'TIMESTAMP_INVALID',
      reason: "the signer's digest algorithm is not among the SignedData's",
    };
  const who = signerDefect(si, tsa);
  if (who) return { ok: false, code: 'TIMESTAMP_SIGNER', reason: who };
  let verdict: string | null;
  try {
    verdict = attributesDefect(si, content, tsa) ?? (await signatureDefect(si, tsa));
  } catch (e) {
    verdict = `the signature could not be checked: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (verdict)
    return {
      ok: false,
      code: verdict.startsWith('TIMESTAMP_SIGNER') ? 'TIMESTAMP_SIGNER' : 'TIMESTAMP_INVALID',
      reason: verdict.replace(/^TIMESTAMP_SIGNER: /, ''),
    };
  return null;
}

/** The SignerInfo names the pinned certificate: by issuer and serial number, or by subject key identifier. */
function signerDefect(si: SignerInfo, tsa: TsaCertificate): string | null {
  const tbs = tsa.cert.tbsCertificate;
  const ias = si.sid.issuerAndSerialNumber;
  if (ias) {
    const sameIssuer = equal(bytes(AsnConvert.serialize(ias.issuer)), bytes(AsnConvert.serialize(tbs.issuer)));
    if (sameIssuer && equal(bytes(ias.serialNumber), bytes(tbs.serialNumber))) return null;
    return `the token was signed by another certificate (serial ${hex(bytes(ias.serialNumber))}) than the pinned TSA certificate ${tsa.name} (serial ${hex(bytes(tbs.serialNumber))})`;
  }
  const ski = si.sid.subjectKeyIdentifier;
  const own = tbs.extensions?.find((e) => e.extnID === id_ce_subjectKeyIdentifier);
  if (ski && own && equal(bytes(ski.buffer), bytes(AsnConvert.parse(own.extnValue, SubjectKeyIdentifier).buffer)))
    return null;
  return `the token was signed by another key than the pinned TSA certificate ${tsa.name}'s`;
}

function attribute(si: SignerInfo, oid: string): Uint8Array | null {
  const a = si.signedAttrs?.find((x) => x.attrType === oid);
  return a?.attrValues.length === 1 ? bytes(a.attrValues[0]!) : null;
}

/** Content type, message digest (RFC 5652 §11) and the signing certificate's hash (RFC 2634 / RFC 5816). */
function attributesDefect(si: SignerInfo, content: Uint8Array, tsa: TsaCertificate): string | null {
  if (!si.signedAttrs || si.signedAttrs.length === 0) return 'the signer has no signed attributes';
  const digest = DIGESTS[si.digestAlgorithm.algorithm];
  if (!digest) return `the digest algorithm ${si.digestAlgorithm.algorithm} is not SHA-256, SHA-384 or SHA-512`;
  const ct = attribute(si, ID_CONTENT_TYPE);
  if (!ct || !equal(ct, bytes(new asn1js.ObjectIdentifier({ value: ID_CT_TSTINFO }).toBER())))
    return 'the content-type attribute is not id-ct-TSTInfo';
  const md = attribute(si, ID_MESSAGE_DIGEST);
  const mdValue = md ? asn1js.fromBER(buf(md)).result : null;
  if (!(mdValue instanceof asn1js.OctetString) || !equal(bytes(mdValue.valueBlock.valueHexView), digest.hash(content)))
    return 'the message-digest attribute is not the digest of the TSTInfo: the token was altered';
  const v2 = attribute(si, ID_SIGNING_CERTIFICATE_V2);
  const v1 = v2 ? null : attribute(si, ID_SIGNING_CERTIFICATE);
  const first = firstCertHash(v2 ?? v1);
  if (!first) return 'the token has no signing-certificate attribute (RFC 3161 §2.4.2, RFC 5816)';
  const hashOid = v2 ? (first.alg ?? ID_SHA256) : ID_SHA1;
  const h = hashOid === ID_SHA1 ? sha1(tsa.der) : DIGESTS[hashOid]?.hash(tsa.der);
  if (!h) return `the signing-certificate attribute uses ${hashOid}, not a known digest`;
  return equal(h, first.hash)
    ? null
    : `TIMESTAMP_SIGNER: the token's signing-certificate attribute names another certificate than the pinned TSA certificate ${tsa.name}`;
}

/** SigningCertificate(V2) ::= SEQUENCE { certs SEQUENCE OF ESSCertID(v2), … }: the first ESSCertID's hash. */
function firstCertHash(value: Uint8Array | null): { alg: string | null; hash: Uint8Array } | null {
  if (!value) return null;
  const root = asn1js.fromBER(buf(value)).result;
  const certs = root instanceof asn1js.Sequence ? root.valueBlock.value[0] : undefined;
  const id = certs instanceof asn1js.Sequence ? certs.valueBlock.value[0] : undefined;
  if (!(id instanceof asn1js.Sequence)) return null;
  const parts = id.valueBlock.value;
  let alg: string | null = null;
  let i = 0;
  if (parts[0] instanceof asn1js.Sequence) {
    const oid = parts[0].valueBlock.value[0];
    alg = oid instanceof asn1js.ObjectIdentifier ? oid.valueBlock.toString() : null;
    i = 1;
  }
  const hash = parts[i];
  return hash instanceof asn1js.OctetString ? { alg, hash: bytes(hash.valueBlock.valueHexView) } : null;
}

/** The signature over the DER SET OF the signed attributes (RFC 5652 §5.4), with the pinned certificate's key. */
async function signatureDefect(si: SignerInfo, tsa: TsaCertificate): Promise<string | null> {
  const alg = SIGNATURES[si.signatureAlgorithm.algorithm];
  if (!alg) return `the signature algorithm ${si.signatureAlgorithm.algorithm} is not PKCS #1 v1.5 RSA or ECDSA`;
  const digestOid = alg.digest ?? si.digestAlgorithm.algorithm;
  const digest = DIGESTS[digestOid];
  if (!digest) return `the signature's digest ${digestOid} is not SHA-256, SHA-384 or SHA-512`;
  const signed = signedAttributesDer(si);
  const spki = tsa.cert.tbsCertificate.subjectPublicKeyInfo;
  const spkiDer = buf(bytes(AsnConvert.serialize(spki)));
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return 'this platform has no WebCrypto to check the signature with';
  let ok: boolean;
  if (alg.kind === 'RSA') {
    if (spki.algorithm.algorithm !== RSA_ENCRYPTION)
      return "TIMESTAMP_SIGNER: the pinned TSA certificate's key is not an RSA key, but the token is signed with RSA";
    const key = await subtle.importKey('spki', spkiDer, { name: 'RSASSA-PKCS1-v1_5', hash: digest.name }, false, [
      'verify',
    ]);
    ok = await subtle.verify('RSASSA-PKCS1-v1_5', key, buf(bytes(si.signature.buffer)), buf(signed));
  } else {
    const params = spki.algorithm.parameters ? asn1js.fromBER(spki.algorithm.parameters).result : null;
    const curveOid = params instanceof asn1js.ObjectIdentifier ? params.valueBlock.toString() : null;
    const curve = spki.algorithm.algorithm === EC_PUBLIC_KEY && curveOid ? CURVES[curveOid] : undefined;
    if (!curve)
      return "TIMESTAMP_SIGNER: the pinned TSA certificate's key is not an ECDSA key on P-256, P-384 or P-521";
    const sig = AsnConvert.parse(si.signature.buffer, ECDSASigValue);
    const raw = new Uint8Array(curve.size * 2);
    const r = stripZeros(bytes(sig.r));
    const s = stripZeros(bytes(sig.s));
    if (r.length > curve.size || s.length > curve.size) return "the ECDSA signature's r or s is too long for the curve";
    raw.set(r, curve.size - r.length);
    raw.set(s, raw.length - s.length);
    const key = await subtle.importKey('spki', spkiDer, { name: 'ECDSA', namedCurve: curve.name }, false, ['verify']);
    ok = await subtle.verify({ name: 'ECDSA', hash: digest.name }, key, buf(raw), buf(signed));
  }
  return ok
    ? null
    : "the TSA's signature over the signed attributes does not verify with the pinned certificate's key: the token was altered, or another key signed it";
}

/**
 * The DER of the signed attributes as a SET OF (RFC 5652 §5.4: [0] IMPLICIT on the wire, the universal SET
 * tag under the signature), each attribute re-encoded in the order received: for the DER a TSA sends, these
 * are the signed bytes; a token whose attributes were not DER cannot verify, which is the safe answer.
 */
function signedAttributesDer(si: SignerInfo): Uint8Array {
  const parts = si.signedAttrs!.map((a) => bytes(AsnConvert.serialize(a)));
  const length = parts.reduce((n, p) => n + p.length, 0);
  const lengthBytes =
    length < 0x80
      ? [length]
      : length < 0x100
        ? [0x81, length]
        : length < 0x10000
          ? [0x82, length >> 8, length & 0xff]
          : [0x83, length >> 16, (length >> 8) & 0xff, length & 0xff];
  const out = new Uint8Array(1 + lengthBytes.length + length);
  out[0] = 0x31;
  out.set(lengthBytes, 1);
  let at = 1 + lengthBytes.length;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function stripZeros(b: Uint8Array): Uint8Array {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}
