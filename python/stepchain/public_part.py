"""The public file of a part (spec/REDACTION.md §13.10): what a published receipt carries in place of a part's
private file (which holds the part's seed). Its value shows withheld units as markers, as a public record does,
and `secrets` gives its key (nothing withheld) or the salts of what it shows. The reader recomputes the part's
address from what the file shows: a matching address binds every shown byte to the record that references it,
and through its root to the original head. Pure; never raises on hostile input."""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Optional, Union

from .canonical import MAX_VALUE_DEPTH, RESERVED_PREFIX, canonical_json, escape_token, is_digest, scan_canonical
from .v3 import CHUNKS_MARKER, PART_MARKER, WITHHELD_MARKER, V3Defect, _DerivedSalts, _ListedSalts, _Walk, b64url_decode

TAG_PART, TAG_MEDIA = b"\x70", b"\x6f"
MEDIA_TYPE_RE = re.compile(r"[\x21-\x7e]{1,255}\Z")
MAX_DEPTH = 64


def public_ref_of(v: Any) -> Optional[str]:
    """The address of a public reference {"$stepchain:part":{"digest":A}} (exactly that), else None."""
    if not isinstance(v, dict) or len(v) != 1 or PART_MARKER not in v:
        return None
    b = v[PART_MARKER]
    if not isinstance(b, dict) or len(b) != 1 or not is_digest(b.get("digest")):
        return None
    return b["digest"]


def public_refs_in(v: Any, path: str = "") -> list[tuple[str, str]]:
    """Every public reference inside a shown value, with its JSON Pointer (withheld lists are not searched)."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[Any, str, int]] = [(v, path, 0)]
    while stack:
        x, p, depth = stack.pop()
        if not isinstance(x, (dict, list)) or depth > MAX_DEPTH:
            continue
        a = public_ref_of(x)
        if a is not None:
            out.append((a, p))
            continue
        if isinstance(x, list):
            stack.extend((e, f"{p}/{i}", depth + 1) for i, e in reversed(list(enumerate(x))))
        else:
            stack.extend((x[k], f"{p}/{escape_token(k)}", depth + 1) for k in reversed(list(x)) if k != WITHHELD_MARKER)
    return out


def is_public_part_file(data: bytes) -> bool:
    """Whether bytes look like a public part file (its header has `secrets`), without checking more."""
    nl = data.find(b"\n")
    head = data if nl < 0 else data[:nl]
    return len(head) > 12 and head[:1] == b"{" and b'"secrets":{' in head[:200]


class PublicPart:
    def __init__(self, kind: str, secrets: dict[str, bytes], value: Any = None, base: str = "", media_type: str = "", raw: bytes = b"") -> None:
        self.kind, self.secrets, self.value, self.base, self.media_type, self.raw = kind, secrets, value, base, media_type, raw


def _secrets_of(v: Any) -> Union[dict[str, bytes], str]:
    if isinstance(v, dict) and list(v) == ["key"]:
        k = b64url_decode(v["key"])
        return {"key": k} if k is not None and len(k) == 16 else "has a secrets.key that is not 16 bytes in base64url"
    if isinstance(v, dict) and list(v) == ["salts"]:
        s = b64url_decode(v["salts"])
        return {"salts": s} if s is not None and len(s) > 0 and len(s) % 16 == 0 else "has secrets.salts that are not one or more 16-byte salts in base64url"
    return 'has secrets that are not {"key": …} or {"salts": …}'


def parse_public_part(data: bytes) -> Union[PublicPart, str]:
    """A public part file, or why it is not one: canonical JSON, exactly its kind's members."""
    nl = data.find(b"\n")
    head = data if nl < 0 else data[:nl]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return "is not valid UTF-8"
    scan = scan_canonical(text, MAX_VALUE_DEPTH, members=False)
    if scan.defect:
        return f"is not canonical JSON ({scan.defect.reason})"
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return "is not JSON"
    if not isinstance(obj, dict):
        return "is not a JSON object"
    names = ",".join(sorted(obj))
    secrets = _secrets_of(obj.get("secrets"))
    if nl >= 0:
        if names != "media_type,secrets,size":
            return "has a media header whose members are not media_type, secrets, size"
        if isinstance(secrets, str):
            return secrets
        t = obj["media_type"]
        if not isinstance(t, str) or not MEDIA_TYPE_RE.match(t):
            return "has a media type that is not 1–255 printable ASCII characters"
        raw = data[nl + 1:]
        if type(obj["size"]) is not int or obj["size"] != len(raw):
            return f"says {obj['size']!r} media bytes and holds {len(raw)}"
        return PublicPart("media", secrets, media_type=t, raw=raw)
    if isinstance(secrets, str):
        return secrets
    if names == "secrets,value":
        return PublicPart("value", secrets, value=obj["value"])
    if names == "base,secrets,tail":
        base = public_ref_of(obj["base"])
        if base is None:
            return "has a base that is not a public part reference"
        if not isinstance(obj["tail"], list) or not obj["tail"]:
            return "has a tail that is not a non-empty array"
        return PublicPart("list", secrets, value=obj["tail"], base=base)
    return f"has members {names}, which are no public part file's"


def _reserved_in(v: Any) -> Optional[str]:
    stack: list[tuple[Any, int]] = [(v, 0)]
    while stack:
        x, depth = stack.pop()
        if not isinstance(x, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            return f"nests deeper than {MAX_DEPTH}"
        if isinstance(x, list):
            stack.extend((e, depth + 1) for e in x)
            continue
        for k, e in x.items():
            if k.startswith(RESERVED_PREFIX) and k not in (WITHHELD_MARKER, CHUNKS_MARKER, PART_MARKER):
                return f"shows the reserved member name {json.dumps(k)}"
            stack.append((e, depth + 1))
    return None


def _shows_withheld(v: Any) -> bool:
    stack: list[tuple[Any, int]] = [(v, 0)]
    while stack:
        x, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if isinstance(x, list):
            stack.extend((e, depth + 1) for e in x)
        elif isinstance(x, dict):
            if WITHHELD_MARKER in x:
                return True
            stack.extend((e, depth + 1) for e in x.values())
    return False


def check_public_part(f: PublicPart, address: str, base: Optional[list[bytes]]) -> tuple[Optional[str], str, Optional[list[bytes]]]:
    """(None, "", elements) when what the file shows gives `address` (§13.10 step 3; `elements`: its element digests
    for an array or list, else None), or (code, message, None) — PART_CORRUPT or PART_ADDRESS_MISMATCH. `base`: the
    element digests of a list's base part, checked first by the caller (None when it did not check)."""
    listed = "salts" in f.secrets
    src: Any = _ListedSalts(f.secrets["salts"]) if listed else _DerivedSalts(f.secrets["key"])
    elements: Optional[list[bytes]] = None
    try:
        if f.kind == "media":
            if listed and len(f.secrets["salts"]) != 16:
                return "PART_CORRUPT", "a media part is one unit: its secrets are its key or one salt", None
            _, salt = src.next("")
            digest = hashlib.sha256(TAG_MEDIA + salt + canonical_json(f.media_type).encode("utf-8") + f.raw).digest()
        else:
            bad = _reserved_in(f.value)
            if bad is not None:
                return "PART_CORRUPT", f"its value {bad}", None
            if not listed and _shows_withheld(f.value):
                return "PART_CORRUPT", ("it withholds a unit but discloses its key, which opens that unit: a part with something "
                                        "withheld discloses the salts of its disclosed units"), None
            if f.kind == "list" and base is None:
                return "PART_CORRUPT", f"its base {f.base} is not a checked list in the receipt", None
            _, salt = src.next("")
            walk = _Walk(src, True)
            if f.kind == "list" or isinstance(f.value, list):
                own = [walk.element(x, f"/{k}") for k, x in enumerate(f.value)]
                elements = (base or []) + own if f.kind == "list" else own
                digest = hashlib.sha256(TAG_PART + salt + b"[" + b"".join(elements)).digest()
            else:
                digest = hashlib.sha256(TAG_PART + salt + walk.repr(f.value, "")).digest()
    except V3Defect as d:
        return "PART_CORRUPT", f"{d.message}{' (at ' + d.path + ')' if d.path else ''}", None
    except (RecursionError, ValueError, TypeError) as e:
        return "PART_CORRUPT", f"it cannot be walked ({e})", None
    if listed and src.left():
        return "PART_CORRUPT", f"its secrets hold {src.left()} salts more than it has disclosed units", None
    got = "sha256:" + digest.hex()
    if got != address:
        return "PART_ADDRESS_MISMATCH", (f"what it shows gives address {got}, not {address}: a shown value, name, chunk, order or "
                                         "withheld digest is not the original's"), None
    return None, "", elements
