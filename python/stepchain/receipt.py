"""The offline receipt verifier (spec/RECEIPT.md §7): archive bytes in, report out — the pins; the manifest and its
signature over the exact bytes; each listed entry in the archive's fixed order, read by a strict ustar reader
within what the manifest declares (§6.1); what was listed but never came; the chain's report and the head checks.
Problems come in the order of §7.1, with the same codes and locations as the TypeScript verifier. It never raises
on hostile input. Published receipts (REDACTION.md) and proof-carrying ones (PROOFS.md) carry manifest members
this verifier does not implement yet: it refuses them with MANIFEST_INVALID, as §4.3 requires, never ignoring one."""
from __future__ import annotations

import base64
import binascii
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from .canonical import MAX_LINE_BYTES, MAX_RECORD_DEPTH, MAX_VALUE_DEPTH, digest_bytes, is_digest, is_seq, scan_canonical
from .chain import ChainVerifier, Problem, VerifiedLine, split_lines
from .ed25519 import public_key_defect, signature_defect
from .formats import FORMAT_V2, format_of, genesis_defect, genesis_hash
from .runs import RunState, fold_record

RECEIPT_FORMAT = "stepchain-receipt/v1"
SIGNATURE_FORMAT = "stepchain-receipt-signature/v1"
PAYLOAD_TYPE = "application/vnd.stepchain.receipt-manifest+json"
MANIFEST_NAME = "manifest.json"
SIGNATURE_NAME = "manifest.sig.json"
CHAIN_NAME_RE = re.compile(r"chain/(\d{16})\.jsonl\Z")
BLOB_NAME_RE = re.compile(r"blobs/([0-9a-f]{64})\Z")
PART_NAME_RE = re.compile(r"parts/([0-9a-f]{64})\Z")
BASE_MEMBERS = ["blobs", "chain", "exporter", "format", "genesis", "head", "range"]
BLOCK = 512
MAX_ENTRIES = 65_536
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_SIGNATURE_BYTES = 24 * 1024 * 1024
MAX_CHAIN_ENTRY_BYTES = 1024 * 1024 * 1024
MAX_BLOB_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 8 * 1024 * 1024 * 1024
MAX_TRAILING_ZEROS = 1024 * 1024
MAX_PREFIX_BYTES = 512 + MAX_MANIFEST_BYTES + 512 + MAX_SIGNATURE_BYTES + 1024 + MAX_TRAILING_ZEROS
SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")


class ReceiptUnavailable(Exception):
    """The receipt file cannot be read at all (an I/O error): the CLI's exit 2."""


class Fatal(Exception):
    def __init__(self, code: str, message: str, location: Optional[dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.location = location or {}


def b64decode(text: Any) -> Optional[bytes]:
    """Canonical base64 (RFC 4648 §4, padded, no line breaks, zero unused bits), or None."""
    if not isinstance(text, str) or len(text) % 4 != 0:
        return None
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    return raw if base64.b64encode(raw).decode("ascii") == text else None


def key_id_of(raw: bytes) -> str:
    return digest_bytes(raw)


def decode_public_key(key: bytes | str) -> tuple[Optional[bytes], str]:
    """A pinned key in a form of §5.2 (32 raw bytes; base64 of them; an SPKI PEM): (key, "") or (None, why)."""
    if isinstance(key, bytes):
        if len(key) == 32:
            return _check_point(key)
        if len(key) == 0:
            return None, "the pinned key is empty (0 bytes)"
        try:
            text = key.decode("utf-8")
        except UnicodeDecodeError:
            return None, f"the pinned key is {len(key)} bytes that are neither 32 raw key bytes nor UTF-8 text"
    else:
        text = key
    if len(text) > 16384:
        return None, f"the pinned key is {len(text)} characters of text; a public key is a few hundred at most"
    t = text.strip(" \t\r\n")
    if t == "":
        return None, "the pinned key is empty" if text == "" else "the pinned key is only whitespace"
    if t.startswith("-----BEGIN "):
        lines = re.split(r"\r?\n", t)
        m = re.fullmatch(r"-----BEGIN ([A-Z0-9 ]+)-----", lines[0])
        label = m.group(1) if m else None
        if label == "PRIVATE KEY":
            return None, "the pinned key is a PEM private key; pin the public key (keyfile.pub)"
        if label != "PUBLIC KEY":
            return None, f"the pinned key is a PEM block labelled {label or lines[0]!r}, not \"PUBLIC KEY\""
        if len(lines) < 3 or lines[-1] != "-----END PUBLIC KEY-----":
            return None, "the pinned key's PEM block does not end with \"-----END PUBLIC KEY-----\" on a line of its own"
        body = lines[1:-1]
        if not all(re.fullmatch(r"[A-Za-z0-9+/=]+", ln) for ln in body):
            return None, "the pinned key's PEM block holds a line that is not base64 (PEM headers are not accepted)"
        raw = b64decode("".join(body))
        if raw is None or len(raw) != 44 or not raw.startswith(SPKI_PREFIX):
            return None, "the pinned key's PEM block is not an Ed25519 SubjectPublicKeyInfo (RFC 8410 §4)"
        return _check_point(raw[12:])
    raw = b64decode(t)
    if raw is None:
        return None, "the pinned key is text but neither canonical base64 (RFC 4648, padded) nor a \"-----BEGIN PUBLIC KEY-----\" PEM block"
    if len(raw) != 32:
        return None, f"the pinned key is the base64 of {len(raw)} bytes; an Ed25519 public key is 32"
    return _check_point(raw)


def _check_point(raw: bytes) -> tuple[Optional[bytes], str]:
    why = public_key_defect(raw)
    return (None, f"the pinned key {why}") if why else (raw, "")


def pae(payload_type: str, body: bytes) -> bytes:
    t = payload_type.encode("utf-8")
    return b"DSSEv1 %d " % len(t) + t + b" %d " % len(body) + body


# --------------------------------------------------------------------------------------------- the archive


def _inflate(data: bytes) -> Iterator[bytes]:
    """One gzip member and nothing after it (§3.1), inflated in bounded pieces as they are asked for."""
    d = zlib.decompressobj(wbits=31)
    pending = data
    while True:
        try:
            out = d.decompress(pending, 256 * 1024)
        except zlib.error as e:
            raise Fatal("ARCHIVE_INVALID", f"the gzip stream does not inflate: {e}") from None
        pending = d.unconsumed_tail
        if out:
            yield out
        if d.eof:
            if d.unused_data:
                raise Fatal("ARCHIVE_INVALID", f"{len(d.unused_data)} bytes follow the gzip member; a receipt is exactly one member and nothing after it")
            return
        if not pending and not out:
            raise Fatal("ARCHIVE_INVALID", "the gzip stream ends before its member does (truncated)")


class _Reader:
    """Exact reads from a stream of chunks, counting the bytes handed out, never past its limit."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.buf = b""
        self.off = 0
        self.position = 0

    def read(self, n: int) -> bytes:
        parts = []
        need = n
        while need > 0:
            if self.off >= len(self.buf):
                try:
                    self.buf = next(self.chunks)
                except StopIteration:
                    break
                self.off = 0
            take = min(need, len(self.buf) - self.off)
            parts.append(self.buf[self.off:self.off + take])
            self.off += take
            need -= take
        out = b"".join(parts)
        self.position += len(out)
        return out


def _octal(value: int, digits: int) -> bytes:
    return (format(value, "o").rjust(digits, "0") + " ").encode("ascii")


def _checksum(h: bytes) -> int:
    return 8 * 0x20 + sum(h[:148]) + sum(h[156:])


def ustar_header(name: str, size: int) -> bytes:
    h = bytearray(BLOCK)
    nb = name.encode("ascii")
    h[0:len(nb)] = nb
    h[100:107] = _octal(0o644, 6)
    h[108:115] = _octal(0, 6)
    h[116:123] = _octal(0, 6)
    h[124:136] = _octal(size, 11)
    h[136:148] = _octal(0, 11)
    h[156] = 0x30
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[329:336] = _octal(0, 6)
    h[337:344] = _octal(0, 6)
    h[148:155] = _octal(_checksum(bytes(h)), 6)
    return bytes(h)


def _read_octal(b: bytes, at: int, length: int) -> Optional[int]:
    i, end = at, at + length
    while i < end and b[i] == 0x20:
        i += 1
    value = digits = 0
    while i < end and 0x30 <= b[i] <= 0x37:
        value = value * 8 + b[i] - 0x30
        digits += 1
        i += 1
    while i < end:
        if b[i] not in (0, 0x20):
            return None
        i += 1
    return value if digits else None


def _field_text(b: bytes, at: int, length: int) -> str:
    out = []
    for c in b[at:at + length]:
        if c == 0:
            break
        out.append(chr(c) if 0x20 <= c < 0x7F else "\\x%02x" % c)
    return "".join(out)


_TYPE_NAMES = {"1": "a hard link", "2": "a symbolic link", "3": "a character device", "4": "a block device", "5": "a directory",
               "6": "a FIFO", "7": "a contiguous file", "x": "a PAX extended header", "g": "a PAX global header",
               "L": "a GNU long-name header", "K": "a GNU long-link header", "S": "a GNU sparse file", "V": "a GNU volume label"}


def _inspect_header(h: bytes) -> tuple[str, int]:
    stored = _read_octal(h, 148, 8)
    if stored is None or stored != _checksum(h):
        raise Fatal("ARCHIVE_INVALID", "header checksum does not match the header's byte sum: not a valid tar header")
    name = _field_text(h, 0, 100)
    prefix = _field_text(h, 345, 155)
    full = f"{prefix}/{name}" if prefix else name
    at = {"file": full}
    t = chr(h[156])
    if t != "0":
        raise Fatal("ARCHIVE_UNSAFE", f"entry {full!r} is {_TYPE_NAMES.get(t, 'an entry of type ' + repr(t))}; a receipt holds regular files only", at)
    if _field_text(h, 257, 6) != "ustar" or h[262] != 0 or h[263] != 0x30 or h[264] != 0x30:
        raise Fatal("ARCHIVE_INVALID", f"entry {full!r} is not a POSIX ustar header (magic \"ustar\\0\", version \"00\")", at)
    if full.startswith("/") or ".." in full.split("/") or re.search(r"[\\:]|\\x", full):
        raise Fatal("ARCHIVE_UNSAFE", f"entry name {full!r} is absolute, climbs with \"..\", or holds a backslash, colon or non-ASCII byte", at)
    if prefix:
        raise Fatal("ARCHIVE_INVALID", f"entry {full!r} uses the ustar prefix field; receipt names fit the name field", at)
    size = _read_octal(h, 124, 12)
    if size is None or h[124] & 0x80:
        raise Fatal("ARCHIVE_INVALID", f"entry {full!r} has a size field that is not octal digits", at)
    if h != ustar_header(name, size):
        i = next(k for k in range(BLOCK) if h[k] != ustar_header(name, size)[k])
        raise Fatal("ARCHIVE_INVALID", f"entry {full!r}: header byte {i} differs from the profile's header for its name and size", at)
    return name, size


def _padded(size: int) -> int:
    return -(-size // BLOCK) * BLOCK


class _Tar:
    def __init__(self, chunks: Iterator[bytes], limit: int, why: str) -> None:
        self.r = _Reader(chunks)
        self.seen: set[str] = set()
        self.entries = 0
        self.limit = limit
        self.why = why

    def reserve(self, n: int, what: str, at: Optional[dict[str, Any]] = None) -> None:
        if self.r.position + n > self.limit:
            raise Fatal("ARCHIVE_LIMIT", f"{what} would take the uncompressed archive to {self.r.position + n} bytes, past {self.limit}: {self.why}", at)

    def reserve_data(self, name: str, size: int) -> None:
        self.reserve(_padded(size), f"entry {name}'s {size} bytes of data and their padding", {"file": name})

    def next(self) -> Optional[tuple[str, int]]:
        self.reserve(BLOCK, "a header block")
        h = self.r.read(BLOCK)
        if len(h) < BLOCK:
            raise Fatal("ARCHIVE_INVALID", "the archive ends without the two-block end marker" if not h else "the archive ends inside a header block")
        if not any(h):
            self._end()
            return None
        name, size = _inspect_header(h)
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise Fatal("ARCHIVE_LIMIT", f"the archive holds more than {MAX_ENTRIES} entries", {"file": name})
        if name in self.seen:
            raise Fatal("ARCHIVE_UNSAFE", f"entry {name} appears twice; a later copy could shadow the verified one", {"file": name})
        self.seen.add(name)
        return name, size

    def _end(self) -> None:
        self.reserve(BLOCK, "the end marker's second block")
        second = self.r.read(BLOCK)
        if len(second) < BLOCK or any(second):
            raise Fatal("ARCHIVE_INVALID", "the end marker is not two zero blocks")
        trailing = 0
        while True:
            rest = self.r.read(max(1, min(64 * 1024, self.limit - self.r.position)))
            if not rest:
                return
            self.reserve(0, "zero bytes after the end marker")
            if any(rest):
                raise Fatal("ARCHIVE_INVALID", "bytes other than zeros follow the end marker")
            trailing += len(rest)
            if trailing > MAX_TRAILING_ZEROS:
                raise Fatal("ARCHIVE_LIMIT", f"more than {MAX_TRAILING_ZEROS} zero bytes follow the end marker")

    def data(self, name: str, size: int) -> bytes:
        b = self.r.read(size)
        if len(b) < size:
            raise Fatal("ARCHIVE_INVALID", f"the archive ends inside entry {name} ({len(b)} of {size} bytes)", {"file": name})
        return b

    def padding(self, name: str, size: int) -> None:
        pad = (BLOCK - size % BLOCK) % BLOCK
        if pad:
            b = self.r.read(pad)
            if len(b) < pad:
                raise Fatal("ARCHIVE_INVALID", f"the archive ends inside the padding of entry {name}", {"file": name})
            if any(b):
                raise Fatal("ARCHIVE_INVALID", f"the padding after entry {name} is not all zero bytes", {"file": name})


# --------------------------------------------------------------------------------------------- the manifest


def _exact(o: Any, keys: list[str]) -> bool:
    return isinstance(o, dict) and sorted(o) == sorted(keys)


def parse_manifest(data: bytes, extensions: Optional[dict[str, Any]] = None) -> tuple[Optional[dict[str, Any]], list[tuple[str, str, bool]]]:
    """The manifest, or the reasons it is not one: (message, path, is-a-limit)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, [("the manifest is not valid UTF-8", "", False)]
    scan = scan_canonical(text, MAX_VALUE_DEPTH)
    if scan.defect:
        return None, [(f"the manifest is not canonical JSON (RFC 8785): {scan.defect.reason} ({scan.defect.code})", scan.defect.path, False)]
    if scan.markers:
        return None, [("the manifest holds a member name with the reserved prefix \"$stepchain:\"", scan.markers[0].path, False)]
    value = json.loads(text)
    if not isinstance(value, dict):
        return None, [("the manifest must be a JSON object", "", False)]
    if value.get("format") != RECEIPT_FORMAT:
        return None, [(f"format is {json.dumps(value.get('format'))}; this verifier reads {json.dumps(RECEIPT_FORMAT)}", "/format", False)]
    reasons: list[tuple[str, str, bool]] = []

    def bad(message: str, path: str, limit: bool = False) -> None:
        reasons.append((message, path, limit))

    for k in value:
        if k in (extensions or {}):
            why = extensions[k](value[k])  # type: ignore[index]
            if why:
                bad(why, f"/{k}")
        elif k not in BASE_MEMBERS:
            bad(f"unknown manifest member {json.dumps(k)}" + (" (published and proof-carrying receipts are not yet verified by the Python package)"
                                                            if k in ("anchor", "publication", "redactions") else ""), f"/{k}")
    for k in BASE_MEMBERS:
        if k not in value:
            bad(f'required member "{k}" is missing', f"/{k}")
    if reasons:
        return None, reasons
    if not isinstance(value["exporter"], str) or not 0 < len(value["exporter"].encode("utf-16-le")) // 2 <= 256:
        bad("exporter must be a string of 1–256 characters", "/exporter")
    g = genesis_defect(value["genesis"])
    if g:
        bad(g, "/genesis")
    rng = value["range"]
    rng_ok = _exact(rng, ["from", "prev_hash", "to"]) and is_seq(rng["from"]) and is_seq(rng["to"]) and is_digest(rng["prev_hash"]) and rng["from"] <= rng["to"]
    if not rng_ok:
        bad('range must be {"from":<seq>,"prev_hash":"sha256:<hex>","to":<seq>} with from ≤ to', "/range")
    head = value["head"]
    if not (_exact(head, ["seq", "step_hash"]) and is_seq(head["seq"]) and is_digest(head["step_hash"])):
        bad('head must be {"seq":<seq>,"step_hash":"sha256:<hex>"}', "/head")
    elif isinstance(rng, dict) and head["seq"] != rng.get("to"):
        bad(f"head.seq {head['seq']} is not range.to {rng.get('to')}", "/head/seq")
    chain = value["chain"]
    if not isinstance(chain, list) or not chain:
        bad("chain must be a non-empty array", "/chain")
    else:
        last, steps = -1, 0
        rfrom = rng.get("from") if isinstance(rng, dict) and is_seq(rng.get("from")) else 0
        for i, c in enumerate(chain):
            at = f"/chain/{i}"
            if not (_exact(c, ["digest", "name", "size", "steps"]) and is_digest(c["digest"]) and isinstance(c["name"], str) and is_seq(c["size"])
                    and is_seq(c["steps"]) and c["steps"] != 0):
                bad('a chain entry is {"digest":"sha256:<hex>","name":"chain/<16 digits>.jsonl","size":<bytes>,"steps":<n ≥ 1>}', at)
                continue
            m = CHAIN_NAME_RE.match(c["name"])
            if not m:
                bad(f"chain entry name {json.dumps(c['name'])} is not chain/<16-digit first seq>.jsonl", f"{at}/name")
                continue
            first = int(m.group(1))
            if i == 0 and isinstance(rng, dict) and first != rng.get("from"):
                bad(f"the first chain entry is named for seq {first}, but the range starts at {rng.get('from')}", f"{at}/name")
            if first <= last:
                bad("chain entries must be listed in increasing seq order without repeats", f"{at}/name")
            if i > 0 and first != steps + rfrom:
                bad(f"chain entry {c['name']} should start at seq {steps + rfrom} given the step counts before it", f"{at}/name")
            if c["size"] > MAX_CHAIN_ENTRY_BYTES:
                bad(f"chain entry size {c['size']} exceeds the limit of {MAX_CHAIN_ENTRY_BYTES}", f"{at}/size", True)
            last = first
            steps += c["steps"]
        if not any(not r[2] for r in reasons) and rng_ok and steps != rng["to"] - rng["from"] + 1:
            bad(f"the chain entries hold {steps} steps, but the range {rng['from']}..{rng['to']} has {rng['to'] - rng['from'] + 1}", "/chain")
    blobs = value["blobs"]
    if not isinstance(blobs, list):
        bad("blobs must be an array", "/blobs")
    else:
        prev = ""
        for i, b in enumerate(blobs):
            at = f"/blobs/{i}"
            if not (_exact(b, ["digest", "size"]) and is_digest(b["digest"]) and is_seq(b["size"])):
                bad('a blob entry is {"digest":"sha256:<hex>","size":<bytes>}', at)
                continue
            if b["digest"] <= prev:
                bad("blobs must be sorted by digest without repeats", f"{at}/digest")
            if b["size"] > MAX_BLOB_BYTES:
                bad(f"blob size {b['size']} exceeds the limit of {MAX_BLOB_BYTES}", f"{at}/size", True)
            prev = b["digest"]
    if isinstance(chain, list) and isinstance(blobs, list) and 2 + len(chain) + len(blobs) > MAX_ENTRIES:
        bad(f"the manifest lists {len(chain) + len(blobs)} entries; an archive holds at most {MAX_ENTRIES}", "", True)
    return (None, reasons) if reasons else (value, [])


def check_signature(data: bytes, manifest: bytes) -> str:
    """The signature entry over the exact manifest bytes (§5): the signer's key id, or Fatal SIGNATURE_INVALID."""
    def fail(why: str) -> Fatal:
        return Fatal("SIGNATURE_INVALID", why, {"file": SIGNATURE_NAME})
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("the signature entry is not UTF-8 JSON") from None
    scan = scan_canonical(text, 8, members=False)
    if scan.defect:
        raise fail(f"the signature entry is not canonical JSON: {scan.defect.reason}")
    doc = json.loads(text)
    if not _exact(doc, ["envelope", "format", "public_key"]):
        raise fail('the signature entry must be {"envelope":{…},"format":…,"public_key":…}')
    if doc["format"] != SIGNATURE_FORMAT:
        raise fail(f"signature format is {json.dumps(doc['format'])}, not {json.dumps(SIGNATURE_FORMAT)}")
    pub = b64decode(doc["public_key"])
    if pub is None or len(pub) != 32:
        raise fail("public_key must be the base64 of a 32-byte Ed25519 public key")
    env = doc["envelope"]
    if not _exact(env, ["payload", "payloadType", "signatures"]):
        raise fail("the DSSE envelope must have exactly payload, payloadType and signatures")
    if env["payloadType"] != PAYLOAD_TYPE:
        raise fail(f"payloadType is {json.dumps(env['payloadType'])}, not {json.dumps(PAYLOAD_TYPE)}")
    payload = b64decode(env["payload"])
    if payload is None:
        raise fail("payload is not canonical base64")
    if payload != manifest:
        raise fail(f"the envelope's payload is not the exact bytes of {MANIFEST_NAME}")
    if not isinstance(env["signatures"], list) or len(env["signatures"]) != 1:
        raise fail("the envelope must carry exactly one signature")
    s = env["signatures"][0]
    if not _exact(s, ["keyid", "sig"]):
        raise fail('a signature is {"keyid":…,"sig":…}')
    key_id = key_id_of(pub)
    if s["keyid"] != key_id:
        raise fail(f"keyid {json.dumps(s['keyid'])} is not the id of public_key ({key_id})")
    sig = b64decode(s["sig"])
    if sig is None or len(sig) != 64:
        raise fail("sig must be the base64 of a 64-byte Ed25519 signature")
    why = signature_defect(pae(PAYLOAD_TYPE, manifest), sig, pub)
    if why:
        raise fail(f"the Ed25519 signature by {key_id} does not verify over the manifest: {why} (spec/RECEIPT.md §5.1)")
    return key_id


# --------------------------------------------------------------------------------------------- verification


@dataclass
class ReceiptReport:
    ok: bool = False
    start_hash: Optional[str] = None
    start_seq: int = 0
    head: Optional[str] = None
    head_seq: Optional[int] = None
    steps: int = 0
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    problems_truncated: bool = False
    format: Optional[str] = None
    compressed: bool = False
    scope: Optional[str] = None
    range: Optional[dict[str, Any]] = None
    genesis: Optional[dict[str, Any]] = None
    journal_id: Optional[str] = None
    manifest_digest: Optional[str] = None
    signed_by: Optional[str] = None
    entries: int = 0
    blobs: int = 0
    manifest: Optional[dict[str, Any]] = None
    verdict: str = "invalid"
    authenticated: bool = False
    pending_effects: list[dict[str, Any]] = field(default_factory=list)
    tlog: Optional[dict[str, Any]] = None
    anchor: Optional[dict[str, Any]] = None
    redactions: int = 0
    unbound: list[dict[str, Any]] = field(default_factory=list)
    unbound_count: int = 0
    lines: dict[int, str] = field(default_factory=dict)
    attest: dict[str, Any] = field(default_factory=dict)  # TIME.md §7.3: timestamps, cosignatures, threshold, cosigned_by
    approvals: Optional[list[dict[str, Any]]] = None  # stepchain/v3: the approval requests in the range (APPROVALS.md §6)
    notices: list[Problem] = field(default_factory=list)


def verify_receipt(data: bytes, *, public_key: Optional[bytes | str] = None, expect_head: Optional[str] = None,
                   max_problems: int = 1000, policy: Any = None, trusted: Any = None, consistency: Any = None,
                   tsa_certs: Any = (), cosigners: Any = (), threshold: Optional[int] = None, approvers: Any = None) -> ReceiptReport:
    """Verifies a receipt held in memory (RECEIPT.md §7), with its `proof` member and against a trusted earlier
    checkpoint (PROOFS.md §9.8: `policy` a proofs.Policy, `trusted` a proofs.Checkpoint, `consistency` a proof
    file), and its time-stamp tokens and co-signatures (TIME.md §7: `tsa_certs` certificates from
    attest.load_tsa_certificate, `cosigners` attest.Cosigner pins, `threshold`). Never raises on hostile bytes."""
    from .attest import AttestChecks
    from .proofs import ReceiptProofChecks
    v = _Verification(public_key, expect_head, max_problems)
    v.proof_checks = ReceiptProofChecks(policy, trusted, consistency)
    v.attest = AttestChecks(list(tsa_certs), list(cosigners), threshold)
    v.approvers = approvers
    return v.run(data)


def verify_published_receipt(data: bytes, *, public_key: Optional[bytes | str] = None, expect_head: Optional[str] = None,
                             max_problems: int = 1000) -> ReceiptReport:
    """A published (redacted) receipt (REDACTION.md §7, §12.5): the receipt, then its declarations, anchor or
    publication, and the unbound places. A receipt that is not published is ANCHOR_INVALID here."""
    from .publication import PublicationChecks
    v = _Verification(public_key, expect_head, max_problems)
    v.publication = PublicationChecks()
    return v.run(data)


def verify_receipt_file(path: str, public_key: Optional[str] = None, expect_head: Optional[str] = None, *, policy: Any = None,
                        trusted: Any = None, consistency: Any = None, tsa_certs: Any = (), cosigners: Any = (),
                        threshold: Optional[int] = None, approvers: Any = None) -> ReceiptReport:
    pinned: Optional[bytes] = None
    try:
        with open(path, "rb") as f:
            data = f.read()
        if public_key is not None:
            with open(public_key, "rb") as f:
                pinned = f.read(65537)
            if len(pinned) > 65536:
                raise ReceiptUnavailable(f"{public_key}: a public key file is at most 64 KiB")
    except OSError as e:
        raise ReceiptUnavailable(str(e)) from None
    if pinned is not None:
        key, why = decode_public_key(pinned)
        if key is None:
            raise ReceiptUnavailable(f"KEY_INVALID: --pubkey {public_key}: {why}")
    from .proofs import ReceiptProofChecks
    from .publication import PublicationChecks
    v = _Verification(pinned, expect_head, 1000)
    v.proof_checks = ReceiptProofChecks(policy, trusted, consistency)
    v.publication = PublicationChecks()
    v.publication_if_published = True  # an ordinary receipt stays one; a published one is held to REDACTION.md
    from .attest import AttestChecks
    v.attest = AttestChecks(list(tsa_certs), list(cosigners), threshold)
    v.approvers = approvers
    return v.run(data)


class _Verification:
    def __init__(self, public_key: Optional[bytes | str], expect_head: Optional[str], max_problems: int) -> None:
        self.r = ReceiptReport()
        self.key_given = public_key is not None
        self.public_key = public_key
        self.expect_head = expect_head
        self.max = max_problems
        self.problems: list[Problem] = []
        self.truncated = False
        self.pinned: Optional[bytes] = None
        self.expected: list[str] = []
        self.next = 0
        self.listed: dict[str, dict[str, Any]] = {}
        self.chain: Optional[ChainVerifier] = None
        self.approvers: Any = None  # pinned approvers (APPROVALS.md §5), handed to the chain verifier
        self.chain_report: Any = None
        self.run_state: Optional[RunState] = None
        self.stopped = False
        self.proof_checks: Any = None
        self.publication: Any = None
        self.publication_if_published = False
        from .attest import AttestChecks
        self.attest: Any = AttestChecks()
        self.part_listing: Optional[dict[str, dict[str, Any]]] = None  # PARTS.md §8: address -> {digest, size}
        self.part_bytes: dict[str, bytes] = {}
        self.part_refs: list[tuple[dict[str, Any], dict[str, Any]]] = []  # (reference, location) in archive order
        # A published receipt's public part files (REDACTION.md §13.10), and the addresses met through a public
        # reference ({"digest": A} alone) with where first: their files must be public ones and give the address.
        self.public_parts: dict[str, Any] = {}
        self.public_refs: dict[str, dict[str, Any]] = {}

    def add(self, code: str, message: str, location: Optional[dict[str, Any]] = None) -> None:
        if len(self.problems) >= self.max:
            self.truncated = True
            return
        self.problems.append(Problem(code, message, location or {}))

    def run(self, data: bytes) -> ReceiptReport:
        if self.public_key is not None:
            key, why = decode_public_key(self.public_key)
            if key is None:
                self.add("KEY_MISMATCH", f"{why}; a pinned key that cannot be used matches no signer (spec/RECEIPT.md §5.2)")
            self.pinned = key
        if self.expect_head is not None and not is_digest(self.expect_head):
            self.add("HEAD_MISMATCH", "the pinned head is not \"sha256:\" followed by 64 lowercase hex digits; a pinned head that cannot be used matches no receipt")
        tar = None
        try:
            compressed = data[:2] == b"\x1f\x8b"
            self.r.compressed = compressed
            tar = _Tar(_inflate(data) if compressed else iter([data]), MAX_PREFIX_BYTES,
                       "the most an archive can hold before its manifest is read")
            entry = self._manifest(tar)
            while entry is not None:
                self._entry(tar, *entry)
                entry = tar.next()
            self._at_end()
        except Fatal as e:
            self.stopped = True
            self.add(e.code, e.message, e.location)
        except Exception as e:  # a bug must still yield a report
            self.stopped = True
            self.add("ARCHIVE_INVALID", f"the archive could not be read: {e}")
        finally:
            if tar is not None:
                self.r.entries = tar.entries
        return self._conclude()

    def _manifest(self, tar: _Tar) -> Optional[tuple[str, int]]:
        first = tar.next()
        if first is None:
            raise Fatal("ENTRY_MISSING", f"the archive holds no {MANIFEST_NAME}: it is not a receipt", {"file": MANIFEST_NAME})
        name, size = first
        if name != MANIFEST_NAME:
            raise Fatal("ENTRY_UNEXPECTED", f"the first entry is {name!r}; a receipt starts with {MANIFEST_NAME}", {"file": name})
        if size > MAX_MANIFEST_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"the manifest is {size} bytes; the limit is {MAX_MANIFEST_BYTES}", {"file": name})
        tar.reserve_data(name, size)
        manifest = tar.data(name, size)
        tar.padding(name, size)
        nxt = tar.next()
        if nxt is None or nxt[0] != SIGNATURE_NAME:
            self._settle(tar, manifest, None)
            return nxt
        if nxt[1] > MAX_SIGNATURE_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"the signature entry is {nxt[1]} bytes; the limit is {MAX_SIGNATURE_BYTES}", {"file": nxt[0]})
        tar.reserve_data(*nxt)
        sig = tar.data(*nxt)
        tar.padding(*nxt)
        self._settle(tar, manifest, sig)
        return tar.next()

    def _settle(self, tar: _Tar, manifest: bytes, signature: Optional[bytes]) -> None:
        self.r.manifest_digest = digest_bytes(manifest)
        if signature is not None:
            key_id = check_signature(signature, manifest)
            self.r.signed_by = key_id
            if self.pinned is not None and key_id_of(self.pinned) != key_id:
                self.add("KEY_MISMATCH", f"the receipt is signed by key {key_id}, not by the pinned key {key_id_of(self.pinned)}", {"file": SIGNATURE_NAME})
        elif self.key_given:
            self.add("SIGNATURE_MISSING", f"a public key was pinned but the receipt has no {SIGNATURE_NAME} entry: it is unsigned", {"file": SIGNATURE_NAME})
        from .proofs import proof_member_defect
        checks = self.proof_checks

        def proof_member(v: Any) -> Optional[str]:
            why = proof_member_defect(v)
            if why is None and checks is not None:
                checks.member = v
            return why
        def parts_member(v: Any) -> Optional[str]:
            prev = ""
            if not isinstance(v, list):
                return "parts must be an array"
            for i, e in enumerate(v):
                if not (_exact(e, ["address", "digest", "size"]) and is_digest(e["address"]) and is_digest(e["digest"]) and is_seq(e["size"])):
                    return f'parts[{i}] must be {{"address":A,"digest":F,"size":Z}}'
                if e["address"] <= prev:
                    return "parts must be sorted by address without repeats"
                prev = e["address"]
            self.part_listing = {e["address"]: e for e in v}
            return None
        def lineage_member(v: Any) -> Optional[str]:
            # A fork's receipt (APPROVALS.md §4.1): the fork rule applies from its from_step.
            if not (_exact(v, ["from_step", "parent_step_hash"]) and is_seq(v["from_step"]) and is_digest(v["parent_step_hash"])):
                return 'lineage must be {"from_step":<seq>,"parent_step_hash":"sha256:<hex>"} (a fork\'s: spec/APPROVALS.md §4.1)'
            self.lineage = v
            return None
        self.lineage: Optional[dict[str, Any]] = None
        extensions: dict[str, Any] = {"proof": proof_member, "parts": parts_member, "lineage": lineage_member, **self.attest.extensions()}
        if self.publication is not None:
            extensions.update(self.publication.extensions())
        m, reasons = parse_manifest(manifest, extensions)
        if m is None:
            first = next((r for r in reasons if not r[2]), reasons[0])
            more = len(reasons) - 1
            loc: dict[str, Any] = {"file": MANIFEST_NAME, **({"path": first[1]} if first[1] else {})}
            raise Fatal("ARCHIVE_LIMIT" if first[2] else "MANIFEST_INVALID", first[0] + (f" (the manifest has {more} more problems; this is the first)" if more else ""), loc)
        declared = BLOCK + _padded(len(manifest)) + (0 if signature is None else BLOCK + _padded(len(signature))) + 2 * BLOCK
        declared += sum(BLOCK + _padded(c["size"]) for c in m["chain"]) + sum(BLOCK + _padded(b["size"]) for b in m["blobs"])
        declared += sum(BLOCK + _padded(e["size"]) for e in (self.part_listing or {}).values())
        if declared > MAX_ARCHIVE_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"the manifest declares an archive of {declared} bytes; the limit is {MAX_ARCHIVE_BYTES}", {"file": MANIFEST_NAME})
        tar.limit = declared + MAX_TRAILING_ZEROS
        tar.why = f"the {declared} bytes the manifest declares and at most {MAX_TRAILING_ZEROS} zero bytes after them"
        r = self.r
        r.manifest, r.format, r.range, r.genesis = m, RECEIPT_FORMAT, m["range"], m["genesis"]
        r.journal_id = m["genesis"]["journal_id"]
        r.scope = "complete" if m["range"]["from"] == 0 else "partial"
        self.expected = [MANIFEST_NAME] + ([SIGNATURE_NAME] if signature is not None else []) + [c["name"] for c in m["chain"]] + [
            "blobs/" + b["digest"][7:] for b in m["blobs"]] + ["parts/" + a[7:] for a in (self.part_listing or {})]
        self.next = 2 if signature is not None else 1
        for b in m["blobs"]:
            self.listed[b["digest"]] = {"size": b["size"], "referenced": None, "changed": None}
        gh = genesis_hash(m["genesis"])
        if m["range"]["from"] == 0 and m["range"]["prev_hash"] != gh:
            self.add("GENESIS_MISMATCH", f"range.prev_hash {m['range']['prev_hash']} is not the genesis hash {gh}, though the range starts at seq 0",
                     {"file": MANIFEST_NAME, "path": "/range/prev_hash"})
        self.run_state = RunState() if m["genesis"]["format"] == FORMAT_V2 else None
        forked = {"open_end": True} if self.lineage is None else {"forked_at": self.lineage["from_step"], "open_end": True}
        if m["range"]["from"] == 0:
            self.chain = ChainVerifier(m["genesis"], expect_head=m["head"]["step_hash"], max_problems=self.max, on_line=self._on_line,
                                       approvers=self.approvers, **forked)
        else:
            self.chain = ChainVerifier(None, start={"seq": m["range"]["from"], "prev_hash": m["range"]["prev_hash"]}, fmt=format_of(m["genesis"]),
                                       expect_head=m["head"]["step_hash"], max_problems=self.max, on_line=self._on_line, approvers=self.approvers,
                                       **forked)

    def _on_line(self, line: VerifiedLine) -> None:
        lin = self.lineage
        if lin is not None and line.seq == lin["from_step"] and line.step_hash != lin["parent_step_hash"]:
            self.add("MANIFEST_INVALID", f"lineage.parent_step_hash {lin['parent_step_hash']} is not the step hash of seq {lin['from_step']} "
                     f"({line.step_hash}): the receipt does not share the prefix it names", {"file": MANIFEST_NAME, "path": "/lineage/parent_step_hash"})
        for ref in line.blobs:
            loc = {**({"file": line.file} if line.file else {}), "line": line.line, **({} if line.seq is None else {"seq": line.seq}), "field": ref["field"]}
            entry = self.listed.get(ref["digest"])
            if entry is None:
                self.add("BLOB_MISSING", f"step references blob {ref['digest']}, which the manifest does not list", loc)
            else:
                if entry["referenced"] is None:
                    entry["referenced"] = {**({} if line.seq is None else {"seq": line.seq}), "field": ref["field"]}
                if entry["size"] != ref["size"]:
                    self.add("BLOB_CORRUPT", f"the reference records size {ref['size']} for blob {ref['digest']}, the manifest lists {entry['size']}", loc)
        for m in line.markers:
            if m.names == ["$stepchain:part"]:
                loc = {**({"file": line.file} if line.file else {}), "line": line.line, **({} if line.seq is None else {"seq": line.seq}), "path": m.path}
                ref = json.loads(line.text[m.start:m.end])
                from .public_part import public_ref_of
                address = public_ref_of(ref)
                if address is not None and m.path.split("/")[1:2] != ["meta"]:
                    self._public_reference(address, loc)
                elif '"bind":"' in line.text and '"secrets":' in line.text:
                    continue  # a malformed reference in a public record: its walk reports MARKER_INVALID (§13.10 step 1)
                else:
                    self.part_refs.append((ref, loc))
        if self.proof_checks is not None:
            self.proof_checks.line(line.clean, line.seq, line.step_hash)
        self.attest.line(line.clean, line.seq, line.step_hash)
        if self.publication is not None:
            self.publication.line(line)
        if self.run_state is not None and line.clean and line.seq is not None:
            fold_record(self.run_state, json.loads(line.text))

    def _entry(self, tar: _Tar, name: str, size: int) -> None:
        at = {"file": name}
        if self.next >= len(self.expected) or self.expected[self.next] != name:
            if name not in self.expected:
                raise Fatal("ENTRY_UNEXPECTED", f"{SIGNATURE_NAME} must directly follow {MANIFEST_NAME}" if name == SIGNATURE_NAME
                            else f"entry {name!r} is not listed in the manifest", at)
            where = self.expected.index(name)
            if where < self.next:
                raise Fatal("ENTRY_UNEXPECTED", f"entry {name} is out of order", at)
            for i in range(self.next, where):
                self.add("ENTRY_MISSING", f"the manifest lists {self.expected[i]}, which the archive does not hold (the next entry is {name})", {"file": self.expected[i]})
            self.next = where
        self.next += 1
        if CHAIN_NAME_RE.match(name):
            self._chain_entry(tar, name, size)
        elif BLOB_NAME_RE.match(name):
            self._blob_entry(tar, name, size)
        elif PART_NAME_RE.match(name):
            self._part_entry(tar, name, size)
        else:
            raise Fatal("ENTRY_UNEXPECTED", f"entry {name!r} is not listed in the manifest", at)

    def _chain_entry(self, tar: _Tar, name: str, size: int) -> None:
        at = {"file": name}
        assert self.r.manifest is not None and self.chain is not None
        c = next(e for e in self.r.manifest["chain"] if e["name"] == name)
        if size > MAX_CHAIN_ENTRY_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"chain entry is {size} bytes; the limit is {MAX_CHAIN_ENTRY_BYTES}", at)
        if size != c["size"]:
            self.add("DIGEST_MISMATCH", f"chain entry is {size} bytes; the manifest lists {c['size']}", at)
        tar.reserve_data(name, size)
        data = tar.data(name, size)
        self.chain.begin_segment(name, int(CHAIN_NAME_RE.match(name).group(1)))  # type: ignore[union-attr]
        lines, torn = split_lines(data)
        for ln in lines:
            self.chain.line(ln, True)
        if torn is not None:
            self.chain.line(torn, False)
        digest = digest_bytes(data)
        if digest != c["digest"]:
            self.add("DIGEST_MISMATCH", f"chain entry digest {digest} differs from the manifest's {c['digest']}", at)
        if len(lines) != c["steps"]:
            self.add("COUNT_MISMATCH", f"chain entry holds {len(lines)} complete lines; the manifest lists {c['steps']} steps", at)
        tar.padding(name, size)

    def _part_entry(self, tar: _Tar, name: str, size: int) -> None:
        """A part entry against its listing: length, then SHA-256, then the shapes of PARTS.md §4 (PART_CORRUPT)."""
        from .parts import MAX_PART_BYTES, PartError, _parse
        at = {"file": name}
        address = "sha256:" + name[len("parts/"):]
        listed = (self.part_listing or {})[address]
        if size > MAX_PART_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"part entry is {size} bytes; the limit is {MAX_PART_BYTES}", at)
        tar.reserve_data(name, size)
        data = tar.data(name, size)
        tar.padding(name, size)
        from .public_part import is_public_part_file, parse_public_part, public_refs_in
        if size != listed["size"]:
            self.add("PART_CORRUPT", f"part {address} is {size} bytes; the manifest lists {listed['size']}", at)
        elif digest_bytes(data) != listed["digest"]:
            self.add("PART_CORRUPT", f"part {address}'s bytes hash to {digest_bytes(data)}, not the listed {listed['digest']}", at)
        elif is_public_part_file(data):
            p = parse_public_part(data)
            if isinstance(p, str):
                self.add("PART_CORRUPT", f"public part entry {p}", at)
                return
            self.public_parts[address] = p
            if p.kind == "list":
                self._public_reference(p.base, {"file": name, "path": "/base"})
            if p.kind != "media":
                for a, path in public_refs_in(p.value, "/value" if p.kind == "value" else "/tail"):
                    self._public_reference(a, {"file": name, "path": path})
        else:
            try:
                _parse(data, address, at)
                self.part_bytes[address] = data
            except PartError as e:
                self.add("PART_CORRUPT", e.message, at)

    def _public_reference(self, address: str, loc: dict[str, Any]) -> None:
        """A public reference names an address only: the part's public file is bound by its address (checked at the end)."""
        if address in self.public_refs:
            return
        self.public_refs[address] = loc
        if address not in (self.part_listing or {}):
            self.add("PART_MISSING", f"the reference names part {address}, which the manifest does not list", loc)

    def _check_public_parts(self) -> None:
        """REDACTION.md §13.10 steps 1–3: a part met through a public reference is a public file, and every public file
        gives its address from what it shows, a list's over its base's elements (bases first, without recursion)."""
        from .public_part import check_public_part
        elements: dict[str, Optional[list[bytes]]] = {}
        failed: set[str] = set()
        for address in self.public_refs:
            if address in self.part_bytes:
                self.add("PART_CORRUPT", f"part {address} is referenced by a public record but its entry is a private part file",
                         {"file": "parts/" + address[7:]})
                failed.add(address)
        for start in sorted(self.public_parts):
            chain: list[str] = []
            a: Optional[str] = start
            while a is not None and a not in elements and a not in failed:
                if a in chain:
                    self.add("PART_CORRUPT", f"part {a}'s base chain loops", {"file": "parts/" + a[7:]})
                    break
                chain.append(a)
                f = self.public_parts.get(a)
                a = f.base if f is not None and f.kind == "list" else None
            for a in reversed(chain):
                f = self.public_parts.get(a)
                if f is None:
                    failed.add(a)
                    continue
                code, message, els = check_public_part(f, a, elements.get(f.base) if f.kind == "list" else None)
                if code is not None:
                    failed.add(a)
                    self.add(code, f"public part {a}: {message}", {"file": "parts/" + a[7:]})
                    continue
                elements[a] = els
                if self.publication is not None:
                    self.publication.public_part(a, f)

    def _check_parts(self) -> None:
        """PARTS.md §8: each reference against the listing, each referenced part read and checked, each listed part reached."""
        if self.public_parts or self.public_refs:
            self._check_public_parts()
            for address, loc in self.public_refs.items():
                if address in (self.part_listing or {}) and address not in self.public_parts and address not in self.part_bytes:
                    self.add("PART_MISSING", f"part {address} is referenced here but its entry is missing or damaged", loc)
        if not self.part_refs and not self.part_listing:
            return
        from .parts import PART_MARKER, PartError, PartReader
        listing = self.part_listing or {}

        def fetch(address: str, size: int) -> Any:
            data = self.part_bytes.get(address)
            return None if data is None else (data if len(data) == size else {"size": len(data)})
        reader = PartReader(fetch)
        judged: set[str] = set()
        failed: set[str] = set()
        # Every reference, not only an address's first, against the listing and (met deeper) the nesting limit.
        for ref, loc in self.part_refs:
            body = ref.get(PART_MARKER) if isinstance(ref, dict) else None
            address = body.get("digest") if isinstance(body, dict) else None
            if not isinstance(address, str):
                continue
            first = address not in judged
            judged.add(address)
            e = listing.get(address)
            if e is None:
                if first:
                    self.add("PART_MISSING", f"a reference names part {address}, which the manifest does not list", loc)
                continue
            if e["digest"] != body.get("file") or e["size"] != body.get("size"):
                self.add("PART_CORRUPT", f"the reference to part {address} records another file digest or size than the manifest lists", loc)
                continue
            if address in failed:
                continue
            try:
                reader.resolve(ref, loc.get("seq"), loc.get("path", ""))
            except PartError as err:
                failed.add(address)
                self.add(err.code, err.message, {**loc, **err.location})
        for address in listing:
            if address not in reader.parts and address not in judged and address not in self.public_refs:
                self.add("ENTRY_UNEXPECTED", f"part {address} is listed but no reference reaches it", {"file": "parts/" + address[7:]})

    def _blob_entry(self, tar: _Tar, name: str, size: int) -> None:
        at = {"file": name}
        digest_from_name = "sha256:" + name[len("blobs/"):]
        b = self.listed[digest_from_name]
        if size > MAX_BLOB_BYTES:
            raise Fatal("ARCHIVE_LIMIT", f"blob entry is {size} bytes; the limit is {MAX_BLOB_BYTES}", at)
        tar.reserve_data(name, size)
        data = tar.data(name, size)
        tar.padding(name, size)
        self.r.blobs += 1
        digest = digest_bytes(data)
        if size != b["size"]:
            self.add("BLOB_CORRUPT", f"blob is {size} bytes; the manifest lists {b['size']}", at)
        if digest != digest_from_name:
            b["changed"] = dict(at)
            self.add("BLOB_CORRUPT", f"blob bytes hash to {digest}, not the digest {digest_from_name} they are stored under", b["changed"])
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.add("BLOB_CORRUPT", "blob bytes are not valid UTF-8; a blob is the canonical JSON of a content value", at)
            return
        scan = scan_canonical(text, MAX_RECORD_DEPTH, members=False)
        if scan.defect:
            self.add("BLOB_CORRUPT", f"blob bytes are not canonical JSON: {scan.defect.reason}", {**at, **({"path": scan.defect.path} if scan.defect.path else {})})
        elif self.publication is not None:
            self.publication.blob(digest_from_name, text)

    def _at_end(self) -> None:
        for i in range(self.next, len(self.expected)):
            self.add("ENTRY_MISSING", f"the manifest lists {self.expected[i]}, which the archive does not hold", {"file": self.expected[i]})
        if self.chain is not None:
            self.chain_report = self.chain.finish()
            self.chain = None
        for digest, b in self.listed.items():
            if b["changed"] is not None and b["referenced"] is not None:
                b["changed"].update(b["referenced"])
            if b["referenced"] is None:
                self.add("ENTRY_UNEXPECTED", f"blob {digest} is listed but no step in the range references it", {"file": "blobs/" + digest[7:]})
        self._check_parts()

    def _conclude(self) -> ReceiptReport:
        r = self.r
        if self.chain is not None:
            self.chain_report = self.chain.finish()
        cr = self.chain_report
        if cr is not None:
            r.start_hash, r.start_seq, r.head, r.head_seq, r.steps = cr.start_hash, cr.start_seq, cr.head, cr.head_seq, cr.steps
            r.approvals, r.notices = cr.approvals, list(cr.notices)
            for p in cr.problems:
                if not (self.stopped and p.code == "HEAD_MISMATCH"):
                    self.add(p.code, p.message, p.location)
            m = r.manifest
            if m is not None and not self.stopped and cr.head_seq is not None and cr.head_seq != m["head"]["seq"] and not cr.problems:
                self.add("HEAD_MISMATCH", f"the chain ends at seq {cr.head_seq}; the manifest's head is seq {m['head']['seq']}", {"file": MANIFEST_NAME, "path": "/head/seq"})
            pin = self.expect_head
            if not self.stopped and pin is not None and is_digest(pin) and cr.head != pin:
                self.add("HEAD_MISMATCH", f"the pinned head is {pin}, but the receipt's chain ends at {cr.head or 'no readable step'}", {"file": MANIFEST_NAME, "path": "/head/step_hash"})
        if self.proof_checks is not None:
            gh = None
            try:
                gh = genesis_hash(r.genesis) if r.genesis is not None else None
            except Exception:
                gh = None
            for p in self.proof_checks.finish(r.range, gh):
                self.add(p.code, p.message, {"path": "/proof"})
            r.tlog = self.proof_checks.tlog
        if r.manifest is not None and not self.stopped:
            for a in self.attest.finish(r.manifest, genesis_hash(r.manifest["genesis"])):
                self.add(a.code, a.message, {"path": a.path})
            r.attest = self.attest.report
        pub = self.publication
        if pub is not None and self.publication_if_published:
            m = r.manifest
            if not (m is not None and ("anchor" in m or "redactions" in m or "publication" in m or pub.published_content)):
                pub = None
        if pub is not None:
            for p in self.publication.finish(r, self.stopped):
                self.add(p.code, p.message, p.location)
            r.unbound = self.publication.unbound[:1000]
            r.unbound_count = len(self.publication.unbound)
            r.redactions = len(self.publication.declared or {})
            r.anchor = self.publication.anchor
            r.lines = self.publication.lines
        r.problems = self.problems
        r.problems_truncated = self.truncated or bool(cr and cr.problems_truncated)
        r.ok = not r.problems and not r.problems_truncated
        tl = r.tlog or {}
        r.authenticated = r.ok and (self.pinned is not None or self.expect_head is not None or bool(tl.get("checkpoint") and tl.get("pinned"))
                                    or bool(tl.get("extends") and tl["extends"]["size"] > 0 and self.proof_checks.policy is not None))
        r.verdict = "invalid" if not r.ok else "authenticated" if r.authenticated else "intact"
        if self.run_state is not None:
            r.pending_effects = [{"id": e.id, "tool": e.tool, "seq": e.seq, "idempotency_key": e.idempotency_key} for e in self.run_state.pending()]
        return r
