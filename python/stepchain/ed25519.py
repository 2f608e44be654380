"""Ed25519 signature verification by the exact rules of spec/RECEIPT.md §5.1 (RFC 8032 §5.1.7 made exact): S < L;
A and R canonically encoded (y < p, no x = 0 with the sign bit); A not of small order; and the cofactorless
equation [S]B = R + [k]A, k = SHA-512(R || A || M) mod L. Written out from RFC 8032 because libraries differ on
exactly these points (the cofactored equation accepts mixed-order keys that Go, OpenSSL and libsodium refuse);
verification only, of public data, so no constant-time arithmetic is needed. Pure Python, stdlib only."""
from __future__ import annotations

import hashlib
from typing import Optional

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)

Point = tuple[int, int, int, int]  # extended coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, xy = T/Z
IDENTITY: Point = (0, 1, 1, 0)


def _add(p: Point, q: Point) -> Point:
    x1, y1, z1, t1 = p
    x2, y2, z2, t2 = q
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = 2 * t1 * t2 * D % P
    d = 2 * z1 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def _mul(k: int, p: Point) -> Point:
    q = IDENTITY
    while k > 0:
        if k & 1:
            q = _add(q, p)
        p = _add(p, p)
        k >>= 1
    return q


def _equal(p: Point, q: Point) -> bool:
    return (p[0] * q[2] - q[0] * p[2]) % P == 0 and (p[1] * q[2] - q[1] * p[2]) % P == 0


def _recover_x(y: int, sign: int) -> Optional[int]:
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P) % P
    if x2 == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    if (x & 1) != sign:
        x = P - x
    return x


def decode_point(data: bytes) -> Optional[Point]:
    """RFC 8032 §5.1.3, canonical encodings only; None when the bytes encode no point."""
    if len(data) != 32:
        return None
    n = int.from_bytes(data, "little")
    sign = n >> 255
    y = n & ((1 << 255) - 1)
    x = _recover_x(y, sign)
    if x is None:
        return None
    return (x, y, 1, x * y % P)


_GY = 4 * pow(5, P - 2, P) % P
BASE: Point = (_recover_x(_GY, 0) or 0, _GY, 1, (_recover_x(_GY, 0) or 0) * _GY % P)


def public_key_defect(raw: bytes) -> Optional[str]:
    """Why 32 bytes cannot be an Ed25519 public key under RECEIPT.md §5.1 items 2–3, or None."""
    if len(raw) != 32:
        return "is not 32 bytes"
    a = decode_point(raw)
    if a is None:
        return "is not the canonical encoding of a point on Ed25519"
    if _equal(_mul(8, a), IDENTITY):
        return "is a point of small order, which no signer can own: signatures with it verify for many messages"
    return None


def signature_defect(message: bytes, sig: bytes, public_key: bytes) -> Optional[str]:
    """Why the signature does not verify under RECEIPT.md §5.1, or None when it does."""
    if len(sig) != 64:
        return "the signature is not 64 bytes"
    why = public_key_defect(public_key)
    if why:
        return f"public_key {why}"
    r_bytes = sig[:32]
    s = int.from_bytes(sig[32:], "little")
    if s >= L:
        return "the signature's S is not reduced modulo L (a malleable, non-canonical encoding)"
    r = decode_point(r_bytes)
    if r is None:
        return "the signature's R is not the canonical encoding of a point"
    a = decode_point(public_key)
    assert a is not None
    k = int.from_bytes(hashlib.sha512(r_bytes + public_key + message).digest(), "little") % L
    if not _equal(_mul(s, BASE), _add(r, _mul(k, a))):
        return "the signature does not verify ([S]B ≠ R + [k]A)"
    return None
