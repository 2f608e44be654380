"""stepchain for Python: a writer and verifier of stepchain journals, byte-compatible with the TypeScript
implementation and held to the same spec/ and vectors/."""
from __future__ import annotations

from .chain import ChainReport, ChainVerifier, Problem, verify_chain

__all__ = ["ChainReport", "ChainVerifier", "Problem", "verify_chain"]
