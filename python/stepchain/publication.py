"""Published receipts (spec/REDACTION.md §7, §12.5): a receipt whose manifest carries `anchor` (a re-anchored
stepchain/v1 publication) or `publication` (a stepchain/v2 one, verified against the original head) and
`redactions`; every marker declared with its rule, every declaration with its marker, views bound by markers,
no record salt published, and the unbound places listed."""
from __future__ import annotations

import json
from typing import Any, Optional

from .canonical import MAX_RECORD_DEPTH, is_digest, is_seq, scan_canonical, utf16_key
from .chain import REDACTED_MARKER, Problem, VerifiedLine, is_redacted_body
from .formats import format_of, genesis_hash
from .formats.base import is_valid_id

REDACTION_FORMAT = "stepchain-redaction/v2"
COMMITTED_PUBLICATION_FORMAT = "stepchain-redaction/v3"
V3_PUBLICATION_FORMAT = "stepchain-redaction/v4"  # REDACTION.md §13: a stepchain/v3 journal's publication
ANCHOR_MEMBERS = ["commitments", "format", "genesis_hash", "length", "policy_digest", "redacted_from"]
REDACTABLE = {"error", "input", "meta", "model", "prompt", "result", "tool_call"}
STOPPING = {"ARCHIVE_INVALID", "ARCHIVE_UNSAFE", "ARCHIVE_LIMIT", "ENTRY_UNEXPECTED", "MANIFEST_INVALID", "SIGNATURE_INVALID"}
WITHDRAWN = {"stepchain-redaction/v1": "anchors of format \"stepchain-redaction/v1\" are withdrawn: they list the original step hashes unsalted"}


def unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _parse_pointer(p: str) -> Optional[list[str]]:
    if p == "":
        return []
    if not p.startswith("/"):
        return None
    out = []
    for t in p[1:].split("/"):
        i = 0
        while True:
            i = t.find("~", i)
            if i < 0:
                break
            if i + 1 >= len(t) or t[i + 1] not in "01":
                return None
            i += 2
        out.append(t.replace("~1", "/").replace("~0", "~"))
    return out


def anchor_defect(v: Any) -> Optional[str]:
    if isinstance(v, dict) and isinstance(v.get("format"), str) and v["format"] in WITHDRAWN:
        return WITHDRAWN[v["format"]]
    if not isinstance(v, dict) or sorted(v) != ANCHOR_MEMBERS:
        return "anchor must be {" + ",".join(json.dumps(m) for m in ANCHOR_MEMBERS) + "} and nothing else"
    if v["format"] != REDACTION_FORMAT:
        return f"anchor.format is {json.dumps(v['format'])}; this verifier reads {json.dumps(REDACTION_FORMAT)}"
    if not is_digest(v["genesis_hash"]):
        return "anchor.genesis_hash must be a digest"
    if not is_digest(v["policy_digest"]):
        return "anchor.policy_digest must be a digest"
    if not is_seq(v["length"]) or v["length"] < 1:
        return "anchor.length must be a positive integer"
    if not is_seq(v["redacted_from"]) or v["redacted_from"] > v["length"]:
        return f"anchor.redacted_from must be an integer from 0 to anchor.length ({v['length']})"
    c = v["commitments"]
    if not isinstance(c, list) or len(c) != v["length"] - v["redacted_from"]:
        return "anchor.commitments must hold exactly anchor.length − anchor.redacted_from step commitments"
    for i, x in enumerate(c):
        if not is_digest(x):
            return f"anchor.commitments[{i}] is not a digest"
    return None


def publication_defect(v: Any) -> Optional[str]:
    if not isinstance(v, dict) or sorted(v) != ["format", "policy_digest"]:
        return 'publication must be {"format","policy_digest"} and nothing else'
    if v["format"] not in (COMMITTED_PUBLICATION_FORMAT, V3_PUBLICATION_FORMAT):
        return (f"publication.format is {json.dumps(v['format'])}; this verifier reads {json.dumps(COMMITTED_PUBLICATION_FORMAT)} "
                f"and {json.dumps(V3_PUBLICATION_FORMAT)}")
    if not is_digest(v["policy_digest"]):
        return "publication.policy_digest must be a digest"
    return None


def redactions_defect(v: Any) -> Optional[str]:
    if not isinstance(v, list):
        return "redactions must be an array"
    prev = None
    prev_part = None
    for i, d in enumerate(v):
        if isinstance(d, dict) and "part" in d:
            # A unit withheld inside a part is declared by the part (§13.10): after every declaration with a seq,
            # by part, then path, then chunk; the path points into the part's value ("" only for a chunk).
            if (sorted(k for k in d if k != "chunk") != ["part", "path", "rule"] or not is_digest(d["part"]) or not isinstance(d["path"], str)
                    or not is_valid_id(d["rule"]) or ("chunk" in d and not is_seq(d["chunk"]))):
                return f'redactions[{i}] must be {{"part": <address>, "path": <JSON Pointer>, "rule": <id>}}, with "chunk": <index> for a chunk (§13.10)'
            if _parse_pointer(d["path"]) is None or (d["path"] == "" and "chunk" not in d):
                return f'redactions[{i}].path is not a JSON Pointer into the part\'s value ("" only with a chunk)'
            pk = (d["part"], utf16_key(d["path"]), -1 if "chunk" not in d else d["chunk"])
            if prev_part is not None and prev_part >= pk:
                return f"redactions[{i}] is out of order or repeated: a part's declarations follow every record's, sorted by part, then path, then chunk"
            prev_part = pk
            continue
        if prev_part is not None:
            return f"redactions[{i}] is out of order: declarations with a seq come before those of parts"
        if (not isinstance(d, dict) or sorted(k for k in d if k != "chunk") != ["path", "rule", "seq"] or not is_seq(d["seq"])
                or not isinstance(d["path"], str) or not is_valid_id(d["rule"]) or ("chunk" in d and not is_seq(d["chunk"]))):
            return f'redactions[{i}] must be {{"path": <JSON Pointer>, "rule": <id>, "seq": <seq>}}, with "chunk": <index> for a chunk (§13.4)'
        tokens = _parse_pointer(d["path"])
        if tokens is None:
            return f"redactions[{i}].path is not a JSON Pointer"
        if not tokens or tokens[0] not in REDACTABLE:
            return f"redactions[{i}].path must point into a content field or meta"
        k = (d["seq"], utf16_key(d["path"]), -1 if "chunk" not in d else d["chunk"])
        if prev is not None and prev >= k:
            return f"redactions[{i}] is out of order or repeated: declarations are sorted by seq, then path, then chunk"
        prev = k
    return None


def view_slots(record: Any) -> list[str]:
    if not isinstance(record, dict) or not isinstance(record.get("digests"), dict):
        return []
    out = []
    for slot in record["digests"]:
        v = record.get(slot, _MISSING)
        if slot in REDACTABLE and v is not _MISSING and not (isinstance(v, dict) and len(v) == 1 and REDACTED_MARKER in v):
            out.append(slot)
    return out


_MISSING = object()


class PublicationChecks:
    def __init__(self) -> None:
        self.anchor: Optional[dict[str, Any]] = None
        self.publication: Optional[dict[str, Any]] = None
        self.declared: Optional[dict[tuple[int, str, Optional[int]], dict[str, Any]]] = None
        self.extra: list[Problem] = []
        self.unbound: list[dict[str, Any]] = []
        self.published_content = False
        self.lines: dict[int, str] = {}  # seq -> the published line, for disclosures

    def extensions(self) -> dict[str, Any]:
        def anchor(v: Any) -> Optional[str]:
            why = anchor_defect(v)
            if why is None:
                self.anchor = v
            return why

        def publication(v: Any) -> Optional[str]:
            why = publication_defect(v)
            if why is None:
                self.publication = v
            return why

        def redactions(v: Any) -> Optional[str]:
            why = redactions_defect(v)
            if why is None:
                self.declared = {(d["part"] if "part" in d else d["seq"], d["path"], d.get("chunk")): {"d": d, "seen": False} for d in v}
            return why
        return {"anchor": anchor, "publication": publication, "redactions": redactions}

    def add(self, code: str, message: str, location: dict[str, Any]) -> None:
        if len(self.extra) < 1000:
            self.extra.append(Problem(code, message, location))

    def line(self, line: VerifiedLine) -> None:
        if line.seq is None:
            return
        self.lines.setdefault(line.seq, line.text)
        at = {**({"file": line.file} if line.file else {}), "line": line.line, "seq": line.seq}
        if '"bind":"' in line.text and '"secrets":' in line.text and line.text.endswith(',"v":3}'):
            self._v3_line(line, at)
            return
        if self.publication is not None and '"salt":"' in line.text:
            members = scan_canonical(line.text, MAX_RECORD_DEPTH).members
            if members is not None and "salt" in members and "salts" not in members:
                self.add("SALT_PUBLISHED", f"step {line.seq} is a stored record with its record salt: a publication carries public records only", {**at, "field": "salt"})
        views: Optional[set[str]] = None
        if '"digests":{' in line.text:
            record = json.loads(line.text)
            if isinstance(record, dict) and isinstance(record.get("digests"), dict):
                self.published_content = True
            vs = view_slots(record)
            views = set(vs) if vs else None
            view_order = vs
        marked: set[str] = set()
        for m in line.markers:
            if len(m.names) != 1 or m.names[0] != REDACTED_MARKER:
                continue
            slot = m.path.split("/")[1] if m.path.count("/") >= 1 else ""
            body = json.loads(line.text[m.start:m.end])[REDACTED_MARKER]
            if slot not in REDACTABLE or not is_redacted_body(body):
                continue
            self.published_content = True
            loc = {**at, "path": m.path}
            in_view = views is not None and slot in views
            if in_view:
                marked.add(slot)
            elif "text" in body:
                if self.publication is not None and m.path == f"/{slot}":
                    self.add("VIEW_INVALID", f"the withheld {slot} of seq {line.seq} carries text beside its digest", {**loc, "field": slot})
                self.unbound.append({"seq": line.seq, "field": slot, "path": m.path, "why": "marker-text"})
            entry = self.declared.get((line.seq, m.path, None)) if self.declared is not None else None
            if entry is None:
                self.add("REDACTION_UNDECLARED", f"a redaction marker (rule {json.dumps(body['rule'])}) stands at seq {line.seq}, {m.path}, but the manifest's redactions list does not declare it",
                         {**loc, "field": slot} if in_view else loc)
            else:
                entry["seen"] = True
                if entry["d"]["rule"] != body["rule"]:
                    self.add("REDACTION_UNDECLARED", f"the marker at seq {line.seq}, {m.path} names rule {json.dumps(body['rule'])}; the declaration names {json.dumps(entry['d']['rule'])}", loc)
        if views is None:
            return
        for slot in view_order:
            self.unbound.append({"seq": line.seq, "field": slot, "path": f"/{slot}", "why": "view"})
            if slot not in marked:
                self.add("VIEW_INVALID", f"{slot} of seq {line.seq} is a redacted view with no redaction marker inside", {**at, "field": slot, "path": f"/{slot}"})

    def _v3_line(self, line: VerifiedLine, at: dict[str, Any]) -> None:
        """REDACTION.md §13.6 steps 2–3 for a v3 record in public form: the first failure of its walk, then its
        withheld markers against the declarations."""
        from .formats.v3 import public_defect
        spans = scan_canonical(line.text, MAX_RECORD_DEPTH).members
        if spans is None or "secrets" not in spans or "bind" not in spans:
            return
        self.published_content = True
        d = public_defect(line.text, spans)
        if d is not None:
            tokens = d.path.split("/")
            self.add(d.code, d.message, {**at, "field": tokens[1] if len(tokens) > 1 else "", "path": d.path})
        record = json.loads(line.text)
        for slot in sorted(REDACTABLE):
            if slot in record:
                self._v3_markers(record[slot], f"/{slot}", line.seq, at)

    def public_part(self, address: str, f: Any) -> None:
        """§13.10 step 4: a public part file whose address checked, its withheld markers against the declarations naming
        the part (located at its entry and a path into its value; a list's tail element k is /k)."""
        if f.kind == "media":
            return
        at = {"file": "parts/" + address[7:]}
        if f.kind == "value":
            self._v3_markers(f.value, "", address, at)
        else:
            for k, x in enumerate(f.value):
                self._v3_markers(x, f"/{k}", address, at)

    def _v3_markers(self, v: Any, path: str, seq: Any, at: dict[str, Any]) -> None:
        """`seq`: the record's seq, or the address of the part whose value this is."""
        from .v3 import CHUNKS_MARKER, WITHHELD_MARKER
        from .canonical import escape_token
        owner = f"part {seq}" if isinstance(seq, str) else f"seq {seq}"

        def match(p: str, chunk: Optional[int]) -> None:
            entry = self.declared.get((seq, p, chunk)) if self.declared is not None else None
            if entry is None or entry["seen"]:
                where = p if chunk is None else f"{p}#{chunk}"
                self.add("REDACTION_UNDECLARED", f"a withheld unit stands at {owner}, {where}, but the manifest's redactions list does not declare it",
                         {**at, "path": p, **({} if chunk is None else {"chunk": chunk})})
            else:
                entry["seen"] = True
        if isinstance(v, list):
            for k, x in enumerate(v):
                self._v3_markers(x, f"{path}/{k}", seq, at)
            return
        if not isinstance(v, dict):
            return
        w = v.get(WITHHELD_MARKER)
        if len(v) == 1 and isinstance(w, str):
            match(path, None)
            return
        if len(v) == 1 and isinstance(v.get(CHUNKS_MARKER), list):
            for k, c in enumerate(v[CHUNKS_MARKER]):
                if isinstance(c, dict) and len(c) == 1 and isinstance(c.get(WITHHELD_MARKER), str):
                    match(path, k)
            return
        if isinstance(w, list):
            # n listed digests match n declarations <object>/<name> whose names the object does not show (§13.6 step 3)
            prefix = path + "/"
            free = [key for key, e in (self.declared or {}).items() if key[0] == seq and key[2] is None and not e["seen"]
                    and key[1].startswith(prefix) and "/" not in key[1][len(prefix):]
                    and unescape(key[1][len(prefix):]) not in v]
            for i in range(len(w)):
                if i < len(free):
                    self.declared[free[i]]["seen"] = True  # type: ignore[index]
                else:
                    self.add("REDACTION_UNDECLARED", f"an object at {owner}, {path} lists {len(w)} withheld members, but the manifest declares "
                             f"{len(free)} there", {**at, "path": path})
        for k, x in v.items():
            if k != WITHHELD_MARKER:
                self._v3_markers(x, f"{path}/{escape_token(k)}", seq, at)

    def blob(self, digest: str, text: str) -> None:
        scan = scan_canonical(text, MAX_RECORD_DEPTH, members=False)
        if scan.markers:
            self.add("REDACTION_UNDECLARED", f"blob {digest} holds a marker at {scan.markers[0].path or 'its root'}", {"file": f"blobs/{digest[7:]}", "path": scan.markers[0].path})

    def finish(self, r: Any, stopped: bool) -> list[Problem]:
        """The manifest checks (§7 step 3, §12.5 step 3) and the declarations (§7 step 4), after the line checks."""
        m = r.manifest
        if m is not None:
            def add(code: str, message: str, path: str) -> None:
                self.add(code, message, {"file": "manifest.json", "path": path})
            a, decl = self.anchor, self.declared
            if self.publication is not None:
                if decl is None:
                    add("ANCHOR_INVALID", "the manifest has no redactions list: this is not a published (redacted) receipt", "/redactions")
                fmt = m["genesis"].get("format")
                if len(format_of(m["genesis"]).records) < 2:
                    add("ANCHOR_INVALID", f"a {fmt} chain hashes raw values, so it cannot be published against its own head", "/publication")
                elif (self.publication["format"] == V3_PUBLICATION_FORMAT) != (fmt == "stepchain/v3"):
                    add("ANCHOR_INVALID", f"a {fmt} journal is not published as {self.publication['format']} (REDACTION.md §12 is for "
                        "stepchain/v2, §13 for stepchain/v3)", "/publication/format")
                if a is not None:
                    add("ANCHOR_INVALID", "a receipt published against its original head (publication) has no anchor block", "/anchor")
            elif a is None:
                add("ANCHOR_INVALID", "the chain holds redaction markers or redacted views, but the manifest has no publication or anchor block"
                    if self.published_content and decl is None else "the manifest has no anchor block: this is not a published (redacted) receipt", "/anchor")
            if decl is None and self.publication is None:
                add("ANCHOR_INVALID", "the manifest has no redactions list: this is not a published (redacted) receipt", "/redactions")
            if a is not None and self.publication is None:
                if m["range"]["from"] != 0:
                    add("ANCHOR_INVALID", f"a published receipt covers the whole chain from seq 0; this one starts at {m['range']['from']}", "/range/from")
                if a["genesis_hash"] != genesis_hash(m["genesis"]):
                    add("ANCHOR_INVALID", "anchor.genesis_hash is not the hash of the manifest's genesis", "/anchor/genesis_hash")
                if a["length"] != m["head"]["seq"] + 1:
                    add("ANCHOR_INVALID", f"anchor.length {a['length']} differs from the published chain's {m['head']['seq'] + 1} steps", "/anchor/length")
                if decl is not None:
                    first = next(iter(decl.values()))["d"].get("seq", a["length"]) if decl else a["length"]
                    if a["redacted_from"] != first:
                        add("ANCHOR_INVALID", f"anchor.redacted_from is {a['redacted_from']}, but the first redaction is declared at {first}", "/anchor/redacted_from")
            if decl is not None and r.steps == m["head"]["seq"] - m["range"]["from"] + 1 and not stopped:
                for e in decl.values():
                    if not e["seen"]:
                        d = e["d"]
                        owner = f"part {d['part']}" if "part" in d else f"seq {d['seq']}"
                        self.add("REDACTION_MISSING", f"the manifest declares a redaction at {owner}, {d['path']}"
                                 f"{'' if 'chunk' not in d else ' chunk ' + str(d['chunk'])} (rule {json.dumps(d['rule'])}), but no marker stands there",
                                 {"file": "manifest.json", **({"part": d["part"]} if "part" in d else {"seq": d["seq"]}), "path": d["path"],
                                  **({"chunk": d["chunk"]} if "chunk" in d else {})})
        return self.extra
