"""`python -m stepchain verify`: a journal directory (or a receipt) verified offline, with the TypeScript CLI's
exit codes — 0 valid, 1 invalid, 2 usage or I/O error. `--json` writes one document to stdout; people's text goes
to stderr, with control characters from content escaped."""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from typing import Any, Optional

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
HEAD_RE = re.compile(r"sha256:[0-9a-f]{64}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe(text: Any) -> str:
    """People-facing text without raw control characters (each shown as \\u escape)."""
    return _CONTROL.sub(lambda m: "\\u%04x" % ord(m.group(0)), str(text))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # usage errors exit 2, as the TypeScript CLI's do
        self.print_usage(sys.stderr)
        print(f"stepchain: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _report_doc(kind: str, path: str, report: Any, extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    def problem(p: Any) -> dict[str, Any]:
        return {"code": p.code, "message": p.message, "location": p.location}
    doc = {"format": "stepchain-cli/v1", "command": "verify", "ok": report.ok, "kind": kind, "path": path,
           "report": {"ok": report.ok, "start_hash": report.start_hash, "start_seq": report.start_seq, "head": report.head,
                      "head_seq": report.head_seq, "steps": report.steps, "problems": [problem(p) for p in report.problems],
                      "warnings": [problem(p) for p in report.warnings], "problems_truncated": report.problems_truncated}}
    if extra:
        doc.update(extra)
    return doc


def _where(loc: dict[str, Any]) -> str:
    parts = []
    if "file" in loc:
        parts.append(str(loc["file"]) + (f":{loc['line']}" if "line" in loc else "") + (f":{loc['column']}" if "column" in loc else ""))
    elif "line" in loc:
        parts.append(f"line {loc['line']}")
    if "seq" in loc:
        parts.append(f"seq {loc['seq']}")
    if "field" in loc:
        parts.append(f"field {loc['field']}")
    return ", ".join(parts)


def verify_main(args: argparse.Namespace) -> int:
    from .journal_dir import META_FILE, verify_journal_dir

    path = args.path
    if args.head is not None and not HEAD_RE.match(args.head):
        print('stepchain verify: --head must be "sha256:" followed by 64 lowercase hex digits', file=sys.stderr)
        return EXIT_USAGE
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, META_FILE)):
            print(f"stepchain verify: {safe(path)} is not a journal directory (no {META_FILE})", file=sys.stderr)
            return EXIT_USAGE
        report = verify_journal_dir(path, args.head)
        kind = "journal"
    elif os.path.isfile(path):
        from .receipt import ReceiptUnavailable, verify_receipt_file
        try:
            report = verify_receipt_file(path, public_key=args.pubkey, expect_head=args.head)
        except ReceiptUnavailable as e:
            print(f"stepchain verify: {safe(e)}", file=sys.stderr)
            return EXIT_USAGE
        kind = "receipt"
    else:
        print(f"stepchain verify: {safe(path)}: no such journal directory or receipt file", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(json.dumps(_report_doc(kind, path, report), ensure_ascii=False, indent=2))
    if report.ok:
        print(f"✔ {kind} {safe(path)}: {report.steps} steps, head {report.head} (seq {report.head_seq})", file=sys.stderr)
    else:
        print(f"✘ INVALID {kind} {safe(path)}: {len(report.problems)} problem(s)", file=sys.stderr)
        for p in report.problems:
            print(f"  {p.code}  {safe(_where(p.location))}: {safe(p.message)}", file=sys.stderr)
    for w in report.warnings:
        print(f"  warning {w.code}  {safe(_where(w.location))}: {safe(w.message)}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


def main(argv: Optional[list[str]] = None) -> int:
    parser = _Parser(prog="python -m stepchain", description="stepchain for Python: verify journals and receipts offline")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify a journal directory or a receipt offline")
    v.add_argument("path")
    v.add_argument("--head", help="the head you expect (obtained out of band); a different head fails")
    v.add_argument("--pubkey", help="receipts: the signer's public key file (base64 of the 32 key bytes, or the 32 raw bytes)")
    v.add_argument("--json", action="store_true", help="write one JSON document to stdout")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    try:
        return verify_main(args)
    except OSError as e:
        print(f"stepchain {args.command}: {safe(e)}", file=sys.stderr)
        return EXIT_USAGE
