"""The chain-level check of erasure (spec/ERASURE.md §5): a record in sealed form is checked deep whatever the
tier (what remains must give its root), and once the chain is read each erased marker is matched with the
erasure record that names it back, each erasure record with its marker. Pure; fed in chain order."""
from __future__ import annotations

import json
from typing import Any, Optional

from .canonical import is_digest, is_seq
from .chain import Problem
from .formats.base import is_valid_id
from .v3 import Unit, V3Defect, sealed_root

ERASURE_KIND = "erasure"


def erasure_input_defect(v: Any) -> Optional[str]:
    """Why a record's input is not that of an erasure record (§3), or None. Its own reason and by may have been erased
    by a later erasure: one erased marker each, in the input's erased list."""
    if isinstance(v, dict):
        erased = [k for k in ("by", "reason") if k not in v]
        if erased:
            marks = v.get("$stepchain:erased")
            if not isinstance(marks, list) or len(marks) != len(erased):
                return "an erasure's input whose reason or by was erased holds one erased marker for each"
            v = {**{k: x for k, x in v.items() if k != "$stepchain:erased"}, "reason": v.get("reason", "-"), "by": v.get("by")}
    if not isinstance(v, dict) or sorted(v) != ["by", "digest", "path", "reason", "target"]:
        return "an erasure's input is exactly {target, path, digest, reason, by}"
    if not is_seq(v["target"]) or not isinstance(v["target"], int):
        return "input.target must be a seq"
    if not isinstance(v["path"], str) or not v["path"].startswith("/"):
        return "input.path must be the JSON Pointer of the erased unit"
    if not is_digest(v["digest"]):
        return "input.digest must be a digest"
    if not isinstance(v["reason"], str) or not v["reason"]:
        return "input.reason must be a non-empty string"
    if v["by"] is not None and not isinstance(v["by"], str):
        return "input.by must be a string or null"
    return None


def _parent(path: str) -> str:
    return path[:path.rfind("/")]


class ErasureLedger:
    def __init__(self, start_seq: int = 0) -> None:
        # The first seq of the range fed (a partial receipt's; 0 for a whole chain).
        self.start_seq = start_seq
        self.markers: list[dict[str, Any]] = []
        self.records: dict[str, dict[str, Any]] = {}  # step_id -> {seq, input, defect, at}
        # The remaining units of each sealed record whose remains give its root, by seq: what a pending erasure
        # record is checked against (§5). Sealed records are rare; private ones are never kept.
        self.sealed_units: dict[int, list[Unit]] = {}
        # A publication's records that withhold units, by seq: (path, None) a whole withheld value, (path, shown
        # names) an object's withheld members (§5 step 4: an erasure of a withheld unit cannot be seen).
        self.withheld: dict[int, list[tuple[str, Optional[set[str]]]]] = {}

    def sealed(self, text: str, spans: dict[str, tuple[int, int]], seq: Optional[int], at: dict[str, Any]) -> list[Problem]:
        """§5 step 2 for one record in sealed form: its problems (ROOT_MISMATCH, MARKER_INVALID, ERASURE_UNRECORDED)."""
        from .formats.v3 import slot_values
        from .canonical import canonical_value

        def member(name: str) -> Any:
            s = spans.get(name)
            return None if s is None else canonical_value(text, s[0], s[1])
        units: list[Unit] = []
        try:
            root, erased = sealed_root(slot_values(text, spans), member("keys"), member("salts"), units)
        except V3Defect as d:
            return [Problem(d.code, d.message, {**at, "field": d.path.split("/")[1], "path": d.path})]
        if root != member("root"):
            return [Problem("ROOT_MISMATCH", f"what remains of this sealed record gives the root {root}, not its stored root: a kept value, "
                            "key or salt was changed after the erasure", {**at, "field": "root"})]
        if not erased:
            return [Problem("ERASURE_UNRECORDED", "this record is in sealed form (its seed deleted) without any erased value: a seed is "
                            "deleted only by an erasure", {**at, "field": "seed"})]
        self.markers.extend({**m, "seq": seq, "at": at} for m in erased)
        if seq is not None:
            self.sealed_units[seq] = units
        return []

    def _pending_defect(self, t: dict[str, Any]) -> Optional[str]:
        """Why a pending erasure record cannot be what it claims of a target in sealed form, or None: the unit at
        its path is there with its digest, or an erased marker of that target there holds it (§5). A target in
        private form was read before the erasure record named it: it is checked when the erasure is carried out."""
        units = self.sealed_units.get(t["target"])
        if units is None:
            return None
        unit = next((u for u in units if u.path == t["path"] and u.kind in ("member", "element")), None)
        if unit is not None:
            found = "sha256:" + unit.digest.hex()
            return None if found == t["digest"] else f"the unit at {t['path']} of seq {t['target']} has digest {found}"
        if any(m["seq"] == t["target"] and m["digest"] == t["digest"] and
               ((_parent(t["path"]) == m["path"]) if m["member"] else t["path"] == m["path"]) for m in self.markers):
            return None
        return f"seq {t['target']} holds no unit at {t['path']} with that digest, erased or not"

    def public(self, text: str, spans: dict[str, tuple[int, int]], seq: Optional[int], at: dict[str, Any]) -> None:
        """The public form of a sealed record (REDACTION.md §13.12): its root is checked with the publication's records
        (public_root counts each erased unit as its digest); here only its erased markers are matched with erasure
        records (§5 step 3). A pending erasure naming it is checked against those markers."""
        from .formats.v3 import slot_values
        from .v3 import ERASED_MARKER, SLOTS, WITHHELD_MARKER, erased_entry_defect
        from .canonical import escape_token
        found: list[dict[str, Any]] = []
        hidden: list[tuple[str, Optional[set[str]]]] = []
        values = slot_values(text, spans)
        stack: list[tuple[Any, str]] = [(values[name], "/" + name) for name in reversed(SLOTS) if name in values]
        while stack:
            v, path = stack.pop()
            if isinstance(v, list):
                stack.extend((x, f"{path}/{k}") for k, x in reversed(list(enumerate(v))))
                continue
            if not isinstance(v, dict):
                continue
            body = v.get(ERASED_MARKER)
            if isinstance(body, dict) and len(v) == 1 and not erased_entry_defect(body):
                found.append({"path": path, "member": False, **body})
                continue
            if isinstance(body, list):
                found.extend({"path": path, "member": True, **e} for e in body if not erased_entry_defect(e))
            held = v.get(WITHHELD_MARKER)
            if WITHHELD_MARKER in v and not isinstance(held, list):
                hidden.append((path, None))
                continue
            if isinstance(held, list):
                hidden.append((path, set(v.keys())))
            stack.extend((x, f"{path}/{escape_token(k)}") for k, x in reversed(list(v.items())) if k not in (ERASED_MARKER, WITHHELD_MARKER))
        if hidden and seq is not None:
            self.withheld[seq] = hidden
        if not found:
            return
        self.markers.extend({**m, "seq": seq, "at": at} for m in found)
        if seq is not None:
            self.sealed_units[seq] = []  # its units are not in hand: a pending erasure of it is checked against its markers

    def record(self, step_id: Any, seq: Optional[int], value: Any, at: dict[str, Any]) -> None:
        if isinstance(step_id, str) and is_valid_id(step_id) and seq is not None and step_id not in self.records:
            self.records[step_id] = {"seq": seq, "input": value, "defect": erasure_input_defect(value), "at": at}

    def finish(self) -> tuple[list[Problem], list[Problem]]:
        """(problems, notices) once the chain is read (§5 steps 3–4)."""
        problems: list[Problem] = []
        notices: list[Problem] = []
        named: set[str] = set()
        for m in self.markers:
            named.add(m["erasure"])
            rec = self.records.get(m["erasure"])
            loc = {**m["at"], "field": m["path"].split("/")[1], "path": m["path"]}
            where = f"{m['path']}/…" if m["member"] else m["path"]
            if rec is None or rec["seq"] <= m["seq"] or rec["defect"] is not None:
                problems.append(Problem("ERASURE_UNRECORDED", f"the erased value at {where} (digest {m['digest']}) names erasure record "
                                        f"{json.dumps(m['erasure'])}, which is not an erasure record later in the chain", loc))
                if rec is not None and rec["defect"] is not None:
                    problems.append(Problem("ERASURE_MISMATCH", f"an erased value (seq {m['seq']}) names this erasure record, whose input "
                                            f"is not an erasure's: {rec['defect']}", {**rec["at"], "field": "input"}))
                continue
            t = rec["input"]
            same_path = (_parent(t["path"]) == m["path"]) if m["member"] else t["path"] == m["path"]
            if t["target"] != m["seq"] or t["digest"] != m["digest"] or not same_path:
                problems.append(Problem("ERASURE_UNRECORDED", f"the erased value at {where} (digest {m['digest']}) is not the one its erasure "
                                        f"record (seq {rec['seq']}) names (seq {t['target']}, {t['path']}, {t['digest']})", loc))
                problems.append(Problem("ERASURE_MISMATCH", f"this erasure record names seq {t['target']} {t['path']} digest {t['digest']}, "
                                        f"but the value it erased is seq {m['seq']} {where} digest {m['digest']}", {**rec["at"], "field": "input"}))
                continue
            reason = json.dumps(t["reason"], ensure_ascii=False) if "reason" in t else "erased"
            by = json.dumps(t["by"], ensure_ascii=False) if "by" in t else "erased"
            notices.append(Problem("VALUE_ERASED", f"the value at {t['path']} was erased by seq {rec['seq']} (reason {reason}, "
                                   f"by {by}); its digest {t['digest']} still binds it", {**m["at"], "path": t["path"]}))
        for step_id, rec in self.records.items():
            if step_id in named:
                continue
            if rec["defect"] is not None:
                # It erased nothing and claims nothing checkable: the notice such a record had before the kind was
                # checked, so journals written then keep their verdict (vectors/v3.json chain-kinds-notices).
                notices.append(Problem("KIND_UNCHECKED", f"an erasure record whose input is not an erasure's ({rec['defect']}) names nothing "
                                       "erased, so what it claims cannot be checked: its integrity is verified", {**rec["at"], "field": "input"}))
                continue
            if rec["input"]["target"] >= rec["seq"]:
                problems.append(Problem("ERASURE_MISMATCH", f"an erasure record names seq {rec['input']['target']}, which is not earlier in the chain",
                                        {**rec["at"], "field": "input"}))
                continue
            if rec["input"]["target"] < self.start_seq:
                # Its target lies before the range (a partial receipt): whether it was carried out cannot be seen here.
                t = rec["input"]
                notices.append(Problem("ERASURE_OUT_OF_RANGE", f"an erasure of {t['path']} in seq {t['target']}, which lies before this range "
                                       f"(it starts at seq {self.start_seq}): whether it was carried out cannot be checked here; verify the "
                                       f"journal, or a receipt that holds seq {t['target']}", {**rec["at"], "field": "input"}))
                continue
            if _withholds(self.withheld.get(rec["input"]["target"]), rec["input"]["path"]):
                # A publication that withholds the unit, or one holding it: whether it was carried out cannot be seen.
                t = rec["input"]
                notices.append(Problem("ERASURE_WITHHELD", f"an erasure of {t['path']} in seq {t['target']}, which this publication withholds "
                                       "(that unit or one holding it): whether it was carried out cannot be seen here; verify the journal",
                                       {**rec["at"], "field": "input"}))
                continue
            defect = self._pending_defect(rec["input"])
            if defect is not None:
                t = rec["input"]
                problems.append(Problem("ERASURE_MISMATCH", f"this erasure record names {t['path']} of seq {t['target']} with digest {t['digest']}, "
                                        f"but {defect}: it claims an erasure that cannot be carried out", {**rec["at"], "field": "input"}))
            else:
                notices.append(Problem("ERASURE_PENDING", f"the erasure of {rec['input']['path']} in seq {rec['input']['target']} is recorded but "
                                       "not yet carried out (an erasure was interrupted): run `stepchain erase <journal> --resume`",
                                       {**rec["at"], "field": "input"}))
        return problems, notices


def _withholds(hidden: Optional[list[tuple[str, Optional[set[str]]]]], path: str) -> bool:
    """Whether a public record withholds the unit at `path`, whole or inside a withheld unit (ERASURE.md §5 step 4)."""
    for at, shown in hidden or []:
        if shown is None:
            if path == at or path.startswith(at + "/"):
                return True
        elif path.startswith(at + "/"):
            name = path[len(at) + 1:].split("/")[0].replace("~1", "/").replace("~0", "~")
            if name not in shown:
                return True
    return False
