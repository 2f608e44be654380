"""The part writer of a `stepchain/v3` journal directory (spec/PARTS.md §3–§7): at append, each content slot but
`meta` is walked bottom-up and a value whose canonical form (its children's references in place) reaches the
threshold becomes a part — a media part for canonical base64 of 1 KiB or more, a list part on a recent list
that is a proper prefix of it, else a value part — found again through the journal's private index (HMAC under
`parts/key`) so equal content is stored once. Part files are written before any line that references them."""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import re
import secrets
from typing import Any, Optional

from .canonical import canonical_json
from .parts import PART_MARKER, PartError, _parse
from .v3 import _DerivedSalts, _Walk, slot_keys

THRESHOLD_DEFAULT, THRESHOLD_MIN, THRESHOLD_MAX = 1024, 256, 1 << 20
MEDIA_MIN_BYTES = 1024
MEDIA_TYPE_MEMBERS = ("mediaType", "mimeType", "media_type", "mime_type", "contentType")
MEDIA_TYPE_RE = re.compile(r"[\x21-\x7e]{1,255}\Z")
BASE64_RE = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?\Z")
KEY_RE = re.compile(r"[0-9a-f]{64}\Z")
ADDRESS_RE = re.compile(r"sha256:[0-9a-f]{64}\Z")
TAG_PART, TAG_MEDIA = 0x70, 0x6F


def media_bytes(s: str) -> Optional[bytes]:
    """The raw bytes of canonical padded base64 (RFC 4648 §4) of at least 1 KiB decoded, else None (§3 rule 1)."""
    if len(s) < MEDIA_MIN_BYTES * 4 // 3 or not BASE64_RE.match(s):
        return None
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) >= MEDIA_MIN_BYTES and base64.b64encode(raw).decode("ascii") == s else None


def sniff_media_type(raw: bytes) -> str:
    if raw.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if raw.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if raw.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    if raw.startswith(b"%PDF-"):
        return "application/pdf"
    return "application/octet-stream"


def _media_type_of(parent: Optional[dict[str, Any]]) -> Optional[str]:
    for k in MEDIA_TYPE_MEMBERS:
        t = (parent or {}).get(k)
        if isinstance(t, str) and MEDIA_TYPE_RE.match(t) and "/" in t:
            return t
    return None


def _seed_walk(seed: bytes) -> tuple[bytes, _Walk]:
    src = _DerivedSalts(slot_keys(seed)[0])
    _, salt0 = src.next("")
    return salt0, _Walk(src, False)


class PartWriter:
    """One per open journal: its part key, the parts it made or checked, and its recent lists."""

    def __init__(self, journal_path: str, threshold: int = THRESHOLD_DEFAULT, fsync: bool = True, recent_max: int = 8) -> None:
        if not THRESHOLD_MIN <= threshold <= THRESHOLD_MAX:
            raise ValueError(f"part threshold {threshold} is outside {THRESHOLD_MIN}–{THRESHOLD_MAX} bytes")
        self.root = os.path.join(journal_path, "parts")
        self.threshold, self.fsync, self.recent_max = threshold, fsync, recent_max
        self.key = self._part_key()
        self.known: dict[str, dict[str, Any]] = {}
        self.recent: list[tuple[dict[str, Any], list[str], list[bytes]]] = []  # (ref, element texts, element digests)

    def _part_key(self) -> bytes:
        """`parts/key`: 64 hex digits, created exclusively by the first writer; another reads the winner's."""
        os.makedirs(self.root, exist_ok=True)
        path = os.path.join(self.root, "key")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
                f.flush()
                if self.fsync:
                    os.fsync(f.fileno())
        except FileExistsError:
            pass
        with open(path, "r", encoding="ascii") as f:
            text = f.read(65)
        if not KEY_RE.match(text):
            raise ValueError(f"{path} is not 64 hex digits")
        return bytes.fromhex(text)

    def extract(self, slots: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, bytes, str]]]:
        """The slots with large values replaced by references, and the new parts (address, bytes, index key),
        each after the parts it references."""
        out: list[tuple[str, bytes, str]] = []
        return {k: self._walk(v, None, out) for k, v in slots.items()}, out

    def _big(self, text: str) -> bool:
        return len(text) * 3 >= self.threshold and len(text.encode("utf-8")) >= self.threshold

    def _walk(self, v: Any, parent: Optional[dict[str, Any]], out: list[tuple[str, bytes, str]]) -> Any:
        if isinstance(v, str):
            raw = media_bytes(v)
            if raw is not None:
                return self._media(raw, _media_type_of(parent) or sniff_media_type(raw), out)
            return self._value(v, canonical_json(v), out) if self._big(canonical_json(v)) else v
        if isinstance(v, list):
            items = [self._walk(x, None, out) for x in v]
            text = canonical_json(items)
            return self._list(items, text, out) if self._big(text) else items
        if isinstance(v, dict):
            value = {k: self._walk(x, v, out) for k, x in v.items()}
            text = canonical_json(value)
            return self._value(value, text, out) if self._big(text) else value
        return v

    def _index_key(self, tag: int, *pieces: bytes) -> str:
        return hmac.new(self.key, bytes([tag]) + b"".join(pieces), hashlib.sha256).hexdigest()

    def _existing(self, index_key: str, same: Any) -> Optional[dict[str, Any]]:
        """A part the index names, read and checked before it is reused (a wrong entry costs a copy, §6)."""
        if index_key in self.known:
            return self.known[index_key]
        try:
            with open(os.path.join(self.root, "index", index_key[:2], index_key[2:]), "r", encoding="ascii") as f:
                address = f.read(72)
            if not ADDRESS_RE.match(address):
                return None
            with open(os.path.join(self.root, address[7:9], address[9:]), "rb") as f:
                data = f.read(64 << 20)
            part = _parse(data, address, {})
        except (OSError, UnicodeDecodeError, PartError):
            return None
        if not same(part):
            return None
        ref = {"digest": address, "file": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
        self.known[index_key] = ref
        return ref

    def _emit(self, index_key: str, address: str, data: bytes, out: list[tuple[str, bytes, str]]) -> dict[str, Any]:
        ref = {"digest": address, "file": "sha256:" + hashlib.sha256(data).hexdigest(), "size": len(data)}
        out.append((address, data, index_key))
        self.known[index_key] = ref
        return ref

    def _value(self, value: Any, text: str, out: list[tuple[str, bytes, str]]) -> dict[str, Any]:
        key = self._index_key(TAG_PART, text.encode("utf-8"))
        ref = self._existing(key, lambda p: p.kind == "value" and canonical_json(p.body) == text)
        if ref is None:
            seed = secrets.token_bytes(32)
            salt0, walk = _seed_walk(seed)
            address = "sha256:" + hashlib.sha256(bytes([TAG_PART]) + salt0 + walk.repr(value, "")).hexdigest()
            ref = self._emit(key, address, canonical_json({"seed": seed.hex(), "value": value}).encode("utf-8"), out)
        return {PART_MARKER: ref}

    def _media(self, raw: bytes, media_type: str, out: list[tuple[str, bytes, str]]) -> dict[str, Any]:
        mt = canonical_json(media_type).encode("utf-8")
        key = self._index_key(TAG_MEDIA, mt, raw)
        ref = self._existing(key, lambda p: p.kind == "media" and p.media_type == media_type and p.raw == raw)
        if ref is None:
            seed = secrets.token_bytes(32)
            salt0, _ = _seed_walk(seed)
            address = "sha256:" + hashlib.sha256(bytes([TAG_MEDIA]) + salt0 + mt + raw).hexdigest()
            head = canonical_json({"media_type": media_type, "seed": seed.hex(), "size": len(raw)}).encode("utf-8")
            ref = self._emit(key, address, head + b"\n" + raw, out)
        return {PART_MARKER: ref}

    def _list(self, items: list[Any], text: str, out: list[tuple[str, bytes, str]]) -> dict[str, Any]:
        key = self._index_key(TAG_PART, text.encode("utf-8"))
        ref = self._existing(key, lambda p: canonical_json(self._elements_of(p)) == text)
        if ref is not None:
            return {PART_MARKER: ref}
        texts = [canonical_json(x) for x in items]
        base = None
        for r in self.recent:  # the longest recent list that is a proper prefix (§4.2)
            if len(r[1]) < len(texts) and (base is None or len(r[1]) > len(base[1])) and texts[:len(r[1])] == r[1]:
                base = r
        seed = secrets.token_bytes(32)
        salt0, walk = _seed_walk(seed)
        tail = items if base is None else items[len(base[1]):]
        elements = ([] if base is None else list(base[2])) + [walk.element(x, f"/{k}") for k, x in enumerate(tail)]
        address = "sha256:" + hashlib.sha256(bytes([TAG_PART]) + salt0 + b"[" + b"".join(elements)).hexdigest()
        body = {"seed": seed.hex(), "value": items} if base is None else {"base": {PART_MARKER: base[0]}, "seed": seed.hex(), "tail": tail}
        ref = self._emit(key, address, canonical_json(body).encode("utf-8"), out)
        self.recent.insert(0, (ref, texts, elements))
        del self.recent[self.recent_max:]
        return {PART_MARKER: ref}

    def _elements_of(self, part: Any) -> Any:
        """A list's elements as stored (references in place): its base chain's, then each tail's."""
        tails = []
        for _ in range(65_536):
            if part.kind != "list":
                break
            tails.append(part.body["tail"])
            a = part.body["base"][PART_MARKER]["digest"]
            with open(os.path.join(self.root, a[7:9], a[9:]), "rb") as f:
                part = _parse(f.read(64 << 20), a, {})
        if part.kind != "value" or not isinstance(part.body, list):
            return None
        out = list(part.body)
        for t in reversed(tails):
            out.extend(t)
        return out

    def store(self, address: str, data: bytes, index_key: str) -> None:
        """The part file, then its index entry, each by temporary file and rename (§7); a held address keeps its file."""
        from .journal import _write_atomic
        h = address[7:]
        path = os.path.join(self.root, h[:2], h[2:])
        if not os.path.exists(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _write_atomic(path, data, self.fsync)
        ipath = os.path.join(self.root, "index", index_key[:2], index_key[2:])
        os.makedirs(os.path.dirname(ipath), exist_ok=True)
        _write_atomic(ipath, address.encode("ascii"), self.fsync)
