"""A strict DER reader (ITU-T X.690 §10) and the X.509 and public-key pieces that spec/TIME.md §4.2 and §7.1 need:
certificates (issuer, serial, validity, key, extended key usage, subject key identifier), RSASSA-PKCS1-v1_5 and
ECDSA (P-256, P-384, P-521) signature verification. Verification only, of public data: no constant-time code.
Pure Python, stdlib only; every malformed input is a DerError, nothing else."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional


class DerError(ValueError):
    pass


@dataclass
class Tlv:
    tag: int        # the identifier octet (class, constructed bit, number < 31)
    data: bytes     # the whole buffer
    start: int      # the first identifier byte
    body: int       # the first content byte
    end: int        # one past the last content byte

    @property
    def content(self) -> bytes:
        return self.data[self.body:self.end]

    @property
    def raw(self) -> bytes:
        return self.data[self.start:self.end]

    def children(self) -> list["Tlv"]:
        if not self.tag & 0x20:
            raise DerError("a primitive value has no children")
        out, at = [], self.body
        while at < self.end:
            t = read(self.data, at, self.end)
            out.append(t)
            at = t.end
        return out


def read(data: bytes, at: int = 0, limit: Optional[int] = None) -> Tlv:
    limit = len(data) if limit is None else limit
    if at + 2 > limit:
        raise DerError("truncated")
    tag = data[at]
    if tag & 0x1F == 0x1F:
        raise DerError("high tag numbers are not used here")
    n = data[at + 1]
    pos = at + 2
    if n & 0x80:
        k = n & 0x7F
        if k == 0 or k > 4 or pos + k > limit:
            raise DerError("indefinite or oversized length")
        length = int.from_bytes(data[pos:pos + k], "big")
        if data[pos] == 0 or length < 0x80:
            raise DerError("a length not in its shortest form (not DER)")
        pos += k
    else:
        length = n
    if pos + length > limit:
        raise DerError("a value runs past its container")
    return Tlv(tag, data, at, pos, pos + length)


def whole(data: bytes) -> Tlv:
    t = read(data)
    if t.end != len(data):
        raise DerError("bytes after the value")
    return t


def expect(t: Tlv, tag: int, what: str) -> Tlv:
    if t.tag != tag:
        raise DerError(f"{what}: expected tag 0x{tag:02x}, found 0x{t.tag:02x}")
    return t


SEQ, SET, INT, OID, OCTETS, BITS, NULL = 0x30, 0x31, 0x02, 0x06, 0x04, 0x03, 0x05


def integer(t: Tlv) -> int:
    c = expect(t, INT, "INTEGER").content
    if not c or (len(c) > 1 and (c[0] == 0 and c[1] < 0x80 or c[0] == 0xFF and c[1] >= 0x80)):
        raise DerError("an INTEGER not in its shortest form")
    return int.from_bytes(c, "big", signed=True)


def oid(t: Tlv) -> str:
    c = expect(t, OID, "OBJECT IDENTIFIER").content
    if not c or c[-1] & 0x80:
        raise DerError("a malformed OBJECT IDENTIFIER")
    arcs, v = [], 0
    for i, b in enumerate(c):
        if v == 0 and b == 0x80:
            raise DerError("an OBJECT IDENTIFIER arc not in its shortest form")
        v = v << 7 | b & 0x7F
        if not b & 0x80:
            arcs.append(v)
            v = 0
    first = min(arcs[0] // 40, 2)
    return ".".join(map(str, [first, arcs[0] - 40 * first, *arcs[1:]]))


def time_value(t: Tlv) -> datetime:
    s = t.content.decode("ascii", "replace")
    try:
        if t.tag == 0x17 and len(s) == 13 and s.endswith("Z"):  # UTCTime YYMMDDHHMMSSZ
            year = int(s[:2])
            return datetime.strptime(("19" if year >= 50 else "20") + s, "%Y%m%d%H%M%SZ").replace(tzinfo=timezone.utc)
        if t.tag == 0x18 and s.endswith("Z"):  # GeneralizedTime YYYYMMDDHHMMSS[.fff]Z
            base, _, frac = s[:-1].partition(".")
            if len(base) != 14 or (frac and (not frac.isdigit() or frac.endswith("0"))):
                raise DerError("a GeneralizedTime not in DER form")
            dt = datetime.strptime(base, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
            return dt.replace(microsecond=int((frac + "000000")[:6])) if frac else dt
    except ValueError:
        pass
    raise DerError("a malformed time")


# ------------------------------------------------------------------------------------------ certificates

OID_EKU, OID_SKI, OID_TIMESTAMPING = "2.5.29.37", "2.5.29.14", "1.3.6.1.5.5.7.3.8"
OID_RSA, OID_EC = "1.2.840.113549.1.1.1", "1.2.840.10045.2.1"
OID_CN = "2.5.4.3"


@dataclass
class Certificate:
    der: bytes
    issuer: bytes          # the DER of the issuer Name
    serial: int
    not_before: datetime
    not_after: datetime
    key_kind: str          # rsa | ec
    key: tuple             # (n, e) or (curve name, x, y)
    ski: Optional[bytes]
    timestamping: bool     # a critical extended key usage naming id-kp-timeStamping
    common_name: str


def parse_certificate(der: bytes) -> Certificate:
    cert = expect(whole(der), SEQ, "Certificate").children()
    tbs = expect(cert[0], SEQ, "TBSCertificate").children()
    i = 1 if tbs[0].tag == 0xA0 else 0
    serial = integer(tbs[i])
    issuer = expect(tbs[i + 2], SEQ, "issuer").raw
    validity = expect(tbs[i + 3], SEQ, "validity").children()
    subject = expect(tbs[i + 4], SEQ, "subject")
    kind, key = _public_key(expect(tbs[i + 5], SEQ, "SubjectPublicKeyInfo"))
    ski, stamping = None, False
    for t in tbs[i + 6:]:
        if t.tag != 0xA3:
            continue
        for ext in expect(t.children()[0], SEQ, "extensions").children():
            parts = ext.children()
            name = oid(parts[0])
            critical = len(parts) == 3 and parts[1].tag == 0x01 and parts[1].content == b"\xff"
            value = whole(expect(parts[-1], OCTETS, "extnValue").content)
            if name == OID_EKU:
                stamping = critical and any(oid(u) == OID_TIMESTAMPING for u in expect(value, SEQ, "EKU").children())
            elif name == OID_SKI:
                ski = expect(value, OCTETS, "SKI").content
    return Certificate(der, issuer, serial, time_value(validity[0]), time_value(validity[1]), kind, key, ski, stamping, _common_name(subject))


def _common_name(name: Tlv) -> str:
    for rdn in name.children():
        for atv in rdn.children():
            a = atv.children()
            if oid(a[0]) == OID_CN:
                return a[1].content.decode("utf-8", "replace")
    return ""


CURVES = {  # name: (p, a, b, Gx, Gy, n, hash bytes of a coordinate)
    "1.2.840.10045.3.1.7": ("P-256", 2**256 - 2**224 + 2**192 + 2**96 - 1, -3,
                            0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B,
                            0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
                            0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
                            0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551, 32),
    "1.3.132.0.34": ("P-384", 2**384 - 2**128 - 2**96 + 2**32 - 1, -3,
                     0xB3312FA7E23EE7E4988E056BE3F82D19181D9C6EFE8141120314088F5013875AC656398D8A2ED19D2A85C8EDD3EC2AEF,
                     0xAA87CA22BE8B05378EB1C71EF320AD746E1D3B628BA79B9859F741E082542A385502F25DBF55296C3A545E3872760AB7,
                     0x3617DE4A96262C6F5D9E98BF9292DC29F8F41DBD289A147CE9DA3113B5F0B8C00A60B1CE1D7E819D7A431D7C90EA0E5F,
                     0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFC7634D81F4372DDF581A0DB248B0A77AECEC196ACCC52973, 48),
    "1.3.132.0.35": ("P-521", 2**521 - 1, -3,
                     0x0051953EB9618E1C9A1F929A21A0B68540EEA2DA725B99B315F3B8B489918EF109E156193951EC7E937B1652C0BD3BB1BF073573DF883D2C34F1EF451FD46B503F00,
                     0x00C6858E06B70404E9CD9E3ECB662395B4429C648139053FB521F828AF606B4D3DBAA14B5E77EFE75928FE1DC127A2FFA8DE3348B3C1856A429BF97E7E31C2E5BD66,
                     0x011839296A789A3BC0045C8A5FB42C7D1BD998F54449579B446817AFBD17273E662C97EE72995EF42640C550B9013FAD0761353C7086A272C24088BE94769FD16650,
                     0x01FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFA51868783BF2F966B7FCC0148F709A5D03BB5C9B8899C47AEBB6FB71E91386409, 66),
}


def _public_key(spki: Tlv) -> tuple[str, tuple]:
    alg, bits = spki.children()[:2]
    parts = alg.children()
    name = oid(parts[0])
    raw = expect(bits, BITS, "subjectPublicKey").content
    if not raw or raw[0] != 0:
        raise DerError("a public key BIT STRING with unused bits")
    if name == OID_RSA:
        n, e = (integer(x) for x in expect(whole(raw[1:]), SEQ, "RSAPublicKey").children()[:2])
        return "rsa", (n, e)
    if name == OID_EC and len(parts) == 2 and parts[1].tag == OID and oid(parts[1]) in CURVES:
        curve = CURVES[oid(parts[1])]
        size = curve[7]
        point = raw[1:]
        if len(point) != 1 + 2 * size or point[0] != 4:
            raise DerError("an EC public key must be an uncompressed point")
        x, y = int.from_bytes(point[1:1 + size], "big"), int.from_bytes(point[1 + size:], "big")
        p, a, b = curve[1], curve[2], curve[3]
        if not (x < p and y < p and (y * y - x * x * x - a * x - b) % p == 0):
            raise DerError("the EC public key is not on its curve")
        return "ec", (oid(parts[1]), x, y)
    return "other", ()


HASHES = {"2.16.840.1.101.3.4.2.1": "sha256", "2.16.840.1.101.3.4.2.2": "sha384", "2.16.840.1.101.3.4.2.3": "sha512", "1.3.14.3.2.26": "sha1"}
DIGEST_INFO_PREFIX = {
    "sha256": bytes.fromhex("3031300d060960864801650304020105000420"),
    "sha384": bytes.fromhex("3041300d060960864801650304020205000430"),
    "sha512": bytes.fromhex("3051300d060960864801650304020305000440"),
}
RSA_SIGNATURES = {"1.2.840.113549.1.1.1": None, "1.2.840.113549.1.1.11": "sha256", "1.2.840.113549.1.1.12": "sha384", "1.2.840.113549.1.1.13": "sha512"}
ECDSA_SIGNATURES = {"1.2.840.10045.4.3.2": "sha256", "1.2.840.10045.4.3.3": "sha384", "1.2.840.10045.4.3.4": "sha512"}


def rsa_pkcs1_verify(key: tuple, hash_name: str, message: bytes, sig: bytes) -> bool:
    n, e = key
    k = (n.bit_length() + 7) // 8
    if len(sig) != k or int.from_bytes(sig, "big") >= n:
        return False
    em = pow(int.from_bytes(sig, "big"), e, n).to_bytes(k, "big")
    t = DIGEST_INFO_PREFIX[hash_name] + hashlib.new(hash_name, message).digest()
    return k >= len(t) + 11 and em == b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t


def _ec_add(p1: Optional[tuple[int, int]], p2: Optional[tuple[int, int]], p: int, a: int) -> Optional[tuple[int, int]]:
    if p1 is None:
        return p2
    if p2 is None:
        return p1
    if p1[0] == p2[0]:
        if (p1[1] + p2[1]) % p == 0:
            return None
        m = (3 * p1[0] * p1[0] + a) * pow(2 * p1[1], -1, p) % p
    else:
        m = (p2[1] - p1[1]) * pow(p2[0] - p1[0], -1, p) % p
    x = (m * m - p1[0] - p2[0]) % p
    return x, (m * (p1[0] - x) - p1[1]) % p


def _ec_mul(k: int, pt: tuple[int, int], p: int, a: int) -> Optional[tuple[int, int]]:
    out: Optional[tuple[int, int]] = None
    add: Optional[tuple[int, int]] = pt
    while k:
        if k & 1:
            out = _ec_add(out, add, p, a)
        add = _ec_add(add, add, p, a)
        k >>= 1
    return out


def ecdsa_verify(key: tuple, hash_name: str, message: bytes, sig: bytes) -> bool:
    curve_oid, qx, qy = key
    _, p, a, _, gx, gy, n, _ = CURVES[curve_oid]
    try:
        rs = expect(whole(sig), SEQ, "ECDSA-Sig-Value").children()
        if len(rs) != 2:
            return False
        r, s = integer(rs[0]), integer(rs[1])
    except DerError:
        return False
    if not (0 < r < n and 0 < s < n):
        return False
    digest = hashlib.new(hash_name, message).digest()
    e = int.from_bytes(digest, "big")
    if len(digest) * 8 > n.bit_length():
        e >>= len(digest) * 8 - n.bit_length()
    w = pow(s, -1, n)
    pt = _ec_add(_ec_mul(e * w % n, (gx, gy), p, a), _ec_mul(r * w % n, (qx, qy), p, a), p, a)
    return pt is not None and pt[0] % n == r
