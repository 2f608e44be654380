"""Tombstones of removed runs (spec/RETENTION.md §3–§4): the shape of a tombstone, its head bound to its tree, and
its tree extending the last checkpoint the run signed or one a checker kept. Pure; never raises on hostile input."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from .canonical import is_digest, is_seq
from .formats.base import is_valid_id, is_valid_timestamp
from .proofs import EMPTY_ROOT, parse_checkpoint_text, parse_journal_origin, parse_note, step_leaf_hash, verify_consistency, verify_range

TOMBSTONE_FORMAT = "stepchain/tombstone/v1"
MEMBERS = sorted(["tombstone", "journal", "run_id", "format", "created_at", "run", "genesis_hash", "steps", "head", "last_ts",
                  "tree_root", "head_proof", "checkpoint", "consistency", "removed_at", "reason", "policy"])


@dataclass
class TombstoneReport:
    ok: bool
    code: Optional[str] = None
    message: str = ""
    checkpoint_size: Optional[int] = None


def _digests(v: Any) -> bool:
    return isinstance(v, list) and all(is_digest(d) for d in v)


def shape_defect(t: Any) -> Optional[str]:
    """Why t does not have the shape of §3, member for member, or None."""
    if not isinstance(t, dict) or sorted(t) != MEMBERS:
        return "a tombstone has exactly the members " + ", ".join(MEMBERS)
    if t["tombstone"] != TOMBSTONE_FORMAT:
        return f"tombstone must be {TOMBSTONE_FORMAT!r}"
    if not isinstance(t["journal"], str) or not t["journal"] or not is_valid_id(t["run_id"]):
        return "journal is the removed journal's id, run_id its genesis journal_id"
    if not isinstance(t["format"], str) or not is_valid_timestamp(t["created_at"]) or not (t["run"] is None or isinstance(t["run"], dict)):
        return "format, created_at and run are those of the genesis (run null for a journal without one)"
    if not is_digest(t["genesis_hash"]) or not is_digest(t["tree_root"]):
        return "genesis_hash and tree_root are digests"
    if not is_seq(t["steps"]) or not isinstance(t["steps"], int):
        return "steps is a number of steps"
    if (t["head"] is None) != (t["steps"] == 0) or (t["last_ts"] is None) != (t["steps"] == 0):
        return "head and last_ts are null exactly when steps is 0"
    if t["head"] is not None and (not is_digest(t["head"]) or not is_valid_timestamp(t["last_ts"])):
        return "head is a digest and last_ts a timestamp"
    if not _digests(t["head_proof"]):
        return "head_proof is a list of digests"
    if (t["checkpoint"] is None) != (t["consistency"] is None):
        return "consistency is null exactly when checkpoint is"
    if t["checkpoint"] is not None and (not isinstance(t["checkpoint"], str) or not _digests(t["consistency"])):
        return "checkpoint is a signed note and consistency a list of digests"
    if not is_valid_timestamp(t["removed_at"]) or not isinstance(t["reason"], str):
        return "removed_at is a timestamp and reason a string"
    p = t["policy"]
    if (not isinstance(p, dict) or sorted(p) != ["basis", "keep_days"] or not is_seq(p["keep_days"]) or not isinstance(p["keep_days"], int)
            or p["basis"] not in ("last-step", "created")):
        return 'policy is {"keep_days": N, "basis": "last-step" | "created"}'
    return None


def _hashes(ds: list[str]) -> list[bytes]:
    return [bytes.fromhex(d[7:]) for d in ds]


def _checkpoint(text: Any) -> Any:
    note, bad = parse_note(text)
    if note is None:
        return None
    cp, bad = parse_checkpoint_text(note.text)
    return cp


def check_tombstone(t: Any, against: Optional[str] = None) -> TombstoneReport:
    """§4 with an optional checkpoint the checker kept (a signed note's text); whether its signatures are the log's
    is the checker's policy (proofs.verify_checkpoint), not this procedure's."""
    def malformed(why: str) -> TombstoneReport:
        return TombstoneReport(False, "TOMBSTONE_MALFORMED", why)

    def inconsistent(why: str) -> TombstoneReport:
        return TombstoneReport(False, "TOMBSTONE_INCONSISTENT", why)
    why = shape_defect(t)
    if why is not None:
        return malformed(why)
    steps, root = t["steps"], bytes.fromhex(t["tree_root"][7:])
    if steps == 0 and root != EMPTY_ROOT:
        return inconsistent("a run of no steps has the empty tree's root")
    if steps > 0:
        leaf = step_leaf_hash(t["head"])
        if leaf is None or verify_range(steps - 1, steps - 1, steps, [leaf], _hashes(t["head_proof"]), root) is not None:
            return inconsistent(f"head_proof does not prove head to be leaf {steps - 1} of tree_root: a head nothing binds to the tree")
    n = against if against is not None else t["checkpoint"]
    if n is None:
        return TombstoneReport(True)
    cp = _checkpoint(n)
    if cp is None:
        return malformed("the checkpoint is not a signed note of a checkpoint (PROOFS.md §8.1–§8.2)")
    origin = parse_journal_origin(cp.origin)
    if origin is not None and (origin[1] != t["journal"] or origin[2] != t["genesis_hash"]):
        return inconsistent(f"the checkpoint's origin {cp.origin} names another journal or genesis than the tombstone's")
    if cp.size > steps:
        return inconsistent(f"the checkpoint covers {cp.size} steps; the run had {steps} when it was removed")
    if cp.size == steps:
        proof: list[bytes] = []
    else:
        own = _checkpoint(t["checkpoint"]) if t["checkpoint"] is not None else None
        if n is not t["checkpoint"] and (own is None or own.size != cp.size):
            return inconsistent(f"no proof connects a checkpoint of {cp.size} steps to the final tree of {steps}")
        proof = _hashes(t["consistency"])
    if verify_consistency(cp.size, cp.root, steps, root, proof) is not None:
        return inconsistent(f"tree_root does not extend the checkpoint of {cp.size} steps")
    return TombstoneReport(True, checkpoint_size=cp.size)
