/**
 * The chain-level check of approval records (spec/APPROVALS.md §5), fed every approval record and every
 * tool.started record in chain order: requests, the signed decisions on them, and the effects begun for
 * them. The verifier reports its findings; the runtime asks it where a request stands before it begins an
 * effect, so both read the rules from one place. Holds the requests seen (a handful), never the lines.
 * Pure; never throws on hostile input.
 */
import { keyIdOf } from '../crypto/ed25519.js';
import {
  APPROVAL_DENIED, APPROVAL_GRANTED, APPROVAL_REQUESTED, decisionMetaDefect, instant, presentedDigest, requestInputDefect, statementDefect,
  type ApprovalStatement, type DecisionMeta, type PresentedCall, type RequestInput,
} from './records.js';
import { approvalSignatureDefect } from './sign.js';

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
  /** The step_id and seq of the effect begun for it, if any. */
  effect: string | null;
  effect_seq: number | null;
}

interface RequestState {
  seq: number;
  stepHash: string;
  input: RequestInput | null;
  /** Values are withheld or parts (a publication): what was presented cannot be compared. */
  hidden: boolean;
  decision: { kind: 'granted' | 'denied'; seq: number; ts: string; approver: ApproverFacts; reason: string | null } | null;
  effect: { id: string; seq: number } | null;
}

type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Whether a value holds a reserved marker (withheld, chunks, part, erased): its true value is not in hand. */
function hasMarker(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (Array.isArray(v)) return v.some((x) => hasMarker(x, depth + 1));
  if (!isObj(v)) return false;
  for (const k of Object.keys(v)) if (k.startsWith('$stepchain:') || hasMarker(v[k], depth + 1)) return true;
  return false;
}

export interface ApprovalLedgerOptions {
  /** The journal's genesis hash, which every decision's statement must name; null when the range does not start at the genesis. */
  genesisHash: string | null;
  /** The chain is a range that starts after seq 0: a request before it is outside, not missing. */
  partial?: boolean;
  approvers?: readonly PinnedApprover[];
}

export class ApprovalLedger {
  private readonly requests = new Map<string, RequestState>();
  private readonly findings: ApprovalFinding[] = [];
  private readonly pins = new Map<string, string | null>();
  private readonly unpinned = new Map<string, { seq: number; name: string | null }>();

  constructor(private readonly options: ApprovalLedgerOptions) {
    for (const p of options.approvers ?? []) this.pins.set(keyIdOf(p.key), p.name ?? null);
  }

  /** Whether the chain holds any approval request so far (until then, effects need no check). */
  get active(): boolean {
    return this.requests.size > 0;
  }

  private add(code: ApprovalFinding['code'], message: string, seq: number, field: string, notice = false): void {
    this.findings.push({ code, message, seq, field, ...(notice ? { notice: true as const } : {}) });
  }

  /** One record, parsed, in chain order. Records of other kinds are ignored. */
  record(r: Rec): void {
    const seq = typeof r.seq === 'number' ? r.seq : -1;
    if (r.kind === APPROVAL_REQUESTED) this.request(r, seq);
    else if (r.kind === APPROVAL_GRANTED || r.kind === APPROVAL_DENIED) this.decision(r, seq);
    else if (r.kind === 'tool.started' && this.requests.size > 0) this.effect(r, seq);
  }

  private request(r: Rec, seq: number): void {
    const id = String(r.step_id);
    if (this.requests.has(id)) {
      this.add('APPROVAL_INVALID', `seq ${seq}: approval request ${JSON.stringify(id)} repeats the step_id of the request at seq ${this.requests.get(id)!.seq}: a request is named by its step_id, so each is unique`, seq, 'step_id');
      return;
    }
    const hidden = hasMarker(r.input);
    const why = hidden ? null : requestInputDefect(r.input);
    if (why !== null) this.add('APPROVAL_INVALID', `seq ${seq}: approval request ${JSON.stringify(id)}: ${why}`, seq, 'input');
    if (hidden) this.add('APPROVAL_UNCHECKED', `seq ${seq}: approval request ${JSON.stringify(id)} has withheld or stored-apart values: what was presented is not compared`, seq, 'input', true);
    const input = why === null && !hidden ? (r.input as unknown as RequestInput) : null;
    this.requests.set(id, { seq, stepHash: String(r.step_hash), input, hidden, decision: null, effect: null });
  }

  private decision(r: Rec, seq: number): void {
    const kind = r.kind === APPROVAL_GRANTED ? 'granted' : 'denied';
    const ref = typeof r.ref === 'string' ? r.ref : null;
    const req = ref === null ? undefined : this.requests.get(ref);
    const bad = (why: string, field = 'input'): void => this.add('APPROVAL_INVALID', `seq ${seq}: ${r.kind as string} of request ${JSON.stringify(ref)}: ${why}`, seq, field);
    if (req === undefined) {
      if (this.options.partial === true) this.add('APPROVAL_UNCHECKED', `seq ${seq}: ${r.kind as string} names request ${JSON.stringify(ref)}, which is not in this range`, seq, 'ref', true);
      else bad('ref names no approval request earlier in this chain', 'ref');
      return;
    }
    if (hasMarker(r.input) || hasMarker(r.meta)) {
      this.add('APPROVAL_UNCHECKED', `seq ${seq}: the decision on ${JSON.stringify(ref)} has withheld values: its signature is not checked`, seq, 'input', true);
      return;
    }
    const why = statementDefect(r.input) ?? decisionMetaDefect(r.meta);
    if (why !== null) return bad(why, why.startsWith('meta') ? 'meta' : 'input');
    const s = r.input as unknown as ApprovalStatement;
    const meta = r.meta as unknown as DecisionMeta;
    // The statement binds this journal, this request and this decision: a signature moved elsewhere does not hold.
    if (s.decision !== kind) return bad(`the signed decision is ${JSON.stringify(s.decision)} but the record is ${r.kind as string}`);
    if (s.request !== ref) return bad(`the signed statement is about request ${JSON.stringify(s.request)}, not the request this record names`);
    if (s.request_seq !== req.seq || s.request_hash !== req.stepHash) return bad(`the signed statement names request seq ${s.request_seq} ${s.request_hash}, but the request is seq ${req.seq} ${req.stepHash}`);
    if (req.input !== null && s.digest !== req.input.digest) return bad(`the signed digest ${s.digest} is not the digest of what the request presented (${req.input.digest})`);
    if (this.options.genesisHash !== null && s.genesis_hash !== this.options.genesisHash) return bad(`the signed statement is for the journal with genesis ${s.genesis_hash}, not this one (${this.options.genesisHash})`);
    if (s.decided_at !== r.ts) return bad(`the signed decided_at ${s.decided_at} is not the record's ts ${String(r.ts)}`);
    const sigWhy = approvalSignatureDefect(s, meta);
    if (sigWhy !== null) return bad(`the approver's signature does not hold: ${sigWhy}`, 'meta');
    const approver = this.approverOf(meta, seq);
    if (req.decision !== null) {
      this.add('APPROVAL_REPEATED', `seq ${seq}: request ${JSON.stringify(ref)} was already ${req.decision.kind} at seq ${req.decision.seq}: one decision per request, this one does not count`, seq, 'ref');
      return;
    }
    const expires = req.input === null ? null : instant(req.input.expires_at);
    if (expires !== null && instant(s.decided_at)! > expires) {
      this.add('APPROVAL_EXPIRED', `seq ${seq}: request ${JSON.stringify(ref)} expired at ${req.input!.expires_at}, before this decision (${s.decided_at}): it does not count`, seq, 'input');
      return;
    }
    if (approver.pinned === false && this.pins.size > 0) {
      this.add('APPROVER_UNKNOWN', `seq ${seq}: request ${JSON.stringify(ref)} was ${kind} by key ${meta.approver.keyid}${meta.approver.name === null ? '' : ` (calling itself ${JSON.stringify(meta.approver.name)})`}, which is none of the pinned approvers`, seq, 'meta');
    }
    req.decision = { kind, seq, ts: s.decided_at, approver, reason: s.reason };
  }

  private approverOf(meta: DecisionMeta, seq: number): ApproverFacts {
    const keyid = meta.approver.keyid;
    if (this.pins.has(keyid)) return { keyid, name: this.pins.get(keyid) ?? meta.approver.name, pinned: true };
    // With pins, an unpinned signer is a problem (APPROVER_UNKNOWN), not a notice.
    if (this.pins.size === 0 && !this.unpinned.has(keyid)) this.unpinned.set(keyid, { seq, name: meta.approver.name });
    return { keyid, name: meta.approver.name, pinned: false };
  }

  private effect(r: Rec, seq: number): void {
    const id = String(r.step_id);
    const named = isObj(r.meta) && isObj(r.meta.approval) ? r.meta.approval : null;
    const call = isObj(r.tool_call) ? r.tool_call : null;
    const hidden = call === null || hasMarker(call.name) || hasMarker(call.arguments);
    let digest: string | null = null;
    if (!hidden) {
      try {
        digest = presentedDigest({ name: call.name, arguments: call.arguments } as PresentedCall);
      } catch {
        digest = null;
      }
    }
    if (named === null) {
      if (digest === null) return;
      for (const [rid, req] of this.requests) {
        if (req.input?.digest === digest) {
          this.add('APPROVAL_MISSING', `seq ${seq}: effect ${JSON.stringify(id)} begins the call presented by approval request ${JSON.stringify(rid)} (seq ${req.seq}) without naming it (meta.approval): a call that was put to an approver is begun only for its granted request`, seq, 'meta');
          return;
        }
      }
      return;
    }
    const rid = typeof named.request === 'string' ? named.request : null;
    const req = rid === null ? undefined : this.requests.get(rid);
    if (req === undefined) {
      if (this.options.partial === true) this.add('APPROVAL_UNCHECKED', `seq ${seq}: effect ${JSON.stringify(id)} names approval request ${JSON.stringify(rid)}, which is not in this range`, seq, 'meta', true);
      else this.add('APPROVAL_MISSING', `seq ${seq}: effect ${JSON.stringify(id)} names approval request ${JSON.stringify(rid)}, which is no request earlier in this chain`, seq, 'meta');
      return;
    }
    if (named.request_hash !== req.stepHash) {
      this.add('APPROVAL_MISMATCH', `seq ${seq}: effect ${JSON.stringify(id)} names request ${JSON.stringify(rid)} with step hash ${String(named.request_hash)}, but that request is ${req.stepHash}`, seq, 'meta');
      return;
    }
    const d = req.decision;
    const expires = req.input === null ? null : instant(req.input.expires_at);
    if (d?.kind === 'denied') {
      this.add('APPROVAL_DENIED', `seq ${seq}: effect ${JSON.stringify(id)} was begun for request ${JSON.stringify(rid)}, which was denied at seq ${d.seq}${d.approver.name === null ? '' : ` by ${d.approver.name}`}`, seq, 'meta');
      return;
    }
    if (expires !== null && (instant(r.ts) ?? Infinity) > expires) {
      this.add('APPROVAL_EXPIRED', `seq ${seq}: effect ${JSON.stringify(id)} was begun at ${String(r.ts)}, after request ${JSON.stringify(rid)} expired (${req.input!.expires_at})`, seq, 'ts');
      return;
    }
    if (d === null) {
      this.add('APPROVAL_MISSING', `seq ${seq}: effect ${JSON.stringify(id)} was begun for request ${JSON.stringify(rid)}, which no valid decision granted before it`, seq, 'meta');
      return;
    }
    if (req.effect !== null) {
      this.add('APPROVAL_REPEATED', `seq ${seq}: effect ${JSON.stringify(id)} uses the grant of request ${JSON.stringify(rid)} a second time (effect ${JSON.stringify(req.effect.id)} at seq ${req.effect.seq} used it): one grant, one effect`, seq, 'meta');
      return;
    }
    req.effect = { id, seq };
    if (req.input !== null && digest !== null && digest !== req.input.digest) {
      this.add('APPROVAL_MISMATCH', `seq ${seq}: effect ${JSON.stringify(id)} executes a call (digest ${digest}) other than the one presented by request ${JSON.stringify(rid)} and granted (digest ${req.input.digest}): the tool name or arguments were changed after approval`, seq, 'tool_call');
    } else if (req.input === null || digest === null) {
      if (!req.hidden && !hidden && req.input === null) return;
      this.add('APPROVAL_UNCHECKED', `seq ${seq}: effect ${JSON.stringify(id)}'s call or its request's presentation is withheld: they are not compared`, seq, 'tool_call', true);
    }
  }

  /** What request `id` presented, as recorded (null for a malformed or withheld one). */
  presented(id: string): RequestInput | null {
    return this.requests.get(id)?.input ?? null;
  }

  /** Where a request stands now (the runtime's question), or undefined for no such request. */
  state(id: string, now?: number): ApprovalEntry | undefined {
    const req = this.requests.get(id);
    return req === undefined ? undefined : this.entry(id, req, now);
  }

  private entry(id: string, req: RequestState, now?: number): ApprovalEntry {
    const d = req.decision;
    const expires = req.input === null ? null : instant(req.input.expires_at);
    const status = req.input === null && !req.hidden ? 'invalid' : d !== null ? d.kind : expires !== null && now !== undefined && now > expires ? 'expired' : 'pending';
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
      effect: req.effect?.id ?? null,
      effect_seq: req.effect?.seq ?? null,
    };
  }

  /** Every request in chain order, with what became of it by `now` (ms; default: expiry is not applied). */
  entries(now?: number): ApprovalEntry[] {
    return [...this.requests].map(([id, req]) => this.entry(id, req, now));
  }

  /** The findings once the chain is read: problems, then a notice per unpinned approver. */
  finish(): ApprovalFinding[] {
    const out = [...this.findings];
    for (const [keyid, u] of this.unpinned) {
      out.push({ code: 'APPROVER_UNPINNED', message: `decisions signed by key ${keyid}${u.name === null ? '' : ` (calling itself ${JSON.stringify(u.name)})`} are intact but not authenticated: pin the approver's public key (--approver KEY) to tie them to a person`, seq: u.seq, field: 'meta', notice: true });
    }
    return out;
  }
}
