"""The journal lock (spec/FILE-STORE.md §8): a directory `journal.lock` holding one holder record, taken by
renaming a staging directory into place, judged by its holder's liveness on the same host and by staleness
elsewhere, and broken only by the record's own name. The same protocol, byte for byte, as the TypeScript
writer's, so that writers of both languages share one journal."""
from __future__ import annotations

import errno
import json
import os
import random
import re
import secrets
import socket
import stat
import sys
import time
from dataclasses import dataclass
from typing import Any, Optional

from .canonical import canonical_json

LOCK_NAME = "journal.lock"
WAITING_NAME = "journal.lock.waiting"
HOLDER_RE = re.compile(r"holder-([0-9a-f]{32})\.json\Z")
MAX_HOLDER_BYTES = 1024


class LockError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def host_identity() -> Optional[str]:
    """Linux: `linux:<boot_id>:<pid namespace>`; elsewhere None (a dead writer's lock is then freed by staleness only)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            boot = f.read().strip()
        ns = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    if re.fullmatch(r"[0-9a-f-]{36}", boot) and re.fullmatch(r"pid:\[\d+\]", ns):
        return f"linux:{boot}:{ns}"
    return None


def process_stat(pid: int) -> Optional[tuple[str, str, int]]:
    """Linux: (start = field 22, state = field 3, threads = field 20) of /proc/<pid>/stat, or None when unknown."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rfind(")") + 2:].split(" ")
    if len(fields) < 20 or not re.fullmatch(r"\d{1,20}", fields[19]) or not re.fullmatch(r"[A-Za-z]", fields[0]):
        return None
    try:
        return fields[19], fields[0], int(fields[17])
    except ValueError:
        return None


def holder_record() -> str:
    st = process_stat(os.getpid())
    h = {"host": host_identity(), "hostname": socket.gethostname()[:255], "pid": os.getpid(), "start": st[0] if st else None}
    return canonical_json(h) + "\n"


def _read_small(path: str, limit: int) -> Optional[bytes]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return os.read(fd, limit + 1)
    finally:
        os.close(fd)


def parse_holder(data: Optional[bytes]) -> Optional[dict[str, Any]]:
    if data is None or len(data) > MAX_HOLDER_BYTES:
        return None
    try:
        text = data.decode("utf-8")
        h = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(h, dict) or sorted(h) != ["host", "hostname", "pid", "start"]:
        return None
    if not (h["host"] is None or isinstance(h["host"], str) and len(h["host"]) <= 200):
        return None
    if not isinstance(h["hostname"], str) or len(h["hostname"]) > 255:
        return None
    if not isinstance(h["pid"], int) or isinstance(h["pid"], bool) or not 1 <= h["pid"] <= 2**31 - 1:
        return None
    if not (h["start"] is None or isinstance(h["start"], str) and len(h["start"]) <= 64):
        return None
    return h if canonical_json(h) + "\n" == text else None


def verdict(h: Optional[dict[str, Any]], my_host: Optional[str]) -> str:
    """'dead', 'alive' or 'unknown' (§8 "Provably dead, provably alive")."""
    if h is None or h["host"] is None or h["host"] != my_host:
        return "unknown"
    pid = h["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return "dead"
    except PermissionError:
        pass
    except OSError:
        return "unknown"
    st = process_stat(pid)
    if st is None:
        return "unknown"
    start, state, threads = st
    if h["start"] is not None and start != h["start"]:
        return "dead"
    if state in ("Z", "X") and threads <= 1:
        return "dead"
    return "alive" if h["start"] is not None else "unknown"


@dataclass
class HeldLock:
    dir: str
    instance: str
    record_name: str
    refreshed: float


class JournalLock:
    def __init__(self, journal_dir: str, stale_ms: int = 10_000, timeout_ms: Optional[int] = None) -> None:
        self.journal_dir = journal_dir
        self.lock_dir = os.path.join(journal_dir, LOCK_NAME)
        self.stale = stale_ms / 1000
        self.timeout = (timeout_ms if timeout_ms is not None else 2 * stale_ms) / 1000
        self.host = host_identity()
        self.held: Optional[HeldLock] = None

    def acquire(self) -> HeldLock:
        instance = secrets.token_hex(16)
        staging = os.path.join(self.journal_dir, f".{LOCK_NAME}.{instance}")
        record_name = f"holder-{instance}.json"
        os.mkdir(staging)
        try:
            with open(os.path.join(staging, record_name), "w", encoding="utf-8", newline="") as f:
                f.write(holder_record())
            deadline = time.monotonic() + self.timeout
            backoff = 0.001
            waited = False
            touched = time.monotonic()
            while True:
                try:
                    os.rename(staging, self.lock_dir)
                    now = time.time()
                    if waited:
                        os.utime(os.path.join(self.lock_dir, record_name), (now, now))
                    os.utime(self.lock_dir, (now, now))
                    self.held = HeldLock(self.lock_dir, instance, record_name, time.monotonic())
                    return self.held
                except OSError as e:
                    if e.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                        raise
                waited = True
                if self._inspect_and_break():
                    continue
                if time.monotonic() > deadline:
                    raise LockError("LOCK_TIMEOUT", f"{self.lock_dir} is held by another writer{self._describe()}; gave up after {self.timeout:.1f} s")
                self._mark_waiting()
                if time.monotonic() - touched > self.stale / 4:
                    now = time.time()
                    os.utime(staging, (now, now))
                    touched = time.monotonic()
                time.sleep(backoff * (0.5 + random.random()))
                backoff = min(backoff * 2, 0.004)
        except BaseException:
            try:
                os.unlink(os.path.join(staging, record_name))
                os.rmdir(staging)
            except OSError:
                pass
            raise

    def _describe(self) -> str:
        try:
            names = os.listdir(self.lock_dir)
        except OSError:
            return ""
        if len(names) == 1 and HOLDER_RE.match(names[0]):
            h = parse_holder(_read_small(os.path.join(self.lock_dir, names[0]), MAX_HOLDER_BYTES))
            if h is not None:
                return f" (pid {h['pid']} on {h['hostname']}, {verdict(h, self.host)})"
        return ""

    def _inspect_and_break(self) -> bool:
        """Lists the lock, then reads its mtime, then its one record; breaks it when its holder is provably dead,
        or unknown and the lock stale. True when it was broken (or vanished) and acquiring should be retried."""
        try:
            names = os.listdir(self.lock_dir)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        try:
            mtime = os.stat(self.lock_dir).st_mtime
        except FileNotFoundError:
            return True
        if len(names) == 0:
            return True  # empty: being released or broken, free
        if len(names) != 1 or not HOLDER_RE.match(names[0]):
            return False  # foreign: only a person can know where it came from
        h = parse_holder(_read_small(os.path.join(self.lock_dir, names[0]), MAX_HOLDER_BYTES))
        v = verdict(h, self.host)
        stale = time.time() - mtime > self.stale
        if v == "dead" or (v == "unknown" and stale):
            try:
                os.unlink(os.path.join(self.lock_dir, names[0]))
            except FileNotFoundError:
                return True
            try:
                os.rmdir(self.lock_dir)
            except OSError:
                pass
            return True
        return False

    def _mark_waiting(self) -> None:
        try:
            fd = os.open(os.path.join(self.journal_dir, WAITING_NAME), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
            try:
                os.write(fd, secrets.token_hex(16).encode())
            finally:
                os.close(fd)
        except OSError:
            pass

    def check(self) -> None:
        """Before writing lines (§8 step 3): refresh when the last refresh is older than stale/2, and make sure the record is still there."""
        held = self.held
        if held is None:
            raise LockError("LOCK_COMPROMISED", "the lock is not held")
        record = os.path.join(held.dir, held.record_name)
        if not os.path.exists(record):
            raise LockError("LOCK_COMPROMISED", f"the lock {held.dir} was broken by another writer; nothing was written")
        age = time.monotonic() - held.refreshed
        if age > self.stale:
            raise LockError("LOCK_COMPROMISED", f"the lock {held.dir} was not refreshed for {age:.1f} s; nothing was written")
        if age > self.stale / 2:
            now = time.time()
            os.utime(held.dir, (now, now))
            held.refreshed = time.monotonic()

    def release(self) -> None:
        held = self.held
        self.held = None
        if held is None:
            return
        try:
            os.unlink(os.path.join(held.dir, held.record_name))
        except FileNotFoundError:
            return  # broken: no longer ours to remove
        try:
            os.rmdir(held.dir)
        except OSError:
            pass
