/**
 * The shapes the approval check reports and keeps (spec/APPROVALS.md §5, §6): its findings, the verdict's
 * entry per request (and how it is built from a request's state), a request's state while the chain is read,
 * and the ledger's options. Pure.
 */
import { instant, type RequestInput } from './records.js';

export type ApprovalProblemCode =
  | 'APPROVAL_INVALID'
  | 'APPROVAL_MISMATCH'
  | 'APPROVAL_MISSING'
  | 'APPROVAL_DENIED'
  | 'APPROVAL_EXPIRED'
  | 'APPROVAL_REPEATED'
  | 'APPROVER_UNKNOWN';
export type ApprovalNoticeCode = 'APPROVER_UNPINNED' | 'APPROVAL_UNCHECKED';

export interface ApprovalFinding {
  code: ApprovalProblemCode | ApprovalNoticeCode;
  message: string;
  seq: number;
  field: string;
  /** A notice (never a failure). */
  notice?: true;
}

/** A pinned approver: a key whose decisions authenticate, and the name the verdict gives it. */
export interface PinnedApprover {
  key: Uint8Array;
  name?: string;
}

/** Who decided, as the verdict names them. */
export interface ApproverFacts {
  keyid: string;
  /** The pinned name, else the name the approver gave itself (unauthenticated), else null. */
  name: string | null;
  /** Whether the key is one of the pinned approvers. */
  pinned: boolean;
}

/** One request and what became of it (the verdict's "who approved what"). */
export interface ApprovalEntry {
  request: string;
  request_seq: number;
  request_hash: string;
  tool: string | null;
  digest: string | null;
  expires_at: string | null;
  status: 'pending' | 'granted' | 'denied' | 'expired' | 'invalid';
  decision_seq: number | null;
  decided_at: string | null;
  approver: ApproverFacts | null;
  reason: string | null;
  /** The step_id and seq of the effect that ran for it (§6: one that counted, else the first begun, counted or not), if any. */
  effect: string | null;
  effect_seq: number | null;
  /**
   * Present (true) when the chain holds what could not be checked against this request (APPROVAL_UNCHECKED:
   * a withheld or erased call, decision or request): "executed" or "never executed" is then not proven.
   */
  unchecked?: true;
}

export interface RequestState {
  seq: number;
  stepHash: string;
  input: RequestInput | null;
  /** The presented call's canonical text with part references reduced to their addresses, or null (withheld, malformed). */
  form: string | null;
  /** Values are withheld or erased (a publication, an erasure): what was presented cannot be compared. */
  hidden: boolean;
  /**
   * The request's `expires_at` as checked (§5 step 3, step 2.6): null for none, undefined when it is not in hand
   * (withheld or erased, on its own or with the whole `input`), so that an expiry check is reported unchecked.
   */
  expiresAt: string | null | undefined;
  unchecked: boolean;
  decision: {
    kind: 'granted' | 'denied';
    seq: number;
    ts: string;
    approver: ApproverFacts;
    reason: string | null;
  } | null;
  effect: { id: string; seq: number } | null;
  /** A record that ran the presented call, naming no request, before the request was made (§5 step 4). */
  ranBefore: { id: string; seq: number } | null;
  /** The first effect begun naming it (or, naming no request earlier, its presented call) that did not count (§6). */
  claimed: { id: string; seq: number } | null;
}

export interface ApprovalLedgerOptions {
  /** The journal's genesis hash, which every decision's statement must name; null when the range does not start at the genesis. */
  genesisHash: string | null;
  /** The chain is a range that starts after seq 0: a request before it is outside, not missing. */
  partial?: boolean;
  /** Steps may follow the range (a receipt): a request with no effect found is not proven never executed (§5 step 5). */
  openEnd?: boolean;
  approvers?: readonly PinnedApprover[];
  /**
   * The chain is a fork whose steps 0..forkedAt were copied from its parent (FILE-STORE.md lineage): a request
   * in that prefix does not authorise an effect after it (APPROVALS.md §5 step 3), since the parent holds the same
   * request and any decision on it is the parent's too.
   */
  forkedAt?: number;
}

/** What became of request `id` by `now` (§6); `unproven`: an effect not found does not prove none ran (§5 step 5). */
export function entryOf(id: string, req: RequestState, now: number | undefined, unproven: boolean): ApprovalEntry {
  const d = req.decision;
  // The effect that counted, else the record that ran the call before the request, else the first effect begun for it.
  const ran = req.effect ?? req.ranBefore ?? req.claimed;
  const expires = req.input === null ? null : instant(req.input.expires_at);
  const status =
    req.input === null && !req.hidden
      ? 'invalid'
      : d !== null
        ? d.kind
        : expires !== null && now !== undefined && now > expires
          ? 'expired'
          : 'pending';
  return {
    request: id,
    request_seq: req.seq,
    request_hash: req.stepHash,
    tool: req.input?.presented.name ?? null,
    digest: req.input?.digest ?? null,
    expires_at: req.input?.expires_at ?? null,
    status,
    decision_seq: d?.seq ?? null,
    decided_at: d?.ts ?? null,
    approver: d?.approver ?? null,
    reason: d?.reason ?? null,
    effect: ran?.id ?? null,
    effect_seq: ran?.seq ?? null,
    ...(req.unchecked || (ran === null && unproven) ? { unchecked: true as const } : {}),
  };
}
