/**
 * Whether a decision's statement binds the record that carries it and the request it decides (spec/APPROVALS.md
 * §5 step 2.3): the decision, the request's step_id, seq and step hash (and a v1 statement's digest), the
 * journal's genesis and the record's ts. A signature moved onto another request, journal or decision fails here.
 * Pure.
 */
import { APPROVAL_STATEMENT_TYPE_V1, type AnyApprovalStatement } from './records.js';
import type { RequestState } from './ledger-types.js';

/** Why the statement `s` of decision record `r` (of request `ref`, state `req`) does not bind them, or null. */
export function bindingDefect(
  s: AnyApprovalStatement,
  r: Record<string, unknown>,
  ref: string | null,
  req: RequestState,
  genesisHash: string | null,
): string | null {
  const kind = r.kind === 'approval.granted' ? 'granted' : 'denied';
  // The statement binds this journal, this request and this decision: a signature moved elsewhere does not hold.
  if (s.decision !== kind)
    return `the signed decision is ${JSON.stringify(s.decision)} but the record is ${String(r.kind)}`;
  if (s.request !== ref)
    return `the signed statement is about request ${JSON.stringify(s.request)}, not the request this record names`;
  if (s.request_seq !== req.seq || s.request_hash !== req.stepHash)
    return `the signed statement names request seq ${s.request_seq} ${s.request_hash}, but the request is seq ${req.seq} ${req.stepHash}`;
  // A v2 statement binds the request by its step hash alone (which commits to what was presented, salted);
  // a v1 statement also names the request's unsalted digest, so it decides only a request that carries one.
  if (s.type === APPROVAL_STATEMENT_TYPE_V1 && req.input !== null) {
    if (req.input.digest === undefined)
      return `a ${APPROVAL_STATEMENT_TYPE_V1} statement names the presented call's unsalted digest, which this request does not carry: a request without a digest is decided by a stepchain-approval/v2 statement`;
    if (s.digest !== req.input.digest)
      return `the signed digest ${s.digest} is not the digest of what the request presented (${req.input.digest})`;
  }
  if (genesisHash !== null && s.genesis_hash !== genesisHash)
    return `the signed statement is for the journal with genesis ${s.genesis_hash}, not this one (${genesisHash})`;
  if (s.decided_at !== r.ts) return `the signed decided_at ${s.decided_at} is not the record's ts ${String(r.ts)}`;
  return null;
}
