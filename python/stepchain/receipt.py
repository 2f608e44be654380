"""Receipts (spec/RECEIPT.md): not yet implemented in the Python package."""
from __future__ import annotations

from typing import Any, Optional


class ReceiptUnavailable(Exception):
    pass


def verify_receipt_file(path: str, public_key: Optional[str] = None, expect_head: Optional[str] = None) -> Any:
    raise ReceiptUnavailable("receipt verification is not implemented in the Python package yet; use the TypeScript CLI")
