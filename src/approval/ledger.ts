/**
 * The chain-level check of approval records (spec/APPROVALS.md §5), fed every approval record and every
 * tool.started record in chain order: requests, the signed decisions on them, and the effects begun for
 * them. The verifier reports its findings; the runtime asks it where a request stands before it begins an
 * effect, so both read the rules from one place. Holds the requests seen (a handful), never the lines.
 * Pure; never throws on hostile input.
 */
import { EFFECT_EXTRA_MEMBERS, PART, callForm, callIsHidden, hasHidden, hasMarker, type StoredKey } from './calls.js';
import { OUTCOME_KINDS, carriedCalls, otherTool } from './carried.js';
import { keyIdOf } from '../crypto/ed25519.js';
import { HiddenStarts } from './hidden-starts.js';
import { EarlierCalls } from './earlier-calls.js';
import {
  APPROVAL_DENIED,
  APPROVAL_GRANTED,
  APPROVAL_REQUESTED,
  decisionMetaDefect,
  instant,
  partedRequestDefect,
  requestInputDefect,
  statementDefect,
  type AnyApprovalStatement,
  type DecisionMeta,
  type RequestInput,
} from './records.js';
import { approvalSignatureDefect } from './sign.js';
import { bindingDefect } from './binding.js';
import type {
  ApprovalEntry,
  ApprovalFinding,
  ApprovalLedgerOptions,
  ApproverFacts,
  RequestState,
} from './ledger-types.js';
import * as says from './ledger-messages.js';
import * as effects from './effect-messages.js';
import { entryOf } from './ledger-types.js';
import { Findings } from './findings.js';
import { RequestIndex } from './request-index.js';
export type {
  ApprovalProblemCode,
  ApprovalNoticeCode,
  ApprovalFinding,
  PinnedApprover,
  ApproverFacts,
  ApprovalEntry,
  ApprovalLedgerOptions,
} from './ledger-types.js';
type Rec = Record<string, unknown>;
const isObj = (v: unknown): v is Rec => v !== null && typeof v === 'object' && !Array.isArray(v);

export class ApprovalLedger {
  private readonly requests = new Map<string, RequestState>();
  private readonly index = new RequestIndex();
  private readonly findings = new Findings();
  /** Starts whose meta is withheld or erased, and the grants they may have used (§5 step 5). */
  readonly hidden = new HiddenStarts(this.findings);
  private readonly pins = new Map<string, string | null>();
  private readonly unpinned = new Map<string, { seq: number; name: string | null }>();
  /** An effect or record whose call could not be checked against the requests: "never executed" is not proven. */
  private uncheckedCalls = false;
  /** The latest ts read so far, of any record (chain order): an effect is no earlier than a record before it (§5 step 3). */
  private latest = '';
  /** Per start that named a request or ran a presented call, the call its outcomes repeat (its own, else its request's). */
  private readonly begun = new Map<string, string | null>();
  /** Calls recorded before the requests that present them (§5 step 4). */
  private readonly ran = new EarlierCalls();
  /** Per call, the first start naming a request not (yet) in the chain: a later request presenting it names it (§6). */
  private readonly namedAhead = new Map<string, { id: string; seq: number }>();
  /** The first call so far whose name or arguments are withheld or erased, naming no request: it could be any call. */
  private hiddenCall: { id: string; seq: number } | null = null;
  /** Whether the chain holds an approval record (the report lists requests only then). */
  private seen = false;

  constructor(private readonly options: ApprovalLedgerOptions) {
    for (const p of options.approvers ?? []) this.pins.set(keyIdOf(p.key), p.name ?? null);
  }

  /** Whether the chain holds any approval request so far. */
  get active(): boolean {
    return this.requests.size > 0;
  }

  /** Whether the chain held any approval record (a request or a decision): the report then lists the requests. */
  get anySeen(): boolean {
    return this.seen;
  }

  private add(code: ApprovalFinding['code'], message: string, seq: number, field: string, notice = false): void {
    this.findings.push({ code, message, seq, field, ...(notice ? { notice: true as const } : {}) });
  }

  /** One record, parsed, in chain order. Records of other kinds are ignored. */
  record(r: Rec): void {
    const seq = typeof r.seq === 'number' ? r.seq : -1;
    if (typeof r.kind === 'string' && r.kind.startsWith('approval.')) this.seen = true;
    if (r.kind === APPROVAL_REQUESTED) this.request(r, seq);
    else if (r.kind === APPROVAL_GRANTED || r.kind === APPROVAL_DENIED) this.decision(r, seq);
    else if (r.kind === 'tool.started') this.effect(r, seq);
    else this.carried(r, seq);
    this.dated(r.ts);
  }

  /** An outcome naming a request as its start ran its call, begun by no effect naming it (§5 step 4). */
  private outcomeOfRequest(r: Rec, seq: number): void {
    const req = OUTCOME_KINDS.has(String(r.kind)) && typeof r.ref === 'string' ? this.requests.get(r.ref) : undefined;
    if (req === undefined) return;
    req.effect ??= { id: String(r.step_id), seq };
    this.add('APPROVAL_MISSING', says.outcomeOfRequestMessage(r, seq, req.seq), seq, 'ref');
  }

  /**
   * A record carrying calls run without naming a request (carried.ts): a start or step, an outcome, a record of
   * any other kind. An outcome naming a start that named a request, or that ran a request's call, repeats that
   * call; any other call it carries ran too, and is compared as a call naming no request (§5 step 4).
   */
  private carried(r: Rec, seq: number): void {
    this.outcomeOfRequest(r, seq);
    const c = carriedCalls(r);
    if (c === null) return;
    const began = c.start === null ? undefined : this.begun.get(c.start);
    for (const call of c.calls) {
      if (began === undefined && this.hidden.outcome(r, seq, c.start, this.requests.size)) continue;
      if (began === undefined || callIsHidden(call)) {
        this.unnamed(r, seq, call);
        continue;
      }
      const form = callForm(call.name, call.arguments);
      if (form === began || this.unnamed(r, seq, call, otherTool(call, began)) || !('arguments' in call)) continue;
      this.add(
        'APPROVAL_MISMATCH',
        `seq ${seq}: ${String(r.kind)} ${JSON.stringify(String(r.step_id))} names start ${JSON.stringify(c.start)}, whose call was compared with an approval request's, but carries another call: an outcome carries the call its start began`,
        seq,
        'tool_call',
      );
    }
  }

  /** The ts of a record that carries no call, read from its stored line (chain order, §5 step 3). */
  datedText(ts: string): void {
    this.dated(ts);
  }

  /** A record's call read from its stored line (calls.ts storedCall; its form's storedKey) while no request is held. */
  storedCall(idText: string, seq: number, ts: string, key: StoredKey): void {
    if (this.requests.size === 0) this.ran.stored(idText, seq, key.digest, key.digestAt, key.name);
    this.dated(ts);
  }

  /** A stored line's ts has one shape (FORMAT.md §5.1: milliseconds, UTC), so text order is time order. */
  private dated(ts: unknown): void {
    if (typeof ts === 'string' && ts.length === 24 && ts > this.latest) this.latest = ts;
  }

  private request(r: Rec, seq: number): void {
    const id = String(r.step_id);
    if (this.requests.has(id)) {
      this.add(
        'APPROVAL_INVALID',
        `seq ${seq}: approval request ${JSON.stringify(id)} repeats the step_id of the request at seq ${this.requests.get(id)!.seq}: a request is named by its step_id, so each is unique`,
        seq,
        'step_id',
      );
      return;
    }
    const hidden = hasHidden(r.input);
    // Part references are in hand: the request's shape is checked, and its digest where no part stands in it.
    const parted = !hidden && hasMarker(r.input);
    const why = hidden ? null : parted ? partedRequestDefect(r.input) : requestInputDefect(r.input);
    if (why !== null)
      this.add('APPROVAL_INVALID', `seq ${seq}: approval request ${JSON.stringify(id)}: ${why}`, seq, 'input');
    if (hidden)
      this.add(
        'APPROVAL_UNCHECKED',
        `seq ${seq}: approval request ${JSON.stringify(id)} has withheld or erased values: what was presented is not compared`,
        seq,
        'input',
        true,
      );
    const input = why === null && !hidden ? (r.input as RequestInput) : null;
    const form = input === null ? null : callForm(input.presented.name, input.presented.arguments);
    const state: RequestState = {
      seq,
      stepHash: String(r.step_hash),
      input,
      form,
      hidden,
      expiresAt: hidden ? says.expiryInHand(r.input) : (input?.expires_at ?? null),
      unchecked: hidden,
      decision: null,
      effect: null,
      ranBefore: null,
      claimed: null,
    };
    this.requests.set(id, state);
    this.index.add(id, state, form, input?.presented.name);
    // A start that named a request not yet made, with this call, was begun for it: reported there, named here (§6).
    if (form !== null) state.claimed = this.namedAhead.get(form) ?? null;
    const early = form === null ? undefined : this.ran.find(form);
    if (early !== undefined) {
      // The call ran before anyone was asked: no later decision covers it (§5 step 4), and the verdict says it ran.
      state.ranBefore = { id: early.id, seq: early.seq };
      this.begun.set(early.id, form);
      this.add(
        'APPROVAL_MISSING',
        `seq ${early.seq}: ${early.kind} ${JSON.stringify(early.id)} ran the call that approval request ${JSON.stringify(id)} presents (seq ${seq}) before it was requested, naming no request: a call put to an approver runs only for its granted request, after the grant`,
        early.seq,
        'meta',
      );
    } else if (this.ranSameTool(id, seq, state)) {
      // reported by ranSameTool
    } else if (this.hiddenCall !== null && (form !== null || hidden)) {
      state.unchecked = true;
      this.add(
        'APPROVAL_UNCHECKED',
        `seq ${seq}: a call before approval request ${JSON.stringify(id)} (seq ${this.hiddenCall.seq}, ${JSON.stringify(this.hiddenCall.id)}) is withheld or erased: whether it ran this call before it was requested is not checked`,
        seq,
        'input',
        true,
      );
    }
  }

  private decision(r: Rec, seq: number): void {
    const kind = r.kind === APPROVAL_GRANTED ? 'granted' : 'denied';
    const ref = typeof r.ref === 'string' ? r.ref : null;
    const req = ref === null ? undefined : this.requests.get(ref);
    const bad = (why: string, field = 'input'): void =>
      this.add(
        'APPROVAL_INVALID',
        `seq ${seq}: ${r.kind as string} of request ${JSON.stringify(ref)}: ${why}`,
        seq,
        field,
      );
    if (req === undefined) {
      if (this.options.partial === true)
        this.add('APPROVAL_UNCHECKED', says.decisionOutOfRange(seq, r.kind as string, ref), seq, 'ref', true);
      else bad('ref names no approval request earlier in this chain', 'ref');
      return;
    }
    if (says.erasedField(r) !== null) return bad(says.ERASED_DECISION, says.erasedField(r) ?? 'input'); // ERASURE §6.3
    if (hasMarker(r.input) || hasMarker(r.meta)) {
      req.unchecked = true;
      this.add(
        'APPROVAL_UNCHECKED',
        `seq ${seq}: the decision on ${JSON.stringify(ref)} has withheld values: its signature is not checked`,
        seq,
        'input',
        true,
      );
      return;
    }
    const why = statementDefect(r.input) ?? decisionMetaDefect(r.meta);
    if (why !== null) return bad(why, why.startsWith('meta') ? 'meta' : 'input');
    const s = r.input as AnyApprovalStatement;
    const meta = r.meta as DecisionMeta;
    const unbound = bindingDefect(s, r, ref, req, this.options.genesisHash);
    if (unbound !== null) return bad(unbound);
    const sigWhy = approvalSignatureDefect(s, meta);
    if (sigWhy !== null) return bad(`the approver's signature does not hold: ${sigWhy}`, 'meta');
    const approver = this.approverOf(meta, seq);
    if (req.decision !== null) {
      this.add(
        'APPROVAL_REPEATED',
        `seq ${seq}: request ${JSON.stringify(ref)} was already ${req.decision.kind} at seq ${req.decision.seq}: one decision per request, this one does not count`,
        seq,
        'ref',
      );
      return;
    }
    const expires = instant(req.expiresAt);
    if (req.expiresAt === undefined)
      this.add('APPROVAL_UNCHECKED', says.expiryMessage(ref!, req.seq, seq), seq, 'input', true);
    if (expires !== null && instant(s.decided_at)! > expires) {
      this.add(
        'APPROVAL_EXPIRED',
        `seq ${seq}: request ${JSON.stringify(ref)} expired at ${req.expiresAt!}, before this decision (${s.decided_at}): it does not count`,
        seq,
        'input',
      );
      return;
    }
    if (!approver.pinned && this.pins.size > 0) {
      this.add(
        'APPROVER_UNKNOWN',
        `seq ${seq}: request ${JSON.stringify(ref)} was ${kind} by key ${meta.approver.keyid}${meta.approver.name === null ? '' : ` (calling itself ${JSON.stringify(meta.approver.name)})`}, which is none of the pinned approvers`,
        seq,
        'meta',
      );
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

  /** A record of a call run without naming a request: a presented call is APPROVAL_MISSING (§5 step 4). True then. */
  private unnamed(r: Rec, seq: number, call: Rec, sameTool = true): boolean {
    const id = String(r.step_id);
    if (callIsHidden(call)) {
      // Erased or withheld (a member of the call, or the whole call): it could be any presented call, one presented later too.
      if (this.notInHand(id, seq)) return false;
      this.add(
        'APPROVAL_UNCHECKED',
        `seq ${seq}: ${String(r.kind)} ${JSON.stringify(id)} has a withheld, erased or absent call and names no approval request: whether it runs a call put to an approver is not checked`,
        seq,
        'tool_call',
        true,
      );
      return false;
    }
    const form = callForm(call.name, call.arguments);
    if (form === null) {
      // Its arguments are not comparable (none, or under a member no shape names): a same-tool call is not proven another.
      if (sameTool) this.sameToolNotices(r, seq, id, call.name);
      if (typeof call.name === 'string') this.ran.rememberTool(JSON.stringify(call.name), id, seq, String(r.kind));
      return false;
    }
    const presented = this.index.presenting(form)[0];
    if (presented !== undefined) {
      const [rid, req] = presented;
      // It ran: the verdict says so (executed here), never "never executed"; one that ran before it comes first (§6).
      if (req.effect === null && req.ranBefore === null) req.effect = { id, seq };
      if (r.kind === 'tool.started') this.begun.set(id, form);
      this.add('APPROVAL_MISSING', says.unnamedMessage(r.kind, id, seq, rid, req.seq), seq, 'meta');
      return true;
    }
    // The same tool as a denied or undecided request, with other arguments: not proven another call (§5 step 4);
    // an outcome of a start whose call was compared is reported as carrying another call instead.
    if (sameTool) this.sameToolNotices(r, seq, id, call.name);
    this.ran.rememberForm(form, id, seq, String(r.kind));
    return false;
  }

  /** A call of a presented tool, naming no request, that is not the presented call (§5 step 4): a notice per request. */
  private sameToolNotices(r: Rec, seq: number, id: string, name: unknown): void {
    this.index.markSameTool(name);
    const same = this.index.presentingTool(name);
    if (this.findings.noticesFull) return this.findings.countNotices(same.length);
    for (const [rid, req] of same)
      this.add('APPROVAL_UNCHECKED', says.sameToolMessage(r.kind, id, seq, rid, req), seq, 'tool_call', true);
  }

  /** A call not in hand was run (§5 step 5): true when no request precedes it (nothing to report yet). */
  private notInHand(id: string, seq: number): boolean {
    this.hiddenCall ??= { id, seq };
    if (this.requests.size === 0) return true;
    this.uncheckedCalls = true;
    return false;
  }

  private effect(r: Rec, seq: number): void {
    const id = String(r.step_id);
    const call = isObj(r.tool_call) ? r.tool_call : null;
    const metaHidden = hasHidden(r.meta);
    const named = isObj(r.meta) && isObj(r.meta.approval) && !hasHidden(r.meta.approval) ? r.meta.approval : null;
    if (named === null) {
      if (metaHidden) {
        // The effect's meta is withheld or erased: whether it named a request, and which, is not in hand.
        if (r.kind === 'tool.started') this.hidden.started(id, seq, this.requests);
        if (this.notInHand(id, seq)) return;
        this.add('APPROVAL_UNCHECKED', effects.metaHidden(id, seq), seq, 'meta', true);
        return;
      }
      return this.carried(r, seq);
    }
    const callHidden = call !== null && callIsHidden(call);
    const form = call === null ? null : callForm(call.name, call.arguments);
    const rid = typeof named.request === 'string' ? named.request : null;
    const req = rid === null ? undefined : this.requests.get(rid);
    this.begun.set(id, callHidden ? (req?.form ?? null) : form);
    // Begun for it, whether it counts or not: the verdict names the effect, never "never executed" (§6).
    for (const q of req === undefined ? this.presentedBy(form) : [req]) q.claimed ??= { id, seq };
    if (req === undefined) {
      if (form !== null && !this.namedAhead.has(form)) this.namedAhead.set(form, { id, seq });
      if (this.options.partial === true) {
        this.uncheckedCalls = true;
        this.add('APPROVAL_UNCHECKED', effects.outsideRange(id, seq, rid), seq, 'meta', true);
      } else this.add('APPROVAL_MISSING', effects.noSuchRequest(id, seq, rid), seq, 'meta');
      return;
    }
    if (named.request_hash !== req.stepHash) {
      this.add('APPROVAL_MISMATCH', effects.otherHash(id, seq, rid!, named.request_hash, req.stepHash), seq, 'meta');
      return;
    }
    const forked = this.options.forkedAt;
    if (forked !== undefined && req.seq <= forked && seq > forked) {
      this.add('APPROVAL_MISSING', effects.copiedRequest(id, seq, rid!, req.seq, forked), seq, 'meta');
      return;
    }
    const d = req.decision;
    const expires = instant(req.expiresAt);
    if (d?.kind === 'denied') {
      this.add('APPROVAL_DENIED', effects.deniedRequest(id, seq, rid!, d), seq, 'meta');
      return;
    }
    if (req.expiresAt === undefined)
      this.add('APPROVAL_UNCHECKED', says.expiryMessage(rid!, req.seq, seq), seq, 'ts', true);
    // The effect's time by chain order: no earlier than any record before it (an agent's backdated ts does not move it).
    const ts = instant(r.ts);
    const at = Math.max(ts ?? Infinity, instant(this.latest) ?? -Infinity);
    if (expires !== null && at > expires) {
      this.add(
        'APPROVAL_EXPIRED',
        effects.afterExpiry(id, seq, rid!, { ts, at, given: r.ts }, req.expiresAt!),
        seq,
        'ts',
      );
      return;
    }
    if (d === null) {
      if (req.unchecked) {
        this.add('APPROVAL_UNCHECKED', effects.grantHidden(id, seq, rid!), seq, 'meta', true);
        return;
      }
      this.add('APPROVAL_MISSING', effects.notGranted(id, seq, rid!), seq, 'meta');
      return;
    }
    if (ts !== null && ts < (instant(d.ts) ?? -Infinity)) {
      this.add('APPROVAL_MISSING', says.beforeGrantMessage(id, seq, r.ts, d), seq, 'ts');
      return;
    }
    if (req.effect !== null) {
      this.add('APPROVAL_REPEATED', says.grantReusedMessage(id, seq, rid!, req.effect), seq, 'meta');
      return;
    }
    req.effect = { id, seq };
    if (this.hidden.used(req, id, rid, seq)) return;
    if (callHidden || req.hidden) {
      req.unchecked = true;
      this.add('APPROVAL_UNCHECKED', effects.callHidden(id, seq), seq, 'tool_call', true);
      return;
    }
    if (req.form === null) return; // a malformed request, already a problem
    const extra = Object.keys(call ?? {}).filter((k) => !EFFECT_EXTRA_MEMBERS.has(k));
    if (form !== req.form) {
      const parted = form !== null && (form.includes(PART) || req.form.includes(PART));
      this.add(
        'APPROVAL_MISMATCH',
        `seq ${seq}: effect ${JSON.stringify(id)} executes a call other than the one presented by request ${JSON.stringify(rid)} and granted: the tool name or arguments were changed after approval${parted ? ' (compared with part references as their addresses: within a journal equal content has one address, PARTS.md §5)' : ''}`,
        seq,
        'tool_call',
      );
    } else if (extra.length > 0) {
      this.add('APPROVAL_MISMATCH', says.extraMembersMessage(id, seq, rid!, extra), seq, 'tool_call');
    }
  }

  /** A call of the presented tool, naming no request, ran before the request with other arguments (§5 step 4). */
  private ranSameTool(rid: string, seq: number, req: RequestState): boolean {
    const early = req.form === null ? undefined : this.ran.findTool(req.form);
    if (early === undefined) return false;
    req.unchecked = true;
    this.add('APPROVAL_UNCHECKED', says.toolBeforeMessage(rid, seq, req, early), seq, 'input', true);
    return true;
  }

  /** The requests that presented the call of compared form `form` (an effect naming an unknown request). */
  private presentedBy(form: string | null): RequestState[] {
    return this.index.presenting(form).map(([, r]) => r);
  }

  /** Whether request `id` is in the prefix a fork copied from its parent: it authorises no effect in the fork (§5 step 3). */
  copiedFromParent(id: string): boolean {
    const req = this.requests.get(id);
    return req !== undefined && this.options.forkedAt !== undefined && req.seq <= this.options.forkedAt;
  }

  /** The first request that presented the call {name, arguments} (compared as §5 step 3 compares calls), if any. */
  presenting(name: unknown, args: unknown): ApprovalEntry | undefined {
    const form = callForm(name, args);
    if (form === null) return undefined;
    const first = this.index.presenting(form)[0];
    if (first !== undefined) return this.entry(first[0], first[1]);
    return undefined;
  }

  /** Whether the call {name, arguments} is the one request `id` presented (false for a malformed or withheld one). */
  presents(id: string, name: unknown, args: unknown): boolean {
    const form = this.requests.get(id)?.form ?? null;
    return form !== null && form === callForm(name, args);
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
    // Nothing found ran it, and some call was not in hand or lies before the range: not proven either way (§5 step 5).
    return entryOf(id, req, now, this.uncheckedCalls || this.options.partial === true || this.options.openEnd === true);
  }

  /** Every request in chain order, with what became of it by `now` (ms; default: expiry is not applied). */
  entries(now?: number): ApprovalEntry[] {
    return [...this.requests].map(([id, req]) => this.entry(id, req, now));
  }

  /** The findings once the chain is read: problems, then a notice per unpinned approver. */
  finish(): ApprovalFinding[] {
    const out = this.findings.all();
    for (const [keyid, u] of this.unpinned) {
      out.push({
        code: 'APPROVER_UNPINNED',
        message: `decisions signed by key ${keyid}${u.name === null ? '' : ` (calling itself ${JSON.stringify(u.name)})`} are intact but not authenticated: pin the approver's public key (--approver KEY) to tie them to a person`,
        seq: u.seq,
        field: 'meta',
        notice: true,
      });
    }
    return out;
  }
}
