"""The public form of one `stepchain/v3` record (spec/REDACTION.md §13.3): the walk of §5.1 selects what a policy
withholds; each selected unit stands as a withheld marker (a slot, an element, a chunk of a long string) or in
its object's withheld list (a member), everything else is shown and disclosed by its slot key or by the salts of
its disclosed units, and the declarations name every withheld unit (§13.4)."""
from __future__ import annotations

import json
from typing import Any, Optional

from .canonical import MAX_RECORD_DEPTH, canonical_json, scan_canonical, utf16_key
from .formats.v1 import step_hash_without
from .formats.v3 import public_defect, public_step_hash
from .redact import _Patterns, redact_step
from .v3 import SLOTS, WITHHELD_MARKER, CHUNKS_MARKER, Unit, b64url, chunk_text, escaped_text, private_root, slot_keys


class PublishError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


def _inside(path: str, unit_path: str) -> bool:
    return unit_path == path or unit_path.startswith(path + "/") or unit_path.startswith(path + "#")


def _tokens(path: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def public_record(private_line: str, document: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(the public line, its declarations) for a stored v3 record under a compiled policy document."""
    scan = scan_canonical(private_line, MAX_RECORD_DEPTH)
    if scan.defect or scan.members is None:
        raise PublishError("SOURCE_INVALID", "the record is not a canonical JSON object")
    record = json.loads(private_line)
    seq, seed = record["seq"], record["seed"]
    values = {k: record[k] for k in SLOTS if k in record}
    units: dict[str, list[Unit]] = {}
    root, slot_digests = private_root(seed, values, units)
    if root != record["root"]:
        raise PublishError("SOURCE_INVALID", f"record {seq}'s values give the root {root}, not its stored root: nothing is published")
    if "$stepchain:part" in private_line:
        raise PublishError("SOURCE_INVALID", f"record {seq} holds part references, which this version does not publish")
    _, selected = redact_step(document, seq, values, lambda: "0" * 32, SLOTS)
    # withheld units: (path, chunk or None, rule)
    withheld: list[tuple[str, Optional[int], str]] = []
    for sel in selected:
        path = sel["path"]
        spans = sel.get("spans")
        if spans is not None and isinstance(sel["value"], str):
            t = escaped_text(sel["value"])
            chunks = chunk_text(t)
            if len(chunks) > 1:
                at, cut = 0, []
                for c in chunks:
                    cut.append((at, at + len(c)))
                    at += len(c)
                s = sel["value"]
                byte_spans = [(len(escaped_text(s[:a])), len(escaped_text(s[:b]))) for a, b in spans]
                for k, (c0, c1) in enumerate(cut):
                    if any(a < c1 and b > c0 for a, b in byte_spans):
                        withheld.append((path, k, sel["rule"]))
                continue
        withheld.append((path, None, sel["rule"]))
    for slot in SLOTS:  # an absent slot a value rule names (§12.2 step 2)
        if slot in values:
            continue
        rule = _absent_slot_rule(document, seq, values, slot)
        if rule is not None:
            withheld.append(("/" + slot, None, rule))
    digest_of = {u.path: u for us in units.values() for u in us}
    public = {k: v for k, v in record.items() if k != "seed"}
    public["bind"] = step_hash_without(private_line, scan.members)
    by_slot: dict[str, list[tuple[str, Optional[int], str]]] = {}
    for w in withheld:
        by_slot.setdefault(_tokens(w[0])[0], []).append(w)
    keys, salts = {}, {}
    slot_key = slot_keys(bytes.fromhex(seed))
    for j, slot in enumerate(SLOTS):
        ws = by_slot.get(slot, [])
        if not ws:
            keys[slot] = b64url(slot_key[j])
            continue
        if any(p == "/" + slot and c is None for p, c, _ in ws):
            public[slot] = {WITHHELD_MARKER: "sha256:" + slot_digests[j].hex()}
            continue
        hidden = [p if c is None else f"{p}#{c}" for p, c, _ in ws]
        salts[slot] = b64url(b"".join(u.salt for u in units[slot] if not any(_inside(h, u.path) for h in hidden)))
        for p, c, _ in sorted(ws, key=lambda w: (-len(w[0]), w[1] or 0)):
            _place(public, p, c, digest_of)
    public["secrets"] = {"seed": seed} if not withheld else {"keys": keys, "salts": salts}
    line = canonical_json(public)
    spans = scan_canonical(line, MAX_RECORD_DEPTH).members
    assert spans is not None
    if public_defect(line, spans) is not None or public_step_hash(line, spans) != record["step_hash"]:
        raise PublishError("SOURCE_INVALID", f"the public form of record {seq} does not hash to its step hash")
    decl = [{"seq": seq, "path": p, "rule": r, **({} if c is None else {"chunk": c})} for p, c, r in withheld]
    decl.sort(key=lambda d: (d["seq"], utf16_key(d["path"]), d.get("chunk", -1)))
    return line, decl


def _absent_slot_rule(document: dict[str, Any], seq: int, values: dict[str, Any], slot: str) -> Optional[str]:
    tc = values.get("tool_call")
    tool = tc.get("name") if isinstance(tc, dict) and isinstance(tc.get("name"), str) else None
    for r in document["rules"]:
        lo, hi = r.get("seq", {}).get("from", 0), r.get("seq", {}).get("to", 2**53 - 1)
        if not lo <= seq <= hi or ("tools" in r and (tool is None or tool not in r["tools"])) or r.get("detectors") or "paths" not in r:
            continue
        pm = _Patterns(r["paths"])
        if pm.matches(pm.step(pm.root(), slot)):
            return r["id"]
    return None


def _place(record: dict[str, Any], path: str, chunk: Optional[int], units: dict[str, Unit]) -> None:
    """Puts one withheld unit's marker at its place; deeper units first, so a parent still holds its children."""
    tokens = _tokens(path)
    parent: Any = record
    for t in tokens[:-1]:
        parent = parent[int(t)] if isinstance(parent, list) else parent[t]
    last = tokens[-1]
    if chunk is not None:
        key: Any = int(last) if isinstance(parent, list) else last
        cur = parent[key]
        if not (isinstance(cur, dict) and CHUNKS_MARKER in cur):
            # chunks never cut an escape (FORMAT §14.3): each is the inside of a JSON string literal
            cur = {CHUNKS_MARKER: [json.loads('"' + c.decode("utf-8") + '"') for c in chunk_text(escaped_text(cur))]}
            parent[key] = cur
        cur[CHUNKS_MARKER][chunk] = {WITHHELD_MARKER: "sha256:" + units[f"{path}#{chunk}"].digest.hex()}
        return
    d = "sha256:" + units[path].digest.hex()
    if isinstance(parent, list):
        parent[int(last)] = {WITHHELD_MARKER: d}
    else:
        del parent[last]
        parent[WITHHELD_MARKER] = sorted([*parent.get(WITHHELD_MARKER, []), d])


__all__ = ["PublishError", "public_record"]
