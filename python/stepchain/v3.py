"""The commitments of a `stepchain/v3` record (spec/FORMAT.md §14.2–§14.5): units, chunks of long strings, the slot
keys and salts derived from the record's seed, the root, and the walk of a public-form record's shown values,
withheld markers and published secrets (spec/REDACTION.md §13.3, §13.6 step 2). Pure; a defect of hostile input
is a V3Defect with the code and the JSON Pointer where it was met, never another exception."""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .canonical import RESERVED_PREFIX, canonical_json, escape_token, is_digest, utf16_key

SLOTS = ["error", "input", "meta", "model", "prompt", "result", "tool_call"]
PART_MARKER = RESERVED_PREFIX + "part"
WITHHELD_MARKER = RESERVED_PREFIX + "withheld"
CHUNKS_MARKER = RESERVED_PREFIX + "chunks"
ERASED_MARKER = RESERVED_PREFIX + "erased"
TAG_MEMBER, TAG_ELEMENT, TAG_CHUNK, TAG_PART = b"\x6d", b"\x65", b"\x63", b"\x70"
SCALAR_MAX = 64
SEED_RE = re.compile(r"[0-9a-f]{64}\Z")


class V3Defect(Exception):
    def __init__(self, code: str, path: str, message: str) -> None:
        super().__init__(f"{code} at {path or '/'}: {message}")
        self.code, self.path, self.message = code, path, message


def _sha(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p)
    return h.digest()


def escaped_text(s: str) -> bytes:
    """A string's escaped text: its JCS literal without the quotes, as UTF-8 (§14.3)."""
    return canonical_json(s)[1:-1].encode("utf-8")


def _cut_points(t: bytes) -> list[bool]:
    """ok[k] for 0 ≤ k ≤ |t|: k is not inside an escape and not before a UTF-8 continuation byte (§14.3)."""
    ok = [True] * (len(t) + 1)
    i = 0
    while i < len(t):
        if t[i] == 0x5C:  # backslash: \uXXXX is 6 bytes, the others 2
            n = 6 if t[i + 1:i + 2] == b"u" else 2
            for k in range(i + 1, min(i + n, len(t) + 1)):
                ok[k] = False
            i += n
            continue
        if t[i] & 0xC0 == 0x80:
            ok[i] = False
        i += 1
    return ok


def chunk_text(t: bytes) -> list[bytes]:
    """The chunks of a long string's escaped text (§14.3); one chunk (the text) when it is at most 64 bytes."""
    if len(t) <= SCALAR_MAX:
        return [t]
    size = 64 if len(t) <= 4096 else 256
    ok = _cut_points(t)
    out: list[bytes] = []
    s = 0
    while s < len(t):
        e = min(s + size, len(t))
        if e < len(t):
            k = next((k for k in range(e, s + size // 2, -1) if t[k - 1] == 0x20 and ok[k]), None)
            if k is None:
                k = next(k for k in range(e, s, -1) if ok[k])
            e = k
        out.append(t[s:e])
        s = e
    return out


def slot_keys(seed: bytes) -> list[bytes]:
    return [_sha(b"\x6b", seed, bytes([j]))[:16] for j in range(len(SLOTS))]


def salt_of(key: bytes, i: int) -> bytes:
    block = _sha(b"\x73", key, (i // 2).to_bytes(4, "big"))
    return block[16 * (i % 2):16 * (i % 2) + 16]


@dataclass
class Unit:
    index: int
    kind: str  # member | element | chunk
    path: str
    salt: bytes
    digest: bytes = b""
    text: Optional[str] = None


class _DerivedSalts:
    """Salt i of a slot from its key; numbers every unit in preorder."""

    def __init__(self, key: bytes) -> None:
        self.key, self.i, self.block, self.block_at = key, 0, b"", -1

    def next(self, path: str) -> tuple[int, bytes]:
        i = self.i
        self.i += 1
        if i // 2 != self.block_at:
            self.block_at = i // 2
            self.block = _sha(b"\x73", self.key, self.block_at.to_bytes(4, "big"))
        return i, self.block[16 * (i % 2):16 * (i % 2) + 16]

    def left(self) -> int:
        return 0


class _ListedSalts:
    """The published salts of a slot's disclosed units, taken in preorder (REDACTION.md §13.6 step 2.4)."""

    def __init__(self, salts: bytes) -> None:
        self.salts, self.i = salts, 0

    def next(self, path: str) -> tuple[int, bytes]:
        at = 16 * self.i
        if at + 16 > len(self.salts):
            raise V3Defect("SECRETS_INVALID", path, "a shown unit has no published salt (the slot's listed salts ran out): "
                           "a value stands where a withheld unit was, or the salts were cut")
        self.i += 1
        return self.i - 1, self.salts[at:at + 16]

    def left(self) -> int:
        return len(self.salts) // 16 - self.i


class _Walk:
    """Digests of one slot's units, bottom-up, numbered in preorder (§14.2). `public` accepts the withheld and
    chunk markers of a public form (REDACTION.md §13.3); `units` collects every unit when given."""

    def __init__(self, salts: Any, public: bool, units: Optional[list[Unit]] = None, erased: Optional[list[dict[str, Any]]] = None) -> None:
        self.salts, self.public, self.units = salts, public, units
        self.erased = erased  # a sealed record's walk (ERASURE.md §2): the erased markers met, in preorder

    def _unit(self, kind: str, path: str) -> Unit:
        i, salt = self.salts.next(path)
        u = Unit(i, kind, path, salt)
        if self.units is not None:
            self.units.append(u)
        return u

    def member(self, name: str, value: Any, path: str, absent: bool = False) -> bytes:
        u = self._unit("member", path)
        body = canonical_json(name).encode("utf-8")
        u.digest = _sha(TAG_MEMBER, u.salt, body) if absent else _sha(TAG_MEMBER, u.salt, body, self.repr(value, path))
        return u.digest

    def element(self, value: Any, path: str) -> bytes:
        if self.public and _is_withheld_one(value):
            return _withheld_digest(value, path)
        if self.erased is not None and isinstance(value, dict) and ERASED_MARKER in value:
            return self.erased_one(value, path)
        u = self._unit("element", path)
        u.digest = _sha(TAG_ELEMENT, u.salt, self.repr(value, path))
        return u.digest

    def chunk(self, t: bytes, path: str) -> bytes:
        u = self._unit("chunk", path)
        if self.units is not None:
            u.text = t.decode("utf-8")
        u.digest = _sha(TAG_CHUNK, u.salt, t)
        return u.digest

    def repr(self, v: Any, path: str) -> bytes:
        if isinstance(v, str):
            t = escaped_text(v)
            if len(t) <= SCALAR_MAX:
                return b'"' + t + b'"'
            return b"~" + b"".join(self.chunk(c, f"{path}#{k}") for k, c in enumerate(chunk_text(t)))
        if isinstance(v, list):
            return b"[" + b"".join(self.element(x, f"{path}/{k}") for k, x in enumerate(v))
        if isinstance(v, dict):
            return self.object(v, path)
        return canonical_json(v).encode("utf-8")

    def object(self, v: dict[str, Any], path: str) -> bytes:
        reserved = [k for k in v if k.startswith(RESERVED_PREFIX)]
        if PART_MARKER in v:
            if self.public and not (len(v) == 1 and isinstance(v[PART_MARKER], dict) and list(v[PART_MARKER]) == ["digest"]):
                # A public record or part shows a reference as its address alone (REDACTION.md §13.10 step 1).
                raise V3Defect("MARKER_INVALID", path, 'a public part reference is {"$stepchain:part":{"digest":"sha256:<hex>"}} and nothing else')
            return b"&" + part_address(v, path)
        if self.public and reserved == [CHUNKS_MARKER] and len(v) == 1:
            return self.chunk_list(v[CHUNKS_MARKER], path)
        # An object's withheld members (a public form) and erased members (a sealed record, or the public form of
        # one: REDACTION.md §13.12) stand as lists of digests; both may stand in one object.
        lists = [k for k in reserved if (k == WITHHELD_MARKER and self.public or k == ERASED_MARKER and self.erased is not None)
                 and isinstance(v[k], list)]
        other = [k for k in reserved if k not in lists]
        if other:
            raise V3Defect("MARKER_INVALID", f"{path}/{escape_token(other[0])}",
                           f"{other[0]} is not a marker that may stand here")
        digests: list[bytes] = []
        if WITHHELD_MARKER in lists:
            digests += _withheld_list(v[WITHHELD_MARKER], path)
        if ERASED_MARKER in lists:
            digests += self.erased_list(v[ERASED_MARKER], path)
        for k in sorted((k for k in v if k not in lists), key=utf16_key):
            digests.append(self.member(k, v[k], f"{path}/{escape_token(k)}"))
        return b"{" + b"".join(sorted(digests))

    def erased_one(self, v: dict[str, Any], path: str) -> bytes:
        body = v[ERASED_MARKER]
        if len(v) != 1 or erased_entry_defect(body):
            raise V3Defect("MARKER_INVALID", path, 'an erased value is {"$stepchain:erased":{"digest":D,"erasure":S}}, its only member')
        assert self.erased is not None
        self.erased.append({"path": path, "member": False, **body})
        return bytes.fromhex(body["digest"][7:])

    def erased_list(self, entries: list[Any], path: str) -> list[bytes]:
        at = f"{path}/{escape_token(ERASED_MARKER)}"
        if not entries or any(erased_entry_defect(e) for e in entries) or any(
                entries[i]["digest"] <= entries[i - 1]["digest"] for i in range(1, len(entries))):
            raise V3Defect("MARKER_INVALID", at, "erased members are a non-empty list of {digest, erasure}, sorted by digest without repeats")
        assert self.erased is not None
        self.erased.extend({"path": path, "member": True, **e} for e in entries)
        return [bytes.fromhex(e["digest"][7:]) for e in entries]

    def chunk_list(self, chunks: Any, path: str) -> bytes:
        if not isinstance(chunks, list) or len(chunks) < 2 or not any(_is_withheld_one(c) for c in chunks):
            raise V3Defect("MARKER_INVALID", path, "a chunk list holds at least two chunks and at least one withheld one")
        out = []
        for k, c in enumerate(chunks):
            at = f"{path}#{k}"
            if _is_withheld_one(c):
                out.append(_withheld_digest(c, at))
                continue
            t = escaped_text(c) if isinstance(c, str) else b""
            if not isinstance(c, str) or not t or len(t) > 256:
                raise V3Defect("MARKER_INVALID", at, "a shown chunk is a non-empty string of at most 256 bytes of escaped text")
            out.append(self.chunk(t, at))
        return b"~" + b"".join(out)


def erased_entry_defect(e: Any) -> bool:
    return not (isinstance(e, dict) and sorted(e) == ["digest", "erasure"] and is_digest(e["digest"]) and isinstance(e["erasure"], str))


def sealed_root(values: dict[str, Any], keys: Any, salts: Any, units: Optional[list[Unit]] = None) -> tuple[str, list[dict[str, Any]]]:
    """R of a record in sealed form (ERASURE.md §2): a slot in `keys` derives its salts, a slot in `salts` takes
    them one by one, an erased unit counts as its digest. Raises V3Defect: MARKER_INVALID for a malformed
    marker, ROOT_MISMATCH for keys and salts that do not name every slot once, or salts too few or left over.
    `units`, when given, collects every unit that remains (what a pending erasure is checked against, §5)."""
    def fail(path: str, why: str) -> V3Defect:
        return V3Defect("ROOT_MISMATCH", path, why)
    if not isinstance(keys, dict) or not isinstance(salts, dict):
        raise fail("/keys", "keys and salts must be objects")
    if sorted([*keys, *salts]) != SLOTS:
        raise fail("/keys", "every slot is named in exactly one of keys and salts")
    erased: list[dict[str, Any]] = []
    digests = []
    for name in SLOTS:
        if name in keys:
            raw = b64url_decode(keys[name])
            if raw is None or len(raw) != 16:
                raise fail(f"/keys/{name}", "a slot key is 16 bytes in canonical base64url")
            src: Any = _DerivedSalts(raw)
        else:
            raw = b64url_decode(salts[name])
            if raw is None or len(raw) % 16:
                raise fail(f"/salts/{name}", "a slot's salts are 16-byte salts in canonical base64url")
            src = _ListedSalts(raw)
        w = _Walk(src, False, units, erased)
        try:
            if name in values and isinstance(values[name], dict) and isinstance(values[name].get(ERASED_MARKER), dict):
                digests.append(w.erased_one(values[name], "/" + name))
            else:
                digests.append(w.member(name, values.get(name), "/" + name, absent=name not in values))
        except V3Defect as d:
            raise fail(d.path, f"slot {name} has too few salts for the units that remain") if d.code == "SECRETS_INVALID" else d
        if src.left():
            raise fail(f"/salts/{name}", f"{src.left()} salts of slot {name} are left over")
    return root_of(digests), erased


def _is_withheld_one(v: Any) -> bool:
    return isinstance(v, dict) and len(v) == 1 and WITHHELD_MARKER in v and not isinstance(v[WITHHELD_MARKER], list)


def _withheld_digest(v: dict[str, Any], path: str) -> bytes:
    d = v[WITHHELD_MARKER]
    if not is_digest(d):
        raise V3Defect("MARKER_INVALID", path, "a withheld marker holds the unit's digest")
    return bytes.fromhex(d[7:])


def _withheld_list(ds: list[Any], path: str) -> list[bytes]:
    at = f"{path}/{escape_token(WITHHELD_MARKER)}"
    if not ds or not all(is_digest(d) for d in ds) or any(ds[i] >= ds[i + 1] for i in range(len(ds) - 1)):
        raise V3Defect("MARKER_INVALID", at, "an object's withheld list holds digests, ascending, without repeats, at least one")
    return [bytes.fromhex(d[7:]) for d in ds]


def part_address(v: dict[str, Any], path: str) -> bytes:
    body = v.get(PART_MARKER)
    if len(v) != 1 or not isinstance(body, dict) or not is_digest(body.get("digest")):
        raise V3Defect("MARKER_INVALID", path, 'a part reference is {"$stepchain:part":{"digest":"sha256:<hex>",…}} and nothing else')
    return bytes.fromhex(body["digest"][7:])


def root_of(slot_digests: list[bytes]) -> str:
    return "sha256:" + _sha(b"\x72", *slot_digests).hex()


def slot_digest(name: str, values: dict[str, Any], salts: Any, public: bool = False, units: Optional[list[Unit]] = None,
                erased: Optional[list[dict[str, Any]]] = None) -> bytes:
    w = _Walk(salts, public, units, erased)
    return w.member(name, values.get(name), "/" + name, absent=name not in values)


def private_root(seed_hex: str, values: dict[str, Any], units: Optional[dict[str, list[Unit]]] = None) -> tuple[str, list[bytes]]:
    """R of a private record from its seed and slot values (§14.5); raises V3Defect for a malformed part reference."""
    keys = slot_keys(bytes.fromhex(seed_hex))
    digests = []
    for j, name in enumerate(SLOTS):
        us: Optional[list[Unit]] = None if units is None else units.setdefault(name, [])
        digests.append(slot_digest(name, values, _DerivedSalts(keys[j]), False, us))
    return root_of(digests), digests


# ------------------------------------------------------------------------------------------ public form


def b64url_decode(s: Any) -> Optional[bytes]:
    """Canonical unpadded base64url (RFC 4648 §5), or None."""
    if not isinstance(s, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", s) or len(s) % 4 == 1:
        return None
    try:
        raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if b64url(raw) == s else None


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _has_marker(v: Any) -> bool:
    if isinstance(v, dict):
        return any(k.startswith(RESERVED_PREFIX) or _has_marker(x) for k, x in v.items())
    if isinstance(v, list):
        return any(_has_marker(x) for x in v)
    return False


def public_root(values: dict[str, Any], secrets: Any, erased: Optional[list[dict[str, Any]]] = None) -> str:
    """R' of a public-form record (REDACTION.md §13.6 step 2.2–2.5) from its shown values, withheld markers and
    `secrets`; raises V3Defect (SECRETS_INVALID, SECRET_PUBLISHED, MARKER_INVALID) at the first failure."""
    if not isinstance(secrets, dict):
        raise V3Defect("SECRETS_INVALID", "/secrets", "secrets must be an object")
    seed: Optional[bytes] = None
    keys: dict[str, bytes] = {}
    listed: dict[str, bytes] = {}
    if set(secrets) == {"seed"}:
        if not isinstance(secrets["seed"], str) or not SEED_RE.match(secrets["seed"]):
            raise V3Defect("SECRETS_INVALID", "/secrets/seed", "secrets.seed must be 64 lowercase hex digits")
        seed = bytes.fromhex(secrets["seed"])
    elif set(secrets) == {"keys", "salts"} and isinstance(secrets["keys"], dict) and isinstance(secrets["salts"], dict):
        for name, m in (("keys", keys), ("salts", listed)):
            for slot, text in secrets[name].items():
                raw = b64url_decode(text)
                if slot not in SLOTS:
                    raise V3Defect("SECRETS_INVALID", f"/secrets/{name}/{escape_token(slot)}", f"{slot!r} is not a slot")
                if raw is None or (len(raw) != 16 if name == "keys" else not raw or len(raw) % 16):
                    raise V3Defect("SECRETS_INVALID", f"/secrets/{name}/{slot}",
                                   "a slot key is 16 bytes, a slot's salts one or more 16-byte salts, in canonical base64url")
                m[slot] = raw
        both = sorted(set(keys) & set(listed))
        if both:
            raise V3Defect("SECRETS_INVALID", f"/secrets/salts/{both[0]}", f"slot {both[0]} is in both keys and salts")
    else:
        raise V3Defect("SECRETS_INVALID", "/secrets", 'secrets is {"seed": S} or {"keys": K, "salts": L}')
    derived = slot_keys(seed) if seed is not None else None
    digests: list[bytes] = []
    # The public form of a sealed record shows its erased units as erased (REDACTION.md §13.12): each counts as its
    # digest, and the chain's erasure ledger matches it with its erasure record.
    erased = [] if erased is None else erased
    for j, name in enumerate(SLOTS):
        path = "/" + name
        value = values.get(name)
        if name in values and isinstance(value, dict) and isinstance(value.get(ERASED_MARKER), dict):
            if derived is not None or name in keys or name in listed:
                raise V3Defect("SECRETS_INVALID", path, f"slot {name} is erased whole, yet secrets are published for it")
            digests.append(_Walk(_ListedSalts(b""), True, None, erased).erased_one(value, path))
            continue
        if name in values and _is_withheld_one(value):
            if derived is not None or name in keys or name in listed:
                raise V3Defect("SECRETS_INVALID", path, f"slot {name} is withheld whole, yet secrets are published for it")
            digests.append(_withheld_digest(value, path))
            continue
        if derived is not None or name in keys:
            if name in values and _has_marker(value) and not _only_part_markers(value):
                raise V3Defect("SECRET_PUBLISHED", path, f"the key of slot {name} is published beside a withheld unit")
            src: Any = _DerivedSalts(derived[j] if derived is not None else keys[name])
        elif name in listed:
            src = _ListedSalts(listed[name])
        else:
            raise V3Defect("SECRETS_INVALID", path, f"slot {name} is shown without a key or salts")
        digests.append(slot_digest(name, values, src, True, None, erased))
        if src.left():
            raise V3Defect("SECRETS_INVALID", f"/secrets/salts/{name}", f"{src.left()} listed salts of slot {name} are left over")
    return root_of(digests)


def _only_part_markers(v: Any) -> bool:
    if isinstance(v, dict):
        if PART_MARKER in v:
            return True
        return all(not k.startswith(RESERVED_PREFIX) and _only_part_markers(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_only_part_markers(x) for x in v)
    return True


def unit_digest_hex(d: bytes) -> str:
    return d.hex()


Walker = Callable[..., bytes]
