"""Transparency-log proofs (spec/PROOFS.md): step-hash leaves, the tree frontier, range inclusion and consistency
proofs (RFC 9162), C2SP signed notes, checkpoints and cosignatures against a policy, the witness check, proof
files and journal origins. Every verification takes untrusted input, never raises, and returns its problems
with the codes of PROOFS.md §10; the errors of §10's last paragraph (KEY_INVALID, TREE_STATE_INVALID,
ARGUMENT_INVALID) are raised as ProofError."""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from .canonical import canonical_json, is_digest, scan_canonical
from .ed25519 import signature_defect

MAX_SAFE = 2**53 - 1
EMPTY_ROOT = hashlib.sha256(b"").digest()
TYPE_ED25519 = 0x01
TYPE_COSIGNATURE = 0x04
MAX_NOTE_BYTES = 1 << 20
MAX_SIGNATURE_LINES = 100
MAX_PROOF_FILE = 4 << 20


class ProofError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass
class ProofProblem:
    code: str
    message: str


def _b64(s: Any) -> Optional[bytes]:
    if not isinstance(s, str) or len(s) % 4:
        return None
    try:
        raw = base64.b64decode(s.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None
    return raw if base64.b64encode(raw).decode() == s else None


def _node(l: bytes, r: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + l + r).digest()


def step_leaf_hash(step_hash: Any) -> Optional[bytes]:
    """SHA-256(0x00 ‖ bytes(step_hash)) (§4), or None when it is not a digest."""
    return hashlib.sha256(b"\x00" + bytes.fromhex(step_hash[7:])).digest() if is_digest(step_hash) else None


def _is_index(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_SAFE


class TreeFrontier:
    """The compact range [0, n) (§5.1)."""

    def __init__(self) -> None:
        self.nodes: list[bytes] = []
        self.size = 0

    def append(self, leaf: bytes) -> None:
        c, i = leaf, self.size
        while i & 1:
            c = _node(self.nodes.pop(), c)
            i >>= 1
        self.nodes.append(c)
        self.size += 1

    def root(self) -> bytes:
        if not self.nodes:
            return EMPTY_ROOT
        c = self.nodes[-1]
        for r in reversed(self.nodes[:-1]):
            c = _node(r, c)
        return c

    @staticmethod
    def parse(state: Any) -> "TreeFrontier":
        """A serialized state (§5.3), or TREE_STATE_INVALID."""
        def bad() -> ProofError:
            return ProofError("TREE_STATE_INVALID", "a tree state is the JCS of {format, nodes, size} (PROOFS.md §5.3)")
        text = state if isinstance(state, str) else None
        if text is None:
            try:
                text = canonical_json(state)
            except Exception:
                raise bad() from None
        if scan_canonical(text).defect is not None:
            raise bad()
        v = json.loads(text)
        if not isinstance(v, dict) or sorted(v) != ["format", "nodes", "size"] or v["format"] != "stepchain-tree/v1" or not _is_index(v["size"]):
            raise bad()
        nodes = v["nodes"]
        if not isinstance(nodes, list) or len(nodes) != bin(v["size"]).count("1"):
            raise bad()
        t = TreeFrontier()
        for n in nodes:
            raw = _b64(n)
            if raw is None or len(raw) != 32:
                raise bad()
            t.nodes.append(raw)
        t.size = v["size"]
        return t


def _split(n: int) -> int:
    """The largest power of two smaller than n (n ≥ 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def range_proof_length(a: int, b: int, lo: int, hi: int) -> int:
    if a <= lo and hi <= b:
        return 0
    m = lo + _split(hi - lo)
    if b <= m:
        return range_proof_length(a, b, lo, m) + 1
    if a >= m:
        return range_proof_length(a, b, m, hi) + 1
    return range_proof_length(a, b, lo, m) + range_proof_length(a, b, m, hi)


def _mth(leaves: Sequence[bytes]) -> bytes:
    if not leaves:
        return EMPTY_ROOT
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return _node(_mth(leaves[:k]), _mth(leaves[k:]))


def verify_range(frm: Any, to: Any, size: Any, leaves: Sequence[bytes], proof: Sequence[bytes], root: bytes) -> Optional[ProofProblem]:
    """§9.2 (and §9.1 for from = to): None when valid."""
    if not (_is_index(frm) and _is_index(to) and _is_index(size)) or any(len(h) != 32 for h in [*proof, root, *leaves]):
        return ProofProblem("PROOF_MALFORMED", "sizes and indices are integers from 0 to 2^53 - 1 and hashes 32 bytes")
    if frm > to or to >= size:
        return ProofProblem("INDEX_OUT_OF_RANGE", f"steps {frm}..{to} are not in a tree of {size} steps")
    if len(leaves) != to - frm + 1:
        return ProofProblem("PROOF_MALFORMED", f"{len(leaves)} leaves for steps {frm}..{to}")
    if len(proof) != range_proof_length(frm, to + 1, 0, size):
        return ProofProblem("PROOF_LENGTH_INVALID", f"{len(proof)} hashes; steps {frm}..{to} in a tree of {size} need {range_proof_length(frm, to + 1, 0, size)}")
    b = to + 1
    cursor = [0]

    def take() -> bytes:
        h = proof[cursor[0]]
        cursor[0] += 1
        return h

    def c(lo: int, hi: int) -> bytes:
        if frm <= lo and hi <= b:
            return _mth(leaves[lo - frm:hi - frm])
        m = lo + _split(hi - lo)
        if b <= m:
            left = c(lo, m)
            return _node(left, take())
        if frm >= m:
            right = c(m, hi)
            return _node(take(), right)
        left = c(lo, m)
        return _node(left, c(m, hi))

    if c(0, size) != root:
        return ProofProblem("ROOT_MISMATCH", "the steps and the proof lead to another root than the checkpoint's")
    return None


def _subproof_length(m: int, lo: int, hi: int, start: bool) -> int:
    n = hi - lo
    if m == n:
        return 0 if start else 1
    k = _split(n)
    if m <= k:
        return _subproof_length(m, lo, lo + k, start) + 1
    return _subproof_length(m - k, lo + k, hi, False) + 1


def consistency_length(m: int, n: int) -> int:
    return 0 if m == 0 or m == n else _subproof_length(m, 0, n, True)


def verify_consistency(m: Any, old_root: bytes, n: Any, root: bytes, proof: Sequence[bytes]) -> Optional[ProofProblem]:
    """§9.3: None when the tree of n extends the tree of m."""
    if not (_is_index(m) and _is_index(n)) or any(len(h) != 32 for h in [*proof, old_root, root]):
        return ProofProblem("PROOF_MALFORMED", "sizes are integers from 0 to 2^53 - 1 and hashes 32 bytes")
    if m > n:
        return ProofProblem("SIZE_DECREASED", f"the newer tree has {n} steps, fewer than the older's {m}")
    if len(proof) != consistency_length(m, n):
        return ProofProblem("PROOF_LENGTH_INVALID", f"{len(proof)} hashes; from {m} to {n} steps needs {consistency_length(m, n)}")
    if m == 0:
        return None if old_root == EMPTY_ROOT else ProofProblem("INCONSISTENT", "the tree of 0 steps has the empty root")
    if m == n:
        return None if old_root == root else ProofProblem("INCONSISTENT", f"two roots for one size ({n}): a fork")
    p = list(proof)
    if m & (m - 1) == 0:
        p.insert(0, old_root)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = p[0]
    for c in p[1:]:
        if sn == 0:
            return ProofProblem("PROOF_LENGTH_INVALID", "more hashes than the sizes call for")
        if fn & 1 or fn == sn:
            fr = _node(c, fr)
            sr = _node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = _node(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        return ProofProblem("PROOF_LENGTH_INVALID", "fewer hashes than the sizes call for")
    if fr != old_root or sr != root:
        return ProofProblem("INCONSISTENT", f"the tree of {n} steps does not extend the tree of {m}")
    return None


# --------------------------------------------------------------------------------------------- keys and notes


@dataclass(frozen=True)
class VerifierKey:
    name: str
    key_id: int
    type: int
    public_key: bytes


_WHITE = re.compile(r"[\s\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")


def _key_id(name: str, type_: int, key: bytes) -> int:
    return int.from_bytes(hashlib.sha256(name.encode("utf-8") + b"\n" + bytes([type_]) + key).digest()[:4], "big")


def parse_verifier_key(vkey: Any) -> VerifierKey:
    """`<name>+<key ID hex>+<base64(type ‖ key)>` (§8.1), split at its first two `+`; KEY_INVALID otherwise."""
    def bad(why: str) -> ProofError:
        return ProofError("KEY_INVALID", f"not a verifier key: {why}")
    if not isinstance(vkey, str):
        raise bad("not text")
    parts = vkey.split("+", 2)
    if len(parts) != 3:
        raise bad("a vkey is <name>+<key ID>+<base64>")
    name, kid, b64 = parts
    if not name or _WHITE.search(name):
        raise bad("the name is empty or holds white space")
    if not re.fullmatch(r"[0-9a-f]{8}", kid):
        raise bad("the key ID is not 8 lowercase hex digits")
    raw = _b64(b64)
    if raw is None or len(raw) != 33:
        raise bad("the key is not the base64 of a type byte and 32 bytes")
    if raw[0] not in (TYPE_ED25519, TYPE_COSIGNATURE):
        raise bad(f"key type 0x{raw[0]:02x} is not supported (0x01 Ed25519, 0x04 cosignature/v1)")
    if _key_id(name, raw[0], raw[1:]) != int(kid, 16):
        raise bad("the key ID is not the one its name, type and key give")
    return VerifierKey(name, int(kid, 16), raw[0], raw[1:])


@dataclass
class Note:
    text: str
    signatures: list[tuple[str, int, bytes]]  # name, key id, signature bytes


def parse_note(text: Any) -> tuple[Optional[Note], Optional[ProofProblem]]:
    if isinstance(text, bytes):
        if len(text) > MAX_NOTE_BYTES:
            return None, ProofProblem("LIMIT_EXCEEDED", f"a note is at most {MAX_NOTE_BYTES} bytes")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None, ProofProblem("NOTE_MALFORMED", "a note is UTF-8")
    if not isinstance(text, str):
        return None, ProofProblem("NOTE_MALFORMED", "a note is text")
    if len(text.encode("utf-8", "surrogatepass")) > MAX_NOTE_BYTES:
        return None, ProofProblem("LIMIT_EXCEEDED", f"a note is at most {MAX_NOTE_BYTES} bytes")
    if any(ord(ch) < 0x20 and ch != "\n" for ch in text) or any(0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        return None, ProofProblem("NOTE_MALFORMED", "a note holds no control character but newline")
    split = text.rfind("\n\n")
    if split < 0 or not text.endswith("\n"):
        return None, ProofProblem("NOTE_MALFORMED", "a note is text lines, an empty line, then signature lines")
    body, sigs = text[:split + 1], text[split + 2:]
    if not body or not sigs:
        return None, ProofProblem("NOTE_MALFORMED", "a note has a text and at least one signature line")
    lines = sigs[:-1].split("\n")
    if len(lines) > MAX_SIGNATURE_LINES:
        return None, ProofProblem("LIMIT_EXCEEDED", f"a note has at most {MAX_SIGNATURE_LINES} signature lines")
    out = []
    for ln in lines:
        m = re.fullmatch(r"\u2014 ([^ ]+) ([A-Za-z0-9+/=]+)", ln)
        if not m or "+" in m.group(1) or _WHITE.search(m.group(1)):
            return None, ProofProblem("NOTE_MALFORMED", "a signature line is \"— <name> <base64>\"")
        raw = _b64(m.group(2))
        if raw is None or len(raw) < 5:
            return None, ProofProblem("NOTE_MALFORMED", "a signature is the base64 of a 4-byte key ID and the signature")
        out.append((m.group(1), int.from_bytes(raw[:4], "big"), raw[4:]))
    return Note(body, out), None


def open_note(text: Any, keys: Sequence[VerifierKey]) -> tuple[Optional[Note], list[str], list[ProofProblem]]:
    """§8.1: (note, names of the keys that verified, problems)."""
    note, bad = parse_note(text)
    if note is None:
        return None, [], [bad]  # type: ignore[list-item]
    verified: list[str] = []
    problems: list[ProofProblem] = []
    for name, kid, sig in note.signatures:
        key = next((k for k in keys if k.name == name and k.key_id == kid), None)
        if key is None:
            continue
        why = signature_defect(note.text.encode("utf-8"), sig, key.public_key) if len(sig) == 64 else "not 64 bytes"
        if why:
            problems.append(ProofProblem("SIGNATURE_INVALID", f"the signature by {name} does not verify: {why}"))
        elif name not in verified:
            verified.append(name)
    if not problems and not verified:
        problems.append(ProofProblem("SIGNATURE_MISSING", "no signature by a known key"))
    return note, verified, problems


@dataclass
class Checkpoint:
    origin: str
    size: int
    root: bytes


def parse_checkpoint_text(text: str) -> tuple[Optional[Checkpoint], Optional[ProofProblem]]:
    lines = text[:-1].split("\n") if text.endswith("\n") else None
    if lines is None or len(lines) < 3 or not lines[0] or any(not ln for ln in lines[3:]):
        return None, ProofProblem("CHECKPOINT_MALFORMED", "a checkpoint is the origin, the size and the root, one a line")
    if not re.fullmatch(r"0|[1-9][0-9]*", lines[1]):
        return None, ProofProblem("CHECKPOINT_MALFORMED", "the size is a decimal number without leading zeros")
    size = int(lines[1])
    if size > MAX_SAFE:
        return None, ProofProblem("LIMIT_EXCEEDED", "a tree size is at most 2^53 - 1")
    root = _b64(lines[2])
    if root is None or len(root) != 32:
        return None, ProofProblem("CHECKPOINT_MALFORMED", "the root is the base64 of 32 bytes")
    if size == 0 and root != EMPTY_ROOT:
        return None, ProofProblem("CHECKPOINT_MALFORMED", "the empty tree's root is SHA-256()")
    return Checkpoint(lines[0], size, root), None


@dataclass
class Policy:
    log: VerifierKey
    witnesses: list[VerifierKey] = field(default_factory=list)
    quorum: Any = 0


@dataclass
class CheckpointResult:
    ok: bool
    problems: list[ProofProblem]
    checkpoint: Optional[Checkpoint]
    cosignatures: list[tuple[str, int]]


def verify_checkpoint(text: Any, policy: Policy) -> CheckpointResult:
    """§9.4."""
    problems: list[ProofProblem] = []

    def done(cp: Optional[Checkpoint] = None, cos: Optional[list[tuple[str, int]]] = None) -> CheckpointResult:
        return CheckpointResult(not problems, problems, cp, cos or [])
    q = policy.quorum
    all_keys = [policy.log.public_key, *[w.public_key for w in policy.witnesses]]
    if (policy.log.type != TYPE_ED25519 or any(w.type != TYPE_COSIGNATURE for w in policy.witnesses) or len(set(all_keys)) != len(all_keys)
            or not isinstance(q, int) or isinstance(q, bool) or not 0 <= q <= len(policy.witnesses)):
        problems.append(ProofProblem("POLICY_INVALID", "the policy breaks PROOFS.md §8.4"))
        return done()
    note, bad = parse_note(text)
    if note is None:
        problems.append(bad)  # type: ignore[arg-type]
        return done()
    cp, bad = parse_checkpoint_text(note.text)
    if cp is None:
        problems.append(bad)  # type: ignore[arg-type]
        return done()
    if cp.origin != policy.log.name:
        problems.append(ProofProblem("ORIGIN_MISMATCH", f"the checkpoint's origin {cp.origin!r} is not the log key's name {policy.log.name!r}"))
        return done(cp)
    log_ok = log_bad = False
    counted: dict[tuple[str, int], int] = {}
    cos: list[tuple[str, int]] = []
    message = note.text.encode("utf-8")
    for name, kid, sig in note.signatures:
        if name == policy.log.name and kid == policy.log.key_id:
            why = signature_defect(message, sig, policy.log.public_key) if len(sig) == 64 else "not 64 bytes"
            if why:
                log_bad = True
                problems.append(ProofProblem("SIGNATURE_INVALID", f"the log's signature does not verify: {why}"))
            else:
                log_ok = True
            continue
        w = next((k for k in policy.witnesses if k.name == name and k.key_id == kid), None)
        if w is None:
            continue
        why: Optional[str]
        if len(sig) != 72:
            why = "not 72 bytes (the time and 64)"
        else:
            t = int.from_bytes(sig[:8], "big")
            why = "its time is above 2^53 - 1" if t > MAX_SAFE else signature_defect(
                b"cosignature/v1\ntime " + str(t).encode() + b"\n" + message, sig[8:], w.public_key)
        if why:
            problems.append(ProofProblem("COSIGNATURE_INVALID", f"the cosignature by {name} does not verify: {why}"))
        elif (name, kid) not in counted:
            counted[(name, kid)] = t
            cos.append((name, t))
    if not log_ok and not log_bad:
        problems.append(ProofProblem("SIGNATURE_MISSING", "no signature by the log key"))
    if len(counted) < q:
        problems.append(ProofProblem("QUORUM_NOT_MET", f"{len(counted)} witnesses cosigned; the policy needs {q}"))
    return done(cp, cos)


def check_witness_update(last: Optional[Checkpoint], nxt: Checkpoint, proof: Sequence[bytes], old_size: Optional[int] = None) -> Optional[ProofProblem]:
    """§9.5."""
    if last is not None and last.origin != nxt.origin:
        return ProofProblem("ORIGIN_MISMATCH", "the checkpoint is of another origin than the last one")
    old = old_size if old_size is not None else (last.size if last is not None else 0)
    if old > nxt.size:
        return ProofProblem("SIZE_DECREASED", f"the old size {old} is larger than the new size {nxt.size}")
    if old != (last.size if last is not None else 0):
        return ProofProblem("OLD_SIZE_MISMATCH", f"the proof starts from {old}, the last checkpoint has {last.size if last else 0}")
    if last is not None and last.size == nxt.size and last.root != nxt.root:
        return ProofProblem("INCONSISTENT", "two roots for one size")
    if last is None:
        return None if not proof else ProofProblem("PROOF_LENGTH_INVALID", "with no last checkpoint the proof is empty")
    return verify_consistency(last.size, last.root, nxt.size, nxt.root, proof)


_LABEL = r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?"
AUTHORITY_RE = re.compile(rf"{_LABEL}(\.{_LABEL})*(/[A-Za-z0-9._~-]+)*\Z")


def journal_origin(authority: Any, journal_id: Any, genesis_hash: Any) -> str:
    """`<authority>/<journal id>/<genesis hash hex>` (§8.5), or ARGUMENT_INVALID."""
    from .journal_dir import is_store_id
    if not isinstance(authority, str) or not AUTHORITY_RE.match(authority) or any(s in (".", "..") for s in authority.split("/")[1:]):
        raise ProofError("ARGUMENT_INVALID", f"authority {authority!r} is not a lowercase DNS name with optional path segments")
    if not is_store_id(journal_id):
        raise ProofError("ARGUMENT_INVALID", f"journal id {journal_id!r} is not a store id")
    if not is_digest(genesis_hash):
        raise ProofError("ARGUMENT_INVALID", "the genesis hash is not a digest")
    origin = f"{authority}/{journal_id}/{genesis_hash[7:]}"
    if len(origin.encode("utf-8")) > 255:
        raise ProofError("ARGUMENT_INVALID", "an origin is at most 255 bytes")
    return origin


@dataclass
class ProofFileResult:
    ok: bool
    problems: list[ProofProblem]
    type: Optional[str] = None
    frm: Optional[int] = None
    to: Optional[int] = None
    checkpoint: Optional[Checkpoint] = None


def verify_proof_document(data: Any, policy: Policy, trusted: Optional[Checkpoint] = None) -> ProofFileResult:
    """§9.6."""
    problems: list[ProofProblem] = []
    res = ProofFileResult(False, problems)

    def done() -> ProofFileResult:
        res.ok = not problems
        return res
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_PROOF_FILE:
        problems.append(ProofProblem("LIMIT_EXCEEDED", "a proof file is at most 4 MiB"))
        return done()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        problems.append(ProofProblem("PROOF_MALFORMED", "a proof file is UTF-8"))
        return done()
    if text.endswith("\n"):
        text = text[:-1]
    doc = None
    if scan_canonical(text).defect is None:
        doc = json.loads(text)
    members = {"inclusion": ["checkpoint", "format", "from", "hashes", "steps", "to", "type"],
               "consistency": ["checkpoint", "format", "hashes", "old_checkpoint", "type"]}
    if (not isinstance(doc, dict) or doc.get("format") != "stepchain-proof/v1" or doc.get("type") not in members
            or sorted(doc) != members[doc["type"]] or not isinstance(doc["checkpoint"], str) or not isinstance(doc["hashes"], list)
            or not all(isinstance(h, str) for h in doc["hashes"])
            or (doc["type"] == "inclusion" and not (_is_index(doc["from"]) and _is_index(doc["to"]) and isinstance(doc["steps"], list)
                                                   and all(isinstance(s, str) for s in doc["steps"])))
            or (doc["type"] == "consistency" and not isinstance(doc["old_checkpoint"], str))):
        problems.append(ProofProblem("PROOF_MALFORMED", "not a proof file of PROOFS.md §7.4"))
        return done()
    res.type = doc["type"]
    if doc["type"] == "inclusion":
        res.frm, res.to = doc["from"], doc["to"]
    cr = verify_checkpoint(doc["checkpoint"], policy)
    problems.extend(cr.problems)
    if cr.checkpoint is None:
        return done()
    res.checkpoint = cr.checkpoint
    hashes = [_b64(h) for h in doc["hashes"]]
    if any(h is None or len(h) != 32 for h in hashes):
        problems.append(ProofProblem("PROOF_MALFORMED", "a proof hash is the base64 of 32 bytes"))
        return done()
    cp = cr.checkpoint
    if doc["type"] == "inclusion":
        frm, to, steps = doc["from"], doc["to"], doc["steps"]
        if frm <= to and (len(steps) != to - frm + 1 or not all(is_digest(s) for s in steps)):
            problems.append(ProofProblem("PROOF_MALFORMED", "steps holds the step hashes of from..to"))
            return done()
        leaves = [step_leaf_hash(s) for s in steps] if frm <= to else []
        p = verify_range(frm, to, cp.size, [x for x in leaves if x is not None], hashes, cp.root)  # type: ignore[misc]
        if p:
            problems.append(p)
        return done()
    old = verify_checkpoint(doc["old_checkpoint"], Policy(policy.log, [], 0))
    problems.extend(old.problems)
    if old.checkpoint is None:
        return done()
    o = old.checkpoint
    if trusted is not None:
        if trusted.origin != o.origin:
            problems.append(ProofProblem("ORIGIN_MISMATCH", "the old checkpoint is of another origin than the trusted one"))
        elif trusted.size != o.size:
            problems.append(ProofProblem("OLD_SIZE_MISMATCH", "the old checkpoint has another size than the trusted one"))
        elif trusted.root != o.root:
            problems.append(ProofProblem("INCONSISTENT", "the old checkpoint has another root than the trusted one"))
    p = verify_consistency(o.size, o.root, cp.size, cp.root, hashes)  # type: ignore[arg-type]
    if p:
        problems.append(p)
    return done()


def parse_journal_origin(origin: str) -> Optional[tuple[str, str, str]]:
    """(authority, journal id, genesis hash) of a journal origin (§8.5), or None."""
    parts = origin.split("/")
    if len(parts) < 3 or not re.fullmatch(r"[0-9a-f]{64}", parts[-1]):
        return None
    try:
        journal_origin("/".join(parts[:-2]), parts[-2], "sha256:" + parts[-1])
    except ProofError:
        return None
    return "/".join(parts[:-2]), parts[-2], "sha256:" + parts[-1]


def proof_member_defect(v: Any) -> Optional[str]:
    """RECEIPT.md §4.5: the `proof` member is exactly {checkpoint: a signed note, hashes: ≤ 106 base64 hashes}."""
    if not isinstance(v, dict):
        return "proof is not an object"
    if sorted(v) != ["checkpoint", "hashes"]:
        return "proof must have exactly the members checkpoint and hashes"
    if not isinstance(v["checkpoint"], str) or parse_note(v["checkpoint"])[0] is None:
        return "proof.checkpoint is not a signed note"
    if not isinstance(v["hashes"], list) or len(v["hashes"]) > 106:
        return "proof.hashes is not a list of at most 106 hashes"
    for i, h in enumerate(v["hashes"]):
        b = _b64(h)
        if b is None or len(b) != 32:
            return f"proof.hashes[{i}] is not the base64 of 32 bytes"
    return None


class ReceiptProofChecks:
    """PROOFS.md §9.8 for a receipt being verified: leaves from the lines that verified (§9.7), the `proof`
    member's checkpoint and inclusion proof, and a trusted earlier checkpoint the receipt must extend."""

    def __init__(self, policy: Optional[Policy] = None, trusted: Optional[Checkpoint] = None, consistency: Any = None) -> None:
        self.policy, self.trusted, self.consistency = policy, trusted, consistency
        self.member: Optional[dict[str, Any]] = None
        self.leaves: list[bytes] = []
        self.prefix = TreeFrontier()
        self.prefix_root: Optional[bytes] = None
        self.broken = False
        self.next_seq: Optional[int] = None
        self.tlog: Optional[dict[str, Any]] = None

    def line(self, clean: bool, seq: Optional[int], step_hash: Optional[str]) -> None:
        if self.broken:
            return
        leaf = step_leaf_hash(step_hash) if clean and step_hash is not None else None
        if leaf is None or seq is None or (self.next_seq is not None and seq != self.next_seq):
            self.broken = True
            return
        self.next_seq = seq + 1
        if self.member is not None:
            self.leaves.append(leaf)
        t = self.trusted
        if t is not None and seq == self.prefix.size and self.prefix.size < t.size:
            self.prefix.append(leaf)
            if self.prefix.size == t.size:
                self.prefix_root = self.prefix.root()

    def finish(self, rng: Optional[dict[str, Any]], genesis_hash: Optional[str]) -> list[ProofProblem]:
        if self.member is None and self.trusted is None:
            return []
        self.tlog = {"checkpoint": None, "pinned": False, "cosignatures": [], "extends": None}
        problems: list[ProofProblem] = []
        cp = self._member(rng, genesis_hash, problems) if self.member is not None else None
        if self.trusted is not None:
            self._extends(rng, genesis_hash, cp, problems)
        return problems

    def _member(self, rng: Optional[dict[str, Any]], gh: Optional[str], problems: list[ProofProblem]) -> Optional[Checkpoint]:
        m = self.member
        assert m is not None and self.tlog is not None
        cp: Optional[Checkpoint]
        if self.policy is not None:
            v = verify_checkpoint(m["checkpoint"], self.policy)
            problems.extend(v.problems)
            cp = v.checkpoint
            self.tlog["pinned"] = v.ok
            self.tlog["cosignatures"] = v.cosignatures
        else:
            note, _ = parse_note(m["checkpoint"])
            cp, bad = parse_checkpoint_text(note.text) if note is not None else (None, None)
            if bad is not None:
                problems.append(bad)
        if cp is None:
            return None
        self.tlog["checkpoint"] = {"origin": cp.origin, "size": cp.size, "root": base64.b64encode(cp.root).decode()}
        origin = parse_journal_origin(cp.origin)
        if origin is None:
            problems.append(ProofProblem("ORIGIN_MISMATCH", f"the checkpoint's origin {cp.origin[:300]!r} is not a journal origin (PROOFS.md §8.5)"))
        elif gh is not None and origin[2] != gh:
            problems.append(ProofProblem("ORIGIN_MISMATCH", f"the checkpoint is of a journal with genesis {origin[2]}, the receipt's is {gh}"))
        if rng is None or self.broken or len(self.leaves) != rng["to"] - rng["from"] + 1:
            return cp
        p = verify_range(rng["from"], rng["to"], cp.size, self.leaves, [_b64(h) for h in m["hashes"]], cp.root)  # type: ignore[misc]
        if p is not None:
            problems.append(p)
            return None
        return cp

    def _extends(self, rng: Optional[dict[str, Any]], gh: Optional[str], cp: Optional[Checkpoint], problems: list[ProofProblem]) -> None:
        t = self.trusted
        assert t is not None and self.tlog is not None
        if rng is None:
            return
        origin = parse_journal_origin(t.origin)
        if origin is None or origin[2] != gh or (cp is not None and cp.origin != t.origin):
            problems.append(ProofProblem("ORIGIN_MISMATCH", f"the earlier checkpoint is of {t.origin[:300]!r}, not of this receipt's journal"))
            return
        shown = rng["to"] + 1
        head = {"origin": t.origin, "size": t.size, "root": base64.b64encode(t.root).decode()}
        if rng["from"] == 0 and t.size <= shown and not self.broken:
            root = self.prefix_root if self.prefix_root is not None else (self.prefix.root() if t.size == 0 else None)
            if root is None:
                return
            if root != t.root:
                problems.append(ProofProblem("FORKED", "two histories of the same size (a fork)") if t.size == shown else
                                ProofProblem("INCONSISTENT", f"steps 0..{t.size - 1} of the receipt do not have the earlier checkpoint's root"))
            else:
                self.tlog["extends"] = head
            return
        if t.size > shown and (cp is None or cp.size < t.size):
            problems.append(ProofProblem("SIZE_DECREASED", f"the earlier checkpoint has {t.size} steps, the receipt shows {cp.size if cp else shown}"))
            return
        if cp is None:
            problems.append(ProofProblem("CONSISTENCY_UNPROVEN", "a partial receipt without a verified checkpoint cannot be shown to extend the earlier checkpoint"))
            return
        if cp.size == t.size and cp.root != t.root:
            problems.append(ProofProblem("FORKED", f"the receipt's checkpoint and the earlier one both have size {cp.size} but different roots"))
            return
        if cp.size == t.size and self.consistency is None:
            self.tlog["extends"] = head
            return
        if self.consistency is None:
            problems.append(ProofProblem("CONSISTENCY_UNPROVEN", f"no consistency proof from size {t.size} to the receipt's checkpoint (size {cp.size}) was given"))
            return
        if self.policy is None:
            problems.append(ProofProblem("CONSISTENCY_UNPROVEN", "a consistency proof is checked against a pinned log key, and none was given"))
            return
        v = verify_proof_document(self.consistency, Policy(self.policy.log, [], 0), t)
        problems.extend(v.problems)
        if v.ok and v.checkpoint is not None and (v.type != "consistency" or v.checkpoint.size != cp.size or v.checkpoint.root != cp.root):
            problems.append(ProofProblem("INCONSISTENT", f"the consistency proof ends at size {v.checkpoint.size}, not at the receipt's checkpoint (size {cp.size})"))
        elif v.ok:
            self.tlog["extends"] = head
