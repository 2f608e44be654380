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
from .redact import _Patterns, find_secrets, redact_step
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
    line, decl, _ = _public(private_line, document)
    return line, decl


def _leaves(v: Any, out: set[str]) -> None:
    """§5.5: the string and number leaves of 8 or more characters (numbers as JCS writes them)."""
    if isinstance(v, dict):
        for x in v.values():
            _leaves(x, out)
    elif isinstance(v, list):
        for x in v:
            _leaves(x, out)
    elif isinstance(v, str) or (isinstance(v, (int, float)) and not isinstance(v, bool)):
        text = v if isinstance(v, str) else canonical_json(v)
        if len(text) >= 8:
            out.add(text)


def _spans(v: Any, detectors: list[str], out: set[str]) -> None:
    """§5.5: each detector span in a value's strings and member names."""
    if isinstance(v, dict):
        for k, x in v.items():
            _spans(k, detectors, out)
            _spans(x, detectors, out)
    elif isinstance(v, list):
        for x in v:
            _spans(x, detectors, out)
    elif isinstance(v, str):
        out.update(v[m["start"]:m["end"]] for m in find_secrets(v, detectors))


def _public(private_line: str, document: dict[str, Any]) -> tuple[str, list[dict[str, Any]], set[str]]:
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
    rules = {r["id"]: r for r in document["rules"]}
    needles: set[str] = set()
    for sel in selected:
        rule = rules[sel["rule"]]
        if rule.get("detectors"):
            _spans(sel["value"], rule["detectors"], needles)
        else:
            _leaves(sel["value"], needles)
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
        # §13.5: the sweep also looks for the seed, this slot's key and every withheld unit's salt
        needles.update({seed, slot_key[j].hex(), b64url(slot_key[j])})
        for p, c, _ in ws:
            u = digest_of.get(p if c is None else f"{p}#{c}")
            if u is not None:
                needles.update({u.salt.hex(), b64url(u.salt)})
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
    return line, decl, needles


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


def _escape(t: str) -> str:
    return canonical_json(t)[1:-1]


def _envelope_secret(document: dict[str, Any], where: str, value: Any) -> None:
    """§5.6: every detector a rule names, over an envelope member (never redactable)."""
    detectors = sorted({d for r in document["rules"] for d in r.get("detectors", [])})
    strings: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            strings.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    for s in strings:
        found = find_secrets(s, detectors)
        if found:
            raise PublishError("ENVELOPE_SECRET", f"{where} holds what detector {found[0]['detector']} matches; an envelope member cannot be "
                               "redacted, so this journal cannot be published with this policy")


def publish_v3(genesis: dict[str, Any], buckets: list[tuple[str, list[str]]], policy: Any, exporter: str) -> tuple[bytes, list[dict[str, Any]]]:
    """A stepchain/v3 journal published against its original head (REDACTION.md §13.4–§13.5): every record in public
    form, the manifest with `publication` and `redactions`, after the leak sweep of §5.5 over everything published.
    `buckets`: (bucket file name, stored lines) in order. Deterministic: the seeds decide every salt."""
    from .canonical import digest_bytes
    from .formats import genesis_hash
    from .policy import compile_policy
    from .publish_v1 import _entry
    from .receipt import BLOCK, RECEIPT_FORMAT
    compiled = compile_policy(policy)
    document = compiled["document"]
    if genesis.get("format") != "stepchain/v3":
        raise PublishError("SOURCE_INVALID", "publish_v3 publishes stepchain/v3 journals")
    _envelope_secret(document, "the genesis", genesis)
    from .chain import verify_chain
    checked = verify_chain([(name, "".join(l + "\n" for l in lines).encode("utf-8")) for name, lines in buckets], genesis, allow_public=False)
    if not checked.ok:
        p = checked.problems[0]
        raise PublishError("SOURCE_INVALID", f"the journal does not verify ({p.code}: {p.message}): nothing is published")
    entries: list[tuple[str, bytes]] = []
    chain: list[dict[str, Any]] = []
    redactions: list[dict[str, Any]] = []
    needles: set[str] = set()
    seq, head = -1, None
    for name, lines in buckets:
        public = []
        for line in lines:
            rec = json.loads(line)
            _envelope_secret(document, f"step {rec.get('seq')} (step_id, ts)", [rec.get("step_id"), rec.get("ts")])
            text, decl, found = _public(line, document)
            public.append(text)
            redactions.extend(decl)
            needles |= found
            seq, head = rec["seq"], rec["step_hash"]
        data = "".join(t + "\n" for t in public).encode("utf-8")
        entries.append(("chain/" + name, data))
        chain.append({"digest": digest_bytes(data), "name": "chain/" + name, "size": len(data), "steps": len(public)})
    if head is None:
        raise PublishError("SOURCE_INVALID", "the journal has no steps to publish")
    redactions.sort(key=lambda d: (d["seq"], utf16_key(d["path"]), d.get("chunk", -1)))
    manifest = {"blobs": [], "chain": chain, "exporter": exporter, "format": RECEIPT_FORMAT, "genesis": genesis,
                "head": {"seq": seq, "step_hash": head}, "publication": {"format": "stepchain-redaction/v4", "policy_digest": compiled["digest"]},
                "range": {"from": 0, "prev_hash": genesis_hash(genesis), "to": seq}, "redactions": redactions}
    entries.insert(0, ("manifest.json", canonical_json(manifest).encode("utf-8")))
    texts = [data.decode("utf-8") for _, data in entries]
    for needle in sorted(needles):
        form = needle
        for level in range(6):
            for i, t in enumerate(texts):
                if form and form in t:
                    raise PublishError("LEAK_DETECTED", f"a selected string remains in {entries[i][0]} at escaping level {level}: "
                                       "the policy withholds it in one place while it stands unselected in another")
            form = _escape(form)
    return b"".join(_entry(n, d) for n, d in entries) + b"\0" * (2 * BLOCK), redactions


__all__ = ["PublishError", "public_record", "publish_v3"]
