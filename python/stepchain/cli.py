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
                      "warnings": [problem(p) for p in report.warnings], "problems_truncated": report.problems_truncated,
                      "notices": [problem(p) for p in getattr(report, "notices", [])]}}
    if getattr(report, "approvals", None) is not None:
        doc["report"]["approvals"] = report.approvals
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


def _read_small(path: str, limit: int) -> bytes:
    """A small input (a note, a proof file, a key) from a regular file only, at most one byte past its limit."""
    import stat as _stat
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not _stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        data = os.read(fd, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise OSError(f"{path} is larger than {limit} bytes")
    return data


def _policy(args: argparse.Namespace) -> Any:
    """The --log-key/--witness/--quorum policy (PROOFS.md §8.4), or None; a refused key or quorum is a usage error."""
    from .proofs import Policy, ProofError, parse_verifier_key
    if args.log_key is None:
        if args.witness or args.quorum is not None:
            raise _Usage("--witness and --quorum need --log-key")
        return None

    def key(text: str, option: str) -> Any:
        t = text
        if os.path.isfile(text):
            t = _read_small(text, 65536).decode("utf-8", "replace")
        try:
            return parse_verifier_key(t.strip(" \t\r\n"))
        except ProofError as e:
            raise _Usage(f"{option}: {e}") from None
    witnesses = [key(w, "--witness") for w in args.witness or []]
    if args.quorum is None:
        quorum = len(witnesses)
    elif re.fullmatch(r"0|[1-9][0-9]*", args.quorum) and int(args.quorum) <= len(witnesses):
        quorum = int(args.quorum)
    else:
        raise _Usage(f"--quorum {args.quorum!r} must be a decimal integer from 0 to the number of witnesses ({len(witnesses)})")
    return Policy(key(args.log_key, "--log-key"), witnesses, quorum)


class _Usage(Exception):
    pass


def _trusted(args: argparse.Namespace, policy: Any) -> Any:
    """--checkpoint: an earlier checkpoint, verified against the whole policy (a pin that does not verify is the caller's error)."""
    if args.checkpoint is None:
        return None
    if policy is None:
        raise _Usage("--checkpoint needs the policy that signed it (--log-key, and --witness/--quorum)")
    from .proofs import verify_checkpoint
    r = verify_checkpoint(_read_small(args.checkpoint, 1 << 20).decode("utf-8", "replace"), policy)
    if not r.ok or r.checkpoint is None:
        raise _Usage(f"--checkpoint {args.checkpoint}: " + "; ".join(f"{p.code}: {p.message}" for p in r.problems))
    return r.checkpoint


def _journal_extends(path: str, report: Any, trusted: Any) -> list[Any]:
    """PROOFS.md §9.8 step 3: the root of the journal's first T.size step hashes, from its lines."""
    from .chain import Problem
    from .formats import genesis_hash
    from .journal import Journal
    from .proofs import TreeFrontier, parse_journal_origin, step_leaf_hash
    j = Journal(path, read_only=True)
    origin = parse_journal_origin(trusted.origin)
    if origin is None or origin[1] != os.path.basename(os.path.abspath(path)) or origin[2] != genesis_hash(j.genesis):
        return [Problem("ORIGIN_MISMATCH", f"the earlier checkpoint is of {trusted.origin!r}, not of this journal", {})]
    if report.steps < trusted.size:
        return [Problem("SIZE_DECREASED", f"the earlier checkpoint has {trusted.size} steps, the journal {report.steps}: it was truncated", {})]
    t = TreeFrontier()
    for rec in j.read(0, trusted.size - 1) if trusted.size else []:
        t.append(step_leaf_hash(rec["step_hash"]))
    if t.root() != trusted.root:
        code = "FORKED" if report.steps == trusted.size else "INCONSISTENT"
        return [Problem(code, f"steps 0..{trusted.size - 1} do not have the earlier checkpoint's root: the journal was rewritten after it", {})]
    return []


def verify_main(args: argparse.Namespace) -> int:
    from .journal_dir import META_FILE, verify_journal_dir

    try:
        policy = _policy(args)
        trusted = _trusted(args, policy)
        approvers = _approver_pins(args)
    except _Usage as e:
        print(f"stepchain verify: {safe(e)}", file=sys.stderr)
        return EXIT_USAGE
    path = args.path
    if path is None:
        if args.proof is None or policy is None:
            print("stepchain verify: missing <path> (or --proof FILE with --log-key to check a proof file)", file=sys.stderr)
            return EXIT_USAGE
        from .proofs import verify_proof_document
        r = verify_proof_document(_read_small(args.proof, 4 << 20), policy, trusted)
        if args.json:
            print(json.dumps({"format": "stepchain-cli/v1", "command": "verify", "ok": r.ok, "kind": "proof", "type": r.type,
                              "problems": [{"code": p.code, "message": p.message} for p in r.problems]}, ensure_ascii=False, indent=2))
        print(("✔ proof file verifies" if r.ok else "✘ INVALID proof file: " + "; ".join(f"{p.code}: {safe(p.message)}" for p in r.problems)), file=sys.stderr)
        return EXIT_OK if r.ok else EXIT_FAILED
    if args.head is not None and not HEAD_RE.match(args.head):
        print('stepchain verify: --head must be "sha256:" followed by 64 lowercase hex digits', file=sys.stderr)
        return EXIT_USAGE
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, META_FILE)):
            print(f"stepchain verify: {safe(path)} is not a journal directory (no {META_FILE})", file=sys.stderr)
            return EXIT_USAGE
        report = verify_journal_dir(path, args.head, deep=args.deep, approvers=approvers)
        kind = "journal"
        if trusted is not None and report.ok:
            report.problems.extend(_journal_extends(path, report, trusted))
            report.ok = not report.problems
    elif os.path.isfile(path):
        from .receipt import ReceiptUnavailable, verify_receipt_file
        try:
            consistency = _read_small(args.proof, 4 << 20) if args.proof is not None else None
            tsa, cosigners, threshold = _time_pins(args)
            report = verify_receipt_file(path, public_key=args.pubkey, expect_head=args.head, policy=policy, trusted=trusted, consistency=consistency,
                                         tsa_certs=tsa, cosigners=cosigners, threshold=threshold, approvers=approvers)
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
    for line in approval_lines(getattr(report, "approvals", None)):
        print(line, file=sys.stderr)
    for w in report.warnings:
        print(f"  warning {w.code}  {safe(_where(w.location))}: {safe(w.message)}", file=sys.stderr)
    for n in getattr(report, "notices", []):
        print(f"  notice {n.code}  {safe(_where(n.location))}: {safe(n.message)}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_FAILED


def _approver_pins(args: Any) -> list[tuple[bytes, str]]:
    """--approver key files (APPROVALS.md §5 step 2.7), each named by its file name less .pub/.key; unusable: exit 2."""
    from .receipt import decode_public_key, key_id_of
    pins: list[tuple[bytes, str]] = []
    for f in args.approver or []:
        key, why = decode_public_key(_read_small(f, 65536))
        if key is None:
            raise _Usage(f"KEY_INVALID: --approver {f}: {why}")
        if any(key_id_of(k) == key_id_of(key) for k, _ in pins):
            raise _Usage(f"--approver {f}: the same key is given twice")
        name = os.path.basename(f)
        for ext in (".pub", ".key"):
            name = name[:-len(ext)] if name.endswith(ext) else name
        pins.append((key, name))
    return pins


def approval_lines(approvals: Any) -> list[str]:
    """One line per approval request (APPROVALS.md §6): its decision, by whom, and whether and where it was executed."""
    out = []
    for a in approvals or []:
        tool = "a call" if a["tool"] is None else safe(a["tool"])
        who = ""
        if a["approver"] is not None:
            ap = a["approver"]
            who = (f" by {safe(ap['name'] or ap['keyid'])} (pinned)" if ap["pinned"] else
                   f" by key {ap['keyid']}{'' if ap['name'] is None else ' calling itself ' + safe(json.dumps(ap['name'], ensure_ascii=False))} (not pinned)")
        # An unchecked request (APPROVALS.md §5 step 5) is never shown as proven executed or not: the same words
        # as the TypeScript CLI and the page.
        if a.get("unchecked"):
            effect = (", no effect found, not proven (APPROVAL_UNCHECKED: some records could not be checked)"
                      if a["effect_seq"] is None
                      else f", an effect begun at seq {a['effect_seq']}, not checked against the call (APPROVAL_UNCHECKED)")
        else:
            effect = ((", not executed" if a["status"] == "granted" else ", never executed") if a["effect_seq"] is None
                      else f", executed at seq {a['effect_seq']}")
        word = {"granted": "approved", "denied": "denied"}.get(a["status"], a["status"])
        at = "" if a["decision_seq"] is None else f" at seq {a['decision_seq']}"
        out.append(f"  {word:<8} {tool} (request {safe(a['request'])}, seq {a['request_seq']}){who}{at}{effect}")
    return out


def _time_pins(args: Any) -> tuple[list[Any], list[Any], Optional[int]]:
    """--tsa-cert, --cosigner and --threshold (TIME.md §4.2, §7.2): an unusable pin is the caller's error (exit 2)."""
    from .attest import AttestError, Cosigner, load_tsa_certificate
    from .receipt import ReceiptUnavailable, decode_public_key
    certs, cosigners = [], []
    for f in args.tsa_cert or []:
        try:
            certs.append(load_tsa_certificate(_read_small(f, 1 << 20)))
        except AttestError as e:
            raise ReceiptUnavailable(f"--tsa-cert {f}: {e}") from None
    for f in args.cosigner or []:
        key, why = decode_public_key(_read_small(f, 65536))
        if key is None:
            raise ReceiptUnavailable(f"KEY_INVALID: --cosigner {f}: {why}")
        c = Cosigner(os.path.splitext(os.path.basename(f))[0], key)
        if any(x.key_id == c.key_id for x in cosigners):
            raise ReceiptUnavailable(f"--cosigner {f}: this key is given twice; a threshold counts distinct keys")
        cosigners.append(c)
    threshold = None
    if args.threshold is not None:
        if not re.fullmatch(r"[1-9][0-9]{0,5}", args.threshold) or not cosigners:
            raise ReceiptUnavailable("--threshold must be a positive integer, with --cosigner keys")
        threshold = int(args.threshold)
    return certs, cosigners, threshold


def main(argv: Optional[list[str]] = None) -> int:
    parser = _Parser(prog="python -m stepchain", description="stepchain for Python: verify journals and receipts offline")
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify a journal directory or a receipt offline")
    v.add_argument("path", nargs="?")
    v.add_argument("--head", help="the head you expect (obtained out of band); a different head fails")
    v.add_argument("--pubkey", help="receipts: the signer's public key file (base64 of the 32 key bytes, or the 32 raw bytes)")
    v.add_argument("--json", action="store_true", help="write one JSON document to stdout")
    v.add_argument("--log-key", help="the log's verifier key (vkey text or a file holding it): the policy checkpoints must satisfy")
    v.add_argument("--witness", action="append", help="a witness's verifier key (repeatable)")
    v.add_argument("--quorum", help="how many witnesses must cosign (default: all given)")
    v.add_argument("--checkpoint", help="an earlier signed checkpoint the journal or receipt must extend")
    v.add_argument("--proof", help="a proof file: alone, check it; with a receipt and --checkpoint, the consistency proof")
    v.add_argument("--tsa-cert", action="append", help="receipts: a time-stamping authority's certificate (PEM or DER), repeatable (TIME.md)")
    v.add_argument("--cosigner", action="append", help="receipts: a co-signer's public key file (as --pubkey), repeatable; named by its file name")
    v.add_argument("--threshold", help="how many of the --cosigner keys must have signed (default: all of them)")
    v.add_argument("--deep", action="store_true", help="stepchain/v3: the deep tier too (every root from its values, every part's address)")
    v.add_argument("--approver", action="append", help="stepchain/v3: an approver's public key file (as --pubkey), repeatable; decisions "
                   "signed by them are authenticated, any other signer fails (APPROVER_UNKNOWN; spec/APPROVALS.md); named by its file name")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else EXIT_USAGE
    try:
        return verify_main(args)
    except OSError as e:
        print(f"stepchain {args.command}: {safe(e)}", file=sys.stderr)
        return EXIT_USAGE
