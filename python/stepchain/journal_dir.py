"""Read-only verification of a file-store journal directory (spec/FILE-STORE.md §13): the metadata file, the
directory's entries, the chain across every bucket, every referenced blob, a fork's lineage and the head cache.
It never writes: a torn, uncommitted final line and a stale head cache are warnings, not problems."""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Optional

from .canonical import RESERVED_PREFIX, MAX_LINE_BYTES, canonical_json, digest_bytes, is_digest, scan_canonical
from .chain import ChainReport, ChainVerifier, Problem, VerifiedLine, split_lines
from .formats import genesis_defect, genesis_hash

STORE_FORMAT = "stepchain-journal/v1"
META_FILE = "journal.json"
HEAD_FILE = "head.json"
BUCKETS_DIR = "buckets"
BLOBS_DIR = "blobs/sha256"
LOCK_NAME = "journal.lock"
WAITING_NAME = "journal.lock.waiting"
ENTRIES = {META_FILE: "file", BUCKETS_DIR: "directory", "blobs": "directory", HEAD_FILE: "file", LOCK_NAME: "directory",
           WAITING_NAME: "file", "tree": "directory", "checkpoints": "directory", "parts": "directory"}  # parts: stepchain/v3 (PARTS.md §7)
MAX_META_BYTES = 4096
MAX_HEAD_BYTES = 256
BUCKET_RE = re.compile(r"(\d{16})\.jsonl\Z")
QUARANTINE_RE = re.compile(r"\d{16}\.jsonl\.quarantine-\d+\Z")
BLOB_NAME_RE = re.compile(r"[0-9a-f]{64}\Z")
STORE_ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,200}\Z")
MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES = 4096, 2**40
MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD = 1024, 1024 * 1024
MAX_SAFE = 2**53 - 1


class JournalInvalid(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.code = "JOURNAL_INVALID"


def is_store_id(s: Any) -> bool:
    return isinstance(s, str) and STORE_ID_RE.match(s) is not None and ".." not in s and not s.startswith(".")


def bucket_name(seq: int) -> str:
    return "%016d.jsonl" % seq


def bucket_first_seq(name: str) -> Optional[int]:
    m = BUCKET_RE.match(name)
    if not m:
        return None
    seq = int(m.group(1))
    return seq if seq <= MAX_SAFE else None


def serialize_meta(meta: dict[str, Any]) -> str:
    return canonical_json(meta) + "\n"


def parse_meta(text: str, file: str = META_FILE) -> dict[str, Any]:
    """journal.json read strictly (§4): exactly its four members, each by its rule, and JCS of them plus a newline."""
    def bad(why: str) -> JournalInvalid:
        return JournalInvalid(f"{file}: {why}")

    def exact(o: dict[str, Any], names: list[str], prefix: str) -> None:
        for k in o:
            if k not in names:
                raise bad(f"unknown member {json.dumps(prefix + k)}; {prefix[:-1] if prefix else 'the file'} has exactly {', '.join(names)}")
        for k in names:
            if k not in o:
                raise bad(f"missing member {json.dumps(prefix + k)}")

    try:
        doc = json.loads(text)
    except ValueError:
        raise bad("not JSON") from None
    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    exact(doc, ["config", "format", "genesis", "lineage"], "")
    if doc["format"] != STORE_FORMAT:
        raise bad(f"format is {json.dumps(doc['format'])}, this version reads {STORE_FORMAT}")
    defect = genesis_defect(doc["genesis"])
    if defect:
        raise bad(f"genesis: {defect}")
    c = doc["config"]
    if not isinstance(c, dict):
        raise bad("config must be an object")
    exact(c, ["blob_threshold", "bucket_bytes"], "config.")

    def int_in(v: Any, lo: int, hi: int) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi
    if not int_in(c["bucket_bytes"], MIN_SEGMENT_BYTES, MAX_SEGMENT_BYTES):
        raise bad(f"config.bucket_bytes must be an integer from {MIN_SEGMENT_BYTES} to {MAX_SEGMENT_BYTES}")
    if not int_in(c["blob_threshold"], MIN_BLOB_THRESHOLD, MAX_BLOB_THRESHOLD):
        raise bad(f"config.blob_threshold must be an integer from {MIN_BLOB_THRESHOLD} to {MAX_BLOB_THRESHOLD}")
    lin = doc["lineage"]
    if lin is not None:
        if not isinstance(lin, dict):
            raise bad("lineage must be an object or null")
        exact(lin, ["from_step", "parent_genesis_hash", "parent_journal", "parent_step_hash"], "lineage.")
        if not is_store_id(lin["parent_journal"]):
            raise bad("lineage.parent_journal must be a journal id (1–200 characters from [A-Za-z0-9_.-], no \"..\", no leading \".\"), "
                      f"the parent's name in the same store; found {json.dumps(lin['parent_journal'])}")
        if not is_digest(lin["parent_genesis_hash"]):
            raise bad("lineage.parent_genesis_hash must be a sha256 digest")
        if not int_in(lin["from_step"], 0, MAX_SAFE):
            raise bad("lineage.from_step must be an integer from 0 to 2^53 - 1")
        if not is_digest(lin["parent_step_hash"]):
            raise bad("lineage.parent_step_hash must be a sha256 digest")
    if serialize_meta(doc) != text:
        raise bad("not in canonical form: the file must be JCS (RFC 8785) of its members followed by one newline")
    return doc


def serialize_head(seq: int, step_hash: str) -> str:
    return '{"seq":%d,"step_hash":"%s"}\n' % (seq, step_hash)


def parse_head(text: str) -> Optional[tuple[int, str]]:
    if len(text) > MAX_HEAD_BYTES:
        return None
    try:
        h = json.loads(text)
    except ValueError:
        return None
    if not isinstance(h, dict) or len(h) != 2:
        return None
    seq, sh = h.get("seq"), h.get("step_hash")
    if not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq <= MAX_SAFE or not is_digest(sh):
        return None
    return (seq, sh) if serialize_head(seq, sh) == text else None


def blob_defect(data: bytes, ref: dict[str, Any]) -> Optional[str]:
    """What a blob's bytes must be (FORMAT §7): the reference's size and digest, the canonical UTF-8 of a value, no reserved name."""
    if len(data) != ref["size"]:
        return f"holds {len(data)} bytes, the reference says {ref['size']}"
    actual = digest_bytes(data)
    if actual != ref["digest"]:
        return f"hashes to {actual}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "is not valid UTF-8"
    scan = scan_canonical(text, members=False)
    if scan.defect:
        return f"is not the canonical JSON of a value ({scan.defect.code}: {scan.defect.reason})"
    if scan.markers:
        m = scan.markers[0]
        name = next((n for n in m.names if n.startswith(RESERVED_PREFIX)), m.names[0])
        return f"holds the reserved member name {json.dumps(name)} at {'its root' if m.path == '' else m.path}, which no writer stores in a blob"
    return None


def _kind(path: str) -> Optional[str]:
    try:
        st = os.stat(path)
    except OSError:
        try:
            st = os.lstat(path)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            return "other"
    m = st.st_mode
    if stat.S_ISREG(m):
        return "file"
    if stat.S_ISDIR(m):
        return "directory"
    if stat.S_ISFIFO(m):
        return "FIFO"
    if stat.S_ISCHR(m) or stat.S_ISBLK(m):
        return "device"
    if stat.S_ISSOCK(m):
        return "socket"
    return "other"


def _read_regular(path: str, limit: int) -> bytes:
    """A regular file's bytes, never a FIFO or device (opened without blocking, checked before reading)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"{path} is not a regular file")
        if st.st_size > limit:
            raise OSError(f"{path} holds {st.st_size} bytes, more than {limit}")
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stopped(problem: Problem) -> ChainReport:
    return ChainReport(False, None, 0, None, None, 0, [problem], [], False)


def _part_fetch(path: str) -> Any:
    """The file store's part files, parts/<A hex 0–1>/<A hex 2–63> (PARTS.md §7): a regular file only, its length
    checked before it is read."""
    def fetch(address: str, size: int) -> Any:
        h = address[7:]
        p = os.path.join(path, "parts", h[:2], h[2:])
        if _kind(p) is None:
            return None
        if _kind(p) != "file":
            return {"size": -1}
        n = os.stat(p).st_size
        if n != size:
            return {"size": n}
        try:
            return _read_regular(p, size)
        except OSError:
            return None
    return fetch


def verify_journal_dir(path: str, expect_head: Optional[str] = None, *, deep: bool = False, approvers: Any = None) -> ChainReport:
    """A journal directory read-only (FILE-STORE.md §13); deep: the v3 deep tier too (FORMAT.md §14.7 B, PARTS.md §9.6);
    approvers: the pinned approvers' keys (APPROVALS.md §5, as chain.ChainVerifier takes them)."""
    try:
        meta = parse_meta(_read_regular(os.path.join(path, META_FILE), MAX_META_BYTES).decode("utf-8"))
    except JournalInvalid as e:
        return _stopped(Problem("JOURNAL_INVALID", str(e)[len(META_FILE) + 2:], {"file": META_FILE}))
    except FileNotFoundError:
        return _stopped(Problem("JOURNAL_INVALID", f"{META_FILE} is missing", {"file": META_FILE}))
    except (OSError, UnicodeDecodeError) as e:
        return _stopped(Problem("JOURNAL_INVALID", f"{META_FILE} cannot be read ({e})", {"file": META_FILE}))

    entries: list[Problem] = []
    kinds: dict[str, str] = {}
    try:
        names = sorted(os.listdir(path))
    except OSError:
        names = []
    for name in names:
        if name.startswith("."):
            continue
        k = _kind(os.path.join(path, name))
        if k is not None:
            kinds[name] = k
    for name, kind in kinds.items():
        want = ENTRIES.get(name)
        if want is None:
            entries.append(Problem("JOURNAL_INVALID", f"unexpected entry {name} in the journal directory: a journal holds only "
                                   f"{', '.join(ENTRIES)} (and names beginning with \".\")", {"file": name}))
        elif kind != want:
            what = "neither a regular file nor a directory" if kind == "other" else f"a {kind}"
            entries.append(Problem("JOURNAL_INVALID", f"{name} is {what}, where a journal has a {want}", {"file": name}))
    for name in (BUCKETS_DIR, "blobs"):
        if name not in kinds:
            entries.append(Problem("JOURNAL_INVALID", f"the journal directory has no {name}/", {"file": name}))
    try:
        for name in sorted(os.listdir(os.path.join(path, "blobs"))):
            if not name.startswith(".") and name != "sha256":
                entries.append(Problem("JOURNAL_INVALID", f"unexpected entry {name} in blobs/: it holds only sha256/", {"file": f"blobs/{name}"}))
        try:
            reported = 0
            for name in sorted(os.listdir(os.path.join(path, BLOBS_DIR))):
                if name.startswith(".") or BLOB_NAME_RE.match(name):
                    continue
                reported += 1
                if reported <= 100:
                    entries.append(Problem("JOURNAL_INVALID", f"unexpected file {name} in {BLOBS_DIR}/: a blob is named by the 64 hex digits of its digest",
                                           {"file": f"{BLOBS_DIR}/{name}"}))
        except OSError as e:
            entries.append(Problem("JOURNAL_INVALID", f"cannot list {BLOBS_DIR}/ ({e.strerror})", {"file": BLOBS_DIR}))
    except OSError:
        pass

    buckets: list[tuple[int, str]] = []
    if kinds.get(BUCKETS_DIR) == "directory":
        try:
            bnames = os.listdir(os.path.join(path, BUCKETS_DIR))
        except OSError as e:
            bnames = []
            entries.append(Problem("JOURNAL_INVALID", f"cannot list {BUCKETS_DIR}/ ({e.strerror})", {"file": BUCKETS_DIR}))
        for n in sorted(bnames):
            first = bucket_first_seq(n)
            if first is not None:
                buckets.append((first, n))
            elif BUCKET_RE.match(n):
                entries.append(Problem("JOURNAL_INVALID", f"{n} in {BUCKETS_DIR}/ is not a bucket name: its 16 digits exceed 2^53 - 1, the largest seq", {"file": n}))
            elif not QUARANTINE_RE.match(n) and not n.startswith("."):
                entries.append(Problem("JOURNAL_INVALID", f"unexpected file {n} in {BUCKETS_DIR}/: not a bucket (16-digit seq + \".jsonl\") or a quarantine file", {"file": n}))
    buckets.sort()

    lineage = meta["lineage"]
    lineage_hash: list[Optional[str]] = [None]
    pending: list[tuple[dict[str, Any], dict[str, Any]]] = []

    part_reader: Any = None
    part_problems: list[Problem] = []

    def on_line(ln: VerifiedLine) -> None:
        nonlocal part_reader
        refs = [m for m in ln.markers if m.names == ["$stepchain:part"]]
        if refs and ln.seq is not None:
            from .parts import PartError, PartReader
            if part_reader is None:
                part_reader = PartReader(_part_fetch(path), deep=deep)
            for m in refs:
                try:
                    part_reader.resolve(json.loads(ln.text[m.start:m.end]), ln.seq, m.path)
                except PartError as e:
                    part_problems.append(Problem(e.code, e.message, {**({} if ln.file is None else {"file": ln.file}), "line": ln.line, **e.location}))
        for ref in ln.blobs:
            loc = {**({} if ln.file is None else {"file": ln.file}), "line": ln.line, **({} if ln.seq is None else {"seq": ln.seq}), "field": ref["field"]}
            pending.append((ref, loc))
        if lineage is not None and ln.seq == lineage["from_step"]:
            lineage_hash[0] = ln.step_hash

    verifier = ChainVerifier(meta["genesis"], expect_head=expect_head, on_line=on_line, deep=deep, allow_public=False,
                             approvers=approvers, forked_at=None if lineage is None else lineage["from_step"])
    blob_problems: list[Problem] = []
    outcomes: dict[str, Optional[tuple[str, str]]] = {}
    segments: list[tuple[str, int, int, Optional[str]]] = []  # label, first, whole lines, error
    for first, name in buckets:
        verifier.begin_segment(name, first)
        whole = 0
        error = None
        try:
            data = _read_regular(os.path.join(path, BUCKETS_DIR, name), 1 << 62)
            lines, torn = split_lines(data)
            for ln in lines:
                if len(ln) + 1 > MAX_LINE_BYTES:
                    pass
                verifier.line(ln, True)
                whole += 1
            if torn is not None:
                verifier.line(torn, False)
        except OSError as e:
            error = str(e)
        segments.append((name, first, whole, error))
        for ref, loc in pending:
            key = f"{ref['digest']}/{ref['size']}"
            if key not in outcomes:
                outcomes[key] = _judge_blob(path, ref)
            out = outcomes[key]
            if out is not None:
                blob_problems.append(Problem(out[0], f"{out[1]} (referenced by {ref['field']})", loc))
        pending.clear()
    report = verifier.finish()

    warnings: list[Problem] = []
    chain_problems: list[Problem] = []
    last_name = buckets[-1][1] if buckets else None
    for p in report.problems:
        (warnings if p.code == "TRUNCATED_LINE" and p.location.get("file") == last_name else chain_problems).append(p)
    bucket_problems: list[Problem] = []
    for name, first, whole, error in segments:
        if error is not None:
            bucket_problems.append(Problem("JOURNAL_INVALID", f"cannot read bucket {name} ({error})", {"file": name}))
    for name, first, whole, error in segments:
        if whole != 0:
            continue
        if name != last_name:
            bucket_problems.append(Problem("JOURNAL_INVALID", f"bucket {name} holds no step, but only the last bucket may be empty", {"file": name}))
        elif (report.head_seq is not None and first != report.head_seq + 1) if report.steps > 0 else first != 0:
            nxt = report.head_seq + 1 if report.steps > 0 and report.head_seq is not None else 0
            bucket_problems.append(Problem("JOURNAL_INVALID", f"the empty last bucket {name} is named for seq {first}, but the next step is seq {nxt} ({bucket_name(nxt)})", {"file": name}))

    lineage_problems: list[Problem] = []
    if lineage is not None:
        gh = genesis_hash(meta["genesis"])
        if lineage["parent_genesis_hash"] != gh:
            lineage_problems.append(Problem("JOURNAL_INVALID", f"lineage.parent_genesis_hash {lineage['parent_genesis_hash']} is not this journal's genesis hash {gh}",
                                            {"file": META_FILE, "field": "lineage"}))
        h = lineage_hash[0]
        if h != lineage["parent_step_hash"]:
            msg = (f"lineage.from_step {lineage['from_step']} is not a step of this journal" if h is None else
                   f"step {lineage['from_step']} has step_hash {h}, but lineage.parent_step_hash is {lineage['parent_step_hash']}: the fork does not share its parent's prefix")
            lineage_problems.append(Problem("JOURNAL_INVALID", msg, {"file": META_FILE, "field": "lineage", "seq": lineage["from_step"]}))

    stale = _head_cache_defect(path, kinds.get(HEAD_FILE), report)
    if stale is not None:
        warnings.append(Problem("HEAD_CACHE_STALE", f"{HEAD_FILE} {stale}; the next writer rewrites it", {"file": HEAD_FILE}))
    problems = entries + chain_problems + bucket_problems + blob_problems + part_problems + lineage_problems
    return ChainReport(not problems and not report.problems_truncated, report.start_hash, report.start_seq, report.head, report.head_seq,
                       report.steps, problems, warnings, report.problems_truncated, report.notices, report.approvals)


def _judge_blob(path: str, ref: dict[str, Any]) -> Optional[tuple[str, str]]:
    p = os.path.join(path, BLOBS_DIR, ref["digest"][7:])
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return ("BLOB_MISSING", f"blob {ref['digest']} is not in {BLOBS_DIR}/")
    except OSError as e:
        return ("BLOB_MISSING", f"blob {ref['digest']} cannot be read ({e.strerror})")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ("BLOB_CORRUPT", f"blob {ref['digest']}: not a regular file")
        if st.st_size != ref["size"]:
            return ("BLOB_CORRUPT", f"blob {ref['digest']} holds {st.st_size} bytes, the reference says {ref['size']}")
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
    except OSError as e:
        return ("BLOB_MISSING", f"blob {ref['digest']} cannot be read ({e.strerror})")
    finally:
        os.close(fd)
    defect = blob_defect(b"".join(chunks), ref)
    return None if defect is None else ("BLOB_CORRUPT", f"blob {ref['digest']} {defect}")


def _head_cache_defect(path: str, kind: Optional[str], report: ChainReport) -> Optional[str]:
    if kind is None:
        return f"is missing, and the chain ends at seq {report.head_seq}" if report.head_seq is not None else None
    if kind != "file":
        return None
    cached = None
    why = "is unreadable"
    try:
        cached = parse_head(_read_regular(os.path.join(path, HEAD_FILE), MAX_HEAD_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        why = f"cannot be read ({e})"
    if cached is not None and cached[0] == report.head_seq and cached[1] == report.head:
        return None
    if cached is None:
        return why
    end = "no step" if report.head_seq is None else f"seq {report.head_seq} {report.head}"
    return f"says seq {cached[0]} {cached[1]}, the chain ends at {end}"
