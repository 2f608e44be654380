/**
 * RFC 3161 time-stamp tokens (with RFC 5816's signing-certificate-v2), spec/TIME.md §4 and §7.1: the
 * request a client sends, and the offline check of a token against one pinned TSA certificate. The ASN.1
 * is read by @peculiar/asn1-* (schemas for CMS, X.509 and TSP) and the signature checked by WebCrypto, so
 * this runs unchanged in a browser (the verification page) and in Node (globalThis.crypto). Every byte is
 * hostile: nothing here throws on input; a defect is a coded reason.
 */
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { ContentInfo, SignedData, id_signedData, type SignerInfo } from '@peculiar/asn1-cms';
import {
  AlgorithmIdentifier,
  Certificate,
  ExtendedKeyUsage,
  SubjectKeyIdentifier,
  id_ce_extKeyUsage,
  id_ce_subjectKeyIdentifier,
  id_kp_timeStamping,
} from '@peculiar/asn1-x509';
import { MessageImprint, TSTInfo, TimeStampReq, TimeStampResp } from '@peculiar/asn1-tsp';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import * as asn1js from 'asn1js';
import { sha1 } from '@noble/hashes/legacy.js';
import { sha256, sha384, sha512 } from '@noble/hashes/sha2.js';
import { base64Decode } from '../receipt/base64.js';

const ID_CT_TSTINFO = '1.2.840.113549.1.9.16.1.4';
const ID_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const ID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const ID_SIGNING_CERTIFICATE = '1.2.840.113549.1.9.16.2.12';
const ID_SIGNING_CERTIFICATE_V2 = '1.2.840.113549.1.9.16.2.47';
const ID_SHA1 = '1.3.14.3.2.26';
const ID_SHA256 = '2.16.840.1.101.3.4.2.1';
const ID_CN = '2.5.4.3';

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

/** A pinned TSA certificate, checked once (spec/TIME.md §4.2). */
export interface TsaCertificate {
  der: Uint8Array;
  cert: Certificate;
  /** Its subject's common name (or the whole subject when it has none): the name the verdict gives the TSA. */
  name: string;
  notBefore: Date;
  notAfter: Date;
}

export type TsaCertificateResult = { ok: true; tsa: TsaCertificate } | { ok: false; reason: string };

/** What a token that verified says. */
export interface TokenFacts {
  /** TSTInfo.genTime, ISO 8601. */
  gen_time: string;
  /** The TSA, as its pinned certificate names it. */
  tsa: string;
  /** TSTInfo.serialNumber in hex. */
  serial: string;
  /** TSTInfo.policy. */
  policy: string;
}

export type TokenCheck =
  | { ok: true; facts: TokenFacts }
  | {
      ok: false;
      code: 'TIMESTAMP_INVALID' | 'TIMESTAMP_MISMATCH' | 'TIMESTAMP_SIGNER' | 'TIMESTAMP_CERT_EXPIRED';
      reason: string;
    };

const buf = (b: Uint8Array): ArrayBuffer => b.slice().buffer;
const bytes = (b: ArrayBuffer | ArrayBufferView): Uint8Array =>
  b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
function equal(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}

/** PEM ("CERTIFICATE") or DER bytes of one certificate. */
function certificateDer(input: Uint8Array | string): Uint8Array | null {
  const text = typeof input === 'string' ? input : input[0] === 0x30 ? null : new TextDecoder().decode(input);
  if (text === null) return input as Uint8Array;
  const m = /^\s*-----BEGIN CERTIFICATE-----\r?\n([A-Za-z0-9+/=\r\n]+)-----END CERTIFICATE-----\s*$/.exec(text);
  return m ? base64Decode(m[1]!.replace(/[\r\n]/g, '')) : null;
}

function commonName(cert: Certificate): string {
  const subject = cert.tbsCertificate.subject;
  for (const rdn of subject) for (const atv of rdn) if (atv.type === ID_CN) return atv.value.toString();
  return subject.map((rdn) => rdn.map((atv) => `${atv.type}=${atv.value.toString()}`).join('+')).join(', ');
}

/**
 * Reads a pinned TSA certificate (PEM or DER). It must be an X.509 certificate whose extended key usage is
 * critical and names id-kp-timeStamping (RFC 3161 §2.3): any other certificate is an unusable pin.
 */
export function parseTsaCertificate(input: Uint8Array | string): TsaCertificateResult {
  try {
    const der = certificateDer(input);
    if (der === null)
      return { ok: false, reason: 'not a certificate: expected one PEM "CERTIFICATE" block or its DER bytes' };
    const cert = AsnConvert.parse(der, Certificate);
    if (!equal(bytes(AsnConvert.serialize(cert)), der))
      return { ok: false, reason: 'the certificate is not DER-encoded (or has bytes after it)' };
    const eku = cert.tbsCertificate.extensions?.find((e) => e.extnID === id_ce_extKeyUsage);
    if (!eku?.critical)
      return {
        ok: false,
        reason:
          'the certificate has no critical extended key usage: RFC 3161 §2.3 requires one naming id-kp-timeStamping',
      };
    const usages = AsnConvert.parse(eku.extnValue, ExtendedKeyUsage);
    if (!usages.includes(id_kp_timeStamping))
      return {
        ok: false,
        reason:
          "the certificate's extended key usage does not name id-kp-timeStamping: it is not a time-stamping authority's",
      };
    const v = cert.tbsCertificate.validity;
    return {
      ok: true,
      tsa: { der, cert, name: commonName(cert), notBefore: v.notBefore.getTime(), notAfter: v.notAfter.getTime() },
    };
  } catch (e) {
    return { ok: false, reason: `not a certificate: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The DER TimeStampReq for SHA-256(subject), asking for the TSA's certificate, with a nonce (RFC 3161 §2.4.1). */
export function timeStampRequest(subject: Uint8Array, nonce: Uint8Array): Uint8Array {
  const req = new TimeStampReq({
    version: 1, // eslint-disable-line @typescript-eslint/no-unsafe-enum-assignment -- RFC 3161's integer; the library's enum member has the same value
    messageImprint: new MessageImprint({
      hashAlgorithm: new AlgorithmIdentifier({ algorithm: ID_SHA256 }),
      hashedMessage: new OctetString(sha256(subject)),
    }),
    nonce: buf(nonce[0]! & 0x80 ? Uint8Array.of(0, ...nonce) : nonce),
    certReq: true,
  });
  return bytes(AsnConvert.serialize(req));
}

/** A TSA's answer: the token when granted (status 0 or 1, RFC 3161 §2.4.2), else why not. */
export function tokenFromResponse(
  response: Uint8Array,
  subject: Uint8Array,
  nonce: Uint8Array,
): { ok: true; token: Uint8Array } | { ok: false; reason: string } {
  try {
    const resp = AsnConvert.parse(response, TimeStampResp);
    const status = resp.status.status as number;
    if (status !== 0 && status !== 1)
      return {
        ok: false,
        reason: `the TSA refused (PKIStatus ${status}${resp.status.statusString ? `: ${resp.status.statusString.join('; ')}` : ''})`,
      };
    if (!resp.timeStampToken) return { ok: false, reason: 'the TSA granted the request but sent no token' };
    const token = bytes(AsnConvert.serialize(resp.timeStampToken));
    const info = tstInfoOf(token);
    if (typeof info === 'string') return { ok: false, reason: info };
    if (!equal(bytes(info.messageImprint.hashedMessage.buffer), sha256(subject)))
      return { ok: false, reason: "the token's message imprint is not the digest that was sent" };
    const sent = BigInt('0x' + hex(nonce));
    if (!info.nonce || BigInt('0x' + (hex(bytes(info.nonce)) || '0')) !== sent)
      return { ok: false, reason: "the token's nonce is not the one that was sent (a replayed or misrouted answer)" };
    return { ok: true, token };
  } catch (e) {
    return { ok: false, reason: `not a time-stamp response: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function signedDataOf(token: Uint8Array): SignedData | string {
  const ci = AsnConvert.parse(token, ContentInfo);
  if (ci.contentType !== id_signedData) return 'the token is not CMS SignedData';
  if (!equal(bytes(AsnConvert.serialize(ci)), token)) return 'the token is not DER-encoded (or has bytes after it)';
  return AsnConvert.parse(ci.content, SignedData);
}

function eContentOf(sd: SignedData): Uint8Array | string {
  if (sd.encapContentInfo.eContentType !== ID_CT_TSTINFO) return "the token's content is not a TSTInfo";
  const c = sd.encapContentInfo.eContent;
  const raw = c?.single?.buffer ?? c?.any;
  return raw ? bytes(raw) : 'the token carries no TSTInfo';
}

function tstInfoOf(token: Uint8Array): TSTInfo | string {
  const sd = signedDataOf(token);
  if (typeof sd === 'string') return sd;
  const e = eContentOf(sd);
  return typeof e === 'string' ? e : AsnConvert.parse(e, TSTInfo);
}

/**
 * Checks a token over `subject` against a pinned TSA certificate (spec/TIME.md §7.1), in this order: the
 * token's form; the imprint (SHA-256 of the subject); the signer (the pinned certificate, by issuer and
 * serial or key identifier, and its hash in the signing-certificate attribute); the signed attributes'
 * content type and digest; the signature; genTime within the certificate's validity. Never throws.
 */
export async function checkToken(token: Uint8Array, subject: Uint8Array, tsa: TsaCertificate): Promise<TokenCheck> {
  let sd: SignedData | string;
  let info: TSTInfo;
  let content: Uint8Array;
  try {
    sd = signedDataOf(token);
    if (typeof sd === 'string') return { ok: false, code: 'TIMESTAMP_INVALID', reason: sd };
    const e = eContentOf(sd);
    if (typeof e === 'string') return { ok: false, code: 'TIMESTAMP_INVALID', reason: e };
    content = e;
    info = AsnConvert.parse(e, TSTInfo);
  } catch (e) {
    return {
      ok: false,
      code: 'TIMESTAMP_INVALID',
      reason: `the token does not parse: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
  if ((info.version as number) !== 1)
    return {
      ok: false,
      code: 'TIMESTAMP_INVALID',
      reason: `TSTInfo version ${String(info.version)}; only version 1 is defined`,
    };
  if (info.messageImprint.hashAlgorithm.algorithm !== ID_SHA256)
    return { ok: false, code: 'TIMESTAMP_INVALID', reason: 'the message imprint is not SHA-256 (spec/TIME.md §4.1)' };
  if (!equal(bytes(info.messageImprint.hashedMessage.buffer), sha256(subject))) {
    return {
      ok: false,
      code: 'TIMESTAMP_MISMATCH',
      reason:
        "the token's message imprint is not the SHA-256 of this subject: it stamps something else (another head, or an altered one)",
    };
  }
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
  const t = info.genTime;
  if (!(t instanceof Date) || Number.isNaN(t.getTime()))
    return { ok: false, code: 'TIMESTAMP_INVALID', reason: 'genTime is not a time' };
  if (t < tsa.notBefore || t > tsa.notAfter) {
    return {
      ok: false,
      code: 'TIMESTAMP_CERT_EXPIRED',
      reason: `genTime ${t.toISOString()} is outside the TSA certificate's validity (${tsa.notBefore.toISOString()} to ${tsa.notAfter.toISOString()}): the certificate was not valid when the token was made`,
    };
  }
  return {
    ok: true,
    facts: { gen_time: t.toISOString(), tsa: tsa.name, serial: hex(bytes(info.serialNumber)), policy: info.policy },
  };
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
