"""stepchain for Python: a writer and verifier of stepchain journals, byte-compatible with the TypeScript
implementation and held to the same spec/ and vectors/.

    import stepchain
    j = stepchain.open_journal("runs/today")      # created when absent
    j.append({"input": {"q": "weather"}, "model": "gpt-4o", "prompt": "…", "tool_call": None, "result": "sunny"})
    j.head(); j.verify().ok; j.close()
"""
from __future__ import annotations

from .chain import ChainReport, ChainVerifier, Problem, verify_chain
from .journal import AppendResult, Journal, StoreError, open_journal
from .journal_dir import verify_journal_dir
from .runtime import EffectHandle, ModelCallHandle, Run, RuntimeError_ as RunError, resume_run, start_run

__all__ = ["AppendResult", "ChainReport", "ChainVerifier", "EffectHandle", "Journal", "ModelCallHandle", "Problem", "Run", "RunError",
           "StoreError", "open_journal", "resume_run", "start_run", "verify_chain", "verify_journal_dir"]
__version__ = "0.1.0"
