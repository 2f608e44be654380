"""The file store's writer (spec/FILE-STORE.md §3–§10, FORMAT.md §5, §7, §11–§12): `open_journal(path)` creates
the journal when absent and appends steps under the lock of §8, group by group, with the tail check, the torn-tail
repair, idempotent retry, blobs, rotation and the head cache — byte for byte what the TypeScript writer writes,
so both can append to one journal at once. Synchronous; the async StepStore sits on top of it."""
from __future__ import annotations

import collections
import errno
import json
import os
import secrets
import stat
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Optional

from .canonical import RESERVED_PREFIX, CanonicalError, canonical_json, digest_utf8, is_digest
from .chain import ChainReport, split_lines
from .formats import FORMAT_V1, FORMAT_V2, NEW_RUN_FORMAT, format_of, genesis_defect, genesis_hash
from .formats.base import format_timestamp, is_valid_id, is_valid_timestamp
from .journal_dir import (BLOBS_DIR, BUCKETS_DIR, HEAD_FILE, META_FILE, MAX_META_BYTES, JournalInvalid, _read_regular, bucket_first_seq,
                          bucket_name, is_store_id, parse_meta, serialize_head, serialize_meta, verify_journal_dir)
from .lock import JournalLock, LockError

DEFAULT_BUCKET_BYTES = 64 * 1024 * 1024
DEFAULT_BLOB_THRESHOLD = 64 * 1024
DEFAULT_WINDOW = 10_000
# How far past its `after` a chain may have moved for `_unless_after` to read the records since: beyond, HEAD_MOVED,
# and the writer reads afresh. Lower than the TypeScript store's (which tests lines as they stream): `read` parses
# the records it returns, held together.
MOST_LINES_SINCE = 10_000
MAX_VALUE_DEPTH = 100
PENDING_NAME = ".batch-pending.json"
FSYNC_MODES = ("always", "batch", "none")


class StoreError(Exception):
    """A coded failure of the store: the code is stable, the message says what happened and what to do."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True)
class AppendResult:
    seq: int
    step_id: str
    step_hash: str
    prev_hash: str
    ts: str


@dataclass
class _Known:
    seq: int
    step_hash: str
    prev_hash: str
    ts: str
    key: str


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomic(path: str, data: bytes, fsync: bool) -> None:
    d = os.path.dirname(path)
    tmp = os.path.join(d, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, path)
    if fsync:
        _fsync_dir(d)


def make_genesis(*, journal_id: Optional[str] = None, created_at: Optional[str] = None, run: Optional[dict[str, Any]] = None,
                 fmt: Optional[str] = None) -> dict[str, Any]:
    # A run journal is stepchain/v3 unless fmt names v2 (NEW_RUN_FORMAT, FORMAT.md §10); no run and no fmt: v1.
    g: dict[str, Any] = {"format": FORMAT_V1, "journal_id": journal_id or str(uuid.uuid4()), "created_at": created_at or format_timestamp()}
    if fmt == FORMAT_V1 and run is not None:
        raise StoreError("GENESIS_INVALID", "a stepchain/v1 journal holds no run identity: create a run journal (v2 or v3)")
    if run is not None or fmt in (FORMAT_V2, NEW_RUN_FORMAT):
        g["format"] = fmt if fmt in (FORMAT_V2, NEW_RUN_FORMAT) else NEW_RUN_FORMAT
        g["run"] = run or {}
    defect = genesis_defect(g)
    if defect:
        raise StoreError("GENESIS_INVALID", defect)
    return g


def create_journal_dir(path: str, genesis: dict[str, Any], *, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                       blob_threshold: int = DEFAULT_BLOB_THRESHOLD, fsync: bool = True) -> None:
    """A journal directory created complete (§3): built under a staging name in the store root, renamed to its id."""
    root, jid = os.path.split(os.path.abspath(path))
    if not is_store_id(jid):
        raise StoreError("ID_INVALID", f"{jid!r} is not a journal id: 1–200 characters from [A-Za-z0-9_.-], no '..', not starting with '.'")
    os.makedirs(root, exist_ok=True)
    staging = os.path.join(root, f".staging-{secrets.token_hex(8)}")
    os.mkdir(staging)
    try:
        os.makedirs(os.path.join(staging, BLOBS_DIR))
        os.mkdir(os.path.join(staging, BUCKETS_DIR))
        meta = {"config": {"blob_threshold": blob_threshold, "bucket_bytes": bucket_bytes}, "format": "stepchain-journal/v1",
                "genesis": genesis, "lineage": None}
        text = serialize_meta(meta)
        parse_meta(text)  # the writer never writes what its reader refuses
        fd = os.open(os.path.join(staging, META_FILE), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        if fsync:
            for d in (os.path.join(staging, BLOBS_DIR), os.path.join(staging, "blobs"), os.path.join(staging, BUCKETS_DIR), staging):
                _fsync_dir(d)
        try:
            os.rename(staging, os.path.join(root, jid))
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise StoreError("JOURNAL_EXISTS", f"a journal {jid!r} already exists in {root}") from None
            raise
        if fsync:
            _fsync_dir(root)
        _index_run(root, jid, genesis)
    except BaseException:
        import shutil
        shutil.rmtree(staging, ignore_errors=True)
        raise


def _index_run(root: str, jid: str, genesis: dict[str, Any]) -> None:
    """The store's run index (FILE-STORE.md §14): one line appended (O_APPEND, one write) after the directory is in
    place, as the TypeScript store writes it; best effort — a listing repairs a missing line from journal.json."""
    if genesis.get("format") in (FORMAT_V2, NEW_RUN_FORMAT):  # a run journal (v2 or v3) names its run
        entry: dict[str, Any] = {"id": jid, "run_id": genesis["journal_id"], "created_at": genesis["created_at"], "run": genesis["run"], "fork_of": None}
    else:
        entry = {"id": jid, "run": None}
    try:
        fd = os.open(os.path.join(root, ".runs.jsonl"), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
    except OSError:
        pass


class Journal:
    """One journal directory open for appending. Not thread-safe: one Journal per thread (processes and
    languages coordinate through the lock, §8)."""

    def __init__(self, path: str, *, fsync: str = "always", stale_ms: int = 10_000, timeout_ms: Optional[int] = None,
                 window: int = DEFAULT_WINDOW, read_only: bool = False, linger_ms: float = 2, hold_ms: float = 100,
                 part_threshold: Optional[int] = 1024) -> None:
        if fsync not in FSYNC_MODES:
            raise ValueError(f"fsync must be one of {', '.join(FSYNC_MODES)}")
        self.path = os.path.abspath(path)
        self.id = os.path.basename(self.path)
        try:
            self.meta = parse_meta(_read_regular(os.path.join(self.path, META_FILE), MAX_META_BYTES).decode("utf-8"))
        except FileNotFoundError:
            raise StoreError("JOURNAL_NOT_FOUND", f"no journal at {self.path} ({META_FILE} is missing)") from None
        except JournalInvalid as e:
            raise StoreError("JOURNAL_INVALID", str(e)) from None
        self.genesis: dict[str, Any] = self.meta["genesis"]
        self.format = format_of(self.genesis)
        self.profile = self.format.records[0]
        self.genesis_hash = genesis_hash(self.genesis)
        self.bucket_bytes: int = self.meta["config"]["bucket_bytes"]
        self.blob_threshold: int = self.meta["config"]["blob_threshold"]
        # stepchain/v3: values of part_threshold canonical bytes or more become parts (PARTS.md §3); None keeps them inline
        self.part_threshold = part_threshold
        self._part_writer: Any = None
        self.fsync = fsync
        self.window = window
        self.read_only = read_only
        self.lock = JournalLock(self.path, stale_ms, timeout_ms)
        import threading
        import time as _time
        self._mutex = threading.RLock()
        self._timer: Any = None
        self._held_since = 0.0
        self._mark = b""
        self._monotonic = _time.monotonic
        self._sleep = _time.sleep
        self.linger_ms = linger_ms
        self.hold_ms = hold_ms
        import atexit
        import weakref
        ref = weakref.ref(self)
        atexit.register(lambda: (lambda j: j is not None and j._let_go())(ref()))
        self.closed = False
        # The tail as last read: the open bucket, its length, the last step.
        self._bucket_first: Optional[int] = None
        self._bucket_len = 0
        self._bucket_ino: Optional[int] = None
        self._last_seq = -1
        self._last_hash = self.genesis_hash
        self._ids: dict[str, _Known] = {}
        self._order: collections.deque[str] = collections.deque()
        self._read_at: Optional[tuple[int, int, int, int]] = None  # (next seq, bucket first seq, byte offset, bucket inode)
        self._read_at_next: Optional[tuple[int, int, int, int]] = None
        if read_only:
            self._catch_up(repair=False)
        else:
            self._with_lock(lambda: None)  # steps 1–3 and the head-cache repair, once (§9)

    # ------------------------------------------------------------------------------------------ reading

    def _buckets(self) -> list[tuple[int, str]]:
        out = []
        for n in os.listdir(os.path.join(self.path, BUCKETS_DIR)):
            s = bucket_first_seq(n)
            if s is not None:
                out.append((s, n))
        return sorted(out)

    def _remember(self, rec: dict[str, Any]) -> None:
        sid = rec["step_id"]
        self._ids[sid] = _Known(rec["seq"], rec["step_hash"], rec["prev_hash"], rec["ts"], self._key_of(rec))
        self._order.append(sid)
        if len(self._order) > self.window:
            old = self._order.popleft()
            k = self._ids.get(old)
            if k is not None and k.seq <= rec["seq"] - self.window:
                del self._ids[old]

    def _key_of(self, rec: dict[str, Any]) -> str:
        return canonical_json([rec.get(f) for f in self.profile.content_fields] + [rec.get("meta")])

    def _catch_up(self, repair: bool) -> bool:
        """§9 steps 2–3: reads every whole line after the known tail, checking seq and links; repairs a torn tail
        of the open bucket (under the lock) or, read-only, ignores it. Returns whether the tail moved."""
        moved = False
        buckets = self._buckets()
        if self._bucket_first is None:
            todo = buckets
        else:
            todo = [b for b in buckets if b[0] >= self._bucket_first]
        for idx, (first, name) in enumerate(todo):
            p = os.path.join(self.path, BUCKETS_DIR, name)
            start = self._bucket_len if first == self._bucket_first else 0
            if first != self._bucket_first and first != self._last_seq + 1:
                raise StoreError("JOURNAL_CORRUPT", f"bucket {name} starts at seq {first}, but the chain's next step is seq {self._last_seq + 1}")
            with open(p, "rb") as f:
                ino = os.fstat(f.fileno()).st_ino
                if first == self._bucket_first and ino != self._bucket_ino:
                    # ERASURE.md §4: an erasure replaced the bucket (rename): its lengths changed, so it is read afresh
                    start = 0
                f.seek(start)
                data = f.read()
            lines, torn = split_lines(data)
            pos = start
            if start == 0 and first == self._bucket_first:
                while lines:
                    try:
                        seen = json.loads(lines[0]).get("seq")
                    except (ValueError, AttributeError):
                        break
                    if not isinstance(seen, int) or seen > self._last_seq:
                        break
                    pos += len(lines.pop(0)) + 1
            self._bucket_ino = ino
            for ln in lines:
                try:
                    rec = json.loads(ln)
                except ValueError:
                    raise StoreError("JOURNAL_CORRUPT", f"{name}: an unreadable line after seq {self._last_seq}; run verify on the journal") from None
                if not isinstance(rec, dict) or rec.get("seq") != self._last_seq + 1 or rec.get("prev_hash") != self._last_hash or not is_digest(rec.get("step_hash")):
                    raise StoreError("JOURNAL_CORRUPT", f"{name}: the line after seq {self._last_seq} does not extend the chain (seq {rec.get('seq') if isinstance(rec, dict) else '?'}); "
                                     "no step is appended to a broken chain; run verify on the journal")
                self._last_seq = rec["seq"]
                self._last_hash = rec["step_hash"]
                self._remember(rec)
                pos += len(ln) + 1
                moved = True
            self._bucket_first = first
            self._bucket_len = pos
            if torn is not None:
                if idx != len(todo) - 1:
                    raise StoreError("JOURNAL_CORRUPT", f"{name} ends inside a line but is not the last bucket: damage, not a crash")
                if repair:
                    self._quarantine(name, p, pos, torn)
        return moved

    def _quarantine(self, name: str, path: str, keep: int, torn: bytes) -> None:
        k = 1
        while os.path.exists(os.path.join(self.path, BUCKETS_DIR, f"{name}.quarantine-{k}")):
            k += 1
        q = os.path.join(self.path, BUCKETS_DIR, f"{name}.quarantine-{k}")
        fd = os.open(q, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            os.write(fd, torn)
            os.fsync(fd)
        finally:
            os.close(fd)
        _fsync_dir(os.path.join(self.path, BUCKETS_DIR))
        fd = os.open(path, os.O_WRONLY)
        try:
            os.ftruncate(fd, keep)
            os.fsync(fd)
        finally:
            os.close(fd)

    def _pending_mark(self) -> Optional[dict[str, Any]]:
        """The pending-batch mark of a streamed batch (§18), or None; a mark that cannot be read is an error."""
        p = os.path.join(self.path, PENDING_NAME)
        try:
            v = json.loads(_read_regular(p, 1024).decode("utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise StoreError("IO_ERROR", f"reading the pending-batch mark {p}: {e}") from None

        def whole(x: Any, lo: int) -> bool:
            return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= 2**53 - 1
        if not isinstance(v, dict) or not whole(v.get("bucket"), 0) or not whole(v.get("size"), 0) or not whole(v.get("seq"), -1) or not is_digest(v.get("step_hash")):
            raise StoreError("IO_ERROR", f"reading the pending-batch mark {p}: not a pending-batch mark")
        return v

    def _roll_back_pending(self) -> None:
        """Under the lock (§18): a batch whose writer died is cut back to its mark before the tail is read."""
        mark = self._pending_mark()
        if mark is None:
            return
        durable = self.fsync != "none"
        bdir = os.path.join(self.path, BUCKETS_DIR)
        for name in os.listdir(bdir):
            first = bucket_first_seq(name)
            if first is not None and first > mark["bucket"]:
                try:
                    os.unlink(os.path.join(bdir, name))
                except FileNotFoundError:
                    pass
        try:
            fd = os.open(os.path.join(bdir, bucket_name(mark["bucket"])), os.O_RDWR | os.O_NOFOLLOW)
            try:
                if os.fstat(fd).st_size > mark["size"]:
                    os.ftruncate(fd, mark["size"])
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
        except FileNotFoundError:
            pass
        if durable:
            _fsync_dir(bdir)
        try:
            os.unlink(os.path.join(self.path, PENDING_NAME))
        except FileNotFoundError:
            pass
        if durable:
            _fsync_dir(self.path)
        if self._last_seq > mark["seq"]:  # what this writer read of the batch was never committed
            self._bucket_first, self._bucket_len, self._last_seq, self._last_hash = None, 0, -1, self.genesis_hash
            self._ids.clear()
            self._order.clear()

    def _with_lock(self, work: Any, *, keep: bool = False) -> Any:
        """Runs `work` under the lock (§8), after the tail check and repair (§9 steps 1–3). With `keep`, the lock is
        kept after the work for `linger_ms` in case another append follows at once (§9 "Holding the lock across
        commits"): a timer lets it go, rewriting head.json first; a writer waiting meanwhile (the waiting mark
        changed) makes it let go after at most `hold_ms`."""
        with self._mutex:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if self.lock.held is not None and self._monotonic() - self._held_since > self.hold_ms / 1000:
                mark = self._waiting_mark()
                if mark != self._mark:
                    self._let_go_locked()
                    self._sleep(0.008)  # longer than a waiting writer's poll, so it takes the lock first
                else:
                    self._held_since = self._monotonic()
            if self.lock.held is None:
                self.lock.acquire()
                self._held_since = self._monotonic()
                self._mark = self._waiting_mark()
                try:
                    self._roll_back_pending()
                    self._catch_up(repair=True)
                except BaseException:
                    self._let_go_locked()
                    raise
            try:
                result = work()
            except BaseException:
                self._let_go_locked()
                raise
            if keep and self.linger_ms > 0 and not self.closed:
                import threading
                self._timer = threading.Timer(self.linger_ms / 1000, self._let_go)
                self._timer.daemon = True
                self._timer.start()
            else:
                self._let_go_locked()
            return result

    def _let_go(self) -> None:
        with self._mutex:
            self._timer = None
            self._let_go_locked()

    def _let_go_locked(self) -> None:
        if self.lock.held is None:
            return
        try:
            self._repair_head()
        finally:
            self.lock.release()

    def _waiting_mark(self) -> bytes:
        try:
            return _read_regular(os.path.join(self.path, "journal.lock.waiting"), 64)
        except OSError:
            return b""

    def _repair_head(self) -> None:
        p = os.path.join(self.path, HEAD_FILE)
        if self._last_seq < 0:
            return
        want = serialize_head(self._last_seq, self._last_hash)
        try:
            with open(p, "r", encoding="utf-8") as f:
                if f.read(257) == want:
                    return
        except (OSError, UnicodeDecodeError):
            pass
        _write_atomic(p, want.encode("utf-8"), self.fsync == "always")

    # ------------------------------------------------------------------------------------------ appending

    def _prepare(self, step: dict[str, Any], erasure_writer: bool = False) -> tuple[dict[str, Any], Optional[str], Optional[str], dict[str, bytes]]:
        if not isinstance(step, dict):
            raise StoreError("STEP_INVALID", "a step is a dict of its content fields (input, model, prompt, tool_call, result; v2 also kind, ref, error), meta, step_id and ts")
        profile = self.profile
        if profile.version == 3 and not erasure_writer:
            from .refusals import v3_refusal
            refused = v3_refusal(step)
            if refused is not None:
                raise StoreError(*refused)
        allowed = set(profile.content_fields) | {"meta", "step_id", "ts"}
        for k in step:
            if k in ("v", "seq", "prev_hash", "step_hash", "salt", "salts", "digests"):
                raise StoreError("FIELD_NOT_ALLOWED", f"{k!r} is computed by the writer; a step may not supply it")
            if k not in allowed:
                raise StoreError("UNKNOWN_FIELD", f"unknown member {k!r} in a step: allowed are {', '.join(sorted(allowed))}")
        content: dict[str, Any] = {}
        blobs: dict[str, bytes] = {}
        for f in profile.content_fields:
            v = step.get(f, profile.defaults.get(f))
            try:
                text = canonical_json(v, max_depth=MAX_VALUE_DEPTH, reserved=True)
            except CanonicalError as e:
                raise StoreError(e.code, f"{f}{e.path}: {e}") from None
            if f in profile.blob_fields and len(text.encode("utf-8")) >= self.blob_threshold:
                data = text.encode("utf-8")
                d = digest_utf8(text)
                blobs[d] = data
                v = {RESERVED_PREFIX + "blob": {"digest": d, "size": len(data)}}
            content[f] = v
        if profile.version == 3 and self.part_threshold is not None:
            # PARTS.md §3: large values of every slot but meta become parts, written before the line (commit below)
            if self._part_writer is None:
                from .part_writer import PartWriter
                self._part_writer = PartWriter(self.path, self.part_threshold, self.fsync != "none")
            slots = {f: content[f] for f in ("error", "input", "model", "prompt", "result", "tool_call") if f in content}
            replaced, parts = self._part_writer.extract(slots)
            content.update(replaced)
            for address, data, index_key in parts:
                blobs["part:" + address] = data
                blobs["index:" + address] = index_key.encode("ascii")
        if "meta" in step:
            if not isinstance(step["meta"], dict):
                raise StoreError("FIELD_INVALID", "meta must be a dict (a JSON object)")
            try:
                canonical_json(step["meta"], max_depth=MAX_VALUE_DEPTH, reserved=True)
            except CanonicalError as e:
                raise StoreError(e.code, f"meta{e.path}: {e}") from None
            content["meta"] = step["meta"]
        if profile.relation_defect is not None:
            from .formats.v2 import _ABSENT
            rel = profile.relation_defect(lambda n: content.get(n, _ABSENT))
            if rel:
                raise StoreError("FIELD_INVALID", rel[1])
            kinds = __import__("stepchain.formats.v2", fromlist=["RECORD_KINDS"]).RECORD_KINDS + (["erasure"] if profile.version == 3 else [])
            if content.get("kind") not in (None,) and content["kind"] not in kinds:
                raise StoreError("FIELD_INVALID", f"kind {content['kind']!r} is not a record kind")
        sid = step.get("step_id")
        if sid is not None and not is_valid_id(sid):
            raise StoreError("FIELD_INVALID", "step_id must be 1–128 characters from [A-Za-z0-9._:-] starting with a letter or digit")
        ts = step.get("ts")
        if ts is not None and not is_valid_timestamp(ts):
            raise StoreError("FIELD_INVALID", "ts must be an RFC 3339 UTC timestamp with milliseconds, such as 2026-01-31T12:00:00.000Z")
        return content, sid, ts, blobs

    def _seal(self, content: dict[str, Any], seq: int, step_id: str, ts: str, prev: str) -> tuple[str, str]:
        """The stored line and its step hash, by the journal format's record profile (formats/)."""
        assert self.profile.seal is not None
        return self.profile.seal({**content, "seq": seq, "step_id": step_id, "ts": ts, "prev_hash": prev, "v": self.profile.version})

    def append(self, step: dict[str, Any], *, after: Optional[int] = None, _erasure_writer: bool = False,
               _unless_after: Optional[Callable[[dict[str, Any]], bool]] = None) -> AppendResult:
        """Appends one step; returns {seq, step_id, step_hash, prev_hash, ts} once it is as durable as the mode
        promises. `after` names the seq the step must follow (HEAD_MOVED when the chain ends elsewhere, §17).
        `_erasure_writer`: the erasure record erase() appends, the one step of kind "erasure" a v3 journal takes;
        `_unless_after`: with `after`, the chain may have moved past it by records this does not refuse, read under
        the lock (ERASURE.md §4 step 4)."""
        return self.append_many([step], after=after, _erasure_writer=_erasure_writer, _unless_after=_unless_after)[0]

    def append_many(self, steps: Iterable[dict[str, Any]], *, after: Optional[int] = None, _erasure_writer: bool = False,
                    _unless_after: Optional[Callable[[dict[str, Any]], bool]] = None) -> list[AppendResult]:
        """Appends steps as one unit: all or none."""
        self._open_for_writing()
        prepared = [self._prepare(s, _erasure_writer) for s in steps]

        def moved_past_freely() -> bool:
            if _unless_after is None or after is None or not -1 <= after < self._last_seq or self._last_seq - after > MOST_LINES_SINCE:
                return False
            return not any(_unless_after(r) for r in self.read(after + 1, self._last_seq))

        def commit() -> list[AppendResult]:
            if after is not None and after != self._last_seq and not moved_past_freely():
                raise StoreError("HEAD_MOVED", f"the step was to follow seq {after}, but the chain ends at seq {self._last_seq}")
            results: list[AppendResult] = []
            lines: list[tuple[int, bytes]] = []
            blobs: dict[str, bytes] = {}
            seq, prev = self._last_seq, self._last_hash
            batch: dict[str, _Known] = {}
            for content, sid, ts, step_blobs in prepared:
                key = canonical_json([content.get(f) for f in self.profile.content_fields] + [content.get("meta")])
                known = batch.get(sid) if sid is not None else None
                if sid is not None and known is None:
                    known = self._ids.get(sid)
                if known is not None:
                    if known.key == key and (ts is None or ts == known.ts):
                        results.append(AppendResult(known.seq, sid, known.step_hash, known.prev_hash, known.ts))  # type: ignore[arg-type]
                        continue
                    raise StoreError("STEP_ID_CONFLICT", f"step_id {sid!r} is already step {known.seq} with other content; a retry must repeat the step exactly")
                seq += 1
                sid = sid or str(uuid.uuid4())
                ts = ts or format_timestamp()
                line, h = self._seal(content, seq, sid, ts, prev)
                lines.append((seq, line.encode("utf-8")))
                batch[sid] = _Known(seq, h, prev, ts, key)
                results.append(AppendResult(seq, sid, h, prev, ts))
                blobs.update(step_blobs)
                prev = h
            if not lines:
                return results
            for d, data in blobs.items():
                if d.startswith("part:"):
                    assert self._part_writer is not None
                    self._part_writer.store(d[5:], data, blobs["index:" + d[5:]].decode("ascii"))
                elif not d.startswith("index:"):
                    self._write_blob(d, data)
            self.lock.check()
            self._write_lines(lines)
            for sid, k in batch.items():
                self._remember({"step_id": sid, "seq": k.seq, "step_hash": k.step_hash, "prev_hash": k.prev_hash, "ts": k.ts, **{}})
                self._ids[sid].key = k.key
            self._last_seq, self._last_hash = seq, prev
            return results

        return self._with_lock(commit, keep=True)

    def _open_for_writing(self) -> None:
        if self.closed:
            raise StoreError("JOURNAL_CLOSED", f"journal {self.id} is closed")
        if self.read_only:
            raise StoreError("READ_ONLY", f"journal {self.id} was opened read-only")

    def _write_blob(self, digest: str, data: bytes) -> None:
        p = os.path.join(self.path, BLOBS_DIR, digest[7:])
        try:
            st = os.stat(p)
            if stat.S_ISREG(st.st_mode) and st.st_size == len(data):
                return
        except FileNotFoundError:
            pass
        _write_atomic(p, data, self.fsync != "none")

    def _write_lines(self, lines: list[tuple[int, bytes]]) -> None:
        """One write per bucket, rotating per §5, with the length checked right before and after each write (§9 step 6)."""
        groups: list[tuple[int, int, list[bytes]]] = []  # bucket first seq, expected length, lines
        first = self._bucket_first
        length = self._bucket_len if first is not None else 0
        if first is None:
            first, length = lines[0][0], 0
        for seq, data in lines:
            if groups and groups[-1][0] == first:
                cur = groups[-1]
            else:
                cur = (first, length, [])
                groups.append(cur)
            size = length + sum(map(len, cur[2])) - (0 if cur[1] == length else 0)
            filled = cur[1] + sum(map(len, cur[2]))
            if filled > 0 and filled + len(data) > self.bucket_bytes:
                first, length = seq, 0
                cur = (first, 0, [])
                groups.append(cur)
            cur[2].append(data)
            del size
        touched: list[tuple[str, int, int, bool]] = []
        try:
            for gfirst, glen, glines in groups:
                p = os.path.join(self.path, BUCKETS_DIR, bucket_name(gfirst))
                created = not os.path.exists(p)
                fd = os.open(p, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
                try:
                    if os.fstat(fd).st_size != glen:
                        raise LockError("LOCK_COMPROMISED", f"{bucket_name(gfirst)} changed under the lock before the write; nothing was written there")
                    data = b"".join(glines)
                    n = os.write(fd, data)
                    touched.append((p, glen, glen + n, created))
                    if n != len(data) or os.fstat(fd).st_size != glen + len(data):
                        raise LockError("LOCK_COMPROMISED", f"{bucket_name(gfirst)} grew by other than this write: the journal may hold two steps with one seq; run verify")
                    if self.fsync == "always" or self.fsync == "batch":
                        os.fsync(fd)
                finally:
                    os.close(fd)
                if created and self.fsync != "none":
                    _fsync_dir(os.path.join(self.path, BUCKETS_DIR))
        except OSError:
            for p, before, after_len, created in touched:
                try:
                    if os.path.getsize(p) == after_len:
                        if created and before == 0:
                            os.unlink(p)
                        else:
                            os.truncate(p, before)
                except OSError:
                    pass
            raise
        last_first, last_len, last_lines = groups[-1]
        self._bucket_first = last_first
        self._bucket_len = last_len + sum(map(len, last_lines))
        self._bucket_ino = os.stat(os.path.join(self.path, BUCKETS_DIR, bucket_name(last_first))).st_ino

    # ------------------------------------------------------------------------------------------ queries

    def head(self) -> Optional[dict[str, Any]]:
        """The last committed step {seq, step_hash}, read from the chain (not the cache), or None when empty."""
        if self.read_only or self.closed:
            last = None
            for rec in self.read(max(0, self._last_seq)):
                last = rec
            return None if last is None else {"seq": last["seq"], "step_hash": last["step_hash"]}
        self._with_lock(lambda: None)
        return None if self._last_seq < 0 else {"seq": self._last_seq, "step_hash": self._last_hash}

    def blob_value(self, value: Any) -> Any:
        """A content field's value with a blob reference (FORMAT §7) replaced by the value it stands for, checked."""
        from .journal_dir import blob_defect
        if not (isinstance(value, dict) and len(value) == 1 and RESERVED_PREFIX + "blob" in value):
            return value
        ref = value[RESERVED_PREFIX + "blob"]
        p = os.path.join(self.path, BLOBS_DIR, str(ref.get("digest", ""))[7:])
        try:
            data = _read_regular(p, int(ref.get("size", 0)))
        except OSError as e:
            raise StoreError("BLOB_MISSING", f"blob {ref.get('digest')} cannot be read ({e})") from None
        defect = blob_defect(data, ref)
        if defect is not None:
            raise StoreError("BLOB_CORRUPT", f"blob {ref.get('digest')} {defect}")
        return json.loads(data)

    def read(self, start: int = 0, end: Optional[int] = None, *, blobs: bool = False) -> Iterator[dict[str, Any]]:
        """The records of seqs start..end (inclusive), parsed; a torn final line is never read. With blobs=True,
        blob references (and, in a stepchain/v3 journal, part references: PARTS.md §9, each file checked) are
        replaced by their values."""
        buckets = self._buckets()
        lines_out: list[dict[str, Any]] = []
        # Where the last read stopped (seq, bucket, byte offset): a reader that follows the journal (the run API,
        # the StepStore) reads only what is new, not every bucket from its start again.
        cached = self._read_at if self._read_at is not None and self._read_at[0] == start else None
        for i, (first, name) in enumerate(buckets):
            nxt = buckets[i + 1][0] if i + 1 < len(buckets) else None
            if nxt is not None and nxt <= start:
                continue
            if end is not None and first > end:
                break
            offset = cached[2] if cached is not None and cached[1] == first else 0
            with open(os.path.join(self.path, BUCKETS_DIR, name), "rb") as f:
                ino = os.fstat(f.fileno()).st_ino
                if offset and cached is not None and cached[3] != ino:
                    offset = 0  # the bucket was replaced (an erasure, ERASURE.md §4): the offset is another file's
                f.seek(offset)
                lines, _ = split_lines(f.read())
            pos = offset
            done = False
            for ln in lines:
                rec = json.loads(ln)
                if rec["seq"] < start:
                    pos += len(ln) + 1
                    continue
                if end is not None and rec["seq"] > end:
                    done = True
                    break
                lines_out.append(rec)
                pos += len(ln) + 1
                self._read_at_next = (rec["seq"] + 1, first, pos, ino)
            if done:
                break
        # The mark is read after the lines (§18): lines past a pending batch's start are not committed.
        mark = self._pending_mark()
        if mark is None and self._read_at_next is not None:
            self._read_at = self._read_at_next
        self._read_at_next = None
        for rec in lines_out:
            if mark is not None and rec["seq"] > mark["seq"]:
                return
            if blobs:
                for f in self.profile.blob_fields:
                    if f in rec:
                        rec[f] = self.blob_value(rec[f])
                if self.profile.version == 3 and '"$stepchain:part"' in json.dumps(rec):
                    rec = self._resolve_parts(rec)
            yield rec

    def _resolve_parts(self, rec: dict[str, Any]) -> dict[str, Any]:
        from .journal_dir import _part_fetch
        from .parts import PartError, PartReader
        reader = PartReader(_part_fetch(self.path))
        try:
            return {k: (reader.resolve(v, rec.get("seq"), "/" + k) if k in ("error", "input", "model", "prompt", "result", "tool_call") else v)
                    for k, v in rec.items()}
        except PartError as e:
            raise StoreError(e.code, f"seq {rec.get('seq')} {e.location.get('path', '')}: {e.message}") from None

    def verify(self, expect_head: Optional[str] = None) -> ChainReport:
        """The directory verified read-only (§13), as `stepchain verify <journal>` does (the lock let go first)."""
        if not self.read_only:
            self._let_go()
        return verify_journal_dir(self.path, expect_head)

    def close(self) -> None:
        """Lets the lock go at once (head.json rewritten first) and closes the journal."""
        with self._mutex:
            self.closed = True
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._let_go_locked()

    def __enter__(self) -> "Journal":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_journal(path: str, *, create: bool = True, run: Optional[dict[str, Any]] = None, fmt: Optional[str] = None,
                 journal_id: Optional[str] = None, bucket_bytes: int = DEFAULT_BUCKET_BYTES,
                 blob_threshold: int = DEFAULT_BLOB_THRESHOLD, **options: Any) -> Journal:
    """Opens the journal directory at `path` for appending, creating it when absent (a stepchain/v1 journal; a run
    journal when `run` is given: stepchain/v3, large values stored once as parts (PARTS.md), unless fmt is
    "stepchain/v2"; fmt "stepchain/v2" or "stepchain/v3" alone creates that format). The store root is its parent."""
    if create and not os.path.exists(os.path.join(path, META_FILE)):
        try:
            create_journal_dir(path, make_genesis(journal_id=journal_id, run=run, fmt=fmt), bucket_bytes=bucket_bytes,
                               blob_threshold=blob_threshold, fsync=options.get("fsync", "always") != "none")
        except StoreError as e:
            if e.code != "JOURNAL_EXISTS":
                raise
    return Journal(path, **options)
