"""Independent time and co-signatures in receipts (spec/TIME.md §6–§7): RFC 3161 time-stamp tokens over a head,
checked against pinned TSA certificates, and DSSE co-signature envelopes over ranges of steps, counted against
pinned Ed25519 keys and a threshold. Pure; every malformed byte is a coded problem, never an exception."""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .canonical import canonical_json, is_digest, is_seq
from .der import (ECDSA_SIGNATURES, HASHES, INT, OCTETS, RSA_SIGNATURES, SEQ, SET, Certificate, DerError, Tlv, ecdsa_verify, expect,
                  integer, oid, parse_certificate, rsa_pkcs1_verify, time_value, whole)
from .ed25519 import signature_defect

COSIGN_PAYLOAD_TYPE = "application/vnd.stepchain.cosignature+json"
OID_SIGNED_DATA, OID_TST_INFO = "1.2.840.113549.1.7.2", "1.2.840.113549.1.9.16.1.4"
OID_CONTENT_TYPE, OID_MESSAGE_DIGEST = "1.2.840.113549.1.9.3", "1.2.840.113549.1.9.4"
OID_SIGNING_CERT, OID_SIGNING_CERT_V2 = "1.2.840.113549.1.9.16.2.12", "1.2.840.113549.1.9.16.2.47"


class AttestError(ValueError):
    """A caller's error (the CLI exits 2): an unusable TSA certificate or co-signer key."""


def _b64(s: Any, limit: int) -> Optional[bytes]:
    if not isinstance(s, str) or len(s) > limit or len(s) % 4:
        return None
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if base64.b64encode(raw).decode() == s else None


def load_tsa_certificate(data: bytes | str) -> Certificate:
    """A pinned TSA certificate (§4.2), PEM or DER; AttestError when it is not usable."""
    raw = data.encode() if isinstance(data, str) else data
    m = re.search(rb"-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+)-----END CERTIFICATE-----", raw)
    if m:
        raw = base64.b64decode(b"".join(m.group(1).split()))
    try:
        cert = parse_certificate(raw)
    except (DerError, IndexError, ValueError) as e:
        raise AttestError(f"the TSA certificate is not one DER X.509 certificate: {e}") from None
    if not cert.timestamping:
        raise AttestError("the TSA certificate has no critical extended key usage naming id-kp-timeStamping (RFC 3161 §2.3)")
    return cert


@dataclass
class Cosigner:
    name: str
    public_key: bytes

    @property
    def key_id(self) -> str:
        return "sha256:" + hashlib.sha256(self.public_key).hexdigest()


def timestamp_subject(genesis_hash: str, seq: int, step_hash: str) -> bytes:
    return canonical_json({"genesis_hash": genesis_hash, "seq": seq, "step_hash": step_hash,
                           "type": "stepchain-timestamp-subject/v1"}).encode("utf-8")


def timestamps_defect(v: Any) -> Optional[str]:
    if not isinstance(v, list) or not 1 <= len(v) <= 16:
        return "timestamps must be an array of 1 to 16 entries"
    for i, e in enumerate(v):
        if (not isinstance(e, dict) or sorted(e) != ["seq", "step_hash", "token"] or not is_seq(e["seq"]) or not is_digest(e["step_hash"])
                or _b64(e["token"], 65536) is None):
            return f'timestamps[{i}] must be {{"seq", "step_hash", "token"}} with token the canonical base64 of the DER token'
    return None


def statement_of(envelope: Any) -> Optional[dict[str, Any]]:
    """The well-formed statement (§5.1) of a well-formed envelope (§5.2), or None."""
    if not isinstance(envelope, dict) or sorted(envelope) != ["payload", "payloadType", "signatures"]:
        return None
    if envelope["payloadType"] != COSIGN_PAYLOAD_TYPE:
        return None
    sigs = envelope["signatures"]
    if not isinstance(sigs, list) or not 1 <= len(sigs) <= 64:
        return None
    ids = []
    for s in sigs:
        if not isinstance(s, dict) or sorted(s) != ["keyid", "sig"] or not is_digest(s["keyid"]) or _b64(s["sig"], 88) is None:
            return None
        ids.append(s["keyid"])
    if len(set(ids)) != len(ids):
        return None
    payload = _b64(envelope["payload"], 4096)
    if payload is None:
        return None
    try:
        st = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if (not isinstance(st, dict) or sorted(st) != ["from", "genesis_hash", "prev_hash", "step_hash", "to", "type"]
            or st["type"] != "stepchain-cosignature/v1" or not all(is_seq(st[k]) and isinstance(st[k], int) for k in ("from", "to"))
            or st["from"] > st["to"] or not all(is_digest(st[k]) for k in ("genesis_hash", "prev_hash", "step_hash"))):
        return None
    try:
        if canonical_json(st).encode("utf-8") != payload:
            return None
    except ValueError:
        return None
    return st


def cosignatures_defect(v: Any) -> Optional[str]:
    if not isinstance(v, list) or not 1 <= len(v) <= 64:
        return "cosignatures must be an array of 1 to 64 envelopes"
    for i, e in enumerate(v):
        if statement_of(e) is None:
            return f"cosignatures[{i}] is not a DSSE envelope of a well-formed stepchain-cosignature/v1 statement (TIME.md §5)"
    return None


def pae(payload_type: str, body: bytes) -> bytes:
    t = payload_type.encode()
    return b"DSSEv1 " + str(len(t)).encode() + b" " + t + b" " + str(len(body)).encode() + b" " + body


class _TokenProblem(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class TokenFacts:
    gen_time: str
    serial: int
    tsa: str


def check_token(token: bytes, imprint: bytes, cert: Certificate) -> TokenFacts:
    """§7.1 step 3 against one certificate; raises _TokenProblem with the code of the first failure."""
    def invalid(why: str) -> _TokenProblem:
        return _TokenProblem("TIMESTAMP_INVALID", why)
    try:
        ci = expect(whole(token), SEQ, "ContentInfo").children()
        if len(ci) != 2 or oid(ci[0]) != OID_SIGNED_DATA or ci[1].tag != 0xA0:
            raise invalid("the token is not a ContentInfo of type id-signedData")
        sd = expect(ci[1].children()[0], SEQ, "SignedData").children()
        if integer(sd[0]) != 3:
            raise invalid("SignedData version is not 3")
        digest_algs = [oid(a.children()[0]) for a in expect(sd[1], SET, "digestAlgorithms").children()]
        eci = expect(sd[2], SEQ, "encapContentInfo").children()
        if oid(eci[0]) != OID_TST_INFO or len(eci) != 2 or eci[1].tag != 0xA0:
            raise invalid("encapContentInfo is not a TSTInfo with its content present")
        tst_bytes = expect(eci[1].children()[0], OCTETS, "eContent").content
        tst = expect(whole(tst_bytes), SEQ, "TSTInfo").children()
        if integer(tst[0]) != 1:
            raise invalid("TSTInfo version is not 1")
        mi = expect(tst[2], SEQ, "messageImprint").children()
        serial = integer(tst[3])
        gen_time = time_value(tst[4])
        if HASHES.get(oid(mi[0].children()[0])) != "sha256":
            raise invalid("the messageImprint's hash algorithm is not SHA-256")
        if expect(mi[1], OCTETS, "hashedMessage").content != imprint:
            raise _TokenProblem("TIMESTAMP_MISMATCH", "the token's messageImprint is not the SHA-256 of this head's timestamp subject: it stamps something else")
        signer_infos = expect(sd[-1], SET, "signerInfos").children()
        if len(signer_infos) != 1:
            raise invalid(f"the token has {len(signer_infos)} SignerInfos; exactly one is allowed")
        si = expect(signer_infos[0], SEQ, "SignerInfo").children()
        digest_alg = oid(si[2].children()[0])
        if digest_alg not in digest_algs or HASHES.get(digest_alg) not in ("sha256", "sha384", "sha512"):
            raise invalid("the SignerInfo's digest algorithm is not among SignedData's, or not SHA-256/384/512")
        if not _names(si[1], cert):
            raise _TokenProblem("TIMESTAMP_SIGNER", "the token's signer is not the pinned TSA certificate")
        if si[3].tag != 0xA0:
            raise invalid("the SignerInfo has no signed attributes")
        _check_attributes(si[3], tst_bytes, HASHES[digest_alg], cert)
        sig_alg = oid(si[4].children()[0])
        signature = expect(si[5], OCTETS, "signature").content
        signed = b"\x31" + si[3].data[si[3].start + 1:si[3].end]  # the attributes as a SET OF (RFC 5652 §5.4)
        if sig_alg in RSA_SIGNATURES:
            if cert.key_kind != "rsa":
                raise _TokenProblem("TIMESTAMP_SIGNER", "the token is signed with RSA; the pinned certificate's key is not an RSA key")
            ok = rsa_pkcs1_verify(cert.key, RSA_SIGNATURES[sig_alg] or HASHES[digest_alg], signed, signature)
        elif sig_alg in ECDSA_SIGNATURES:
            if cert.key_kind != "ec":
                raise _TokenProblem("TIMESTAMP_SIGNER", "the token is signed with ECDSA; the pinned certificate's key is not an EC key")
            ok = ecdsa_verify(cert.key, ECDSA_SIGNATURES[sig_alg], signed, signature)
        else:
            raise invalid(f"signature algorithm {sig_alg} is not RSASSA-PKCS1-v1_5 or ECDSA with SHA-256/384/512")
        if not ok:
            raise invalid("the token's signature does not verify over its signed attributes with the pinned certificate's key")
    except (DerError, IndexError, ValueError, KeyError) as e:
        if isinstance(e, _TokenProblem):
            raise
        raise invalid(f"the token is not a DER RFC 3161 token: {e}") from None
    if not cert.not_before <= gen_time <= cert.not_after:
        raise _TokenProblem("TIMESTAMP_CERT_EXPIRED", f"genTime {gen_time.isoformat()} is outside the TSA certificate's validity "
                            f"({cert.not_before.isoformat()} – {cert.not_after.isoformat()})")
    return TokenFacts(gen_time.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (gen_time.microsecond // 1000), serial, cert.common_name)


def _names(sid: Tlv, cert: Certificate) -> bool:
    if sid.tag == SEQ:
        parts = sid.children()
        return len(parts) == 2 and parts[0].raw == cert.issuer and integer(parts[1]) == cert.serial
    if sid.tag == 0x80:
        return cert.ski is not None and sid.content == cert.ski
    return False


def _check_attributes(attrs: Tlv, tst_bytes: bytes, hash_name: str, cert: Certificate) -> None:
    values: dict[str, Tlv] = {}
    for a in attrs.children():
        parts = expect(a, SEQ, "Attribute").children()
        vals = expect(parts[1], SET, "attrValues").children()
        values[oid(parts[0])] = vals[0]
    if OID_CONTENT_TYPE not in values or oid(values[OID_CONTENT_TYPE]) != OID_TST_INFO:
        raise _TokenProblem("TIMESTAMP_INVALID", "the signed attributes have no content-type of id-ct-TSTInfo")
    md = values.get(OID_MESSAGE_DIGEST)
    if md is None or expect(md, OCTETS, "messageDigest").content != hashlib.new(hash_name, tst_bytes).digest():
        raise _TokenProblem("TIMESTAMP_INVALID", "the message-digest attribute is not the digest of the TSTInfo: the token was altered")
    if OID_SIGNING_CERT_V2 in values:
        ess = values[OID_SIGNING_CERT_V2].children()[0].children()[0].children()
        h = "sha256"
        if ess[0].tag == SEQ:
            h = HASHES.get(oid(ess[0].children()[0]), "")
            ess = ess[1:]
        if h not in ("sha256", "sha384", "sha512", "sha1"):
            raise _TokenProblem("TIMESTAMP_INVALID", "the signing-certificate-v2 hash algorithm is not known")
    elif OID_SIGNING_CERT in values:
        ess = values[OID_SIGNING_CERT].children()[0].children()[0].children()
        h = "sha1"
    else:
        raise _TokenProblem("TIMESTAMP_INVALID", "the signed attributes have no signing-certificate(-v2) attribute")
    if expect(ess[0], OCTETS, "certHash").content != hashlib.new(h, cert.der).digest():
        raise _TokenProblem("TIMESTAMP_SIGNER", "the signing-certificate attribute names another certificate than the pinned one")


@dataclass
class AttestProblem:
    code: str
    message: str
    path: str


@dataclass
class AttestChecks:
    """Fed the manifest's members and the chain's verified step hashes; finish() gives TIME.md §7's problems."""
    tsa_certs: Sequence[Certificate] = ()
    cosigners: Sequence[Cosigner] = ()
    threshold: Optional[int] = None
    timestamps: Optional[list[dict[str, Any]]] = None
    cosignatures: Optional[list[dict[str, Any]]] = None
    hashes: dict[int, str] = field(default_factory=dict)
    report: dict[str, Any] = field(default_factory=dict)

    def extensions(self) -> dict[str, Any]:
        def timestamps(v: Any) -> Optional[str]:
            why = timestamps_defect(v)
            if why is None:
                self.timestamps = v
            return why

        def cosignatures(v: Any) -> Optional[str]:
            why = cosignatures_defect(v)
            if why is None:
                self.cosignatures = v
            return why
        return {"timestamps": timestamps, "cosignatures": cosignatures}

    def line(self, clean: bool, seq: Optional[int], step_hash: Optional[str]) -> None:
        if clean and seq is not None and step_hash is not None:
            self.hashes.setdefault(seq, step_hash)

    def finish(self, manifest: dict[str, Any], genesis_hash: str) -> list[AttestProblem]:
        out: list[AttestProblem] = []
        rng = manifest["range"]
        stamps: list[dict[str, Any]] = []
        for i, e in enumerate(self.timestamps or []):
            path = f"/timestamps/{i}"
            if not rng["from"] <= e["seq"] <= rng["to"] or self.hashes.get(e["seq"]) != e["step_hash"]:
                out.append(AttestProblem("TIMESTAMP_MISMATCH", f"TIMESTAMP_MISMATCH: timestamps[{i}] names seq {e['seq']} with step hash "
                                         f"{e['step_hash']}, which is not the receipt chain's", path))
                continue
            if not self.tsa_certs:
                stamps.append({"seq": e["seq"], "step_hash": e["step_hash"], "checked": False})
                continue
            token = base64.b64decode(e["token"])
            imprint = hashlib.sha256(timestamp_subject(genesis_hash, e["seq"], e["step_hash"])).digest()
            first: Optional[_TokenProblem] = None
            facts: Optional[TokenFacts] = None
            for cert in self.tsa_certs:
                try:
                    facts = check_token(token, imprint, cert)
                    break
                except _TokenProblem as p:
                    first = first or p
            if facts is None:
                assert first is not None
                out.append(AttestProblem(first.code, f"{first.code}: timestamps[{i}]: {first}", path))
            else:
                stamps.append({"seq": e["seq"], "step_hash": e["step_hash"], "checked": True, "gen_time": facts.gen_time,
                               "tsa": facts.tsa, "serial": facts.serial})
        if self.tsa_certs and self.timestamps is None:
            out.append(AttestProblem("TIMESTAMP_MISSING", "TIMESTAMP_MISSING: a TSA certificate was pinned, and the receipt carries no time-stamp token", "/timestamps"))
        pinned = {c.key_id: c for c in self.cosigners}
        signed_by: set[str] = set()
        cosigned: list[dict[str, Any]] = []
        for i, env in enumerate(self.cosignatures or []):
            st = statement_of(env)
            assert st is not None
            path = f"/cosignatures/{i}"
            why = None
            if st["genesis_hash"] != genesis_hash:
                why = "its statement names another journal's genesis"
            elif not rng["from"] <= st["to"] <= rng["to"] or self.hashes.get(st["to"]) != st["step_hash"]:
                why = f"its statement's step {st['to']} is not the receipt chain's"
            elif st["from"] == rng["from"] and st["prev_hash"] != rng["prev_hash"]:
                why = "its statement's prev_hash is not the range's"
            elif st["from"] > rng["from"] and self.hashes.get(st["from"] - 1) != st["prev_hash"]:
                why = f"its statement's prev_hash is not the chain's step hash at seq {st['from'] - 1}"
            if why is not None:
                out.append(AttestProblem("COSIGNATURE_MISMATCH", f"COSIGNATURE_MISMATCH: cosignatures[{i}]: {why}", path))
                continue
            body = pae(COSIGN_PAYLOAD_TYPE, base64.b64decode(env["payload"]))
            for j, s in enumerate(env["signatures"]):
                c = pinned.get(s["keyid"])
                verified = False
                if c is not None:
                    sig = base64.b64decode(s["sig"])
                    defect = signature_defect(body, sig, c.public_key) if len(sig) == 64 else "not 64 bytes"
                    if defect:
                        out.append(AttestProblem("COSIGNATURE_INVALID", f"COSIGNATURE_INVALID: cosignatures[{i}]: the signature of {c.name} "
                                                 f"({c.key_id}) does not verify over its statement: {defect}", f"{path}/signatures/{j}"))
                    else:
                        verified = True
                        signed_by.add(c.key_id)
                cosigned.append({"keyid": s["keyid"], "name": None if c is None else c.name, "from": st["from"], "to": st["to"],
                                 "pinned": c is not None, "verified": verified})
        t = self.threshold
        if self.cosigners:
            n = len(pinned)
            t = n if t is None else t
            if not isinstance(t, int) or isinstance(t, bool) or not 1 <= t <= n:
                out.append(AttestProblem("COSIGN_QUORUM", f"COSIGN_QUORUM: the threshold {t!r} is not an integer from 1 to {n}", "/cosignatures"))
            elif len(signed_by) < t:
                out.append(AttestProblem("COSIGN_QUORUM", f"COSIGN_QUORUM: {len(signed_by)} of the {n} co-signers you pinned signed statements "
                                         f"over this receipt's steps; the threshold is {t}", "/cosignatures"))
        self.report = {"timestamps": stamps, "cosignatures": cosigned, "threshold": t if self.cosigners else None,
                       "cosigned_by": sorted(pinned[k].name for k in signed_by)}
        return out
