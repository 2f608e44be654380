/**
 * The approval ledger's longer messages (spec/APPROVALS.md §5), and the reading of an expiry that may be withheld
 * or erased: kept apart so the ledger reads as its checks. Pure; runs in a browser.
 */
import type { RequestState } from './ledger-types.js';
import { instant } from './records.js';

/**
 * The `expires_at` of a request whose input holds withheld or erased values, where it is in hand: null or a
 * timestamp standing as its own member; undefined where the whole input, or the member, is not in hand.
 */
export function expiryInHand(input: unknown): string | null | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || !('expires_at' in input)) return undefined;
  const v = input.expires_at;
  return v === null ? null : typeof v === 'string' && instant(v) !== null ? v : undefined;
}

/** The notice for a decision or effect whose request's expiry is withheld or erased (§5 step 5). */
export const expiryMessage = (rid: string, requestSeq: number, seq: number): string =>
  `seq ${seq}: the expiry (expires_at) of approval request ${JSON.stringify(rid)} (seq ${requestSeq}) is withheld or erased: whether this record came before it expired is not checked`;

/** The problem of an outcome whose `ref` names an approval request itself (§5 step 4). */
export const outcomeOfRequestMessage = (r: Record<string, unknown>, seq: number, requestSeq: number): string =>
  `seq ${seq}: ${String(r.kind)} ${JSON.stringify(String(r.step_id))} is an outcome of approval request ${JSON.stringify(r.ref)} (seq ${requestSeq}) itself (ref): it says the presented call ran, begun by no effect naming the request (meta.approval)`;

/** An effect dated before its grant's decision (§5 step 3). */
export const beforeGrantMessage = (id: string, seq: number, ts: unknown, d: { ts: string; seq: number }): string =>
  `seq ${seq}: effect ${JSON.stringify(id)} is dated ${String(ts)}, before its grant was decided (${d.ts}, seq ${d.seq}): an effect is begun after its grant`;

/** A second effect for one grant (§5 step 3). */
export const grantReusedMessage = (id: string, seq: number, rid: string, used: { id: string; seq: number }): string =>
  `seq ${seq}: effect ${JSON.stringify(id)} uses the grant of request ${JSON.stringify(rid)} a second time (effect ${JSON.stringify(used.id)} at seq ${used.seq} used it): one grant, one effect`;

/** A tool_call adding members the approver never saw (§4). */
export const extraMembersMessage = (id: string, seq: number, rid: string, extra: string[]): string =>
  `seq ${seq}: effect ${JSON.stringify(id)}'s tool_call adds ${extra.map((k) => JSON.stringify(k)).join(', ')} to the call request ${JSON.stringify(rid)} presented: only call_id and idempotency_key may be added`;

/** A call naming no request that runs a presented call (§5 step 4). */
export const unnamedMessage = (kind: unknown, id: string, seq: number, rid: string, requestSeq: number): string =>
  `seq ${seq}: ${String(kind)} ${JSON.stringify(id)} runs the call presented by approval request ${JSON.stringify(rid)} (seq ${requestSeq}) without naming it (meta.approval): a call that was put to an approver is begun only for its granted request`;

/** The record found running a request's call: its effect, one before it, or one begun for it that did not count. */
export const ranFor = (req: RequestState): { id: string; seq: number } | null =>
  req.effect ?? req.ranBefore ?? req.claimed;

/** The notice of a call of a presented tool, naming no request, that is not the presented call (§5 step 4). */
export function sameToolMessage(kind: unknown, id: string, seq: number, rid: string, req: RequestState): string {
  const head = `seq ${seq}: ${String(kind)} ${JSON.stringify(id)} runs tool ${JSON.stringify(req.input?.presented.name)}, naming no request, with arguments other than`;
  const ran = ranFor(req);
  const state = req.decision === null ? 'undecided' : req.decision.kind;
  if (ran !== null)
    return `${head} (or not comparable with) those approval request ${JSON.stringify(rid)} (seq ${req.seq}) presented, whose call already ran at seq ${ran.seq}: one grant authorises one effect, and whether this runs that call again in another form is not checked`;
  return `${head} (or not comparable with) those ${state} approval request ${JSON.stringify(rid)} (seq ${req.seq}) presented: whether it is that call in another form is not checked, so "${state === 'granted' ? 'not executed' : 'never executed'}" is not proven`;
}

/** The notice of a request whose tool ran before it, naming no request, with other arguments (§5 step 4). */
export const toolBeforeMessage = (
  rid: string,
  seq: number,
  req: RequestState,
  early: { id: string; seq: number; kind: string },
): string =>
  `seq ${seq}: ${early.kind} ${JSON.stringify(early.id)} (seq ${early.seq}) ran tool ${JSON.stringify(req.input?.presented.name)} before approval request ${JSON.stringify(rid)} presented it, naming no request, with other arguments: whether it ran this call in another form before it was requested is not checked`;

/** The member name of an erased marker (ERASURE.md §2), as it appears in a record's JSON. */
export const ERASED_NAME = '"$stepchain:erased"';

/**
 * Where a signed decision holds an erased marker (sealed form, ERASURE.md §6.3): its statement ('input') or its
 * key and signature ('meta'); null when nothing of it was erased. Its signature can then no longer be checked, so
 * it is a problem and counts as no decision, never a grant nor a denial the verifier cannot vouch for.
 */
export function erasedField(r: Record<string, unknown>): 'input' | 'meta' | null {
  const holds = (v: unknown): boolean => v !== undefined && JSON.stringify(v).includes(ERASED_NAME);
  return holds(r.input) ? 'input' : holds(r.meta) ? 'meta' : null;
}

export const ERASED_DECISION =
  'a value of this signed decision was erased, so its signature cannot be checked (unverifiable after erasure): it counts as no decision, neither grant nor denial (the erase writer erases only a decision that was already a problem, ERASURE.md §6.3)';

export const decisionOutOfRange = (seq: number, kind: string, ref: string | null): string =>
  `seq ${seq}: ${kind} names request ${JSON.stringify(ref)}, which is not in this range`;
