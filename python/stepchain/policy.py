"""Redaction policies (spec/REDACTION.md §3): validation with the codes of §3.1 and the policy digest, computed
over the policy as validated (the digest a published receipt's `anchor`/`publication` names). Applying a policy
(the walk, detectors, publishing) is not implemented in the Python package yet."""
from __future__ import annotations

import json
import re
from typing import Any

from .canonical import canonical_json, digest_utf8, is_seq
from .formats.base import is_valid_id

POLICY_FORMAT = "stepchain-redaction-policy/v1"
DETECTOR_IDS = ["api-key", "aws-access-key", "bearer-token", "jwt", "private-key", "email"]
REDACTABLE = {"error", "input", "meta", "model", "prompt", "result", "tool_call"}
STEP_MEMBERS = {"input", "model", "prompt", "tool_call", "result", "meta", "v", "seq", "step_id", "ts", "prev_hash", "step_hash",
                "kind", "ref", "error", "salt", "salts", "digests"}
RULE_MEMBERS = ["id", "paths", "detectors", "tools", "seq", "mode"]
MAX_RULES = 256


class PolicyError(ValueError):
    def __init__(self, code: str, message: str, path: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.path = path


def _pattern_defect(p: str) -> str | None:
    """A pointer pattern (DIFF.md §4): `*` one token, `**` any number; None when it is one."""
    if p == "":
        return "is empty"
    if not p.startswith("/"):
        return 'does not start with "/"'
    tokens = p[1:].split("/")
    if len(tokens) > 1000:
        return "has more than 1000 tokens"
    for t in tokens:
        if t in ("*", "**"):
            continue
        if re.search(r"~[^012]|~$", t):
            return f'has a bad "~" escape in the token {json.dumps(t)}'
        if "*" in t:
            return f'uses "*" inside the token {json.dumps(t)}'
    first = tokens[0]
    if first not in ("*", "**") and first.replace("~1", "/").replace("~2", "*").replace("~0", "~") not in STEP_MEMBERS:
        return f"starts with {json.dumps(first)}, which is not a step field"
    for a, b in zip(tokens, tokens[1:]):
        if a == "**" and b == "**":
            return 'has "**" twice in a row'
    return None


def compile_policy(value: Any) -> dict[str, Any]:
    """The policy as validated, with its digest: {"document", "digest"}; PolicyError otherwise."""
    if not isinstance(value, dict):
        raise PolicyError("POLICY_INVALID", 'a policy is a JSON object {"rules": [...]}')
    for k in value:
        if k not in ("rules", "format"):
            raise PolicyError("UNKNOWN_MEMBER", f"the policy has an unknown member {json.dumps(k)}", f"/{k}")
    if "format" in value and value["format"] != POLICY_FORMAT:
        raise PolicyError("POLICY_INVALID", f"the policy's format is {json.dumps(value['format'])}; this version reads {POLICY_FORMAT}", "/format")
    rules = value.get("rules")
    if not isinstance(rules, list) or not rules:
        raise PolicyError("POLICY_INVALID", 'the policy needs a non-empty "rules" array', "/rules")
    if len(rules) > MAX_RULES:
        raise PolicyError("POLICY_INVALID", f"the policy has {len(rules)} rules; at most {MAX_RULES} are allowed", "/rules")
    seen: dict[str, int] = {}
    document: dict[str, Any] = {**({"format": POLICY_FORMAT} if "format" in value else {}), "rules": []}
    for index, raw in enumerate(rules):
        at = f"/rules/{index}"
        id_ok = isinstance(raw, dict) and is_valid_id(raw.get("id"))
        name = f'rule "{raw["id"]}" (rules[{index}])' if id_ok else f"rules[{index}]"

        def bad(code: str, member: str | None, why: str) -> PolicyError:
            return PolicyError(code, f"{name}{f' member {json.dumps(member)}' if member else ''}: {why}", f"{at}/{member}" if member else at)
        if not isinstance(raw, dict):
            raise bad("RULE_INVALID", None, "a rule is an object")
        for k in raw:
            if k not in RULE_MEMBERS:
                raise bad("UNKNOWN_MEMBER", k, f"is not a rule member (allowed: {', '.join(RULE_MEMBERS)})")
        if not id_ok:
            raise bad("RULE_ID_INVALID", "id", f"must be an id (got {json.dumps(raw.get('id'))})")
        rid = raw["id"]
        if rid in seen:
            raise bad("RULE_ID_DUPLICATE", "id", f"repeats the id of rules[{seen[rid]}]")
        seen[rid] = index
        rule: dict[str, Any] = {"id": rid}

        def strings(member: str, limit: int) -> list[str]:
            v = raw[member]
            if not isinstance(v, list) or not v or len(v) > limit or not all(isinstance(x, str) for x in v):
                raise bad("RULE_INVALID", member, f"must be a non-empty array of at most {limit} strings")
            if len(set(v)) != len(v):
                raise bad("RULE_INVALID", member, "lists the same entry twice")
            return v
        has_paths = "paths" in raw
        if has_paths:
            paths = strings("paths", 256)
            for i, p in enumerate(paths):
                why = _pattern_defect(p)
                if why:
                    raise bad("PATH_INVALID", f"paths/{i}", f"{json.dumps(p)} is not a pointer pattern: {why}")
                first = p[1:].split("/")[0]
                if first not in ("*", "**") and first not in REDACTABLE:
                    raise bad("PATH_INVALID", f"paths/{i}", f"{json.dumps(p)} points into the envelope field {json.dumps(first)}")
            rule["paths"] = paths
        detectors: list[str] = []
        if "detectors" in raw:
            detectors = strings("detectors", len(DETECTOR_IDS))
            for d in detectors:
                if d not in DETECTOR_IDS:
                    raise bad("DETECTOR_UNKNOWN", "detectors", f"{json.dumps(d)} is not a built-in detector ({', '.join(DETECTOR_IDS)})")
            rule["detectors"] = detectors
        if not has_paths and not detectors:
            raise bad("RULE_INVALID", None, 'selects nothing: give "paths", "detectors" or both')
        if "tools" in raw:
            rule["tools"] = strings("tools", 1024)
        if "seq" in raw:
            s = raw["seq"]
            if not isinstance(s, dict) or not s or any(k not in ("from", "to") for k in s) or ("from" in s and not is_seq(s["from"])) or ("to" in s and not is_seq(s["to"])):
                raise bad("RULE_INVALID", "seq", 'must be {"from": N, "to": M} (either may be left out) with non-negative integers')
            if s.get("from", 0) > s.get("to", 2**53 - 1):
                raise bad("RULE_INVALID", "seq", f"from {s['from']} is after to {s['to']}")
            rule["seq"] = {k: s[k] for k in ("from", "to") if k in s}
        if "mode" in raw:
            if raw["mode"] not in ("substring", "value"):
                raise bad("RULE_INVALID", "mode", 'must be "substring" or "value"')
            if raw["mode"] == "substring" and not detectors:
                raise bad("RULE_INVALID", "mode", '"substring" needs detectors: a path selects a whole value')
            rule["mode"] = raw["mode"]
        document["rules"].append(rule)
    return {"document": document, "digest": digest_utf8(canonical_json(document))}
