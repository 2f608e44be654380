"""The journal formats this implementation reads, chosen by the genesis `format` (spec/FORMAT.md §6.1, §10).
Adding a format (stepchain/v3) is one more module and one entry in FORMATS."""
from __future__ import annotations

import json
from typing import Any, Optional

from ..canonical import canonical_json, digest_utf8
from .base import JournalFormat, RecordProfile
from .v1 import FORMAT_V1, JOURNAL_V1
from .v2 import FORMAT_V2, JOURNAL_V2
from .v3 import FORMAT_V3, JOURNAL_V3

FORMATS: list[JournalFormat] = [JOURNAL_V1, JOURNAL_V2, JOURNAL_V3]
DEFAULT_FORMAT = FORMATS[0]
# The format of new run journals (start_run, the pydantic-ai store, open_journal with a run): FORMAT.md §10.
NEW_RUN_FORMAT = FORMAT_V3

__all__ = ["FORMATS", "DEFAULT_FORMAT", "NEW_RUN_FORMAT", "FORMAT_V1", "FORMAT_V2", "FORMAT_V3", "JournalFormat", "RecordProfile", "journal_format",
           "format_of", "genesis_defect", "genesis_hash"]


def journal_format(name: Any) -> Optional[JournalFormat]:
    return next((f for f in FORMATS if f.format == name), None)


def format_of(genesis: Any) -> JournalFormat:
    return (journal_format(genesis.get("format")) if isinstance(genesis, dict) else None) or DEFAULT_FORMAT


def genesis_defect(value: Any) -> Optional[str]:
    if not isinstance(value, dict):
        return "the genesis must be a JSON object"
    fmt = journal_format(value.get("format"))
    if fmt is not None:
        return fmt.genesis_defect(value)
    keys = sorted(value)
    if not any(f.genesis_members == keys for f in FORMATS):
        return DEFAULT_FORMAT.genesis_defect(value)
    return f"unsupported genesis format {json.dumps(value.get('format'))}; this verifier reads {', '.join(f.format for f in FORMATS)}"


def genesis_hash(genesis: dict[str, Any]) -> str:
    return digest_utf8(canonical_json(genesis))
