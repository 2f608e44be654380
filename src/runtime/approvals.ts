/**
 * The runtime's side of approval records (spec/APPROVALS.md §4): the shapes Run's approval methods take and
 * return, and the refusals they throw. Run keeps the records in an ApprovalLedger (src/approval), the same
 * rules verify applies, so a call the runtime lets through is one the verifier accepts.
 */
import { isObject, type Json } from '../canonical/json.js';
import { ERASED_MARKER as ERASED } from '../record/v3/erasure.js';
import type { Journal } from '../store/types.js';
import type { KeyInput } from '../approval/sign.js';
import type { ApprovalEntry, ApproverFacts } from '../approval/ledger.js';
import type { ApprovalStatement, DecisionMeta } from '../approval/records.js';
import { APPROVAL_FORMAT, shortName } from '../record/formats.js';
import { RuntimeError } from './errors.js';
import type { RunMeta } from './value.js';

/** A request as requestApproval returns it: what to pass to awaitApproval and beginTool. */
export interface ApprovalRequest {
  /** The request record's step_id: what an approver names (`stepchain approve <journal> <id>`). */
  id: string;
  seq: number;
  /**
   * The request record's step hash: what the approver's statement binds (APPROVALS.md §3); it commits to the
   * presented call through salted digests, so it does not let anyone test a guess of the arguments.
   */
  stepHash: string;
  /** The call as presented to the approver. */
  call: { name: string; arguments: Json };
  expiresAt: string | null;
  /** The journal's genesis hash, which a decision's signed statement names (APPROVALS.md §3). */
  genesisHash: string;
}

export interface RequestApprovalOptions {
  /** After this instant no decision counts and no effect may begin for the request. */
  expiresAt?: string | Date;
  /** The request's step_id (default a random UUID). */
  id?: string;
  meta?: RunMeta;
}

export interface AwaitApprovalOptions {
  /** Stops waiting: the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** How often the journal is read again for a decision another process appended (default 250 ms). */
  pollMs?: number;
}

export interface DecideApprovalOptions {
  /** The approver's Ed25519 key: the 32-byte seed or { pem } holding a PKCS#8 PEM (`stepchain keygen`). */
  key: KeyInput;
  /** The name the approver gives itself (unauthenticated until its key is pinned: verify --approver). */
  name?: string;
  reason?: string;
}

/** What became of a request. */
export interface ApprovalOutcome {
  status: 'granted' | 'denied' | 'expired';
  request: string;
  /** The decision's seq; null when the request expired undecided. */
  seq: number | null;
  approver: ApproverFacts | null;
  reason: string | null;
}

/** A request and where it stands (Run.approvals). */
export type ApprovalState = ApprovalRequest &
  ApprovalEntry & {
    /** The decision's seq (ApprovalEntry's decision_seq). */
    decisionSeq: number | null;
    /**
     * A value of the presented call was erased (spec/ERASURE.md §6.3): `call` holds what remains, each erased
     * value an erased marker where it stood (a name that was erased: ""). The request can still be decided
     * (the statement binds its step hash), but what was presented is not compared with what runs.
     */
    erased?: true;
    /**
     * The request is in a fork's copied prefix (at or before its lineage's from_step): it and its decisions are
     * the parent's, and authorise nothing in the fork (spec/APPROVALS.md §4); it cannot be decided here.
     */
    forked?: true;
  };

/**
 * What remains of the call presented by the request at `seq` when some of it was erased: its name and
 * arguments as stored, erased markers included; null when the record holds no presented call with an
 * erased marker (a malformed request, or nothing erased).
 */
export async function erasedCallAt(journal: Journal, seq: number): Promise<{ name: string; arguments: Json } | null> {
  const record = (await journal.get(seq)) as unknown as Record<string, unknown> | null;
  const input = record?.input;
  const presented = isObject(input) ? input.presented : undefined;
  if (!isObject(presented) && !(isObject(input) && ERASED in input)) return null;
  if (!isObject(presented)) return { name: '', arguments: null };
  if (!JSON.stringify(presented).includes(`"${ERASED}"`)) return null;
  return {
    name: typeof presented.name === 'string' ? presented.name : '',
    arguments: (presented.arguments ?? null) as Json,
  };
}

/** A decision signed elsewhere (an approver's UI, a resumed LangGraph interrupt), to be recorded as it is. */
export interface SignedDecision {
  input: ApprovalStatement;
  meta: DecisionMeta;
}

export const requestIdOf = (request: ApprovalRequest | string): string =>
  typeof request === 'string' ? request : request?.id;

export function outcomeOf(e: ApprovalEntry): ApprovalOutcome | null {
  if (e.status !== 'granted' && e.status !== 'denied' && e.status !== 'expired') return null;
  return { status: e.status, request: e.request, seq: e.decision_seq, approver: e.approver, reason: e.reason };
}

export function approvalFormatError(runId: string, format: string): RuntimeError {
  return new RuntimeError(
    'APPROVAL_FORMAT',
    `run ${runId} is a ${format} journal: approval records exist only in ${APPROVAL_FORMAT} journals`,
    {
      hint: `create the journal with \`stepchain init --format ${shortName(APPROVAL_FORMAT)}\` (or startRun(store, { format: '${APPROVAL_FORMAT}' }))`,
    },
  );
}

export function unknownRequest(runId: string, id: string): RuntimeError {
  return new RuntimeError('APPROVAL_UNKNOWN', `run ${runId} has no approval request ${JSON.stringify(id)}`, {
    hint: 'list the requests with `stepchain approve <journal> --list`',
  });
}

/**
 * A decision is not recorded on a request in a fork's copied prefix (at or before `forkedAt`, APPROVALS.md §4):
 * it would authorise nothing in the fork, and its statement (the same genesis, request seq and step hash) would
 * be a working decision in the parent, or in any copy of the fork's steps made without its lineage.
 */
export function refuseForkedRequest(runId: string, e: ApprovalEntry, forkedAt: number | undefined): void {
  if (forkedAt === undefined || e.request_seq > forkedAt) return;
  throw new RuntimeError(
    'APPROVAL_FORKED',
    `run ${runId}: approval request ${JSON.stringify(e.request)} (seq ${e.request_seq}) was copied from the parent when this journal was forked at step ${forkedAt}; a decision on it here would authorise no effect in the fork (spec/APPROVALS.md §4), yet would be a working decision wherever the fork's steps are copied without its lineage; nothing was written`,
    {
      location: { seq: e.request_seq },
      hint: 'decide it in the parent journal, or present the call again in the fork (a new request) and decide that one',
    },
  );
}

/** The refusal to begin an effect for a request that does not let it begin (APPROVALS.md §5 rules 3–6), or null. */
export function beginRefusal(runId: string, e: ApprovalEntry, sameCall: boolean, now: number): RuntimeError | null {
  const at = `approval request ${JSON.stringify(e.request)} (seq ${e.request_seq})`;
  const expired = e.expires_at !== null && now > Date.parse(e.expires_at);
  if (e.status === 'invalid')
    return new RuntimeError('APPROVAL_INVALID', `run ${runId}: ${at} is not a well-formed request`);
  if (e.status === 'denied')
    return new RuntimeError(
      'APPROVAL_DENIED',
      `run ${runId}: ${at} was denied at seq ${e.decision_seq}${e.approver?.name ? (e.approver.pinned ? ` by ${JSON.stringify(e.approver.name)}` : ` by a key calling itself ${JSON.stringify(e.approver.name)} (unpinned, self-named)`) : ''}${e.reason ? `: ${e.reason}` : ''}; the tool must not run`,
    );
  if (expired || e.status === 'expired')
    return new RuntimeError(
      'APPROVAL_EXPIRED',
      `run ${runId}: ${at} expired at ${e.expires_at}; the tool must not run (ask again)`,
    );
  if (e.status === 'pending')
    return new RuntimeError(
      'APPROVAL_PENDING',
      `run ${runId}: ${at} has no decision yet; wait for one (awaitApproval)`,
    );
  if (e.effect !== null)
    return new RuntimeError(
      'APPROVAL_USED',
      `run ${runId}: the grant of ${at} was used by effect ${JSON.stringify(e.effect)} at seq ${e.effect_seq}: one grant, one effect (ask again)`,
    );
  if (!sameCall)
    return new RuntimeError(
      'APPROVAL_MISMATCH',
      `run ${runId}: the call differs from what ${at} presented (its tool name or arguments), or a value it presented was erased so the two cannot be compared (ERASURE.md §6.3): only the call that was approved may run; for an erased request, ask again`,
    );
  return null;
}

export function waitFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
