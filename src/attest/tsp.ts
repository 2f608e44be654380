/**
 * RFC 3161 time-stamp tokens (with RFC 5816's signing-certificate-v2), spec/TIME.md §4 and §7.1: the
 * request a client sends, and the offline check of a token against one pinned TSA certificate. The ASN.1
 * is read by @peculiar/asn1-* (schemas for CMS, X.509 and TSP) and the signature checked by WebCrypto, so
 * this runs unchanged in a browser (the verification page) and in Node (globalThis.crypto). Every byte is
 * hostile: nothing here throws on input; a defect is a coded reason.
 */
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { ContentInfo, SignedData, id_signedData } from '@peculiar/asn1-cms';
import {
  AlgorithmIdentifier,
  Certificate,
  ExtendedKeyUsage,
  id_ce_extKeyUsage,
  id_kp_timeStamping,
} from '@peculiar/asn1-x509';
import { MessageImprint, TSTInfo, TimeStampReq, TimeStampResp } from '@peculiar/asn1-tsp';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytes, buf, equal, hex } from './der-bytes.js';
import { ID_CT_TSTINFO, ID_SHA256, signerDefectOf } from './tsp-signer.js';
import { base64Decode } from '../receipt/base64.js';

const ID_CN = '2.5.4.3';

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

/**
 * Random bytes as the content of a DER INTEGER for the same positive number: no leading zero byte but the one a
 * high bit needs. A nonce drawn with a zero first byte went as it was, padding DER forbids, and a TSA refused
 * about one request in 512 ("Bad request format": OpenSSL's `illegal padding`).
 */
function derPositive(n: Uint8Array): Uint8Array {
  let i = 0;
  while (i < n.length - 1 && n[i] === 0) i++;
  const rest = n.subarray(i);
  return rest[0]! & 0x80 ? Uint8Array.of(0, ...rest) : rest;
}

/** The DER TimeStampReq for SHA-256(subject), asking for the TSA's certificate, with a nonce (RFC 3161 §2.4.1). */
export function timeStampRequest(subject: Uint8Array, nonce: Uint8Array): Uint8Array {
  const req = new TimeStampReq({
    version: 1, // eslint-disable-line @typescript-eslint/no-unsafe-enum-assignment -- RFC 3161's integer; the library's enum member has the same value
    messageImprint: new MessageImprint({
      hashAlgorithm: new AlgorithmIdentifier({ algorithm: ID_SHA256 }),
      hashedMessage: new OctetString(sha256(subject)),
    }),
    nonce: buf(derPositive(nonce)),
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
  const signer = await signerDefectOf(sd, content, tsa);
  if (signer) return signer;
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
