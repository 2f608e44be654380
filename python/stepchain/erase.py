"""Erasing one value from a `stepchain/v3` journal directory (spec/ERASURE.md §3–§4): the erasure record is appended
first (the commit point), then, under the journal's lock, the target record is rewritten in sealed form — the
erased marker in place of the unit, `bind` kept, the slot's remaining salts listed — and its bucket replaced by
temporary file and rename. `resume` completes an erasure interrupted between the two."""
from __future__ import annotations

import json
import os
import random
import time
from typing import Any, Optional

from .canonical import MAX_RECORD_DEPTH, canonical_json, scan_canonical
from .formats.v1 import step_hash_without
from .formats.v3 import FORMAT_V3
from .journal import BUCKETS_DIR, Journal, StoreError, _fsync_dir
from .v3 import (ERASED_MARKER, SLOTS, Unit, V3Defect, _DerivedSalts, _ListedSalts, _Walk, b64url, b64url_decode, private_root,
                 root_of, slot_keys)


def _refuse(code: str, message: str) -> StoreError:
    return StoreError(code, message)


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def units_of(record: dict[str, Any]) -> dict[str, list[Unit]]:
    """Every remaining unit of a private or sealed record, per slot, with its salt; ROOT_MISMATCH when what the
    record holds does not give its root (nothing is erased from a record that does not verify, §4 step 2)."""
    values = {k: record[k] for k in SLOTS if k in record}
    units: dict[str, list[Unit]] = {}
    try:
        if "seed" in record:
            root, _ = private_root(record["seed"], values, units)
        else:
            digests = []
            for j, name in enumerate(SLOTS):
                us = units.setdefault(name, [])
                if name in record.get("keys", {}):
                    src: Any = _DerivedSalts(b64url_decode(record["keys"][name]) or b"")
                else:
                    src = _ListedSalts(b64url_decode(record.get("salts", {}).get(name, "")) or b"")
                walk = _Walk(src, False, us, [])
                v = values.get(name)
                if isinstance(v, dict) and isinstance(v.get(ERASED_MARKER), dict):
                    digests.append(walk.erased_one(v, "/" + name))
                else:
                    digests.append(walk.member(name, v, "/" + name, absent=name not in values))
            root = root_of(digests)
    except (V3Defect, ValueError, TypeError, KeyError) as e:
        raise _refuse("ROOT_MISMATCH", f"seq {record.get('seq')}: its values do not give its root ({e})") from None
    if root != record.get("root"):
        raise _refuse("ROOT_MISMATCH", f"seq {record.get('seq')}: its values give the root {root}, not its stored root")
    return units


def _unit_at(record: dict[str, Any], pointer: str) -> Unit:
    tokens = _tokens(pointer) if pointer.startswith("/") else []
    if not tokens or tokens[0] not in SLOTS:
        raise _refuse("ERASURE_TARGET_INVALID", f"{pointer!r} is not a pointer into a slot ({', '.join(SLOTS)})")
    if tokens[0] not in record:
        raise _refuse("ERASURE_TARGET_INVALID", f"slot {tokens[0]} of seq {record['seq']} is absent: nothing to erase")
    unit = next((u for u in units_of(record)[tokens[0]] if u.path == pointer and u.kind in ("member", "element")), None)
    if unit is None:
        raise _refuse("ERASURE_TARGET_INVALID", f"seq {record['seq']} has no member, element or slot at {pointer} still there "
                      "(absent, already erased, a chunk, or inside a part)")
    return unit


def _value_at(record: dict[str, Any], pointer: str) -> Any:
    """The value at a pointer that _unit_at found (so every token names a member or an element)."""
    v: Any = record
    for t in _tokens(pointer):
        v = v[int(t)] if isinstance(v, list) else v[t]
    return v


def _find(journal: Journal, seq: int) -> Optional[dict[str, Any]]:
    return next(iter(journal.read(seq, seq)), None)


# How often an erase goes back to check afresh before it gives up, nothing written (ERASURE.md §4 step 4).
MAX_AGAIN = 16


def _nested(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "/") or b.startswith(a + "/")


def _erasure_input(r: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The input of an erasure record whose target and path are readable, else None."""
    i = r.get("input")
    if r.get("kind") != "erasure" or not isinstance(i, dict) or not isinstance(i.get("target"), int) or not isinstance(i.get("path"), str):
        return None
    return i


def _test_gate() -> None:
    """A test's hold after the check, before the append (the TypeScript writer's STEPCHAIN_TEST_ERASE_GATE): races
    are made, not waited for. Once per process."""
    gate = os.environ.pop("STEPCHAIN_TEST_ERASE_GATE", "")
    if gate == "":
        return
    with open(gate + ".ready", "w"):
        pass
    while not os.path.exists(gate):
        time.sleep(0.005)


def _free_step_id(name: str, taken: set[str]) -> str:
    """The erasure record's step_id: its name, or with `:2`, `:3`, … where a record already holds it (§3)."""
    sid, n = name, 2
    while sid in taken:
        sid, n = f"{name}:{n}", n + 1
    return sid


def erase(path: str, seq: int, pointer: str, reason: str, by: Optional[str] = None, *, fsync: str = "always") -> dict[str, Any]:
    """ERASURE.md §4: {seq, path, digest, erasure (the erasure record's seq), erasure_id}. The erasure record follows
    the head the check read, unless a record appended since concerns it (an erasure of the same record, or one
    holding a step_id it may take): read by the append under the journal's lock, so two erases of nested units
    racing never both record, and other writers appending without pause never keep it out."""
    if not isinstance(reason, str) or not reason.strip():
        raise _refuse("ERASURE_TARGET_INVALID", "an erasure needs its reason (a non-empty string)")
    journal = Journal(path, fsync=fsync)
    try:
        if journal.genesis.get("format") != FORMAT_V3:
            raise _refuse("ERASURE_TARGET_INVALID", f"a {journal.genesis.get('format')} journal hashes raw values: it cannot erase one; remove it whole (retention)")
        for again in range(MAX_AGAIN + 1):
            done = _erase_at_head(journal, seq, pointer, reason, by)
            if done is not None:
                return done
            # ERASURE.md §4 step 4: a random pause before going back, so that erases in several processes part.
            time.sleep(random.random() * min(100, 2 ** (again + 1)) / 1000)
        raise _refuse("ERASURE_CONTENDED", f"seq {seq} {pointer}: other erasures of that record kept being recorded while this one "
                      f"was checked, {MAX_AGAIN} times; nothing written (erase again; if it is refused again, resume and verify)")
    finally:
        journal.close()


def _erase_at_head(journal: Journal, seq: int, pointer: str, reason: str, by: Optional[str]) -> Optional[dict[str, Any]]:
    """§4 steps 1–6 at the journal's head; None to check afresh (an erasure of the same record came first)."""
    _resume(journal)
    head = journal.head()
    after = head["seq"] if head is not None else -1
    record = _find(journal, seq)
    if record is None or record.get("kind") == "erasure":
        raise _refuse("ERASURE_TARGET_INVALID", f"seq {seq} is {'an erasure record' if record else 'not in the journal'}")
    digest = "sha256:" + _unit_at(record, pointer).digest.hex()
    held = _markers(_value_at(record, pointer))
    if held:
        raise _refuse("ERASURE_TARGET_INVALID", f"{pointer} of seq {seq} holds a value erased earlier (by {held[0]}): erasing the whole of it "
                      "would remove the marker that erasure record is checked against; nothing was written. Erase its remaining members "
                      "or elements one by one instead")
    name = f"erasure:{seq}:{digest[7:39]}"
    taken: set[str] = set()
    marked = set(_markers(record))
    for r in journal.read(0, after):
        sid = r.get("step_id")
        if isinstance(sid, str) and sid.startswith(name):
            taken.add(sid)
        i = _erasure_input(r)
        # An erasure of a nested unit recorded after the resume above: complete it first, then check again.
        if i is not None and i["target"] == seq and _nested(i["path"], pointer) and sid not in marked:
            return None

    _test_gate()

    def concerns(r: dict[str, Any]) -> bool:
        i = _erasure_input(r)
        sid = r.get("step_id")
        return (i is not None and i["target"] == seq) or (isinstance(sid, str) and sid.startswith(name))

    while True:
        erasure_id = _free_step_id(name, taken)
        try:
            at = journal.append({"kind": "erasure", "ref": None, "error": None, "input": {"by": by, "digest": digest, "path": pointer,
                                 "reason": reason, "target": seq}, "model": None, "prompt": None, "tool_call": None, "result": None,
                                 "step_id": erasure_id}, after=after, _erasure_writer=True, _unless_after=concerns)
            break
        except StoreError as e:
            if e.code != "HEAD_MOVED":
                raise
            moved = list(journal.read(after + 1))
            if not moved:
                raise
            for r in moved:
                i = _erasure_input(r)
                if i is not None and i["target"] == seq:
                    return None
                sid = r.get("step_id")
                if isinstance(sid, str) and sid.startswith(name):
                    taken.add(sid)
            after = moved[-1]["seq"]
    _complete(journal, seq, pointer, digest, erasure_id)
    return {"seq": seq, "path": pointer, "digest": digest, "erasure": at.seq, "erasure_id": erasure_id}


def resume(path: str, *, fsync: str = "always") -> list[str]:
    """§4.1: completes every erasure recorded but not carried out; returns their erasure record ids."""
    journal = Journal(path, fsync=fsync)
    try:
        return _resume(journal)
    finally:
        journal.close()


def _resume(journal: Journal) -> list[str]:
    def sweep() -> None:
        # Under the lock: a live erase writes its temporary bucket and renames it under the lock too, so a file
        # found here is one an erase killed between the two left behind, never a live one's.
        for name in os.listdir(os.path.join(journal.path, BUCKETS_DIR)):
            if name.startswith(".") and ".erase-" in name:
                os.unlink(os.path.join(journal.path, BUCKETS_DIR, name))

    journal._with_lock(sweep)
    records = list(journal.read(0))
    named = set()
    for r in records:
        if "keys" in r and "seed" not in r:
            for m in _markers(r):
                named.add(m)
    done = []
    for r in records:
        i = r.get("input")
        if r.get("kind") != "erasure" or r["step_id"] in named or not isinstance(i, dict) or not isinstance(i.get("target"), int) or i["target"] >= r["seq"]:
            continue
        _complete(journal, i["target"], i["path"], i["digest"], r["step_id"])
        done.append(r["step_id"])
    return done


def _markers(v: Any) -> list[str]:
    out: list[str] = []
    if isinstance(v, dict):
        m = v.get(ERASED_MARKER)
        if isinstance(m, dict):
            out.append(m.get("erasure"))
        elif isinstance(m, list):
            out.extend(e.get("erasure") for e in m if isinstance(e, dict))
        for k, x in v.items():
            if k != ERASED_MARKER:
                out.extend(_markers(x))
    elif isinstance(v, list):
        for x in v:
            out.extend(_markers(x))
    return out


def _complete(journal: Journal, seq: int, pointer: str, digest: str, erasure_id: str) -> None:
    """§4 steps 5–6 under the lock: the sealed form of record `seq`, its bucket replaced by rename."""
    def work() -> None:
        buckets = journal._buckets()
        first, name = max((b for b in buckets if b[0] <= seq), default=(None, None))
        if name is None:
            raise _refuse("ERASURE_TARGET_INVALID", f"seq {seq} is not in the journal")
        bucket = os.path.join(journal.path, BUCKETS_DIR, name)
        with open(bucket, "rb") as f:
            data = f.read()
        lines = data.split(b"\n")
        tail = lines.pop()
        index = seq - first
        line = lines[index].decode("utf-8")
        record = json.loads(line)
        if record.get("seq") != seq:
            raise _refuse("JOURNAL_CORRUPT", f"{name}: line {index + 1} is not seq {seq}")
        if erasure_id in _markers(record):
            return
        unit = _unit_at(record, pointer)
        if "sha256:" + unit.digest.hex() != digest:
            raise _refuse("ERASURE_MISMATCH", f"the unit at seq {seq} {pointer} has digest sha256:{unit.digest.hex()}, not {digest}")
        sealed = _sealed(record, line, pointer, digest, erasure_id)
        new_line = canonical_json(sealed)
        spans = scan_canonical(new_line, MAX_RECORD_DEPTH).members
        from .formats.v3 import sealed_step_hash
        units_of(sealed)  # what remains gives the root (ROOT_MISMATCH otherwise)
        if spans is None or sealed_step_hash(new_line, spans) != record["step_hash"]:
            raise _refuse("ROOT_MISMATCH", f"the sealed form of seq {seq} does not keep its step hash: nothing written")
        lines[index] = new_line.encode("utf-8")
        tmp = os.path.join(journal.path, BUCKETS_DIR, f".{name}.erase-{os.getpid()}")
        with open(tmp, "wb") as f:
            f.write(b"\n".join(lines) + b"\n" + tail)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, bucket)
        _fsync_dir(os.path.join(journal.path, BUCKETS_DIR))
    journal._with_lock(work)


def _sealed(record: dict[str, Any], line: str, pointer: str, digest: str, erasure_id: str) -> dict[str, Any]:
    tokens = _tokens(pointer)
    slot = tokens[0]
    units = units_of(record)
    if "seed" in record:
        spans = scan_canonical(line, MAX_RECORD_DEPTH).members
        assert spans is not None
        bind = step_hash_without(line, spans)
        keys = {s: b64url(k) for s, k in zip(SLOTS, slot_keys(bytes.fromhex(record["seed"])))}
        salts: dict[str, str] = {}
    else:
        bind, keys, salts = record["bind"], dict(record["keys"]), dict(record["salts"])
    keys.pop(slot, None)
    salts[slot] = b64url(b"".join(u.salt for u in units[slot] if not (u.path == pointer or u.path.startswith(pointer + "/")
                                                                      or u.path.startswith(pointer + "#"))))
    out = {k: v for k, v in record.items() if k not in ("seed", "step_hash")}
    marker = {"digest": digest, "erasure": erasure_id}
    if len(tokens) == 1:
        out[slot] = {ERASED_MARKER: marker}
    else:
        parent: Any = out
        for t in tokens[:-1]:
            parent = parent[int(t)] if isinstance(parent, list) else parent[t]
        if isinstance(parent, list):
            parent[int(tokens[-1])] = {ERASED_MARKER: marker}
        else:
            del parent[tokens[-1]]
            parent[ERASED_MARKER] = sorted([*parent.get(ERASED_MARKER, []), marker], key=lambda m: m["digest"])
    out.update({"bind": bind, "keys": keys, "salts": salts, "step_hash": record["step_hash"]})
    return out
