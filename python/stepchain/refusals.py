"""What a `stepchain/v3` writer refuses of a caller's step before anything is written, with the codes the
TypeScript store gives (src/store/prepare.ts): the erasure kind and step_ids, reserved to erasing (spec/ERASURE.md
§3.1); an approval request whose expiry names no instant or whose tool name could be stored as a part
(spec/APPROVALS.md §2); the unsalted digest of approvals written before statement v2 (§2.1, §3.1). A journal this
package wrote without them verified as one the TypeScript writer would have refused to write."""
from __future__ import annotations

import json
from typing import Any, Optional

from .approval import instant


def v3_refusal(step: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(code, message) for a caller's step a v3 writer refuses, else None."""
    kind, sid = step.get("kind"), step.get("step_id")
    if kind == "erasure" or (isinstance(sid, str) and sid.startswith("erasure:")):
        what = 'kind "erasure"' if kind == "erasure" else f"step_id {json.dumps(sid)}"
        return ("ERASURE_RESERVED", f"{what} is reserved to stepchain erase in a stepchain/v3 journal (spec/ERASURE.md §3.1): "
                "an erasure is recorded by erasing (stepchain erase, erase()), never appended; choose another kind or step_id")
    inp = step.get("input")
    if not isinstance(kind, str) or not kind.startswith("approval.") or not isinstance(inp, dict):
        return None
    expires = inp.get("expires_at")
    if kind == "approval.requested" and isinstance(expires, str) and instant(expires) is None:
        return ("APPROVAL_INVALID", f"approval.requested refused in a stepchain/v3 journal (spec/APPROVALS.md §2): input.expires_at "
                f"{json.dumps(expires)} names no real instant; write a UTC timestamp such as 2026-11-27T10:05:00.000Z")
    presented = inp.get("presented")
    name = presented.get("name") if isinstance(presented, dict) else None
    name_bytes = len(json.dumps(name, ensure_ascii=False).encode("utf-8")) if isinstance(name, str) else 0
    if kind == "approval.requested" and name_bytes >= 256:
        return ("APPROVAL_INVALID", f"approval.requested refused in a stepchain/v3 journal (spec/APPROVALS.md §2): input.presented.name "
                f"is {name_bytes} bytes as JSON text; a tool's name presented for approval is under 256 (the least part threshold, "
                "so it always stands in the line)")
    if "digest" not in inp:
        return None
    what = ("a request with input.digest (an unsalted SHA-256 of the presented call) is the shape written before statement v2; "
            "write input {presented, expires_at} only" if kind == "approval.requested" else
            "a statement with a digest is of type stepchain-approval/v1, written before statement v2; record a v2 statement")
    return ("APPROVAL_LEGACY", f"{kind} refused in a stepchain/v3 journal (spec/APPROVALS.md §2.1, §3.1): {what}")
