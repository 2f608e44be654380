"""Reading the parts of a `stepchain/v3` journal (spec/PARTS.md §4, §5, §9): each reference's file fetched once,
checked against the reference (length, then SHA-256) and §4's shapes, a list's base chain followed without
recursion, and, in the deep tier, the part's address recomputed from its file. Pure: bytes come from a callback."""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from typing import Any, Callable, Optional, Union

from .canonical import MAX_VALUE_DEPTH, RESERVED_PREFIX, canonical_json, escape_token, is_digest, is_seq, scan_canonical
from .v3 import PART_MARKER, _DerivedSalts, _Walk, slot_keys

MAX_PART_BYTES = 64 * 1024 * 1024
MAX_NESTING = 128  # PARTS.md §10; above any writer's reach (values nest at most 100)
MAX_BASE_CHAIN = 65_536
SEED_RE = re.compile(r"[0-9a-f]{64}\Z")
MEDIA_TYPE_RE = re.compile(r"[\x21-\x7e]{1,255}\Z")
TAG_PART, TAG_MEDIA = b"\x70", b"\x6f"

# get(address, size): the file's bytes; {"size": n} for a stored file of another length (unread); None when absent
Fetch = Callable[[str, int], Union[bytes, dict, None]]


class PartError(Exception):
    def __init__(self, code: str, message: str, address: str, location: dict[str, Any]) -> None:
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.address, self.location = code, message, address, location


def is_reference(v: Any) -> bool:
    if not isinstance(v, dict) or len(v) != 1 or PART_MARKER not in v:
        return False
    b = v[PART_MARKER]
    return (isinstance(b, dict) and sorted(b) == ["digest", "file", "size"] and is_digest(b["digest"]) and is_digest(b["file"])
            and is_seq(b["size"]) and isinstance(b["size"], int))


class _Part:
    def __init__(self, kind: str, seed: str, body: Any, media_type: str = "", raw: bytes = b"") -> None:
        self.kind, self.seed, self.body, self.media_type, self.raw = kind, seed, body, media_type, raw


class PartReader:
    """resolve(value, seq, path) gives the value with every reference replaced by what it stands for (§9 step 7)."""

    def __init__(self, fetch: Fetch, deep: bool = False) -> None:
        self.fetch, self.deep = fetch, deep
        self.parts: dict[str, _Part] = {}
        self.values: dict[str, Any] = {}
        self.elements: dict[str, list[bytes]] = {}  # a list's element digests under the seeds that made them (deep)
        # The file digest and size each address was checked against: every later reference to it must name the
        # same (§9 step 3); a second reference with another file or size was read as the first one's part.
        self.checked_as: dict[str, tuple[str, int]] = {}
        self.heights: dict[str, int] = {}  # resolved parts: how many references deep each reaches (_height)

    def resolve(self, value: Any, seq: Optional[int], path: str = "", depth: int = 0) -> Any:
        if isinstance(value, list):
            return [self.resolve(x, seq, f"{path}/{k}", depth) for k, x in enumerate(value)]
        if not isinstance(value, dict):
            return value
        if PART_MARKER in value:
            return self._value(value, {"seq": seq, "path": path} if seq is not None else {"path": path}, depth)
        return {k: self.resolve(x, seq, f"{path}/{escape_token(k)}", depth) for k, x in value.items()}

    def _value(self, ref: dict[str, Any], at: dict[str, Any], depth: int) -> Any:
        if not is_reference(ref):
            raise PartError("MARKER_INVALID", 'a part reference is {"$stepchain:part":{"digest":A,"file":F,"size":Z}}', "", at)
        address = ref[PART_MARKER]["digest"]
        # Before the cache: a part met first shallow and then 33 references deep is refused there too.
        if depth >= MAX_NESTING:
            raise PartError("PART_CORRUPT", f"references nest deeper than {MAX_NESTING} (PARTS.md §10)", address, at)
        self._same_as_checked(ref[PART_MARKER], at)
        if address in self.values:
            # Met again deeper than before: the references inside it nest from here (outsider L).
            if depth + self._height(address) > MAX_NESTING:
                raise PartError("PART_CORRUPT", f"references nest deeper than {MAX_NESTING} (PARTS.md §10)", address, at)
            return self.values[address]
        part = self._load(ref, at)
        if part.kind == "media":
            out: Any = base64.b64encode(part.raw).decode("ascii")
        elif part.kind == "value":
            out = self._inner(part.body, at, depth + 1) if _has_part(part.body) else part.body
        else:
            chain = [part]
            while chain[-1].kind == "list":
                if len(chain) > MAX_BASE_CHAIN:
                    raise PartError("PART_CORRUPT", f"a list's base chain is longer than {MAX_BASE_CHAIN}", address, at)
                chain.append(self._load(chain[-1].body["base"], at))
            if chain[-1].kind != "value" or not isinstance(chain[-1].body, list):
                raise PartError("PART_CORRUPT", "a list's base chain ends in a media part or a value that is not an array", address, at)
            items: list[Any] = list(chain[-1].body)
            for p in reversed(chain[:-1]):
                items.extend(p.body["tail"])
            out = [self._inner(x, _below(at, k), depth + 1) for k, x in enumerate(items)]
        if self.deep:
            self._check_address(ref, at)
        self.values[address] = out
        return out

    def _inner(self, v: Any, at: dict[str, Any], depth: int) -> Any:
        """References inside a part, each located where it stands in the value expanded (as the TypeScript readers do)."""
        if isinstance(v, list):
            return [self._inner(x, _below(at, k), depth) for k, x in enumerate(v)]
        if not isinstance(v, dict):
            return v
        if PART_MARKER in v:
            return self._value(v, at, depth)
        return {k: self._inner(x, _below(at, escape_token(k)), depth) for k, x in v.items()}

    def _load(self, ref: dict[str, Any], at: dict[str, Any]) -> _Part:
        if not is_reference(ref):
            raise PartError("PART_CORRUPT", "a list's base is not a well-formed part reference", "", at)
        body = ref[PART_MARKER]
        address, size = body["digest"], body["size"]
        self._same_as_checked(body, at)
        if address in self.parts:
            return self.parts[address]
        if size > MAX_PART_BYTES:
            raise PartError("PART_CORRUPT", f"part {address} is {size} bytes; the limit is {MAX_PART_BYTES}", address, at)
        got = self.fetch(address, size)
        if got is None:
            raise PartError("PART_MISSING", f"part {address} is not in the store or receipt", address, at)
        if isinstance(got, dict) or len(got) != size:
            n = got.get("size") if isinstance(got, dict) else len(got)
            raise PartError("PART_CORRUPT", f"part {address} is {n} bytes; its reference says {size}", address, at)
        if "sha256:" + hashlib.sha256(got).hexdigest() != body["file"]:
            raise PartError("PART_CORRUPT", f"part {address}'s file does not hash to {body['file']}: it was altered", address, at)
        part = _parse(got, address, at)
        self.parts[address] = part
        self.checked_as[address] = (body["file"], size)
        return part

    def _height(self, start: str) -> int:
        """How many references deep a resolved part reaches, itself the first: a value part 1 + its deepest reference,
        a list the deeper of that for its tail and its base's (a base chain is not nesting), media 1."""
        memo = self.heights
        # (address, its references once listed on the first visit: None until then)
        stack: list[tuple[str, Optional[list[str]]]] = [(start, None)]
        open_: set[str] = set()  # on the stack below: no loop can be made, but a hand-made store is not trusted
        while stack:
            address, inner = stack.pop()
            if address in memo:
                continue
            part = self.parts.get(address)
            if part is None or part.kind == "media":
                memo[address] = 1
                continue
            base = part.body["base"][PART_MARKER]["digest"] if part.kind == "list" else None
            if inner is None:
                inner = [r[PART_MARKER]["digest"] for r in _refs_in(part.body if part.kind == "value" else part.body["tail"])]
                stack.append((address, inner))
                open_.add(address)
                stack.extend((c, None) for c in inner + ([base] if base else []) if c not in memo and c not in open_)
                continue
            open_.discard(address)
            memo[address] = max([1] + [1 + memo.get(c, 1) for c in inner] + ([memo.get(base, 1)] if base else []))
        return memo[start]

    def _same_as_checked(self, body: dict[str, Any], at: dict[str, Any]) -> None:
        known = self.checked_as.get(body["digest"])
        if known is not None and known != (body["file"], body["size"]):
            raise PartError("PART_CORRUPT", f"part {body['digest']}: this reference says a file of {body['size']} bytes hashing to "
                            f"{body['file']}; the part is {known[1]} bytes hashing to {known[0]}, as another reference says", body["digest"], at)

    def _check_address(self, ref: dict[str, Any], at: dict[str, Any]) -> None:
        address = ref[PART_MARKER]["digest"]
        part = self.parts[address]
        key = slot_keys(bytes.fromhex(part.seed))[0]
        src = _DerivedSalts(key)
        _, salt0 = src.next("")
        walk = _Walk(src, False)
        if part.kind == "media":
            got = hashlib.sha256(TAG_MEDIA + salt0 + canonical_json(part.media_type).encode() + part.raw).digest()
        elif part.kind == "value":
            got = hashlib.sha256(TAG_PART + salt0 + walk.repr(part.body, "")).digest()
        else:
            got = hashlib.sha256(TAG_PART + salt0 + b"[" + b"".join(self._elements(address, at))).digest()
        if "sha256:" + got.hex() != address:
            raise PartError("PART_ADDRESS_MISMATCH", f"part {address}'s value does not give its address", address, at)

    def _elements(self, address: str, at: dict[str, Any]) -> list[bytes]:
        """The element digests of a list (value part of an array, or list part), each under the part that holds it."""
        chain = [address]
        while self.parts[chain[-1]].kind == "list":
            chain.append(self.parts[chain[-1]].body["base"][PART_MARKER]["digest"])
        out: list[bytes] = []
        for a in reversed(chain):
            if a in self.elements:
                out = list(self.elements[a])
                continue
            p = self.parts[a]
            walk = _Walk(_DerivedSalts(slot_keys(bytes.fromhex(p.seed))[0]), False)
            walk.salts.next("")  # salt 0 is the part's own unit
            items = p.body if p.kind == "value" else p.body["tail"]
            out = out + [walk.element(x, f"/{k}") for k, x in enumerate(items)]
            self.elements[a] = list(out)
        return out


def _below(at: dict[str, Any], token: Any) -> dict[str, Any]:
    """The location of a member or element of the value at `at`."""
    return {**at, "path": f"{at.get('path', '')}/{token}"}


def _refs_in(v: Any) -> list[dict[str, Any]]:
    """The references inside a value (not inside the parts they name), without recursion."""
    out, stack = [], [v]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if PART_MARKER in x:
                out.append(x)
            else:
                stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def _has_part(v: Any) -> bool:
    if isinstance(v, dict):
        return PART_MARKER in v or any(_has_part(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_part(x) for x in v)
    return False


def _parse(data: bytes, address: str, at: dict[str, Any]) -> _Part:
    """§9 step 4: one of §4's kinds exactly."""
    def corrupt(why: str) -> PartError:
        return PartError("PART_CORRUPT", f"part {address} is not a part file: {why}", address, at)
    nl = data.find(b"\n")
    head = data if nl < 0 else data[:nl]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        raise corrupt("not UTF-8") from None
    scan = scan_canonical(text, MAX_VALUE_DEPTH, members=False)
    if scan.defect:
        raise corrupt(f"not canonical JSON ({scan.defect.reason})")
    obj = json.loads(text)
    if not isinstance(obj, dict) or not isinstance(obj.get("seed"), str) or not SEED_RE.match(obj["seed"]):
        raise corrupt("no 64-hex seed")
    for m in scan.markers:
        if m.names != [PART_MARKER] or not is_reference(json.loads(text[m.start:m.end])):
            raise corrupt(f"a reserved name at {m.path or '/'} that is not a well-formed part reference")
    if nl >= 0:
        if sorted(obj) != ["media_type", "seed", "size"] or not isinstance(obj["media_type"], str) or not MEDIA_TYPE_RE.match(obj["media_type"]):
            raise corrupt("a media header is exactly {media_type, seed, size} with a printable media type")
        raw = data[nl + 1:]
        if not is_seq(obj["size"]) or obj["size"] != len(raw):
            raise corrupt("a media part's size is not the number of bytes after its header")
        return _Part("media", obj["seed"], None, obj["media_type"], raw)
    if sorted(obj) == ["seed", "value"]:
        return _Part("value", obj["seed"], obj["value"])
    if sorted(obj) == ["base", "seed", "tail"] and is_reference(obj["base"]) and isinstance(obj["tail"], list) and obj["tail"]:
        return _Part("list", obj["seed"], obj)
    raise corrupt("exactly {seed, value}, {base, seed, tail} or a media header")


def from_base64_map(parts: dict[str, str]) -> Fetch:
    """A fetch over {address: base64 of the file} (the vectors' form, and a receipt's entries once read)."""
    def fetch(address: str, size: int) -> Union[bytes, dict, None]:
        text = parts.get(address)
        if text is None:
            return None
        try:
            raw = base64.b64decode(text)
        except (binascii.Error, ValueError):
            return None
        return raw if len(raw) == size else {"size": len(raw)}
    return fetch


__all__ = ["PartError", "PartReader", "from_base64_map", "is_reference", "RESERVED_PREFIX"]
