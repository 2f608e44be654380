import base64
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VECTORS = ROOT / "vectors"


def load_vectors(name: str) -> dict:
    doc = json.loads((VECTORS / name).read_text("utf-8"))
    assert doc["format"] == "stepchain-vectors/v1"
    return doc


def vector_bytes(f: dict) -> bytes:
    return base64.b64decode(f["base64"]) if "base64" in f else f["text"].encode("utf-8")


def cases(doc: dict, pred=lambda c: True):
    return [pytest.param(c, id=c["id"]) for c in doc["cases"] if pred(c)]
